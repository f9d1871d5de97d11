"""Fault injection under the launcher's restart policy (`--max-restarts`).

Each test runs `python -m estimator_lite.launch ... --max-restarts N` on a real job
(`job.py`: ps, chief, worker, evaluator; `collective_job.py`: a
MultiWorkerMirroredStrategy job, `--ps 0 --no-chief`), SIGKILLs one of the
processes the launcher started (their pids are in its log) mid-training, and lets
the launcher recover by itself: it must restart the role (a collective job: its
whole worker group), log the restart with the exit code and the newest checkpoint,
and exit 0 once the job reached max_steps; every listed checkpoint restores, and
(ps job) the final checkpoint is evaluated and exported. When restarts run out,
the launcher must exit non-zero naming the role that kept failing. Each test
prints the numbers of docs/reliability.md's launcher table (exit codes, time from
the fault to the launcher's exit, restarts, steps lost).
"""

import contextlib
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from tests.faults.cluster import (
    STRAGGLER_GRACE_ENV,
    STRAGGLER_GRACE_SECS,
    Cluster,
    restores,
    wait_for,
)
from tests.faults.job_parts import ROLLBACK_TAG
from tests.faults.scenarios import (
    FAULT_AT_STEP,
    MAX_STEPS,
    PACED,
    START_SECS,
    assert_job_succeeded,
)

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(os.path.dirname(_HERE))
_JOB = os.path.join(_HERE, "job.py")
_COLLECTIVE_JOB = os.path.join(_HERE, "collective_job.py")
# The launcher's own bound, and the test's (a hang fails, far below pytest's 600 s).
LAUNCH_TIMEOUT_SECS = 420
END_SECS = 450
COLLECTIVE_SAVE_STEPS = 100
_STARTED = re.compile(r"^\[launch\] started (\S+) \(pid (\d+)\)$", re.M)
_RESTART = re.compile(r"^\[launch\] restart (\d+) of (\d+): (\S+) failed with exit code "
                      r"(-?\d+).*resuming from (.*)$", re.M)


class _Launch:
    """The launcher running a job in a subprocess; its log in the test's tmp dir."""

    def __init__(self, work_dir, launch_args, program, job_args):
        # A Cluster only for its model_dir / status readers: the launcher starts
        # the processes.
        self.cluster = Cluster(work_dir, num_workers=2)
        self.log_path = os.path.join(work_dir, "launch.log")
        env = dict(os.environ, PYTHONPATH=_ROOT, TF_CPP_MIN_LOG_LEVEL="1")
        env.setdefault(STRAGGLER_GRACE_ENV, str(STRAGGLER_GRACE_SECS))
        env.pop("TF_CONFIG", None)
        command = [sys.executable, "-m", "estimator_lite.launch", *launch_args,
                   "--model-dir", self.cluster.model_dir,
                   "--timeout-secs", str(LAUNCH_TIMEOUT_SECS), "--",
                   sys.executable, program, "--model-dir", self.cluster.model_dir,
                   "--status-dir", self.cluster.status_dir, *job_args]
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                            env=env, cwd=work_dir)

    def log(self):
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def pids(self):
        """{label: [pid of each incarnation]} from the launcher's log."""
        pids = {}
        for label, pid in _STARTED.findall(self.log()):
            pids.setdefault(label, []).append(int(pid))
        return pids

    def restarts(self):
        """[(restart number, label, exit code, checkpoint resumed from)]."""
        return [(int(n), label, int(code), where)
                for n, _, label, code, where in _RESTART.findall(self.log())]

    def kill(self, label):
        """SIGKILLs the newest process of `label`; returns its pid."""
        pid = self.pids()[label][-1]
        os.kill(pid, signal.SIGKILL)
        return pid

    def wait(self, timeout_secs):
        try:
            return self.process.wait(timeout=timeout_secs)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the launcher still runs {timeout_secs} s later; log "
                                 f"tail:\n{self.log()[-5000:]}") from None

    def close(self):
        """Ctrl-C to a launcher still running (it stops its roles), then SIGKILL of
        anything left."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for pids in self.pids().values():
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

    def steps_lost(self):
        """Global steps the trainers saw thrown away (job.py logs each rollback)."""
        lost = 0
        for line in self.log().splitlines():
            if ROLLBACK_TAG in line:
                before, after = line.rsplit(ROLLBACK_TAG, 1)[1].split()
                lost += int(before) - int(after)
        return lost


@pytest.fixture
def launch(tmp_path):
    launches = []

    def make(launch_args, program, job_args):
        run = _Launch(str(tmp_path / f"launch{len(launches)}"), launch_args, program,
                      job_args)
        launches.append(run)
        return run

    yield make
    for run in launches:
        run.close()
        print(f"\n##### launcher log {run.log_path} (tail)\n{run.log()[-6000:]}")


def _ps_job(launch, max_restarts):
    run = launch(["--ps", "1", "--workers", "1", "--evaluator",
                  "--max-restarts", str(max_restarts)], _JOB,
                 ["--max-steps", str(MAX_STEPS), *PACED])
    os.makedirs(run.cluster.model_dir, exist_ok=True)
    wait_for(lambda: run.cluster.latest_checkpoint_step() >= FAULT_AT_STEP, START_SECS,
             f"a checkpoint at step >= {FAULT_AT_STEP}")
    assert run.cluster.completion_marker() is None, "training ended before the fault"
    return run


@pytest.mark.slow
@pytest.mark.parametrize("label", ["worker:0", "chief", "ps:0", "evaluator"])
def test_sigkill_mid_training_is_restarted_and_the_job_finishes(launch, label):
    run = _ps_job(launch, max_restarts=2)
    newest = run.cluster.latest_checkpoint_step()
    run.kill(label)
    fault = time.monotonic()
    code = run.wait(END_SECS)
    took = time.monotonic() - fault
    restarts = run.restarts()
    print(f"SIGKILL of {label} at newest checkpoint {newest}: launcher exit {code} "
          f"{took:.1f} s after the fault; restarts {restarts}; "
          f"steps lost {run.steps_lost()}")
    assert code == 0, run.log()[-5000:]
    assert [(n, who, c) for n, who, c, _ in restarts] == [(1, label, -signal.SIGKILL)]
    assert "model.ckpt-" in restarts[0][3]  # the checkpoint it resumes from
    starts = {who: len(pids) for who, pids in run.pids().items()}
    assert starts == {"chief": 1, "worker:0": 1, "ps:0": 1, "evaluator": 1,
                      label: 2}, starts
    # Every role's last process exited 0: the launcher says so only then.
    assert "[launch] all roles finished" in run.log()
    assert_job_succeeded(run.cluster, {"launcher": code}, MAX_STEPS)
    if label != "ps:0":  # a new ps loses the steps since the newest checkpoint
        assert run.steps_lost() == 0


def _collective_job(launch, max_restarts):
    run = launch(["--ps", "0", "--workers", "2", "--no-chief",
                  "--max-restarts", str(max_restarts)], _COLLECTIVE_JOB,
                 ["--max-steps", str(MAX_STEPS), "--save-steps", str(COLLECTIVE_SAVE_STEPS),
                  "--step-sleep-ms", "20", "--session-timeout-secs", "240"])
    os.makedirs(run.cluster.model_dir, exist_ok=True)
    return run


def _mid_collective_training(run, at_least):
    wait_for(lambda: run.cluster.latest_checkpoint_step() >= at_least, START_SECS,
             f"a checkpoint at step >= {at_least}")
    saved = run.cluster.latest_checkpoint_step()
    wait_for(lambda: (run.cluster.step_seen("worker0") or 0) >= (
        saved + COLLECTIVE_SAVE_STEPS // 2), START_SECS, "half-way between two saves")
    return max(run.cluster.step_seen(f"worker{i}") or 0 for i in (0, 1))


@pytest.mark.slow
@pytest.mark.parametrize("label", ["worker:1", "worker:0"])
def test_collective_worker_sigkill_restarts_the_worker_group(launch, label):
    run = _collective_job(launch, max_restarts=2)
    reached = _mid_collective_training(run, 2 * COLLECTIVE_SAVE_STEPS)
    run.kill(label)
    fault = time.monotonic()
    code = run.wait(END_SECS)
    took = time.monotonic() - fault
    restarts = run.restarts()
    resumed = int(re.search(r"global step (\d+)", restarts[0][3]).group(1))
    print(f"SIGKILL of {label} at step {reached}: launcher exit {code} {took:.1f} s "
          f"after the fault; restarts {restarts}; steps lost {reached - resumed}")
    assert code == 0, run.log()[-5000:]
    assert [(n, who, c) for n, who, c, _ in restarts] == [(1, label, -signal.SIGKILL)]
    assert "restarting the worker group (worker:0, worker:1)" in run.log()
    assert {w: len(p) for w, p in run.pids().items()} == {"worker:0": 2, "worker:1": 2}
    assert reached - resumed <= COLLECTIVE_SAVE_STEPS
    paths = run.cluster.checkpoint_paths()
    restored = {path: restores(path) for path in paths}
    assert all(ok for ok, _ in restored.values()), restored
    assert restored[paths[-1]][1] >= MAX_STEPS


@pytest.mark.slow
def test_restarts_running_out_end_the_launcher_naming_the_role(launch):
    run = _collective_job(launch, max_restarts=1)
    _mid_collective_training(run, COLLECTIVE_SAVE_STEPS)
    first = run.kill("worker:1")
    # The group restarts once; the new worker 1 is killed again mid-training.
    wait_for(lambda: len(run.pids().get("worker:1", [])) == 2, START_SECS,
             "worker 1 restarted")
    assert run.pids()["worker:1"][0] == first
    # The old incarnations are gone: the status file is the new worker 1's from now.
    os.remove(os.path.join(run.cluster.status_dir, "worker-1.step"))
    resumed = run.cluster.latest_checkpoint_step()
    wait_for(lambda: (run.cluster.step_seen("worker1") or 0) > resumed + 10, START_SECS,
             "the restarted job trains")
    run.kill("worker:1")
    fault = time.monotonic()
    code = run.wait(END_SECS)
    took = time.monotonic() - fault
    print(f"second SIGKILL of worker:1: launcher exit {code} {took:.1f} s later")
    assert code == 1
    assert ("[launch] worker:1 failed with exit code -9 (SIGKILL); stopping all: no "
            "restart left (1 of --max-restarts 1 used); worker:1 kept failing "
            "(2 failures)") in run.log()
    for pid in run.pids()["worker:0"]:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert all(ok for ok, _ in map(restores, run.cluster.checkpoint_paths()))
