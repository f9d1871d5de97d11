"""The launcher's network: its roles are unreachable from other hosts by default.

TensorFlow's gRPC server listens on every interface, unauthenticated. The
launcher (``--network auto``, the default) runs its roles in a private network
namespace where the OS allows it and the job needs no network; these tests show
the rule, the one line it prints, roles that still reach each other, and a
second network namespace standing for another host: it cannot reach a real
`tf.distribute.Server` of the launcher's cluster, and can with ``--network host``.
"""

import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

from estimator_lite import launch
from estimator_lite._engine import private_network

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_DEADLINE_SECS = 120
# Each role listens on its TF_CONFIG port on every interface (as TensorFlow's
# server does), connects to every task of the cluster, and prints its network
# namespace and uid.
_ROLE = """
import json, os, socket, sys, time
config = json.loads(os.environ["TF_CONFIG"])
me = config["cluster"][config["task"]["type"]][config["task"]["index"]]
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("0.0.0.0", int(me.rsplit(":", 1)[1])))
server.listen(8)
print("netns", os.readlink("/proc/self/ns/net"), "uid", os.getuid(), flush=True)
for address in sum(config["cluster"].values(), []):
    host, port = address.rsplit(":", 1)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection((host, int(port)), 1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                sys.exit("cannot reach " + address)
            time.sleep(0.05)
print("reached every task", flush=True)
time.sleep(1)  # the others may still be connecting to this one
"""
# A real TensorFlow server for the launcher's one role, serving until killed.
_TF_SERVER = """
import json, os, time
import tensorflow as tf
config = json.loads(os.environ["TF_CONFIG"])
tf.distribute.Server(tf.train.ClusterSpec(config["cluster"]),
                     job_name=config["task"]["type"],
                     task_index=config["task"]["index"], start=True)
print("serving", flush=True)
time.sleep(600)
"""


def _private_unavailable():
    """Why this machine cannot give the roles a private network, or None."""
    network, why_not = private_network._start_holder()
    if network is not None:
        network.close()
    return why_not


_UNAVAILABLE = _private_unavailable()


def test_the_rule():
    assert private_network.choose("auto", None, ["python", "train.py"])[0] is True
    assert private_network.choose("auto", "/tmp/model", ["python", "t.py"])[0] is True
    private, reason = private_network.choose("auto", "gs://bucket/model", ["python"])
    assert private is False and "'gs://bucket/model' needs the network" in reason
    private, reason = private_network.choose(
        "auto", None, ["python", "t.py", "--data=s3://bucket/train"])
    assert private is False and "s3://bucket/train" in reason
    assert private_network.choose("host", None, ["python"]) == (False, "--network host")
    assert private_network.choose("private", "gs://b/m", ["python"])[0] is True
    with pytest.raises(ValueError, match="network mode must be one of .* 'lan'"):
        private_network.choose("lan", None, ["python"])


def _lines(out, marker):
    return [line for line in out.splitlines() if marker in line]


def test_roles_share_one_private_network_by_default(capsys):
    code = launch.main(["--ps", "1", "--workers", "1", "--", sys.executable, "-c",
                        _ROLE])
    out = capsys.readouterr().out
    assert code == 0, out
    (line,) = _lines(out, "[launch] network: ")
    if _UNAVAILABLE is not None:
        assert f"a private network namespace is unavailable here: {_UNAVAILABLE}" in line
        pytest.skip(f"no private network here: {_UNAVAILABLE}")
    assert line.startswith("[launch] network: private (the default where the job "
                           "needs no network)"), line
    namespaces = {line.split()[2] for line in _lines(out, "] netns ")}
    assert len(_lines(out, "] netns ")) == 3 and len(namespaces) == 1, out
    assert namespaces != {os.readlink("/proc/self/ns/net")}
    assert len(_lines(out, "reached every task")) == 3, out


def test_host_network_when_asked_or_when_the_job_needs_the_network(capsys):
    code = launch.main(["--ps", "0", "--workers", "0", "--model-dir",
                        "gs://bucket/model", "--", sys.executable, "-c", _ROLE])
    out = capsys.readouterr().out
    assert code == 0, out
    (line,) = _lines(out, "[launch] network: ")
    assert line.startswith("[launch] network: host ('gs://bucket/model' needs the "
                           "network; --network private to isolate the roles anyway)")
    assert "any host that reaches this machine can reach the roles' ports" in line
    (role,) = _lines(out, "] netns ")
    assert role.split()[2] == os.readlink("/proc/self/ns/net")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to run as an unprivileged user")
def test_an_unprivileged_user_gets_a_private_network_keeping_its_uid():
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    # The holder and the joiner need only the standard library: the system's
    # interpreter, which user nobody can read (a venv's may live under /root).
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    if subprocess.run([*nobody, python, "-c", "pass"], check=False,
                      capture_output=True).returncode != 0:
        pytest.skip(f"user nobody cannot run {python}")
    holder = subprocess.Popen(
        [*nobody, python, "-I", private_network.__file__, "hold"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        ready = holder.stdout.readline().strip()
        if ready != "ready":
            pytest.skip(f"no unprivileged user namespaces here: {ready}")
        check = ("import os, socket\n"
                 "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
                 "socket.create_connection(s.getsockname()).close()\n"
                 "print(os.getuid(), os.readlink('/proc/self/ns/net'))")
        result = subprocess.run(
            [*nobody, python, "-I", private_network.__file__, "join",
             str(holder.pid), "--", python, "-c", check],
            check=False, capture_output=True, text=True, timeout=_DEADLINE_SECS)
        assert result.returncode == 0, result.stderr
        uid, namespace = result.stdout.split()
        assert uid == "65534" and namespace != os.readlink("/proc/self/ns/net")
    finally:
        holder.stdin.close()
        holder.wait(timeout=_DEADLINE_SECS)


# Another host: a second network namespace joined to this one by a veth pair ------


def _ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@pytest.fixture
def other_host():
    """(namespace, this machine's address as the other host sees it)."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and iproute2 for a second network namespace")
    token = secrets.token_hex(3)
    namespace, link = f"elo{token}", f"elo{token}h"
    net = int(token[:2], 16) % 250 + 1
    _ip("netns", "add", namespace)
    try:
        _ip("link", "add", link, "type", "veth", "peer", "name", f"{link}o")
        _ip("link", "set", f"{link}o", "netns", namespace)
        _ip("addr", "add", f"10.214.{net}.1/24", "dev", link)
        _ip("link", "set", link, "up")
        _ip("-n", namespace, "addr", "add", f"10.214.{net}.2/24", "dev", f"{link}o")
        _ip("-n", namespace, "link", "set", f"{link}o", "up")
        _ip("-n", namespace, "link", "set", "lo", "up")
        yield namespace, f"10.214.{net}.1"
    finally:
        for args in (["link", "del", link], ["netns", "del", namespace]):
            subprocess.run(["ip", *args], check=False, capture_output=True, timeout=30)


def _connects_from(namespace, host, port):
    """'connected' or the error a client in `namespace` gets."""
    probe = ("import socket, sys\n"
             "try:\n"
             f"    socket.create_connection(({host!r}, {port}), 5).close()\n"
             "    print('connected')\n"
             "except OSError as e:\n"
             "    print(type(e).__name__)\n")
    result = subprocess.run(["ip", "netns", "exec", namespace, sys.executable, "-c",
                             probe], check=False, capture_output=True, text=True,
                            timeout=60)
    return result.stdout.strip() or result.stderr


def _serving_launcher(network):
    """Starts the launcher with one TensorFlow server role; returns (process, port,
    the network line) once the server serves."""
    launcher = subprocess.Popen(
        [sys.executable, "-m", "estimator_lite.launch", "--ps", "0", "--workers", "0",
         "--network", network, "--", sys.executable, "-c", _TF_SERVER],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=_ROOT,
        env=dict(os.environ, PYTHONPATH=_ROOT, TF_CPP_MIN_LOG_LEVEL="2"))
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(launcher.stdout), daemon=True)
    reader.start()
    deadline = time.monotonic() + _DEADLINE_SECS
    while not any("[chief] serving" in line for line in lines):
        assert launcher.poll() is None, "".join(lines)
        assert time.monotonic() < deadline, "".join(lines)
        time.sleep(0.1)
    (cluster,) = [line for line in lines if line.startswith("[launch] cluster ")]
    port = int(cluster.split("127.0.0.1:")[1].split("'")[0])
    (network_line,) = [line for line in lines if line.startswith("[launch] network: ")]
    return launcher, port, network_line


def _stop(launcher):
    launcher.send_signal(signal.SIGINT)
    assert launcher.wait(timeout=_DEADLINE_SECS) == 130


def _connects_from_other_host(other_host, network, network_line):
    """Starts a serving launcher with `--network <network>` (its network line starts
    with `network_line`); returns what connecting to its role's port from the other
    host gave."""
    namespace, address = other_host
    launcher, port, line = _serving_launcher(network)
    try:
        assert line.startswith(network_line), line
        return _connects_from(namespace, address, port)
    finally:
        _stop(launcher)


@pytest.mark.skipif(_UNAVAILABLE is not None, reason=f"no private network: {_UNAVAILABLE}")
def test_another_host_cannot_reach_the_roles_unless_network_host(other_host):
    private = _connects_from_other_host(other_host, "auto", "[launch] network: private")
    shared = _connects_from_other_host(other_host, "host",
                                       "[launch] network: host (--network host)")
    print(f"from another host to the TensorFlow server's port: private network: "
          f"{private}; host network: {shared}")
    assert private == "ConnectionRefusedError"
    assert shared == "connected"
