"""Runs one program as a multi-process TF_CONFIG job on 127.0.0.1, on either backend.

Each role of the job (chief, workers, ps, evaluator) is its own process running
the same program file with its own TF_CONFIG and `--model-dir` (shared by all
roles), the way TFJob and Cloud ML Engine started tf.estimator programs:
- estimator_lite: this interpreter runs the program as it is;
- tf_estimator: ESTIMATOR_LITE_TF215_PYTHON (TF 2.15 + tensorflow-estimator 2.15)
  runs a copy whose import swap line is replaced, as tests/migration/runner.py does.
Roles start through tests/support/zygote.py (forked from a warm interpreter of the same
kind). Every role must exit by itself: `run_job` waits for all of them under one deadline,
SIGKILLs whatever is still running then (a hung TensorFlow session ignores SIGINT)
and reports it as hung. Each role's stdout and stderr go to a log file; a role's
result is the last `MIGRATION_RESULT {json}` line it printed. Not a test file.
"""

import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import time

from tests.migration import runner
from tests.support import zygote

__all__ = ["LITE", "ORACLE", "JobRun", "RoleRun", "cluster_spec", "run_job",
           "worker_only", "chief_worker_evaluator", "ps_chief_worker"]

LITE, ORACLE = runner.LITE, runner.ORACLE
ROOT = runner.ROOT
_POLL_SECS = 0.2
_LOG_TAIL_LINES = 30
# How long a role that may hang (tf.estimator's ps) gets once the others exited.
HANG_GRACE_SECS = 10


@dataclasses.dataclass
class RoleRun:
    """How one role's process ended."""
    label: str
    returncode: int | None  # None: it hung and was killed at the deadline.
    log_path: str
    result: dict | None

    @property
    def hung(self):
        return self.returncode is None

    def log_tail(self, lines=_LOG_TAIL_LINES):
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            tail = f.read().splitlines()[-lines:]
        return f"===== {self.label} (exit {self.returncode})\n" + "\n".join(tail)


@dataclasses.dataclass
class JobRun:
    """Every role of one job run."""
    backend: str
    model_dir: str
    roles: dict  # label -> RoleRun
    seconds: float

    def exit_codes(self):
        """label -> exit code (None = hung and killed)."""
        return {label: role.returncode for label, role in self.roles.items()}

    def failures(self):
        """Texts saying which roles hung or exited non-zero, with their log tails."""
        return [f"{self.backend}: {role.label} "
                f"{'hung (killed)' if role.hung else f'exited {role.returncode}'}\n"
                f"{role.log_tail()}"
                for role in self.roles.values() if role.returncode != 0]


def _free_ports(count):
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def cluster_spec(**sizes):
    """A cluster dict on free 127.0.0.1 ports, e.g. cluster_spec(chief=1, worker=1).

    Raises:
      ValueError: a size is negative.
    """
    if any(size < 0 for size in sizes.values()):
        raise ValueError(f"task counts must be >= 0, got {sizes}")
    ports = iter(_free_ports(sum(sizes.values())))
    return {job: [f"127.0.0.1:{next(ports)}" for _ in range(size)]
            for job, size in sizes.items() if size}


def _roles_of(cluster, evaluator=None):
    """(label, TF_CONFIG dict) for every task of `cluster`, ps first.

    `evaluator`, when given, is the cluster the evaluator task's TF_CONFIG names
    (it is not a task of the training cluster).
    """
    roles = [(f"{job}{index}", {"cluster": cluster, "task": {"type": job, "index": index}})
             for job in ("ps", "chief", "worker", "evaluator")
             for index in range(len(cluster.get(job, ())))]
    if evaluator is not None:
        roles.append(("evaluator0", {"cluster": evaluator,
                                     "task": {"type": "evaluator", "index": 0}}))
    return roles


def worker_only(num_workers=2):
    """Roles of a worker-only cluster (MultiWorkerMirroredStrategy's usual shape)."""
    return _roles_of(cluster_spec(worker=num_workers))


def chief_worker_evaluator(num_workers=1):
    """Roles of a chief + workers cluster and an evaluator task.

    The evaluator is listed in the cluster every role sees: a
    MultiWorkerMirroredStrategy built in the evaluator's own program reads
    cluster["evaluator"] (TF's multi_worker_util.worker_count; a KeyError without
    it, on TF 2.15 and on TF 2.21 alike).
    """
    return _roles_of(cluster_spec(chief=1, worker=num_workers, evaluator=1))


def ps_chief_worker(num_workers=1, evaluator=False):
    """Roles of a ps + chief + workers cluster, optionally with an evaluator task
    (outside the cluster, as tf.estimator's TF_CONFIG documentation has it)."""
    cluster = cluster_spec(ps=1, chief=1, worker=num_workers)
    return _roles_of(cluster, evaluator=cluster if evaluator else None)


def _program_for(program_path, backend, work_dir, swap_line, oracle_import):
    """(python, path) that run `program_path` on `backend`."""
    if backend == LITE:
        return sys.executable, program_path
    if backend != ORACLE:
        raise ValueError(f"backend must be {LITE!r} or {ORACLE!r}, got {backend!r}")
    if not runner.TF215_PYTHON:
        raise ValueError("backend tf_estimator needs ESTIMATOR_LITE_TF215_PYTHON")
    with open(program_path) as f:
        source = runner.swap_import(f.read(), oracle_import, where=program_path,
                                    swap_line=swap_line)
    path = os.path.join(work_dir, os.path.basename(program_path))
    with open(path, "w") as f:
        f.write(source)
    return runner.TF215_PYTHON, path


def _environment(backend, tf_config):
    env = dict(os.environ, PYTHONUNBUFFERED="1", TF_CPP_MIN_LOG_LEVEL="1",
               TF_CONFIG=json.dumps(tf_config))
    env.pop("TF_USE_LEGACY_KERAS", None)
    # The programs import migration_report from examples/migration; estimator_lite
    # comes from this checkout, and the oracle sees nothing else of it.
    env["PYTHONPATH"] = (runner.PROGRAM_DIR if backend == ORACLE
                         else os.pathsep.join([ROOT, runner.PROGRAM_DIR]))
    return env


def run_job(program_path, roles, backend, work_dir, timeout_secs, args=(),
            swap_line=runner.SWAP_LINE, oracle_import=runner.TF_ESTIMATOR_IMPORT,
            may_hang=(), hang_grace_secs=HANG_GRACE_SECS):
    """Starts every role of a job at once and waits until all exit or the deadline.

    Args:
      program_path: the program every role runs (`--model-dir DIR` is appended).
      roles: [(label, TF_CONFIG dict)], e.g. from `worker_only()`.
      backend: LITE or ORACLE.
      work_dir: an existing directory for the model dir, logs and the oracle's copy.
      timeout_secs: one deadline for the whole job; roles still running then are
        SIGKILLed and reported with returncode None.
      args: more command-line arguments for every role.
      swap_line: the program's estimator_lite import line.
      oracle_import: the line replacing it under tf.estimator.
      may_hang: labels of roles known never to exit (tf.estimator's ps): once
        every other role exited, they get `hang_grace_secs` more, then are killed
        and reported hung, instead of holding the job until the deadline.
      hang_grace_secs: see `may_hang`.

    Returns:
      A JobRun.

    Raises:
      ValueError: unknown backend, ORACLE without ESTIMATOR_LITE_TF215_PYTHON, or
        the program lacks exactly one swap line.
    """
    python, path = _program_for(program_path, backend, work_dir, swap_line, oracle_import)
    model_dir = os.path.join(work_dir, "model")
    log_dir = os.path.join(work_dir, "logs")
    os.makedirs(log_dir, exist_ok=True)
    processes, logs, killed = {}, {}, set()
    start = time.monotonic()
    try:
        for label, tf_config in roles:
            logs[label] = os.path.join(log_dir, f"{label}.log")
            with open(logs[label], "wb") as log:
                processes[label] = zygote.Popen(
                    [python, path, "--model-dir", model_dir, *args], stdout=log,
                    stderr=subprocess.STDOUT, env=_environment(backend, tf_config),
                    cwd=work_dir)
        _wait_all(processes, start + timeout_secs, may_hang, hang_grace_secs)
    finally:
        for label, process in processes.items():
            if process.poll() is None:
                killed.add(label)
                process.send_signal(signal.SIGKILL)
                process.wait()
    return JobRun(backend, model_dir, {
        label: RoleRun(label, None if label in killed else process.returncode,
                       logs[label], _result(logs[label]))
        for label, process in processes.items()}, time.monotonic() - start)


def _wait_all(processes, deadline, may_hang, hang_grace_secs):
    """Polls until every process exited or `deadline` (time.monotonic) passed.

    Roles in `may_hang` are waited for only `hang_grace_secs` after all the
    others exited.
    """
    others_done_at = None
    while time.monotonic() < deadline:
        running = {label for label, process in processes.items()
                   if process.poll() is None}
        if not running:
            return
        if others_done_at is None and running <= set(may_hang):
            others_done_at = time.monotonic()
        if others_done_at is not None and (
                time.monotonic() - others_done_at >= hang_grace_secs):
            return
        time.sleep(_POLL_SECS)


def _result(log_path):
    with open(log_path, encoding="utf-8", errors="replace") as f:
        return runner.parse_result(f.read())
