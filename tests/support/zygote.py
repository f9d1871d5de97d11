"""A fork server ("zygote") that runs test subprocesses without re-importing TF.

Importing TensorFlow costs ~3 CPU seconds per interpreter, and the suite starts
well over a hundred Python subprocesses that do it. A zygote is one server process
per interpreter (this one, or the TF 2.15 oracle) per pytest worker: it imports
TensorFlow once, without starting the TF runtime (no session, device listing or
eager op, so a child can still configure logical devices), then forks one child
per run. The child becomes `python ARGS` as far as a test can tell: its own pid,
argv and `__main__`, cwd, environment, stdin/stdout/stderr (the caller's file
descriptors, passed over a unix socket with SCM_RIGHTS), and its exit status
(sys.exit codes, 1 with a traceback for an uncaught exception, -N for death by
signal N) goes back to the caller.

Test code calls `Popen` and `run` here instead of subprocess's. They fork from a
zygote only when that is indistinguishable from a fresh start; otherwise they
start a plain subprocess. The rule, conservative on purpose:
- ESTIMATOR_LITE_TEST_NO_ZYGOTE=1: always plain;
- only `python SCRIPT|-m MODULE|-c CODE ARGS` (no interpreter options), with
  this interpreter or ESTIMATOR_LITE_TF215_PYTHON, and Popen options among the
  standard streams, cwd, env and text/encoding settings (no preexec_fn,
  start_new_session, pass_fds, ...);
- every start-up variable (`_STARTUP_ENV_PREFIXES`: TF_*, CUDA*, KERAS*,
  PYTHON*, ...; e.g. TF_USE_LEGACY_KERAS, CUDA_VISIBLE_DEVICES) equal to the
  server's, except the few in `_RUNTIME_ENV` (TF_CONFIG, TF_CPP_MIN_LOG_LEVEL,
  PYTHONPATH, PYTHONUNBUFFERED, ...) that a child can honour itself;
- the child's sys.path (script dir, its PYTHONPATH, the site dirs) must resolve
  every top-level module the server imported to the same file
  (`_ZygoteServer.refusal`), e.g. no other checkout's or a shadowing package.
Servers start on first use and end with the pytest worker (they SIGKILL children
still running).

Run as a script (`python zygote.py SOCKET PRELOAD`) this file is the server; it
imports nothing from the tests package, so the oracle interpreter can run it.
"""

import array
import atexit
import builtins
import contextlib
import importlib
import importlib.machinery
import io
import json
import linecache
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import types

# sys.path as this interpreter started, before any package added to it.
_STARTUP_PATH = tuple(sys.path)

__all__ = ["NO_ZYGOTE_ENV", "ZygoteProcess", "Popen", "run", "would_fork",
           "shutdown_servers"]

NO_ZYGOTE_ENV = "ESTIMATOR_LITE_TEST_NO_ZYGOTE"
PIPE, STDOUT, DEVNULL = subprocess.PIPE, subprocess.STDOUT, subprocess.DEVNULL
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_THIS_FILE = os.path.abspath(__file__)
# What each server imports before forking. Only imports: nothing here may start
# the TF runtime, or a child could not set up logical devices any more.
_PRELOADS = {
    "lite": ("tensorflow",),
    "oracle": ("tensorflow", "tensorflow_estimator"),
}
# Environment variables read when TensorFlow, Keras or Python itself start: a
# child whose value differs from its server's cannot be forked (it gets a plain
# subprocess). Prefixes are compared too, so an unknown TF_FOO setting falls back.
_STARTUP_ENV_PREFIXES = ("TF_", "CUDA", "KERAS", "XLA", "OMP_", "MKL", "KMP_",
                         "PYTHON", "LD_", "NVIDIA", "ROCM", "HIP_", "GRPC")
# Startup variables the child handles itself, or that TF reads at run time.
_RUNTIME_ENV = frozenset({
    "TF_CONFIG",  # read by RunConfig when the program builds one
    "TF_CPP_MIN_LOG_LEVEL",  # only changes how chatty TF's C++ logging is
    "TF_CPP_MIN_VLOG_LEVEL",
    "PYTHONPATH",  # the child's sys.path is rebuilt; _ZygoteServer.refusal checks
    "PYTHONUNBUFFERED",  # the child builds its own std streams
    "PYTHONDONTWRITEBYTECODE",  # sys.dont_write_bytecode is set in the child
})
_SERVER_START_SECS = 120
# subprocess's own, kept before `_route_subprocesses` may replace them in a child.
_PLAIN_POPEN = subprocess.Popen
_BASE_ENV = dict(os.environ)
_KILL_WAIT_SECS = 30


# --------------------------------------------------------------------------------
# Test side: which runs may fork, the servers, and the Popen-like process.
# --------------------------------------------------------------------------------

def _interpreter_kind(python):
    """'lite' for this interpreter, 'oracle' for ESTIMATOR_LITE_TF215_PYTHON, else None."""
    # abspath, not realpath: both venvs' pythons link to the same binary.
    path = os.path.abspath(python)
    if path == os.path.abspath(sys.executable):
        return "lite"
    oracle = os.environ.get("ESTIMATOR_LITE_TF215_PYTHON")
    if oracle and path == os.path.abspath(oracle):
        return "oracle"
    return None


def _startup_env(env):
    """The part of `env` that an interpreter or TensorFlow reads at start-up."""
    return {key: value for key, value in env.items()
            if key.startswith(_STARTUP_ENV_PREFIXES) and key not in _RUNTIME_ENV}


def _parse_args(args):
    """(python, mode, target, argv) for `python SCRIPT|-m MOD|-c CODE ARGS`, or None.

    Interpreter options (-u, -X, -W, ...) are not handled: such a run is not forked.
    """
    if isinstance(args, (str, bytes)) or len(args) < 2:
        return None
    python, first, rest = os.fspath(args[0]), os.fspath(args[1]), [os.fspath(a)
                                                                    for a in args[2:]]
    if first in ("-m", "-c"):
        if not rest:
            return None
        target = rest[0]
        # runpy replaces "-m" by the module's path, as `python -m` does.
        argv = [first, *rest[1:]]
        return python, first, target, argv
    if first.startswith("-"):
        return None
    return python, "script", first, [first, *rest]


def _zygote_refusal(args, env, kwargs):
    """Why `args` cannot be forked from a zygote (a text), or None if it can.

    Conservative: only `python SCRIPT|-m MOD|-c CODE`, with this interpreter or
    the oracle, the standard stream options subprocess supports, and no start-up
    environment variable differing from the server's (checked by the server
    itself for PYTHONPATH).
    """
    if os.environ.get(NO_ZYGOTE_ENV) == "1":
        return f"{NO_ZYGOTE_ENV}=1"
    parsed = _parse_args(args)
    if parsed is None:
        return "not `python SCRIPT|-m MODULE|-c CODE ...`"
    if _interpreter_kind(parsed[0]) is None:
        return f"interpreter {parsed[0]} has no zygote"
    if _interpreter_kind(parsed[0]) == "lite" and sys.version_info < (3, 9):
        # The server waits on its children through os.pidfd_open (Python 3.9+).
        return "Python < 3.9 (TF 1.15's 3.7) has no os.pidfd_open"
    unsupported = set(kwargs) - {"text", "universal_newlines", "encoding", "errors",
                                 "bufsize", "close_fds"}
    if unsupported:
        return f"Popen options {sorted(unsupported)}"
    if kwargs.get("bufsize", -1) not in (-1, 0, 1):
        return "bufsize"
    if _startup_env(env) != _startup_env(_server_env(_interpreter_kind(parsed[0]))):
        return "start-up environment variables differ from the zygote's"
    return None


def _server_env(kind):
    """The environment a zygote of `kind` starts with (fixed per test process).

    It comes from this module's import (before any test's monkeypatching), so
    the servers' start-up variables, which children are compared with, never
    change while they run.
    """
    env = dict(_BASE_ENV)
    env.pop("TF_CONFIG", None)
    if kind == "lite":
        # This checkout's estimator_lite, whatever is installed.
        env["PYTHONPATH"] = _ROOT
    else:
        env.pop("PYTHONPATH", None)
    return env


class _Server:
    """One running zygote: its process and the unix socket it listens on."""

    def __init__(self, python, kind):
        self._dir = tempfile.mkdtemp(prefix="zygote_")
        self.path = os.path.join(self._dir, "socket")
        self._log_path = os.path.join(self._dir, "server.log")
        with open(self._log_path, "wb") as log:
            self.process = _PLAIN_POPEN(
                [python, _THIS_FILE, self.path, kind], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=log, env=_server_env(kind),
                cwd=self._dir)
        ready = _read_line_within(self.process.stdout, _SERVER_START_SECS)
        if ready != b"ready\n":
            self.process.kill()
            raise RuntimeError(f"zygote {kind} did not start ({ready!r}):\n"
                               f"{self.log_text()}")

    def log_text(self):
        """What the server wrote to its stderr."""
        with open(self._log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def alive(self):
        return self.process.poll() is None

    def stop(self):
        """Closes the server's stdin (it kills its children and exits) and waits."""
        if self.alive():
            self.process.stdin.close()
            try:
                self.process.wait(timeout=_KILL_WAIT_SECS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stdout.close()
        shutil.rmtree(self._dir, ignore_errors=True)  # the socket and the server log


def _read_line_within(stream, timeout_secs):
    """One line from a pipe, or b"" if it closes or `timeout_secs` pass first."""
    selector = selectors.DefaultSelector()
    selector.register(stream, selectors.EVENT_READ)
    try:
        if not selector.select(timeout_secs):
            return b""
        return stream.readline()
    finally:
        selector.close()


_SERVERS = {}
_SERVERS_LOCK = threading.Lock()


def _server(python, kind):
    """The running zygote for `kind`, started on first use (and after it died)."""
    with _SERVERS_LOCK:
        server = _SERVERS.get(kind)
        if server is None or not server.alive():
            server = _SERVERS[kind] = _Server(python, kind)
        return server


def shutdown_servers():
    """Stops every zygote this process started (also registered with atexit)."""
    with _SERVERS_LOCK:
        servers = list(_SERVERS.values())
        _SERVERS.clear()
    for server in servers:
        server.stop()


atexit.register(shutdown_servers)


def _stream_fds(stdin, stdout, stderr):
    """Child fds for the three streams, and the parent's ends of new pipes.

    Returns:
      (child_fds, parent_ends, to_close): child_fds the three fds to send,
      parent_ends {name: fd} for PIPE, to_close the fds to close once sent.
    """
    child, parent_ends, to_close = [], {}, []
    for name, spec, default in (("stdin", stdin, 0), ("stdout", stdout, 1),
                                ("stderr", stderr, 2)):
        if spec is None:
            fd = default
        elif spec == PIPE:
            read_end, write_end = os.pipe()
            fd, mine = (read_end, write_end) if name == "stdin" else (write_end, read_end)
            parent_ends[name] = mine
            to_close.append(fd)
        elif spec == DEVNULL:
            fd = os.open(os.devnull, os.O_RDWR)
            to_close.append(fd)
        elif spec == STDOUT and name == "stderr":
            fd = child[1]
        elif isinstance(spec, int):
            fd = spec
        else:
            fd = spec.fileno()
        child.append(fd)
    return child, parent_ends, to_close


def _send_request(sock, request, fds):
    data = json.dumps(request).encode() + b"\n"
    sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])


class _RefusedError(Exception):
    """The server found that this run would not behave as a fresh interpreter."""


class ZygoteProcess:
    """A child forked by a zygote, used like subprocess.Popen.

    Attributes: args, pid, returncode, stdin, stdout, stderr (file objects for
    PIPE, else None), as subprocess.Popen has them.
    """

    def __init__(self, args, server, env, cwd, stdin=None, stdout=None, stderr=None,
                 text=None, universal_newlines=None, encoding=None, errors=None,
                 bufsize=-1, close_fds=True, subprocesses_via_zygote=False):
        """Asks `server` to fork a child running `args`.

        With `subprocesses_via_zygote`, the child's own subprocess.run/Popen fork
        from the same server (for programs, such as benchmarks, that start
        interpreters themselves).

        Raises:
          _RefusedError: the server says the child's sys.path would import other
            modules than it preloaded (the caller starts a plain subprocess).
          RuntimeError: the server failed.
        """
        del close_fds  # a forked child holds only its three streams, as with it
        _, mode, target, argv = _parse_args(args)
        self.args = args
        self.returncode = None
        self.stdin = self.stdout = self.stderr = None
        self._communication = None
        child_fds, parent_ends, to_close = _stream_fds(stdin, stdout, stderr)
        request = {"mode": mode, "target": target, "argv": argv,
                   "env": dict(env), "cwd": os.fspath(cwd or os.getcwd()),
                   "nested": subprocesses_via_zygote}
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._sock.connect(server.path)
            _send_request(self._sock, request, child_fds)
            reply = self._read_reply()
        except BaseException:
            self._sock.close()
            for fd in parent_ends.values():
                os.close(fd)
            raise
        finally:
            for fd in to_close:
                os.close(fd)
        if "refused" in reply:
            self._sock.close()
            for fd in parent_ends.values():
                os.close(fd)
            raise _RefusedError(reply["refused"])
        self.pid = reply["pid"]
        self._wrap_pipes(parent_ends, text or universal_newlines or encoding or errors,
                         encoding, errors, bufsize)

    def _wrap_pipes(self, parent_ends, text_mode, encoding, errors, bufsize):
        """File objects over our ends of the pipes, as subprocess.Popen makes them."""
        for name, fd in parent_ends.items():
            binary = open(fd, "wb" if name == "stdin" else "rb",  # noqa: SIM115
                          buffering=bufsize)
            if text_mode:
                stream = io.TextIOWrapper(binary, encoding=encoding or "utf-8",
                                          errors=errors or "strict",
                                          write_through=name == "stdin",
                                          line_buffering=bufsize == 1)
            else:
                stream = binary
            setattr(self, name, stream)

    def _read_reply(self, timeout=None):
        """The next JSON line from the server, or None if `timeout` passed first.

        Raises:
          RuntimeError: the server closed the connection (it died).
        """
        buffer = getattr(self, "_buffer", b"")
        while b"\n" not in buffer:
            self._sock.settimeout(timeout)
            try:
                chunk = self._sock.recv(4096)
            except (TimeoutError, BlockingIOError):
                self._buffer = buffer
                return None
            if not chunk:
                raise RuntimeError("the zygote closed the connection before the child's "
                                   "exit status came (the server died?)")
            buffer += chunk
        line, self._buffer = buffer.split(b"\n", 1)
        return json.loads(line)

    def _collect(self, timeout):
        """Sets returncode if the exit status arrives within `timeout` (None: wait)."""
        if self.returncode is not None:
            return
        reply = self._read_reply(timeout)
        if reply is not None:
            self.returncode = reply["returncode"]
            self._sock.close()

    def poll(self):
        """The exit code, or None while the child runs."""
        self._collect(0)
        return self.returncode

    def wait(self, timeout=None):
        """Waits for the child's exit; returns its code.

        Raises:
          subprocess.TimeoutExpired: it still runs after `timeout` seconds.
        """
        self._collect(timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired(self.args, timeout)
        return self.returncode

    def send_signal(self, sig):
        """Sends `sig` to the child unless it already exited (its pid may be reused)."""
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self):
        self.send_signal(signal.SIGTERM)

    def kill(self):
        self.send_signal(signal.SIGKILL)

    def communicate(self, input=None, timeout=None):  # noqa: A002 (Popen's name)
        """Writes `input`, reads stdout and stderr to the end, waits for the exit.

        Returns:
          (stdout, stderr), each None unless it is a PIPE.

        Raises:
          subprocess.TimeoutExpired: not done within `timeout` seconds (call
            again to keep waiting; nothing read so far is lost).
        """
        if self._communication is None:
            self._communication = _Communication(self, input)
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._communication.join(deadline):
            raise subprocess.TimeoutExpired(self.args, timeout)
        self.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return self._communication.results()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None and not stream.closed:
                stream.close()
        self.wait()


class _Communication:
    """Threads feeding stdin and draining stdout/stderr of one process."""

    def __init__(self, process, data):
        self._process = process
        self._chunks = {"stdout": [], "stderr": []}
        self._threads = []
        if process.stdin is not None:
            self._start(self._feed, data)
        for name in ("stdout", "stderr"):
            if getattr(process, name) is not None:
                self._start(self._drain, name)

    def _start(self, target, arg):
        thread = threading.Thread(target=target, args=(arg,), daemon=True)
        thread.start()
        self._threads.append(thread)

    def _feed(self, data):
        try:
            if data:
                self._process.stdin.write(data)
        except BrokenPipeError:
            pass
        finally:
            with contextlib.suppress(BrokenPipeError):
                self._process.stdin.close()

    def _drain(self, name):
        stream = getattr(self._process, name)
        self._chunks[name].append(stream.read())
        stream.close()

    def join(self, deadline):
        """Whether every thread finished by `deadline` (time.monotonic; None: wait)."""
        for thread in self._threads:
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                return False
        return True

    def results(self):
        return tuple(self._chunks[name][0] if getattr(self._process, name) is not None
                     else None for name in ("stdout", "stderr"))


def would_fork(args, env=None, **kwargs):
    """Whether `Popen(args, env=env, ...)` may fork from a zygote (before the
    server's own PYTHONPATH check); for tests of this module."""
    return _zygote_refusal(args, os.environ if env is None else env, kwargs) is None


def Popen(args, stdin=None, stdout=None, stderr=None, env=None, cwd=None,  # noqa: N802
          **kwargs):
    """A forked ZygoteProcess when that is indistinguishable from a fresh
    interpreter, else a plain subprocess.Popen; same arguments as subprocess's,
    and `subprocesses_via_zygote` (see ZygoteProcess; ignored for a plain one).

    Returns:
      A ZygoteProcess or a subprocess.Popen.
    """
    env = os.environ if env is None else env
    nested = kwargs.pop("subprocesses_via_zygote", False)
    if _zygote_refusal(args, env, kwargs) is None:
        python = os.fspath(args[0])
        try:
            return ZygoteProcess(args, _server(python, _interpreter_kind(python)), env,
                                 cwd, stdin=stdin, stdout=stdout, stderr=stderr,
                                 subprocesses_via_zygote=nested, **kwargs)
        except _RefusedError:
            pass
    return _PLAIN_POPEN(args, stdin=stdin, stdout=stdout, stderr=stderr, env=env,
                            cwd=cwd, **kwargs)


def run(args, input=None, capture_output=False, timeout=None, check=False,  # noqa: A002
        **kwargs):
    """subprocess.run through `Popen` (a zygote child when possible).

    Returns:
      A subprocess.CompletedProcess.

    Raises:
      subprocess.TimeoutExpired: after killing the child, as subprocess.run does.
      subprocess.CalledProcessError: `check` and a non-zero exit code.
    """
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = PIPE
    if input is not None:
        kwargs["stdin"] = PIPE
    with Popen(args, **kwargs) as process:
        try:
            stdout, stderr = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        except BaseException:
            process.kill()
            raise
        returncode = process.poll()
    if check and returncode:
        raise subprocess.CalledProcessError(returncode, args, stdout, stderr)
    return subprocess.CompletedProcess(args, returncode, stdout, stderr)


# --------------------------------------------------------------------------------
# Server side (runs in the zygote's interpreter; imports nothing from tests).
# --------------------------------------------------------------------------------

def _receive_request(conn):
    """(request dict, [stdin, stdout, stderr fds]) from one client, or (None, [])."""
    fds = array.array("i")
    data = b""
    while not data.endswith(b"\n"):
        chunk, ancillary, _, _ = conn.recvmsg(1 << 20, socket.CMSG_SPACE(3 * fds.itemsize))
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
        if not chunk:
            for fd in fds:
                os.close(fd)
            return None, []
        data += chunk
    return json.loads(data), list(fds)


class _ZygoteServer:
    """The zygote's loop: accept a request, fork a child, report its exit status."""

    def __init__(self, socket_path, kind):
        for name in _PRELOADS[kind]:
            importlib.import_module(name)
        self.socket_path, self.kind, self.env = socket_path, kind, dict(os.environ)
        self._base_path = self._path_without_startup_entries()
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(socket_path)
        self._listener.listen(64)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._listener, selectors.EVENT_READ, "accept")
        self._selector.register(sys.stdin, selectors.EVENT_READ, "stdin")
        self._children = {}  # pid -> (connection, pidfd)

    @staticmethod
    def _path_without_startup_entries():
        """The sys.path of a fresh interpreter without PYTHONPATH, minus its [0].

        Asked of such an interpreter (no TensorFlow import: a few milliseconds, once
        per server) rather than derived from this one's sys.path: `site` leaves out
        a .pth entry that PYTHONPATH already holds, so an editable install's
        `easy-install.pth` (what pip without PEP 660 writes) names the checkout
        only through PYTHONPATH here, while a fresh child needs it from the .pth.
        """
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        probe = _PLAIN_POPEN(
            [sys.executable, "-c", "import json, sys; print(json.dumps(sys.path[1:]))"],
            stdout=subprocess.PIPE, env=env, cwd=os.path.dirname(_THIS_FILE))
        out, _ = probe.communicate()
        if probe.returncode != 0:
            raise RuntimeError(f"could not read a fresh interpreter's sys.path "
                               f"(exit {probe.returncode})")
        return json.loads(out)

    def serve(self):
        """Runs until stdin closes (the test process ended), then kills children."""
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        while True:
            for key, _ in self._selector.select():
                if key.data == "stdin":
                    self._shutdown()
                    return
                if key.data == "accept":
                    self._accept()
                else:
                    self._reap(key.data)

    def _accept(self):
        conn, _ = self._listener.accept()
        try:
            request, fds = _receive_request(conn)
        except OSError:
            conn.close()
            return
        if request is None:
            conn.close()
            return
        child_path = self._child_path(request)
        refusal = self.refusal(child_path)
        if refusal:
            self._reply(conn, {"refused": refusal})
            conn.close()
        else:
            self._fork(conn, request, fds, child_path)
        for fd in fds:
            os.close(fd)

    def _child_path(self, request):
        """The sys.path a fresh interpreter would start with for `request`."""
        env = request["env"]
        if request["mode"] == "script":
            first = os.path.dirname(os.path.join(request["cwd"], request["target"]))
            first = os.path.realpath(first)
        else:
            first = request["cwd"] if request["mode"] == "-m" else ""
        extra = [os.path.join(request["cwd"], p) if p else request["cwd"]
                 for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        return [first, *extra, *self._base_path]

    @staticmethod
    def refusal(child_path):
        """Why a child with `child_path` must not be forked (a text), or None.

        Every top-level module the server has imported must be what the child's
        import system would find first; else the child would run other code (e.g.
        another checkout's estimator_lite) than a fresh interpreter.
        """
        saved_path, saved_cache = sys.path, dict(sys.path_importer_cache)
        sys.path = [p or os.getcwd() for p in child_path]
        try:
            for name, module in list(sys.modules.items()):
                if "." in name or name == "__main__":
                    continue
                loaded = getattr(module, "__spec__", None)
                # Built-in modules, and modules made in memory (no file, no
                # package dirs), do not depend on sys.path.
                if loaded is None or loaded.origin in ("built-in", "frozen") or (
                        not _where(loaded)):
                    continue
                found = _find_top_level(name)
                # Not importable from the server's start-up path either: a package
                # registered it (an extension under a top name, or a vendored dir
                # pkg_resources adds to sys.path, as TF 2.16's import does), and
                # the child's import of that package does the same.
                if found is None and not _on_path(loaded, _STARTUP_PATH):
                    continue
                if found is None or _where(found) != _where(loaded):
                    return (f"module {name} would come from "
                            f"{found and _where(found)}, not {_where(loaded)}")
            return None
        finally:
            sys.path = saved_path
            sys.path_importer_cache.clear()
            sys.path_importer_cache.update(saved_cache)

    @staticmethod
    def _reply(conn, message):
        # OSError: the test process is gone; nobody waits for this child.
        with contextlib.suppress(OSError):
            conn.sendall(json.dumps(message).encode() + b"\n")

    def _fork(self, conn, request, fds, child_path):
        pid = os.fork()
        if pid == 0:
            try:
                self._become_child(conn, request, fds, child_path)
            finally:
                os._exit(70)  # only reached if becoming the child failed badly
        self._reply(conn, {"pid": pid})
        pidfd = os.pidfd_open(pid)
        self._children[pid] = (conn, pidfd)
        self._selector.register(pidfd, selectors.EVENT_READ, pid)

    def _reap(self, pid):
        conn, pidfd = self._children.pop(pid)
        self._selector.unregister(pidfd)
        os.close(pidfd)
        _, status = os.waitpid(pid, 0)
        self._reply(conn, {"returncode": os.waitstatus_to_exitcode(status)})
        conn.close()

    def _shutdown(self):
        """SIGKILLs children still running (no orphan outlives the test run)."""
        for pid, (conn, pidfd) in list(self._children.items()):
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            os.close(pidfd)
            conn.close()
        self._listener.close()

    def _become_child(self, conn, request, fds, child_path):
        """In the forked child: drop the server's state, then run the program."""
        self._selector.close()
        self._listener.close()
        for other_conn, pidfd in self._children.values():
            other_conn.close()
            os.close(pidfd)
        conn.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in set(fds):
            if fd > 2:
                os.close(fd)
        if request.get("nested"):
            _route_subprocesses(self)
        _run_child(request, child_path)


def _find_top_level(name):
    """The spec the import system would find for top-level `name` on sys.path."""
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        spec = find_spec(name, None)
        if spec is not None:
            return spec
    return None


def _on_path(spec, path):
    """Whether module `spec` sits directly in a `path` entry (importable by name)."""
    where = _where(spec)
    if isinstance(where, tuple):
        return any(os.path.dirname(d) in path for d in where)
    if spec.submodule_search_locations is not None:  # a package's __init__
        where = os.path.dirname(where)
    return os.path.dirname(where) in {os.path.realpath(p) for p in path if p}


def _where(spec):
    """A comparable location of a module spec (file, or a package's dirs)."""
    if spec.origin and spec.origin not in ("namespace", "built-in", "frozen"):
        return os.path.realpath(spec.origin)
    locations = spec.submodule_search_locations
    return tuple(sorted(os.path.realpath(p) for p in locations or ()))


# --------------------------------------------------------------------------------
# The forked child: become `python ARGS`.
# --------------------------------------------------------------------------------

class _KnownServer:
    """The zygote a child was forked from, as the client side sees a server."""

    def __init__(self, path):
        self.path = path

    @staticmethod
    def alive():
        return True

    def stop(self):
        """Nothing: the server belongs to the test process, not to this child."""


def _route_subprocesses(server):
    """Makes this child's subprocess.run/Popen fork from `server` when they can."""
    global _BASE_ENV  # noqa: PLW0603 (the server's start-up env, not the child's)
    _BASE_ENV = server.env
    _SERVERS[server.kind] = _KnownServer(server.socket_path)
    subprocess.Popen = Popen
    subprocess.run = run


def _run_child(request, child_path):
    """Sets up the process as a fresh interpreter would be, runs, and exits."""
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[:] = child_path
    sys.argv[:] = request["argv"]
    sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    importlib.invalidate_caches()
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _fresh_std_streams()
    code = _exit_code_of(_run_main, request)
    _finalize_and_exit(code)


def _fresh_std_streams():
    """sys.stdin/stdout/stderr over fds 0-2, buffered as a fresh interpreter's."""
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    encoding = sys.stdout.encoding if sys.stdout else "utf-8"
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(
        open(0, "rb", closefd=False),  # noqa: SIM115 (lives as long as the process)
        encoding=encoding, errors="strict")
    sys.stdout = sys.__stdout__ = _output_stream(1, encoding, "strict", unbuffered,
                                                 line_buffered=os.isatty(1))
    sys.stderr = sys.__stderr__ = _output_stream(2, encoding, "backslashreplace",
                                                 unbuffered, line_buffered=True)


def _output_stream(fd, encoding, errors, unbuffered, line_buffered):
    raw = open(fd, "wb", buffering=0 if unbuffered else -1,  # noqa: SIM115 (as stdin)
               closefd=False)
    return io.TextIOWrapper(raw, encoding=encoding, errors=errors,
                            line_buffering=line_buffered or unbuffered,
                            write_through=unbuffered)


def _run_main(request):
    """Runs the program as `__main__` (a script path, `-m module` or `-c code`)."""
    mode, target = request["mode"], request["target"]
    if mode == "-m":
        import runpy  # noqa: PLC0415 (only children run modules)
        runpy._run_module_as_main(target, alter_argv=True)  # noqa: SLF001 (as `python -m`)
        return
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins
    if mode == "-c":
        filename, source = "<string>", target
        if sys.version_info >= (3, 13):
            # Python 3.13's `-c` keeps the code in linecache, so its tracebacks show
            # the lines (with carets); 3.11/3.12 show none.
            linecache.cache[filename] = (len(source), None, [
                line + "\n" for line in source.splitlines()], filename)
    else:
        filename = os.path.abspath(target)  # as __main__.__file__ is since 3.9
        with open(filename, "rb") as f:
            source = f.read()
        main.__file__ = filename
        main.__cached__ = None
        main.__loader__ = importlib.machinery.SourceFileLoader("__main__", filename)
    sys.modules["__main__"] = main
    exec(compile(source, filename, "exec"), main.__dict__)  # noqa: S102 (the program)


def _exit_code_of(function, *args):
    """Calls `function` and maps how it ended to an exit code, as Python's main does."""
    try:
        function(*args)
        return 0
    except SystemExit as e:
        return _system_exit_code(e)
    except KeyboardInterrupt as e:
        _print_program_traceback(e)
        return -signal.SIGINT
    except BaseException as e:  # noqa: BLE001 (any uncaught exception: exit 1)
        _print_program_traceback(e)
        return 1


def _print_program_traceback(exception):
    """Prints `exception` as Python would: without this module's frames on top."""
    tb = exception.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == _THIS_FILE:
        tb = tb.tb_next
    traceback.print_exception(type(exception), exception, tb)


def _system_exit_code(exit_exception):
    code = exit_exception.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _finalize_and_exit(code):
    """Joins non-daemon threads, runs atexit handlers, flushes; exits with `code`.

    A negative `code` (uncaught KeyboardInterrupt) re-raises that signal with its
    default action, as CPython does.
    """
    with contextlib.suppress(BaseException):  # exiting anyway
        threading._shutdown()  # noqa: SLF001 (what interpreter shutdown calls)
    atexit._run_exitfuncs()  # noqa: SLF001
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


def _serve_main(argv):
    """`python zygote.py SOCKET KIND`: preload, print `ready`, serve until stdin closes."""
    socket_path, kind = argv
    # The server itself must survive a SIGINT aimed at the test run's process group
    # only through its stdin closing; the children reset their handlers.
    _ZygoteServer(socket_path, kind).serve()


if __name__ == "__main__":
    _serve_main(sys.argv[1:])
