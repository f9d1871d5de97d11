"""Run an unchanged tf.estimator program on estimator_lite: the zero-edit runner.

    python -m estimator_lite.run [--replace-tf-estimator] SCRIPT [ARGS...]
    python -m estimator_lite.run [--replace-tf-estimator] -m MODULE [ARGS...]

(`estimator-lite-run` is the same as a console script.) It calls
`estimator_lite.install_as_tf_estimator()`, so that `tf.estimator`,
`tf.compat.v1.estimator`, `tensorflow_estimator` and the private module paths
libraries import resolve to estimator_lite, then runs the program as `python` would:
the program is `__main__`, `sys.argv` is `[SCRIPT, ARGS...]` (the module's file for
`-m`), `sys.path[0]` is the script's directory (the current directory for `-m`),
`-m` runs a package's `__main__`, the exit status is the program's, an uncaught
exception prints the program's traceback (without the runner's frames) and exits 1,
and signals reach the program, which runs in this very process. TensorFlow is not
imported by the runner: the aliases attach when the program imports it.

With a real tf.estimator installed (TF <= 2.15 + tensorflow_estimator) the runner
says so on stderr and runs the program on it, unless `--replace-tf-estimator`.
Composes with the launcher:
`python -m estimator_lite.launch --workers 2 -- python -m estimator_lite.run train.py`.
"""

import builtins
import importlib.machinery
import io
import os
import runpy
import sys
import types
import zipfile

from estimator_lite import install

__all__ = ["USAGE", "main", "run"]

USAGE = ("usage: python -m estimator_lite.run [--replace-tf-estimator] "
         "(SCRIPT | -m MODULE) [ARGS...]")
_REPLACE_FLAG = "--replace-tf-estimator"
# Frames of these files are the runner's, not the program's: left out of tracebacks.
_OWN_FILES = (os.path.abspath(__file__), os.path.abspath(runpy.__file__), "<frozen runpy>")
_EXIT_USAGE = 2


def _parse(argv):
    """(replace_existing, module_name or None, target, program_args) from argv[1:]."""
    replace_existing = False
    args = list(argv)
    while args and args[0] == _REPLACE_FLAG:
        replace_existing = True
        args.pop(0)
    if args and args[0] == "--":
        args.pop(0)
    if not args or args[0] in ("-h", "--help"):
        return None
    if args[0] == "-m":
        if len(args) < 2:
            raise ValueError("-m needs a module name")
        return replace_existing, True, args[1], args[2:]
    if args[0].startswith("-"):
        raise ValueError(f"unknown option {args[0]!r}; the options are {_REPLACE_FLAG} "
                         "and -m MODULE")
    return replace_existing, False, args[0], args[1:]


def _is_own(filename):
    return filename in _OWN_FILES or os.path.abspath(filename) in _OWN_FILES


def _program_frames(tb):
    """The traceback without its leading runner/runpy frames (as `python` would show)."""
    while tb is not None and _is_own(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return tb


def run(target, args=(), as_module=False, replace_existing=False):
    """Installs the aliases, then runs `target` (a path, or a module with as_module).

    Args:
      target: a script path (file, directory or zip with __main__.py), or a module
        name when `as_module`.
      args: the program's arguments (sys.argv[1:]).
      as_module: run `target` as `python -m target` would.
      replace_existing: replace a real tf.estimator too.

    Returns:
      Whatever the program's top level leaves (None); the program's own
      `sys.exit` raises SystemExit through this call.
    """
    if not install.install_as_tf_estimator(replace_existing=replace_existing):
        sys.stderr.write(
            f"estimator_lite.run: a real tf.estimator is installed "
            f"({install.real_tf_estimator_location()}); running the program on it, not "
            f"on estimator_lite (pass {_REPLACE_FLAG} to use estimator_lite)\n")
    if as_module:
        sys.argv = [target, *args]  # runpy sets argv[0] to the module's file
        sys.path[0] = os.getcwd()  # as `python -m` (also under the console script)
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        sys.argv = [target, *args]
        sys.path[0] = os.path.dirname(os.path.abspath(target))
        if os.path.isfile(target) and not zipfile.is_zipfile(target):
            _run_source_file(os.path.abspath(target))
        else:  # a directory or zip with __main__.py
            runpy.run_path(target, run_name="__main__")


def _run_source_file(path):
    """Runs a script file as `python path` does: a fresh `__main__`, argv untouched."""
    with io.open_code(path) as f:
        code = compile(f.read(), path, "exec", dont_inherit=True)
    main_module = types.ModuleType("__main__")
    main_module.__file__ = path
    main_module.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    main_module.__builtins__ = builtins
    # Replaced for good, as under `python path`: pickling, multiprocessing and atexit
    # handlers find the program's own __main__.
    sys.modules["__main__"] = main_module
    exec(code, main_module.__dict__)  # noqa: S102 -- running the user's program is the job


def main(argv=None):
    """Command-line entry point (see the module docstring); returns only on success."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        parsed = _parse(argv)
    except ValueError as error:
        sys.stderr.write(f"estimator_lite.run: {error}\n{USAGE}\n")
        return _EXIT_USAGE
    if parsed is None:
        sys.stdout.write(USAGE + "\n\n" + __doc__)
        return 0 if argv else _EXIT_USAGE
    replace_existing, as_module, target, args = parsed
    if not as_module and not os.path.exists(target):
        path = os.path.abspath(target)
        sys.stderr.write(f"estimator_lite.run: can't open file {path!r}: no such file\n")
        return _EXIT_USAGE
    try:
        run(target, args, as_module=as_module, replace_existing=replace_existing)
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as error:  # noqa: BLE001 -- reported exactly as python would
        trimmed = _program_frames(error.__traceback__)
        sys.excepthook(type(error), error.with_traceback(trimmed), trimmed)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
