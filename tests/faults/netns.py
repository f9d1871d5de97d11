"""A fault cluster whose roles each live in their own Linux network namespace.

`NetnsCluster` is `cluster.Cluster` (same roles, logs, model_dir readers) with a
private network: one namespace per role, each joined to one Linux bridge by a
veth pair, addresses ``10.213.<net>.<k>/24`` and the same port 2222 in every
namespace. The ``TF_CONFIG`` of every role names those addresses, and each role
runs as ``ip netns exec <ns> python netns_job.py ...``. A test can then cut one
role's link (``partition``), restore it (``heal``), and, where the kernel has
``sch_netem``, add delay and loss on it (``netem``).

Names carry a random token (namespaces ``elf<token>-<role>``, bridge
``elb<token>``, veths ``elv<token><k>``), so tests running side by side never
share a device; `close` deletes all of them, also after a failed test.

Needs root and iproute2 (`unavailable_reason` says what is missing). The model
dir is on the shared file system (`ip netns exec` changes only the network).
"""

import os
import secrets
import shutil
import subprocess
import sys

from tests.faults.cluster import Cluster

__all__ = ["NetnsCluster", "unavailable_reason", "netem_unavailable_reason",
           "ORACLE_LIBRARY", "LIBRARY_ENV"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_JOB = os.path.join(_HERE, "netns_job.py")
_PORT = 2222
_IP_SECS = 30
# Read by netns_job.py: which estimator library the job imports.
LIBRARY_ENV = "FAULTS_JOB_LIBRARY"
ORACLE_LIBRARY = "tf.estimator"


def _ip(*args, check=True):
    """Runs `ip <args>`; returns the CompletedProcess."""
    return subprocess.run(["ip", *args], capture_output=True, text=True,
                          timeout=_IP_SECS, check=check)


def unavailable_reason():
    """Why network namespaces cannot be used here, or None when they can."""
    if shutil.which("ip") is None:
        return "needs iproute2's `ip` command (network namespaces)"
    if os.geteuid() != 0:
        return "needs root to create network namespaces, veth pairs and a bridge"
    name = f"elprobe{secrets.token_hex(3)}"
    try:
        made = _ip("netns", "add", name, check=False)
        if made.returncode != 0:
            return f"`ip netns add` fails here: {made.stderr.strip()}"
        made = _ip("link", "add", f"b{name}"[:15], "type", "bridge", check=False)
        if made.returncode != 0:
            return f"cannot create a Linux bridge: {made.stderr.strip()}"
        _ip("link", "del", f"b{name}"[:15], check=False)
        return None
    finally:
        _ip("netns", "del", name, check=False)


def netem_unavailable_reason():
    """Why `tc qdisc ... netem` cannot run here, or None when it can."""
    if shutil.which("tc") is None:
        return "needs iproute2's `tc` command"
    name = f"elq{secrets.token_hex(3)}"
    try:
        _ip("link", "add", name, "type", "veth", "peer", "name", f"{name}p")
        result = subprocess.run(["tc", "qdisc", "add", "dev", name, "root", "netem",
                                 "delay", "1ms"], capture_output=True, text=True,
                                timeout=_IP_SECS, check=False)
        if result.returncode != 0:
            return f"kernel lacks sch_netem ({result.stderr.strip()})"
        return None
    finally:
        _ip("link", "del", name, check=False)


class NetnsCluster(Cluster):
    """ps + chief + workers + evaluator, one network namespace per role."""

    def __init__(self, work_dir, job_args=(), num_workers=1, num_ps=1,
                 python=sys.executable, library=None):
        """Creates the namespaces, bridge and links; starts no process.

        Args:
          work_dir / job_args / num_workers / num_ps: as `Cluster`.
          python: the interpreter each role runs (the oracle's for tf.estimator).
          library: None for estimator_lite, `ORACLE_LIBRARY` for tf.estimator.
        """
        super().__init__(work_dir, job_args, num_workers=num_workers, num_ps=num_ps,
                         program=_JOB, python=python)
        self.library = library
        self.token = secrets.token_hex(3)
        self.bridge = f"elb{self.token}"
        net = int(self.token[:2], 16) % 250 + 1
        self._addresses = {}
        self._namespaces = {}
        self._host_links = {}
        for k, label in enumerate(self.labels(), start=1):
            self._addresses[label] = f"10.213.{net}.{k}"
            self._namespaces[label] = f"elf{self.token}-{label}"
            self._host_links[label] = f"elv{self.token}{k}"
        self.spec = {task_type: [f"{self._addresses[f'{task_type}{i}']}:{_PORT}"
                                 for i in range(len(addresses))]
                     for task_type, addresses in self.spec.items()}
        self._created = []
        try:
            self._create_network()
        except BaseException:
            self.close()
            raise

    def _create_network(self):
        _ip("link", "add", self.bridge, "type", "bridge")
        self._created.append(("link", self.bridge))
        _ip("link", "set", self.bridge, "up")
        for label in self.labels():
            ns, host = self._namespaces[label], self._host_links[label]
            _ip("netns", "add", ns)
            self._created.append(("netns", ns))
            _ip("link", "add", host, "type", "veth", "peer", "name", f"{host}n")
            self._created.append(("link", host))
            _ip("link", "set", f"{host}n", "netns", ns)
            _ip("link", "set", host, "master", self.bridge)
            _ip("link", "set", host, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "addr", "add", f"{self._addresses[label]}/24", "dev",
                f"{host}n")
            _ip("-n", ns, "link", "set", f"{host}n", "up")

    def address(self, label):
        """The IP address of role `label`."""
        return self._addresses[label]

    def namespace(self, label):
        """The network namespace role `label` runs in."""
        return self._namespaces[label]

    def _role_env(self, role):
        """Cluster's, with this cluster's library (FAULTS_JOB_LIBRARY) or none."""
        env = super()._role_env(role)
        env.pop(LIBRARY_ENV, None)
        if self.library:
            env[LIBRARY_ENV] = self.library
        return env

    def _launcher(self, label):
        # `ip netns exec` execs the command: the Popen's pid is the job's own.
        return ["ip", "netns", "exec", self._namespaces[label], "nice", "-n", "10"]

    # A plain subprocess: `ip` (not an interpreter) runs first.
    _popen = staticmethod(subprocess.Popen)

    # Faults --------------------------------------------------------------------------

    def partition(self, label):
        """Cuts role `label` off the bridge (its link goes down, both ends)."""
        _ip("link", "set", self._host_links[label], "down")

    def heal(self, label):
        """Puts role `label` back on the bridge."""
        _ip("link", "set", self._host_links[label], "up")

    def netem(self, label, delay_ms=0, loss_percent=0):
        """Delays and drops packets to and from role `label` (needs sch_netem)."""
        rule = ["netem"]
        if delay_ms:
            rule += ["delay", f"{delay_ms}ms"]
        if loss_percent:
            rule += ["loss", f"{loss_percent}%"]
        host = self._host_links[label]
        subprocess.run(["tc", "qdisc", "replace", "dev", host, "root", *rule],
                       check=True, timeout=_IP_SECS)
        subprocess.run(["ip", "netns", "exec", self._namespaces[label], "tc", "qdisc",
                        "replace", "dev", f"{host}n", "root", *rule], check=True,
                       timeout=_IP_SECS)

    # Cleanup -------------------------------------------------------------------------

    def close(self):
        """Kills every process still running, deletes every device and namespace."""
        self.stop_all()
        for kind, name in reversed(self._created):
            if kind == "netns":
                _ip("netns", "del", name, check=False)
            else:
                _ip("link", "del", name, check=False)
        self._created = []
