"""The alias modules that stand for tf.estimator's module paths, and their finders.

`install_as_tf_estimator()` (estimator_lite.install) puts these finders on
`sys.meta_path`: `REGISTRY` serves every path of `_alias_table.ALIASES` as an alias
module whose attributes are looked up in their estimator_lite targets at first use,
and a `TensorFlowWatcher` runs a callback right after TensorFlow's own modules load.
Nothing here is active until installed.
"""

import importlib
import importlib.abc
import importlib.util
import sys
import types

from estimator_lite._compat import alias_table as _alias_table

__all__ = ["IMPORT_HOOK_CODE", "NotProvidedError", "OWN_ROOTS", "REGISTRY",
           "TensorFlowWatcher", "WATCHED", "import_target", "is_alias_module",
           "is_executing", "restore_replaced"]

# Modules whose `estimator` attribute TF <= 2.15 set. `import tensorflow.compat.v1`
# loads a module object distinct from `tf.compat.v1`, so each gets attached.
WATCHED = ("tensorflow", "tensorflow.compat.v1", "tensorflow.compat.v2")
# The roots of the module paths the alias finder owns while installed.
OWN_ROOTS = ("tensorflow_estimator",) + _alias_table.PRIVATE_ROOTS


class NotProvidedError(AttributeError):
    """A tf.estimator name, asked for through an aliased path, that estimator_lite lacks."""


def _not_provided_message(name, path, reason):
    return f"estimator_lite does not provide {name} (from module {path}){reason}"


def _unprovided_base(message):
    """A class to derive from in place of a missing one: instantiating it fails."""

    def refuse(cls, *args, **kwargs):
        raise NotProvidedError(message)

    return type("NotProvidedByEstimatorLite", (), {"__new__": refuse, "__doc__": message})


class _Unprovided:
    """Stands for a private name estimator_lite lacks; fails when used.

    Libraries import many private names at module import that a given program never
    touches, so importing one succeeds; calling it, reading an attribute of it, or
    instantiating a class derived from it raises NotProvidedError naming it.
    """

    __slots__ = ("_message",)

    def __init__(self, message):
        object.__setattr__(self, "_message", message)

    def __call__(self, *args, **kwargs):
        raise NotProvidedError(self._message)

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        raise NotProvidedError(self._message)

    def __mro_entries__(self, bases):
        return (_unprovided_base(self._message),)

    def __repr__(self):
        return f"<{self._message}>"


def import_target(target):
    """(module, None), or (None, reason) when the target module does not exist."""
    try:
        return importlib.import_module(target), None
    except ModuleNotFoundError as error:
        missing = error.name or ""
        if missing == target or target.startswith(missing + "."):
            return None, f"; it would come from {target}, which this estimator_lite lacks"
        raise


def _load_spec(spec):
    """(value, None) for a spec (``module``, ``module:attr``, alias path); (None, why)."""
    if spec in _alias_table.ALIASES:
        return REGISTRY.module(spec), None
    module_name, _, attr = spec.partition(":")
    module, reason = import_target(module_name)
    if module is None:
        return None, reason
    if not attr:
        return module, None
    if hasattr(module, attr):
        value = getattr(module, attr)
        if isinstance(value, types.ModuleType) and hasattr(value, attr):
            # `estimator_lite.model_to_estimator` may be the module defining the
            # function of the same name (importing a submodule sets that attribute).
            value = getattr(value, attr)
        return value, None
    return None, f"; it would be {spec}, which this estimator_lite lacks"


def _resolve(path, name):
    """What attribute `name` of the alias module `path` is."""
    alias = _alias_table.ALIASES[path]
    reason = "; estimator_lite has no equivalent"
    if name in alias.attributes:
        value, reason = _load_spec(alias.attributes[name])
        if value is not None:
            return value
    elif f"{path}.{name}" in _alias_table.ALIASES:
        return REGISTRY.module(f"{path}.{name}")
    else:
        found_target = False
        for target in alias.targets:
            module, missing = import_target(target)
            if module is None:
                reason = missing
            elif hasattr(module, name):
                return getattr(module, name)
            else:
                found_target = True
        if alias.strict and (found_target or not alias.targets):
            raise NotProvidedError(_not_provided_message(name, path, reason))
    # Private paths, and public ones whose target module is absent (e.g. the v1 API
    # in a tree without it): a library importing the name at module import still
    # imports; only using the name fails.
    return _Unprovided(_not_provided_message(name, path, reason))


def _owning_target(path, name):
    """The estimator_lite module that defines attribute `name` of alias `path`, or None.

    Only names found by lookup in the alias's target modules have one: a renamed
    attribute or a child alias lives on the alias itself.
    """
    if name.startswith("__") and name.endswith("__"):
        return None
    alias = _alias_table.ALIASES.get(path)
    if (alias is None or name in alias.attributes
            or f"{path}.{name}" in _alias_table.ALIASES):
        return None
    for target in alias.targets:
        module, _ = import_target(target)
        if module is not None and hasattr(module, name):
            return module
    return None


# (alias path, name) -> the estimator_lite module's own value, while code has set
# that name through the alias (mock.patch.object(training, "_TrainingExecutor")).
_REPLACED = {}
_MISSING = object()


def restore_replaced():
    """Puts back every estimator_lite attribute that code set through an alias."""
    for (path, name), own in list(_REPLACED.items()):
        setattr(_owning_target(path, name), name, own)
    _REPLACED.clear()


class _AliasModule(types.ModuleType):
    """A tf.estimator module path whose attributes come from estimator_lite.

    Setting an attribute that an estimator_lite module defines sets it there too
    (and deleting it restores that module's value): with tf.estimator the path and
    the module are one module, so code patching a function or class through the
    path changes what the module's own code calls.
    """

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = _resolve(self.__name__, name)
        self.__dict__[name] = value  # later lookups are plain attribute reads
        return value

    def __setattr__(self, name, value):
        owner = _owning_target(self.__name__, name)
        if owner is not None:
            key = (self.__name__, name)
            own = _REPLACED.setdefault(key, getattr(owner, name))
            setattr(owner, name, value)
            if value is own:  # set back to the module's own value: nothing to undo
                del _REPLACED[key]
        super().__setattr__(name, value)

    def __delattr__(self, name):
        own = _REPLACED.pop((self.__name__, name), _MISSING)
        if own is not _MISSING:
            setattr(_owning_target(self.__name__, name), name, own)
            self.__dict__.pop(name, None)
            return
        super().__delattr__(name)

    def __dir__(self):
        names = set(self.__dict__)
        alias = _alias_table.ALIASES[self.__name__]
        names.update(alias.attributes)
        for target in alias.targets:
            module, _ = import_target(target)
            if module is not None:
                names.update(n for n in dir(module) if not n.startswith("__"))
        return sorted(names)


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves the aliased module paths, and owns the modules it made."""

    def __init__(self):
        self._modules = {}

    def module(self, name):
        """The one alias module for path `name` (made on first request)."""
        module = self._modules.get(name)
        if module is None:
            module = _AliasModule(name, f"estimator_lite's stand-in for {name}.")
            module.__path__ = []  # a package: its aliased children import through us
            module.__package__ = name
            module.__spec__ = importlib.util.spec_from_loader(name, self, is_package=True)
            module.__loader__ = self
            self._modules[name] = module
        return module

    def modules(self):
        return dict(self._modules)

    def clear(self):
        self._modules.clear()

    def find_spec(self, fullname, path=None, target=None):
        if fullname in _alias_table.ALIASES:
            return importlib.util.spec_from_loader(fullname, self, is_package=True)
        if fullname.startswith(tuple(root + "." for root in OWN_ROOTS)):
            raise ModuleNotFoundError(
                f"estimator_lite does not provide module {fullname}: no estimator_lite "
                "module owns its concept (see estimator_lite/_compat/alias_table.py)",
                name=fullname)
        return None

    def create_module(self, spec):
        return self.module(spec.name)

    def exec_module(self, module):
        """Nothing to run: attributes resolve on first lookup."""


# The watched TensorFlow modules whose own code is running (inside their import).
_EXECUTING = set()


def is_executing(name):
    """Whether watched module `name` is being imported (its own code running)."""
    return name in _EXECUTING


class _AttachingLoader(importlib.abc.Loader):
    """Runs a TensorFlow module's own loader, then attaches the estimator attributes."""

    def __init__(self, loader, on_loaded):
        self._loader = loader
        self._on_loaded = on_loaded

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        name = module.__spec__.name if module.__spec__ is not None else module.__name__
        _EXECUTING.add(name)
        try:
            self._loader.exec_module(module)
        finally:
            _EXECUTING.discard(name)
        spec = module.__spec__
        if spec is not None and spec.loader is self:
            spec.loader = self._loader
        if getattr(module, "__loader__", None) is self:
            module.__loader__ = self._loader
        self._on_loaded(spec.name if spec is not None else module.__name__)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class TensorFlowWatcher(importlib.abc.MetaPathFinder):
    """Attaches the estimator attributes when TensorFlow's modules get imported."""

    def __init__(self, on_loaded):
        self._on_loaded = on_loaded
        self._busy = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in WATCHED or self._busy:
            return None
        self._busy = True  # the other finders below may recurse into find_spec
        try:
            spec = _spec_from_other_finders(self, fullname, path, target)
        finally:
            self._busy = False
        if spec is None or spec.loader is None:
            return None
        spec.loader = _AttachingLoader(spec.loader, self._on_loaded)
        return spec


def _spec_from_other_finders(me, fullname, path, target):
    for finder in sys.meta_path:
        if finder is me or not hasattr(finder, "find_spec"):
            continue
        spec = finder.find_spec(fullname, path, target)
        if spec is not None:
            return spec
    return None


# The code of the loader that runs TensorFlow's own loaders: an exception raised
# by the imported module crosses its frame, which estimator_lite.run hides.
IMPORT_HOOK_CODE = _AttachingLoader.exec_module.__code__


def is_alias_module(value):
    """True for a module this file made (an aliased tf.estimator path)."""
    return isinstance(value, _AliasModule)


# The one finder of alias modules (a module per path, shared by every install).
REGISTRY = _AliasFinder()
