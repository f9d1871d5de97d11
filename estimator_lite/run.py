"""Run an unchanged tf.estimator program on estimator_lite: the zero-edit runner.

    python -m estimator_lite.run [--replace-tf-estimator] SCRIPT [ARGS...]
    python -m estimator_lite.run [--replace-tf-estimator] -m MODULE [ARGS...]
    python -m estimator_lite.run [--replace-tf-estimator] -c CODE [ARGS...]

(`estimator-lite-run` is the same as a console script.) It calls
`estimator_lite.install_as_tf_estimator()`, so that `tf.estimator`,
`tf.compat.v1.estimator`, `tensorflow_estimator` and the private module paths
libraries import resolve to estimator_lite, then runs the program as `python` would:
the program is `__main__`, `sys.argv` is `[SCRIPT, ARGS...]` (the module's file for
`-m`, `'-c'` for `-c`), `sys.path[0]` is the script's directory (the current
directory for `-m`, `''` for `-c`), `-m` runs a package's `__main__`, the exit status
is the program's, an uncaught exception (KeyboardInterrupt too) prints the program's
traceback without the runner's frames and exits as python would (1; by SIGINT for
KeyboardInterrupt), and signals reach the program, which runs in this very process.
TensorFlow is not imported by the runner: the aliases attach when the program
imports it.

With a real tf.estimator installed (TF <= 2.15 and a tensorflow_estimator of the same
major.minor that imports) the runner says so on stderr and runs the program on it,
unless `--replace-tf-estimator`. A stale or broken tensorflow-estimator (the 2.15
wheel beside TF 2.16+) is not one: the program runs on estimator_lite, and one line
on stderr names that package and says why.
Composes with the launcher:
`python -m estimator_lite.launch --workers 2 -- python -m estimator_lite.run train.py`.
"""

from __future__ import annotations

import builtins
import importlib.machinery
import io
import linecache
import os
import runpy
import sys
import types
import zipfile
from collections.abc import Sequence

from estimator_lite import install
from estimator_lite._compat import alias_modules

__all__ = ["USAGE", "main", "run"]

USAGE = ("usage: python -m estimator_lite.run [--replace-tf-estimator] "
         "(SCRIPT | -m MODULE | -c CODE) [ARGS...]")
_REPLACE_FLAG = "--replace-tf-estimator"
# Frames of these files are the runner's, not the program's: left out of tracebacks.
_OWN_FILES = (os.path.abspath(__file__), os.path.abspath(runpy.__file__), "<frozen runpy>")
# The import hook that attaches the aliases to TensorFlow's modules as they load.
_IMPORT_HOOK_CODE = alias_modules.IMPORT_HOOK_CODE
_PACKAGE_DIR = os.path.dirname(os.path.abspath(install.__file__)) + os.sep
_EXIT_USAGE = 2
_CODE_FILENAME = "<string>"  # python's name for `-c` code in tracebacks
_PREFIX = "estimator_lite.run: "
# How the command line names the program (the mode _parse returns).
_SCRIPT, _MODULE, _CODE = "script", "-m", "-c"


def _parse(argv):
    """(replace_existing, mode, target, program_args) from argv[1:]; None for help."""
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
        return replace_existing, _MODULE, args[1], args[2:]
    if args[0] == "-c":
        if len(args) < 2:
            raise ValueError("-c needs the program's code")
        return replace_existing, _CODE, args[1], args[2:]
    if args[0].startswith("-"):
        raise ValueError(f"unknown option {args[0]!r}; the options are {_REPLACE_FLAG}, "
                         "-m MODULE and -c CODE")
    return replace_existing, _SCRIPT, args[0], args[1:]


def _is_own(filename):
    return filename in _OWN_FILES or os.path.abspath(filename) in _OWN_FILES


def _is_import_hook(tb):
    """Whether `tb` is the runner's import hook passing an import through.

    The hook (_compat/alias_modules.py) runs TensorFlow's own loaders; an exception
    raised by the imported module (a KeyboardInterrupt during `import tensorflow`)
    crosses its frame, which `python` alone would not show. Its own failures stay shown.
    """
    return (tb.tb_frame.f_code is _IMPORT_HOOK_CODE and tb.tb_next is not None
            and not tb.tb_next.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR))


def _program_frames(tb):
    """The traceback without the runner's frames (as `python` would show it): the
    leading runner/runpy frames, and the import hook's pass-through frames."""
    while tb is not None and _is_own(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    kept = [t for t in _frames(tb) if not _is_import_hook(t)]
    if len(kept) == len(_frames(tb)):
        return tb
    rebuilt = None
    for t in reversed(kept):  # new traceback entries: the program's own stay intact
        rebuilt = types.TracebackType(rebuilt, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return rebuilt


def _frames(tb):
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    return frames


def _trim_chain(error):
    """Trims the tracebacks of the exceptions `error` was raised from or during."""
    seen = {id(error)}
    linked = error.__cause__ or error.__context__
    while linked is not None and id(linked) not in seen:
        seen.add(id(linked))
        linked.__traceback__ = _program_frames(linked.__traceback__)
        linked = linked.__cause__ or linked.__context__


def run(target: str, args: Sequence[str] = (), as_module: bool = False,
        replace_existing: bool = False, as_code: bool = False) -> None:
    """Installs the aliases, then runs `target` (a path, a module, or code).

    Args:
      target: a script path (file, directory or zip with __main__.py); a module
        name when `as_module`; the program's source when `as_code`.
      args: the program's arguments (sys.argv[1:]).
      as_module: run `target` as `python -m target` would.
      replace_existing: replace a real tf.estimator too.
      as_code: run `target` as `python -c target` would.

    Returns:
      Whatever the program's top level leaves (None); the program's own
      `sys.exit` raises SystemExit through this call.

    Raises:
      ValueError: both `as_module` and `as_code`.
    """
    if as_module and as_code:
        raise ValueError("run: as_module and as_code are exclusive; got both True")
    # Either way the program runs; the notice says on which tf.estimator and why.
    _, notice = install._install_reporting(replace_existing, _REPLACE_FLAG)
    if notice:
        sys.stderr.write(f"{_PREFIX}{notice}\n")
    if as_module:
        sys.argv = [target, *args]  # runpy sets argv[0] to the module's file
        sys.path[0] = os.getcwd()  # as `python -m` (also under the console script)
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    elif as_code:
        sys.argv = ["-c", *args]
        sys.path[0] = ""  # as `python -c`: the current directory, whichever it becomes
        _run_code(target)
    else:
        sys.argv = [target, *args]
        sys.path[0] = os.path.dirname(os.path.abspath(target))
        if os.path.isfile(target) and not zipfile.is_zipfile(target):
            _run_source_file(os.path.abspath(target))
        else:  # a directory or zip with __main__.py
            runpy.run_path(target, run_name="__main__")


def _fresh_main(**attributes):
    """A new `__main__` module, made the process's for good as under `python`.

    Pickling, multiprocessing and atexit handlers then find the program's own
    `__main__`.
    """
    main_module = types.ModuleType("__main__")
    main_module.__builtins__ = builtins
    vars(main_module).update(attributes)
    sys.modules["__main__"] = main_module
    return main_module


def _run_code(source):
    """Runs `source` as `python -c source` does: `__main__` without a file."""
    code = compile(source, _CODE_FILENAME, "exec", dont_inherit=True)
    if sys.version_info >= (3, 13):
        # Python 3.13's `-c` keeps the code in linecache, so its tracebacks show
        # the lines; 3.11/3.12 show none.
        linecache.cache[_CODE_FILENAME] = (len(source), None, [
            line + "\n" for line in source.splitlines()], _CODE_FILENAME)
    main_module = _fresh_main(__loader__=importlib.machinery.BuiltinImporter,
                              __spec__=None, __package__=None)
    exec(code, main_module.__dict__)  # noqa: S102 -- running the user's program is the job


def _run_source_file(path):
    """Runs a script file as `python path` does: a fresh `__main__`, argv untouched."""
    with io.open_code(path) as f:
        code = compile(f.read(), path, "exec", dont_inherit=True)
    loader = importlib.machinery.SourceFileLoader("__main__", path)
    main_module = _fresh_main(__file__=path, __loader__=loader)
    exec(code, main_module.__dict__)  # noqa: S102 -- running the user's program is the job


def _missing_main(target):
    """python's one line when `target` (a directory or zip) has no __main__.py, or None."""
    if os.path.isdir(target):
        names = os.listdir(target)
    elif os.path.isfile(target) and zipfile.is_zipfile(target):
        with zipfile.ZipFile(target) as archive:
            names = [name for name in archive.namelist() if "/" not in name]
    else:
        return None  # a script: run as one
    if any(name in ("__main__.py", "__main__.pyc") for name in names):
        return None
    return f"can't find '__main__' module in {os.path.abspath(target)!r}"


def _excepthook_trimming(error, program_frames, hook):
    """sys.excepthook that prints `error` with only `program_frames`, others as `hook`."""

    def excepthook(exc_type, value, tb):
        if value is error:
            tb = program_frames
            value = value.with_traceback(program_frames)
        hook(exc_type, value, tb)

    return excepthook


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (see the module docstring); returns only on success."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        parsed = _parse(argv)
    except ValueError as error:
        sys.stderr.write(f"{_PREFIX}{error}\n{USAGE}\n")
        return _EXIT_USAGE
    if parsed is None:
        sys.stdout.write(USAGE + "\n\n" + __doc__)
        return 0 if argv else _EXIT_USAGE
    replace_existing, mode, target, args = parsed
    if mode == _SCRIPT and not os.path.exists(target):
        path = os.path.abspath(target)
        sys.stderr.write(f"{_PREFIX}can't open file {path!r}: no such file\n")
        return _EXIT_USAGE
    missing = _missing_main(target) if mode == _SCRIPT else None
    if missing:
        sys.stderr.write(f"{_PREFIX}{missing}\n")
        return 1  # as python: a usage error would be 2, this one is 1
    try:
        run(target, args, as_module=mode == _MODULE, as_code=mode == _CODE,
            replace_existing=replace_existing)
    except SystemExit:
        raise
    except KeyboardInterrupt as error:
        # Raised on, so that python ends the process by SIGINT as for a plain
        # program; its traceback is printed without the runner's frames.
        _trim_chain(error)
        sys.excepthook = _excepthook_trimming(
            error, _program_frames(error.__traceback__), sys.excepthook)
        raise
    except BaseException as error:  # noqa: BLE001 -- reported exactly as python would
        trimmed = _program_frames(error.__traceback__)
        _trim_chain(error)
        sys.excepthook(type(error), error.with_traceback(trimmed), trimmed)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
