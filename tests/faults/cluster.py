"""A cluster of `job.py` subprocesses on 127.0.0.1 for fault-injection tests.

Each role (ps, chief, workers, evaluator) is one `sys.executable job.py` process
(forked from tests/support/zygote.py's warm interpreter) with its own TF_CONFIG; its
output (stdout and stderr) goes to a log file per incarnation under the test's
tmp dir. The harness signals, restarts and waits for roles, polls conditions with
deadlines (no fixed sleeps), and reads what a model_dir holds (checkpoints,
evaluations, exports) through the library's own on-disk names.
"""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import tensorflow as tf

import estimator_lite as el
from estimator_lite._engine import model_dir as model_dir_lib

# The one import of the local-cluster helpers (moved here from estimator_lite.cluster).
from estimator_lite._engine.local_cluster import local_cluster_spec, tf_config
from tests.faults.job import EXPORTER_NAME
from tests.faults.job_parts import ROLLBACK_TAG
from tests.support import zygote

__all__ = ["Cluster", "wait_for", "restores", "export_step", "EXPORTER_NAME"]

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "job.py")
_POLL_SECS = 0.01
_LOG_TAIL_LINES = 40
# A SIGKILLed process is gone at once; this only bounds a wedged kernel.
_KILL_WAIT_SECS = 30


def wait_for(condition, timeout_secs, what):
    """Polls `condition()` until it returns something true, and returns that.

    Raises:
      AssertionError: `timeout_secs` passed first (the message says `what`).
    """
    deadline = time.monotonic() + timeout_secs
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout_secs} s waiting for {what}")
        time.sleep(_POLL_SECS)


def restores(checkpoint_path):
    """Whether every tensor of a checkpoint reads back, global_step included.

    Returns:
      (True, step) or (False, the error text).
    """
    try:
        reader = tf.compat.v1.train.NewCheckpointReader(checkpoint_path)
        for name in reader.get_variable_to_shape_map():
            reader.get_tensor(name)
        return True, int(reader.get_tensor(tf.compat.v1.GraphKeys.GLOBAL_STEP))
    except (tf.errors.OpError, ValueError, RuntimeError) as e:
        return False, f"{type(e).__name__}: {e}"


class _Role:
    """One task of the cluster and the processes that ran it, oldest first."""

    def __init__(self, task_type, index):
        self.task_type = task_type
        self.index = index
        self.processes = []
        self.logs = []

    @property
    def label(self):
        return f"{self.task_type}{self.index}"

    @property
    def process(self):
        return self.processes[-1] if self.processes else None


STRAGGLER_GRACE_ENV = "ESTIMATOR_LITE_STRAGGLER_GRACE_SECS"
STRAGGLER_GRACE_SECS = 15


class Cluster:
    """ps + chief + workers (+ evaluator) processes sharing one model_dir."""

    def __init__(self, work_dir, job_args=(), num_workers=1, num_ps=1, chief=True,
                 program=_JOB, python=None, env=None):
        """Picks the ports; starts nothing.

        Args:
          work_dir: the test's tmp dir (model_dir, logs and status files go there).
          job_args: flags given to every role's program.
          num_workers: workers besides the chief in the cluster spec.
          num_ps: ps tasks in the cluster spec.
          chief: whether the cluster spec has a chief task (False: worker-only,
            MultiWorkerMirroredStrategy's usual shape).
          program: the program every role runs (job.py by default).
          python: the interpreter (default: this one; TF 2.15's for the oracle).
          env: more environment variables for every role.
        """
        self.work_dir = os.fspath(work_dir)
        self.model_dir = os.path.join(self.work_dir, "model")
        self.log_dir = os.path.join(self.work_dir, "logs")
        self.status_dir = os.path.join(self.work_dir, "status")
        for path in (self.log_dir, self.status_dir):
            os.makedirs(path, exist_ok=True)
        self.job_args = list(job_args)
        self.program = program
        self.python = python or sys.executable
        self.env = dict(env or {})
        self.spec = local_cluster_spec(num_ps=num_ps, num_workers=num_workers,
                                       chief=chief)
        self._roles = {}
        for task_type in ("ps", "chief", "worker"):
            for index in range(len(self.spec.get(task_type, ()))):
                role = _Role(task_type, index)
                self._roles[role.label] = role
        self._roles["evaluator0"] = _Role("evaluator", 0)

    # Processes ---------------------------------------------------------------------

    def start(self, label, extra_args=()):
        """Starts (or restarts) role `label`, e.g. 'ps0', 'chief0', 'evaluator0'."""
        role = self._roles[label]
        if role.process is not None and role.process.poll() is None:
            raise AssertionError(f"{label} is still running (pid {role.process.pid})")
        log_path = os.path.join(self.log_dir, f"{label}.{len(role.processes)}.log")
        args = [*self._launcher(label), self.python, self.program, "--model-dir",
                self.model_dir, "--status-dir", self.status_dir, *self.job_args,
                *extra_args]
        with open(log_path, "wb") as log:
            role.processes.append(self._popen(args, stdout=log,
                                              stderr=subprocess.STDOUT,
                                              env=self._role_env(role),
                                              cwd=self.work_dir))
        role.logs.append(log_path)
        return role.process

    def _role_env(self, role):
        """The environment a role's process starts with."""
        env = dict(os.environ, PYTHONPATH=_ROOT, TF_CPP_MIN_LOG_LEVEL="1",
                   TF_CONFIG=tf_config(self.spec_for(role.label), role.task_type,
                                       role.index),
                   **self.env)
        # Operators tune how long roles wait for stragglers; 15 s instead of 60 s
        # keeps the missing-worker and late-role scenarios short.
        env.setdefault(STRAGGLER_GRACE_ENV, str(STRAGGLER_GRACE_SECS))
        return env

    def _launcher(self, label):
        """What runs before the interpreter on a role's command line (nothing here;
        netns.py runs each role inside its network namespace)."""
        del label
        return []

    # Forked from the test fork server: each role is still its own process.
    _popen = staticmethod(zygote.Popen)

    def spec_for(self, label):
        """The cluster spec in role `label`'s TF_CONFIG (the same for every role
        here; proxied.py gives each role its own addresses of its peers)."""
        del label
        return self.spec

    def start_all(self, labels=None):
        """Starts the given roles (default: every role), ps first."""
        for label in labels or list(self._roles):
            self.start(label)

    def labels(self):
        """Every role's label."""
        return list(self._roles)

    def started_labels(self):
        """Labels of the roles that were started at least once."""
        return [label for label, role in self._roles.items() if role.processes]

    def process(self, label):
        """The newest process of role `label` (None if never started)."""
        return self._roles[label].process

    def incarnations(self, label):
        """How many processes role `label` ran so far."""
        return len(self._roles[label].processes)

    def process_of(self, label, incarnation):
        """The process of one incarnation of `label` (0: the first)."""
        return self._roles[label].processes[incarnation]

    def running(self, label):
        """Whether the newest process of `label` is alive."""
        process = self.process(label)
        return process is not None and process.poll() is None

    def signal(self, label, sig):
        """Sends `sig` to the newest process of `label`."""
        self.process(label).send_signal(sig)

    def kill(self, label):
        """SIGKILLs role `label` and waits for it; returns its exit code."""
        self.signal(label, signal.SIGKILL)
        return self.wait_exit(label, _KILL_WAIT_SECS)

    def wait_exit(self, label, timeout_secs):
        """Waits for the newest process of `label` to exit; returns its code.

        Raises:
          AssertionError: it is still running after `timeout_secs`.
        """
        try:
            return self.process(label).wait(timeout=timeout_secs)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{label} did not exit within {timeout_secs} s") from None

    def wait_all_exit(self, timeout_secs, labels=None):
        """Waits (one shared deadline) for every started role; returns {label: code}.

        Stops waiting as soon as one role exits non-zero: the job failed, and the
        others may wait for it forever.

        Raises:
          AssertionError: a role exited non-zero, or some role is still running at
            the deadline (the message gives every role's exit code, None = running).
        """
        labels = labels or self.started_labels()
        deadline = time.monotonic() + timeout_secs
        while True:
            codes = {label: self.process(label).poll() for label in labels}
            failed = {label: code for label, code in codes.items() if code}
            if failed:
                raise AssertionError(f"roles {sorted(failed)} exited non-zero; exit "
                                     f"codes (None = still running): {codes}")
            if all(code is not None for code in codes.values()):
                return codes
            if time.monotonic() >= deadline:
                stuck = sorted(label for label, code in codes.items() if code is None)
                raise AssertionError(f"roles {stuck} still running {timeout_secs} s "
                                     f"later; exit codes so far: {codes}")
            time.sleep(_POLL_SECS * 10)

    def close(self):
        """Ends the cluster: its processes (a subclass releases what else it made)."""
        self.stop_all()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def stop_all(self):
        """SIGKILLs every process this cluster started that is still alive."""
        for role in self._roles.values():
            for process in role.processes:
                if process.poll() is None:
                    process.kill()
                    process.wait(timeout=_KILL_WAIT_SECS)

    def log_text(self, label, incarnation=-1):
        """The whole log of one incarnation of `label`."""
        with open(self._roles[label].logs[incarnation], encoding="utf-8",
                  errors="replace") as f:
            return f.read()

    def log_tails(self, lines=_LOG_TAIL_LINES):
        """The last `lines` lines of every log, each under a header."""
        parts = []
        for role in self._roles.values():
            for i, path in enumerate(role.logs):
                with open(path, encoding="utf-8", errors="replace") as f:
                    tail = f.read().splitlines()[-lines:]
                code = role.processes[i].poll()
                parts.append(f"===== {role.label} run {i} (exit {code}) {path}\n" +
                             "\n".join(tail))
        return "\n".join(parts)

    def step_seen(self, label):
        """The global step `label` (a trainer) last wrote to its status file, or None."""
        role = self._roles[label]
        path = os.path.join(self.status_dir, f"{role.task_type}-{role.index}.step")
        try:
            with open(path, encoding="utf-8") as f:
                return int(f.read())
        except FileNotFoundError:
            return None

    def steps_lost(self, label):
        """Total global steps `label` saw thrown away (the step went back), all runs."""
        lost = 0
        for i in range(len(self._roles[label].logs)):
            for line in self.log_text(label, i).splitlines():
                if ROLLBACK_TAG in line:
                    before, after = line.rsplit(ROLLBACK_TAG, 1)[1].split()
                    lost += int(before) - int(after)
        return lost

    # The model_dir -------------------------------------------------------------------

    def checkpoint_paths(self):
        """Every checkpoint the `checkpoint` state file lists, oldest first."""
        try:
            return model_dir_lib.checkpoint_paths(self.model_dir)
        except tf.errors.OpError:
            return []  # the state file is being replaced right now

    def latest_checkpoint_step(self):
        """The step in the name of the newest listed checkpoint, or -1."""
        paths = self.checkpoint_paths()
        return int(paths[-1].rsplit("-", 1)[-1]) if paths else -1

    def eval_steps(self):
        """The global steps evaluated so far (from the eval dir's event files)."""
        return sorted(el.read_eval_metrics(model_dir_lib.eval_dir(self.model_dir)))

    def export_base(self):
        """``<model_dir>/export/<exporter>``."""
        return model_dir_lib.export_dir(self.model_dir, EXPORTER_NAME)

    def exports(self):
        """Finished (timestamp-named) exports, oldest first."""
        base = self.export_base()
        if not os.path.isdir(base):
            return []
        return [os.path.join(base, n) for n in sorted(os.listdir(base), key=_stamp_key)
                if model_dir_lib.is_export_timestamp(n)]

    def temp_exports(self):
        """Leftover temp dirs anywhere under ``<model_dir>/export``."""
        root = os.path.join(self.model_dir, model_dir_lib.EXPORT_DIR)
        return [os.path.join(d, n) for d, subdirs, _ in os.walk(root) for n in subdirs
                if n.startswith(model_dir_lib.TEMP_EXPORT_PREFIX)]

    def completion_marker(self):
        """The chief's completion marker as a dict, or None."""
        path = model_dir_lib.training_complete_path(self.model_dir)
        if not os.path.exists(path):
            return None
        with open(path, encoding="utf-8") as f:
            return json.load(f)

    def saving_checkpoint(self):
        """A checkpoint write in progress: a ``model.ckpt-*`` temp entry, or None."""
        try:
            names = os.listdir(self.model_dir)
        except FileNotFoundError:
            return None
        prefix = model_dir_lib.CHECKPOINT_BASENAME + "-"
        busy = [n for n in names if n.startswith(prefix) and "_temp" in n]
        return busy[0] if busy else None


def _stamp_key(name):
    return int(name) if name.isdigit() else -1


def export_step(export_dir):
    """The global step stored in an export's variables."""
    reader = tf.compat.v1.train.NewCheckpointReader(
        os.path.join(export_dir, "variables", "variables"))
    return int(reader.get_tensor(tf.compat.v1.GraphKeys.GLOBAL_STEP))


def show_logs_if_failed(request, cluster):
    """Prints the tail of every role's log of `cluster` when the test `request` ran
    failed (or never reported: setup failed); pytest shows it under "Captured stdout
    teardown", and the full logs stay in the cluster's work dir."""
    report = getattr(request.node, "faults_report_call", None)
    if report is None or report.failed:
        print(f"\n##### logs of {cluster.work_dir}\n{cluster.log_tails()}")


@contextlib.contextmanager
def closing_clusters(cluster_class, tmp_path, request):
    """A factory of clusters for a fixture; each is closed at the end.

    When the test failed, the tail of every role's log of each cluster is printed
    after it closed (`show_logs_if_failed`).

    Args:
      cluster_class: Cluster or a subclass.
      tmp_path: the test's tmp dir; cluster N works in `<tmp_path>/cluster<N>`.
      request: the test's pytest request.

    Yields:
      make(job_args=(), **kwargs): a new `cluster_class(work_dir, job_args, **kwargs)`.
    """
    made = []

    def make(job_args=(), **kwargs):
        cluster = cluster_class(tmp_path / f"cluster{len(made)}", job_args, **kwargs)
        made.append(cluster)
        return cluster

    try:
        yield make
    finally:
        for cluster in made:
            try:
                cluster.close()
            finally:
                show_logs_if_failed(request, cluster)
