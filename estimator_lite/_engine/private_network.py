"""A private network for the launcher's roles: nobody else reaches their ports.

TensorFlow's gRPC server listens on every interface (``*:port``, whatever host
TF_CONFIG names) and has no authentication: any host that reaches a port can
run graph ops, reading and writing files, on that task. So the local launcher
runs its roles in one Linux network namespace of their own: they reach each
other on 127.0.0.1 as before, and nothing outside the namespace reaches them
(nor do they reach other hosts).

How: a small *holder* process (this file run as a script, ``hold``) calls
``unshare(CLONE_NEWNET)`` (as root) or ``unshare(CLONE_NEWUSER | CLONE_NEWNET)``
(unprivileged, where the kernel allows user namespaces: the user keeps its own
uid and gid) and brings the namespace's loopback up; every role is started as
``join <holder pid> -- COMMAND``, which enters the holder's namespaces and
``exec``s COMMAND (same pid, same signals). The holder lives until the launcher
closes its stdin (or dies). Standard library only; run by path, so no
TensorFlow import.

`choose` is the launcher's rule (``--network auto|private|host``); `open_network`
starts the holder and returns the one line the launcher prints.
"""

import ctypes
import errno
import os
import socket
import struct
import subprocess
import sys

__all__ = ["MODES", "choose", "open_network", "PrivateNetwork"]

MODES = ("auto", "private", "host")
_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
# struct ifreq: a 16-byte interface name, then a union whose first member (the
# flags, a short) is all we touch; 40 bytes in all on 64-bit Linux.
_IFREQ = "16sh22x"
_READY = "ready"
_HOLDER_START_SECS = 30
_HOLDER_STOP_SECS = 10


def choose(mode, model_dir, command):
    """Whether the roles get a private network, and why.

    Args:
      mode: ``auto`` (private unless the job needs the network: a URL such as
        ``gs://bucket/dir`` as ``model_dir`` or in the command's arguments),
        ``private`` or ``host``.
      model_dir: the launcher's ``--model-dir`` (or None).
      command: the command run once per role.

    Returns:
      (private, reason): a bool and the words the printed line gives.

    Raises:
      ValueError: `mode` is not one of MODES.
    """
    if mode not in MODES:
        raise ValueError(f"network mode must be one of {MODES}, got {mode!r}")
    if mode == "host":
        return False, "--network host"
    if mode == "private":
        return True, "--network private"
    urls = [arg for arg in [model_dir or "", *command] if "://" in arg]
    if urls:
        return False, (f"{urls[0]!r} needs the network; --network private to "
                       "isolate the roles anyway")
    return True, "the default where the job needs no network"


class PrivateNetwork:
    """The holder process of one network namespace, and how to start roles in it."""

    def __init__(self, holder):
        self._holder = holder

    @property
    def pid(self):
        return self._holder.pid

    def wrap(self, command):
        """The command that runs `command` inside this network namespace."""
        return [sys.executable, "-I", os.path.abspath(__file__), "join",
                str(self._holder.pid), "--", *command]

    def close(self):
        """Ends the holder; roles still running keep the namespace alive."""
        if self._holder.poll() is None:
            self._holder.stdin.close()
            try:
                self._holder.wait(timeout=_HOLDER_STOP_SECS)
            except subprocess.TimeoutExpired:
                self._holder.kill()
                self._holder.wait()
        self._holder.stdout.close()


def _start_holder():
    """Starts a holder; returns (PrivateNetwork, None) or (None, why not)."""
    if not sys.platform.startswith("linux"):
        return None, f"network namespaces are Linux only (this is {sys.platform})"
    holder = subprocess.Popen(
        [sys.executable, "-I", os.path.abspath(__file__), "hold"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    # The holder answers at once (no TensorFlow there): one line, ready or why not.
    line = holder.stdout.readline().strip()
    if line == _READY:
        return PrivateNetwork(holder), None
    holder.stdin.close()
    holder.wait(timeout=_HOLDER_START_SECS)
    holder.stdout.close()
    return None, line or f"the namespace holder exited {holder.returncode}"


def open_network(mode, model_dir, command):
    """Applies the rule: starts a private network when it is chosen and possible.

    Args:
      mode / model_dir / command: as `choose`.

    Returns:
      (PrivateNetwork or None, the line to print). None: the roles share this
      machine's network.

    Raises:
      RuntimeError: ``private`` was asked for and this OS does not allow it.
    """
    private, reason = choose(mode, model_dir, command)
    if private:
        network, why_not = _start_holder()
        if network is not None:
            return network, (
                f"network: private ({reason}): the roles run in their own network "
                "namespace and reach each other on 127.0.0.1; no other host can "
                "reach their ports, and they reach no other host (--network host "
                "to share this machine's network)")
        if mode == "private":
            raise RuntimeError(f"--network private: cannot create a private network "
                               f"namespace here: {why_not}")
        reason = f"a private network namespace is unavailable here: {why_not}"
    return None, (
        f"network: host ({reason}): TensorFlow's servers listen on every interface "
        "without authentication, so any host that reaches this machine can reach "
        "the roles' ports")


# The holder and the joiner (this file run as a script) -------------------------------


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _check(result, what):
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def _unshare_network():
    """Moves this (single-threaded) process into a new network namespace: a plain
    one with CAP_SYS_ADMIN (root), else inside a new user namespace where the
    user keeps its uid and gid."""
    libc = _libc()
    if libc.unshare(_CLONE_NEWNET) == 0:
        return
    if ctypes.get_errno() != errno.EPERM:
        _check(-1, "unshare(CLONE_NEWNET)")
    uid, gid = os.geteuid(), os.getegid()
    _check(libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET),
           "unshare(CLONE_NEWUSER | CLONE_NEWNET)")
    # The kernel requires setgroups to be denied before an unprivileged gid_map.
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")


def _bring_up_loopback():
    """A new network namespace's `lo` is down: 127.0.0.1 needs it up."""
    import fcntl  # noqa: PLC0415 - POSIX only; launch imports this module everywhere
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack(_IFREQ, b"lo", 0)
        flags = struct.unpack(_IFREQ, fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack(_IFREQ, b"lo", flags | _IFF_UP))


def _hold():
    """Creates the namespace, says so on stdout, and lives until stdin closes."""
    try:
        _unshare_network()
        _bring_up_loopback()
    except OSError as e:
        print(f"{type(e).__name__}: {e}", flush=True)
        return 1
    print(_READY, flush=True)
    sys.stdin.read()  # EOF: the launcher closed it, or died
    return 0


def _join(pid, command):
    """Enters process `pid`'s network namespace (and its user namespace, when it
    has its own) and execs `command`."""
    libc = _libc()
    mine = os.readlink("/proc/self/ns/user")
    if os.readlink(f"/proc/{pid}/ns/user") != mine:
        with open(f"/proc/{pid}/ns/user") as f:
            _check(libc.setns(f.fileno(), _CLONE_NEWUSER), "setns(user)")
    with open(f"/proc/{pid}/ns/net") as f:
        _check(libc.setns(f.fileno(), _CLONE_NEWNET), "setns(net)")
    os.execvp(command[0], command)


def _main(argv):
    if argv[:1] == ["hold"]:
        return _hold()
    if argv[:1] == ["join"] and len(argv) > 3 and argv[2] == "--":
        try:
            _join(int(argv[1]), argv[3:])
        except OSError as e:
            print(f"private network: cannot start {argv[3]!r} in the namespace of "
                  f"process {argv[1]}: {e}", file=sys.stderr, flush=True)
            return 1
    print("usage: private_network.py hold | join PID -- COMMAND", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
