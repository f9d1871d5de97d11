"""Make `tf.estimator` (and the module paths libraries import) resolve to estimator_lite.

For code the user cannot edit: `install_as_tf_estimator()` serves every path in
`estimator_lite._compat.alias_table.ALIASES` from estimator_lite, and
`uninstall_as_tf_estimator()` undoes it. `python -m estimator_lite.run` calls it
before running a program. Nothing here runs at `import estimator_lite`.

How, without importing TensorFlow early:
- a meta-path finder serves the aliased paths (`tensorflow_estimator...`,
  `tensorflow.python.estimator...`, `tensorflow.estimator`, ...) as alias modules
  whose attributes are looked up in their estimator_lite targets at first use;
- the `estimator` attributes of `tensorflow`, `tf.compat.v1` and `tf.compat.v2`,
  of their nested compat modules (`tf.compat.v2.compat.v1`, ...) and of their
  `keras` modules are set as soon as those modules exist: at install
  time if TensorFlow is already imported, otherwise right after the program imports
  it (a second finder wraps TensorFlow's loader and attaches once it has run).
  TensorFlow's own modules are reached through `estimator_lite._tf`.

A real tf.estimator (TF <= 2.15 with a tensorflow_estimator of the same major.minor
that imports) is left alone unless `replace_existing=True`. A stale or broken one
(the tensorflow-estimator 2.15 wheel TFX environments keep beside TF 2.16+) is not a
real tf.estimator: estimator_lite serves, and one log line says why.
"""

import collections
import contextlib
import importlib
import logging
import os
import re
import subprocess
import sys

from estimator_lite import _pycompat
from estimator_lite._compat import alias_modules, alias_table
from estimator_lite._compat.alias_modules import NotProvidedError

__all__ = ["NotProvidedError", "install_as_tf_estimator", "is_installed",
           "real_tf_estimator_location", "uninstall_as_tf_estimator"]

_LOGGER = logging.getLogger("tensorflow")
_ESTIMATOR_PACKAGE = "tensorflow_estimator"
# TensorFlow 2.16 dropped tf.estimator: tensorflow-estimator cannot import with it.
_TF_WITHOUT_ESTIMATOR = (2, 16)
# Checks that a tensorflow_estimator imports, in a child with this sys.path (argv).
_IMPORT_PROBE = "import sys; sys.path[:] = sys.argv[1:]; import tensorflow_estimator"
_IMPORT_PROBE_TIMEOUT_SECS = 300


class _State:
    """What install changed, so that uninstall puts it back."""

    def __init__(self):
        self.installed = False
        self.finders = ()
        self.saved_modules = {}
        self.saved_attributes = []  # (owner, name, had_value, old_value)
        self.attach_queue = []  # module names whose attributes wait to be set
        self.attaching = False


_STATE = _State()
_MISSING = object()


def _is_own_path(name):
    """True for the module paths the alias finder owns while installed."""
    return any(name == root or name.startswith(root + ".")
               for root in alias_modules.OWN_ROOTS)


def _find_spec_elsewhere(fullname):
    """`fullname`'s spec from the finders other than ours (imports nothing)."""
    ours = (alias_modules.REGISTRY, *_STATE.finders)
    for finder in sys.meta_path:
        if any(finder is own for own in ours) or not hasattr(finder, "find_spec"):
            continue
        spec = finder.find_spec(fullname, None, None)
        if spec is not None:
            return spec
    return None


def _package_dir(spec):
    """The directory of the package `spec` describes (or its file, for a module)."""
    locations = list(spec.submodule_search_locations or ())
    return locations[0] if locations else spec.origin


def _installed_version(package, package_dir):
    """The version of the distribution beside `package_dir` that ships `package`, or None.

    Read from the metadata (dist-info) in the same site directory, so that with two
    installs on the path (a `pip install --target` dir and the venv) the version is
    the one of the copy that imports.
    """
    if not package_dir:
        return None
    for dist in _pycompat.distributions([os.path.dirname(package_dir)]):
        top_level = (dist.read_text("top_level.txt") or "").split()
        if package in top_level or any(
                str(f) == f"{package}/__init__.py" for f in dist.files or ()):
            return dist.version
    return None


def _tensorflow_version():
    """TensorFlow's version (from the imported module, else its metadata), or None."""
    version = getattr(sys.modules.get("tensorflow"), "__version__", None)
    if isinstance(version, str):
        return version
    spec = _find_spec_elsewhere("tensorflow")
    return _installed_version("tensorflow", _package_dir(spec)) if spec else None


def _major_minor(version):
    """(major, minor) of a version string such as '2.16.0rc1', or None."""
    match = re.match(r"(\d+)\.(\d+)", version or "")
    return (int(match[1]), int(match[2])) if match else None


class _Found(collections.namedtuple("_Found", "location description tf_version problem")):
    """A tf.estimator other than ours, and why it cannot serve here (None: it can).

    Fields: location (its path), description (for messages), tf_version (of the
    TensorFlow installed), problem.
    """


def _find_real_tf_estimator():
    """The tf.estimator a program would get without us, as a _Found; None if none.

    That is the `tensorflow_estimator` on the path (judged against the installed
    TensorFlow), or TensorFlow 1's own tf.estimator. Looks before the alias finder,
    so estimator_lite's own aliases never count.
    """
    loaded = sys.modules.get(_ESTIMATOR_PACKAGE)
    if loaded is not None and not alias_modules.is_alias_module(loaded):
        spec = getattr(loaded, "__spec__", None)
        location = _package_dir(spec) if spec else getattr(loaded, "__file__", None)
        return _judge(location or "tensorflow_estimator (imported)", imported=True)
    if loaded is None:
        spec = _find_spec_elsewhere(_ESTIMATOR_PACKAGE)
        if spec is not None:
            return _judge(_package_dir(spec) or _ESTIMATOR_PACKAGE, imported=False)
    # TensorFlow 2's own `tf.estimator` is a lazy import of tensorflow_estimator, so
    # without that package it is nothing; only TensorFlow 1 carried a tf.estimator.
    tensorflow = sys.modules.get("tensorflow")
    own = vars(tensorflow).get("estimator", None) if tensorflow is not None else None
    tf_version = _tensorflow_version() if own is not None else None
    if (own is not None and not alias_modules.is_alias_module(own)
            and (_major_minor(tf_version) or (2, 0)) < (2, 0)):
        location = f"TensorFlow {tf_version}'s own tf.estimator"
        return _Found(location, location, tf_version, None)
    return None


def _judge(location, imported):
    """A _Found for the tensorflow_estimator at `location`.

    It serves tf.estimator only with the TensorFlow it was built for: TensorFlow
    <= 2.15 of the same major.minor, and only if it imports. The version checks
    read metadata, so a package that cannot import is never half-imported here.
    """
    version = _installed_version(_ESTIMATOR_PACKAGE, location)
    tf_version = _tensorflow_version()
    description = f"tensorflow-estimator {version or '(version unknown)'} at {location}"
    tf_major_minor = _major_minor(tf_version)
    problem = None
    if tf_version is None:
        problem = "TensorFlow is not installed, so it cannot import"
    elif tf_major_minor is not None and tf_major_minor >= _TF_WITHOUT_ESTIMATOR:
        problem = (f"TensorFlow {tf_version} has no tf.estimator (removed in 2.16), so "
                   "that package cannot import")
    elif version and tf_major_minor and _major_minor(version) != tf_major_minor:
        problem = (f"it does not match TensorFlow {tf_version} (tensorflow-estimator "
                   "works only with TensorFlow of its own major.minor)")
    elif not imported:
        problem = _import_problem()
        if problem:
            problem = f"{problem} (TensorFlow {tf_version})"
    return _Found(location, description, tf_version, problem)


def _import_problem():
    """Why `import tensorflow_estimator` fails here, or None when it imports.

    In this process only when TensorFlow is already imported and nothing of ours is
    installed: otherwise importing it would import TensorFlow before the program
    sets its environment (CUDA_VISIBLE_DEVICES, TF_USE_LEGACY_KERAS, ...), so a
    child interpreter with this sys.path tries instead.
    """
    if "tensorflow" in sys.modules and not _STATE.installed:
        return _import_problem_here()
    return _import_problem_in_child()


def _import_problem_here():
    """_import_problem by importing it in this process (TensorFlow is imported)."""
    before = set(sys.modules)
    try:
        importlib.import_module(_ESTIMATOR_PACKAGE)
    except Exception as error:  # noqa: BLE001 -- any failure means it cannot serve
        for name in set(sys.modules) - before:
            if name == _ESTIMATOR_PACKAGE or name.startswith(_ESTIMATOR_PACKAGE + "."):
                del sys.modules[name]  # nothing half-imported stays behind
        return f"importing it fails: {type(error).__name__}: {error}"
    return None


def _import_problem_in_child():
    """_import_problem by importing it in a child interpreter with this sys.path."""
    if not sys.executable:
        return None  # an embedded interpreter: cannot tell, so trust it
    try:
        child = subprocess.run(
            [sys.executable, "-c", _IMPORT_PROBE, *sys.path], capture_output=True,
            text=True, timeout=_IMPORT_PROBE_TIMEOUT_SECS, check=False)
    except (OSError, subprocess.SubprocessError):
        return None  # cannot tell: trust it, as a plain `python` would
    if child.returncode == 0:
        return None
    lines = [line for line in child.stderr.splitlines() if line.strip()]
    return "importing it fails: " + (lines[-1] if lines else
                                     f"exit status {child.returncode}")


def real_tf_estimator_location():
    """Where the real tf.estimator install_as_tf_estimator() leaves alone is, or None.

    That is a `tensorflow_estimator` on the Python path that imports and matches
    the installed TensorFlow (same major.minor, TF <= 2.15), or the `estimator` an
    already-imported TensorFlow 1 carries. A stale one (e.g. tensorflow-estimator
    2.15 beside TF 2.16+) or a broken one is not: None.
    """
    found = _find_real_tf_estimator()
    return found.location if found is not None and found.problem is None else None


def is_installed():
    """True between `install_as_tf_estimator()` and `uninstall_as_tf_estimator()`."""
    return _STATE.installed


def install_as_tf_estimator(replace_existing=False):
    """Makes `tf.estimator` and tf.estimator's module paths resolve to estimator_lite.

    After this call `tf.estimator`, `from tensorflow import estimator`,
    `tf.compat.v1.estimator`, `import tensorflow_estimator` and the private paths
    under `tensorflow_estimator.python.estimator` / `tensorflow.python.estimator`
    listed in `estimator_lite._compat.alias_table` are served by estimator_lite. Works
    before or after `import tensorflow`. Calling it again does nothing.

    A real tf.estimator (see `real_tf_estimator_location()`) is left alone. A
    tensorflow-estimator that cannot serve (TensorFlow >= 2.16, another major.minor
    than TensorFlow's, or failing to import) is replaced, and one line on the
    `tensorflow` logger says which one and why.

    Args:
      replace_existing: also replace a real tf.estimator. By default that one is
        left alone.

    Returns:
      True if estimator_lite now serves tf.estimator; False if a real one was
      found and left alone (the reason is logged on the `tensorflow` logger).

    Raises:
      TypeError: `replace_existing` is not a bool.
    """
    if not isinstance(replace_existing, bool):
        raise TypeError("install_as_tf_estimator: replace_existing must be a bool, "
                        f"got {type(replace_existing).__name__} {replace_existing!r}")
    served, notice = _install_reporting(replace_existing, "replace_existing=True")
    if notice:
        _LOGGER.warning("estimator_lite: %s", notice)
    return served


def _install_reporting(replace_existing, how_to_replace):
    """install_as_tf_estimator's work, for callers (the runner) reporting in their words.

    Args:
      replace_existing: as for install_as_tf_estimator (a bool).
      how_to_replace: how the caller's user asks to replace a real tf.estimator
        (the runner: its command-line flag), named in the notice.

    Returns:
      (served, notice): served as install_as_tf_estimator returns; notice is the one
      line saying which tf.estimator was found and why it was left alone or
      replaced, or None when there is nothing to say.
    """
    if _STATE.installed:
        return True, None
    found = None if replace_existing else _find_real_tf_estimator()
    if found is not None and found.problem is None:
        return False, (f"a real tf.estimator is installed ({found.description}, with "
                       f"TensorFlow {found.tf_version}); leaving it alone (pass "
                       f"{how_to_replace} to use estimator_lite instead)")
    _install()
    if found is None:
        return True, None
    return True, (f"serving tf.estimator from estimator_lite, not from "
                  f"{found.description}: {found.problem}")


def _install():
    for name in [n for n in sys.modules if _is_own_path(n)]:
        _STATE.saved_modules[name] = sys.modules.pop(name)
    watcher = alias_modules.TensorFlowWatcher(_attach)
    _STATE.finders = (alias_modules.REGISTRY, watcher)
    sys.meta_path[:0] = list(_STATE.finders)
    _STATE.installed = True
    for name in alias_modules.WATCHED:
        if name in sys.modules:
            _attach(name)


def _tensorflow_module(path):
    """The module at attribute `path` from the tensorflow package, just imported.

    Read from sys.modules, importing nothing: this runs inside the program's first
    `import tensorflow`, which may itself come from estimator_lite._tf being
    imported (a first lookup through an alias), so that module can be only half
    initialised here.
    """
    return _module_at("tensorflow", path)


def _module_at(root, path):
    """The module at attribute `path` from module `root` (read from sys.modules)."""
    module = sys.modules[root]
    for name in path:
        module = getattr(module, name)
    return module


def _set_attribute(owner, name, value):
    if any(saved is owner and saved_name == name
           for saved, saved_name, _ in _STATE.saved_attributes):
        return  # tf.keras and tf.compat.v1.keras can be one object
    old = vars(owner).get(name, _MISSING)
    _STATE.saved_attributes.append((owner, name, old))
    setattr(owner, name, value)


def _delete_attribute(owner, name):
    """Removes `name` from `owner`, a module or one of TensorFlow's module wrappers."""
    # TensorFlow's lazy loaders delete from the module they wrap; a loader sharing
    # that module with another owner finds it already gone.
    with contextlib.suppress(AttributeError):
        delattr(owner, name)
    # Wrappers also keep copies of attributes they served in their own __dict__.
    vars(owner).pop(name, None)


def _attach(module_name):
    """Sets the estimator attributes on TensorFlow module `module_name`, just loaded.

    A compat module imported while `import tensorflow` runs, or while setting an
    attribute runs, waits for them: TensorFlow's `__init__` imports Keras, and Keras
    imports `tensorflow.compat.v2`; setting `estimator` on that module's Keras lazy
    loader then would import Keras again from inside itself, and the second copy
    of half its modules breaks it (tf_keras's `set_random_seed`).
    """
    if not _STATE.installed:
        return
    _STATE.attach_queue.append(module_name)
    if _STATE.attaching or (module_name != "tensorflow" and _tensorflow_importing()):
        return
    _STATE.attaching = True
    try:
        while _STATE.attach_queue:
            _attach_now(_STATE.attach_queue.pop(0))
    finally:
        _STATE.attaching = False


def _tensorflow_importing():
    """True while the `tensorflow` package's own `__init__` is still running."""
    return alias_modules.is_executing("tensorflow")


def _attach_now(module_name):
    """Sets the estimator attributes on `module_name` (see `_attach`)."""
    if module_name == "tensorflow":
        _attach_owners(alias_table.ESTIMATOR_ATTRIBUTE_OWNERS)
        _attach_owners(alias_table.KERAS_ATTRIBUTE_OWNERS)
        _attach_owners(alias_table.NESTED_ATTRIBUTE_OWNERS, optional=True)
    else:
        # `import tensorflow.compat.v1` (or v2): a module object of its own, with
        # compat namespaces of its own.
        alias, nested = alias_table.COMPAT_MODULE_OWNERS[module_name]
        _attach_owners((((), alias),), module_name)
        _attach_owners(nested, module_name, optional=True)


def _attach_owners(owners, root="tensorflow", optional=False):
    """Sets `estimator` on each (attribute path, alias) owner TensorFlow has.

    Runs inside the program's `import tensorflow`, so a TensorFlow build without one
    of them (or whose Keras fails to load for `tf.keras`) is logged, not raised.

    Args:
      owners: (attribute path from `root`, alias module name) pairs.
      root: the module (in sys.modules) the paths start from.
      optional: True for owners some TensorFlow builds lack (TF 1.15's compat
        modules have no nested compat): a missing one is skipped without a warning.
    """
    for path, alias in owners:
        try:
            owner = _module_at(root, path)
        except (ImportError, AttributeError) as error:
            log = _LOGGER.debug if optional else _LOGGER.warning
            log("estimator_lite: %s.estimator not set: %s", ".".join((root,) + path),
                error)
            continue
        _set_attribute(owner, "estimator", alias_modules.REGISTRY.module(alias))


def uninstall_as_tf_estimator():
    """Undoes `install_as_tf_estimator()`: TensorFlow's modules and sys.modules as before.

    Objects the program already took from the aliases (classes, modules bound to
    names) stay what they are. Does nothing when not installed.
    """
    if not _STATE.installed:
        return
    for finder in _STATE.finders:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
    for owner, name, old in reversed(_STATE.saved_attributes):
        if old is _MISSING:
            _delete_attribute(owner, name)
        else:
            setattr(owner, name, old)
    aliases = alias_modules.REGISTRY.modules()
    for name, module in aliases.items():
        if sys.modules.get(name) is module:
            del sys.modules[name]
        parent_name, _, child = name.rpartition(".")
        parent = sys.modules.get(parent_name)
        if parent is not None and vars(parent).get(child) is module:
            delattr(parent, child)
    sys.modules.update(_STATE.saved_modules)
    alias_modules.restore_replaced()
    alias_modules.REGISTRY.clear()
    _STATE.__init__()
