"""Fault injection: a MultiWorkerMirroredStrategy job (two workers, worker-only
TF_CONFIG, worker 0 the chief) under SIGKILL and SIGTERM of a worker.

Each test runs real `collective_job.py` processes (see README.md), injects one
fault mid-training, and checks that every process ends by itself within a bound:
the survivors exit 1 with an error naming the lost task and the newest
checkpoint, and restarting what exited non-zero (what an orchestrator does)
finishes the job from the newest checkpoint: steps lost <= the steps since it,
every listed checkpoint restores. tf.estimator's behaviour under the same faults
is in docs/reliability.md ("Collective jobs").
"""

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from estimator_lite._engine.local_cluster import pick_free_ports
from tests.faults.cluster import restores, wait_for
from tests.faults.scenarios import START_SECS
from tests.support import zygote

_JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "collective_job.py")
MAX_STEPS = 600
SAVE_STEPS = 100
# RunConfig(experimental_collective_timeout_secs=...) in these jobs: a survivor
# whose peer was restarted (it answers again) ends after this long.
COLLECTIVE_TIMEOUT_SECS = 20
# A survivor must have ended by itself within this long of the fault: the probes
# find an unreachable peer within seconds, the bound above covers the others,
# plus slack for a loaded machine. Far below pytest's 600 s timeout.
SURVIVOR_END_SECS = 60
# Restarted workers import TensorFlow again, meet, and train to max_steps.
FINISH_SECS = 240
TRAINERS = ("worker0", "worker1")
LOST_MESSAGE = "of a MultiWorkerMirroredStrategy job"


def _cluster(make_cluster, strategy="v2", collective_timeout_secs=COLLECTIVE_TIMEOUT_SECS):
    bound = (["--collective-timeout-secs", str(collective_timeout_secs)]
             if collective_timeout_secs else [])  # None: the default, 600 s
    return make_cluster(
        ["--strategy", strategy, "--max-steps", str(MAX_STEPS),
         "--save-steps", str(SAVE_STEPS),
         "--step-sleep-ms", "20", *bound,
         "--session-timeout-secs", str(FINISH_SECS)],
        num_workers=2, num_ps=0, chief=False, program=_JOB)


def _mid_training(cluster, labels=TRAINERS):
    cluster.start_all(list(labels))
    wait_for(lambda: cluster.latest_checkpoint_step() >= 2 * SAVE_STEPS, START_SECS,
             f"a checkpoint at step >= {2 * SAVE_STEPS}")
    # Half-way between two saves: a fault then loses about SAVE_STEPS / 2 steps.
    saved = cluster.latest_checkpoint_step()
    wait_for(lambda: (cluster.step_seen("worker0") or 0) >= saved + SAVE_STEPS // 2,
             START_SECS, "training half-way between two saves")
    return saved


def _cluster_mid_training(make_cluster, **options):
    """A collective cluster (`_cluster`'s options) whose workers are half-way
    between two saves."""
    cluster = _cluster(make_cluster, **options)
    _mid_training(cluster)
    return cluster


def _supervise(cluster, labels, timeout_secs, max_restarts=4):
    """Restarts every role of `labels` that exited non-zero (an orchestrator's
    restart policy) until all exited 0; returns {label: [exit codes]}."""
    codes = {label: [] for label in labels}
    deadline = time.monotonic() + timeout_secs
    while True:
        for label in labels:
            code = cluster.process(label).poll()
            if code is not None and code != 0 and len(codes[label]) < (
                    cluster.incarnations(label)):
                codes[label].append(code)
                assert len(codes[label]) <= max_restarts, f"{label} keeps failing: {codes}"
                cluster.start(label)
        if all(cluster.process(label).poll() == 0 for label in labels):
            for label in labels:
                codes[label].append(0)
            return codes
        assert time.monotonic() < deadline, (
            f"roles still running {timeout_secs} s later; exit codes so far {codes}")
        time.sleep(0.1)


def _steps_lost(cluster):
    """Once every trainer ended: the highest step reached minus the newest
    checkpoint's (what a restart resumes from); prints both."""
    reached = max(cluster.step_seen(label) or 0 for label in TRAINERS)
    paths = cluster.checkpoint_paths()
    ok, saved = restores(paths[-1])
    assert ok, saved
    print(f"step reached {reached}, newest checkpoint {saved}: "
          f"{max(reached - saved, 0)} steps lost")
    return max(reached - saved, 0)


def _assert_finished(cluster, lost):
    """max_steps reached, every listed checkpoint restores, few steps lost."""
    paths = cluster.checkpoint_paths()
    restored = {path: restores(path) for path in paths}
    broken = {p: why for p, (ok, why) in restored.items() if not ok}
    assert not broken, f"listed checkpoints that do not restore: {broken}"
    assert restored[paths[-1]][1] >= MAX_STEPS
    assert lost <= SAVE_STEPS, f"{lost} steps lost, more than one save period"


def _assert_restarted_job_finishes(cluster):
    """The orchestrator restarts the job (both workers, from the newest checkpoint):
    it finishes, losing at most the steps the fault lost."""
    lost = _steps_lost(cluster)
    cluster.start_all(list(TRAINERS))
    codes = _supervise(cluster, TRAINERS, FINISH_SECS)
    assert codes == {"worker0": [0], "worker1": [0]}, codes
    _assert_finished(cluster, lost)


def _assert_supervised_job_finishes(cluster):
    """Every worker that ends is restarted (a pod's restart policy): the job
    finishes, losing at most the steps the fault lost."""
    lost = _steps_lost(cluster)
    codes = _supervise(cluster, TRAINERS, FINISH_SECS)
    print(f"exit codes of every incarnation after the fault: {codes}")
    assert all(codes[label][-1] == 0 for label in TRAINERS), codes
    _assert_finished(cluster, lost)


def _assert_ended_naming(cluster, label, lost_label, fault_time):
    """`label`'s first incarnation exited 1 by itself, in time, naming the lost task
    and the newest checkpoint."""
    code = cluster.wait_exit(label, SURVIVOR_END_SECS)
    took = time.monotonic() - fault_time
    print(f"{label} ended by itself with exit code {code} {took:.1f} s after the fault")
    assert code == 1, f"{label} exited {code}"
    log = cluster.log_text(label)
    assert LOST_MESSAGE in log and "Newest checkpoint: " in log, log[-3000:]
    if lost_label is not None:
        assert f"lost {lost_label}" in log, log[-3000:]
    return took


@pytest.mark.slow
@pytest.mark.parametrize("strategy", [
    "v2", pytest.param("v1", marks=pytest.mark.slow)])  # tf.compat.v1's spelling
def test_sigkill_worker_survivor_ends_and_job_restart_resumes(make_cluster, strategy):
    # Worker 1 dies and is not restarted: worker 0 (the chief) must not hang.
    cluster = _cluster_mid_training(make_cluster, strategy=strategy)
    assert cluster.kill("worker1") == -signal.SIGKILL
    fault = time.monotonic()
    _assert_ended_naming(cluster, "worker0", "worker 1", fault)
    _assert_restarted_job_finishes(cluster)


@pytest.mark.slow
@pytest.mark.parametrize("label", ["worker1", "worker0"])
def test_sigkill_and_restart_one_worker(make_cluster, label):
    # The killed worker is restarted at once (a pod's restart policy): it cannot
    # join the survivor's collectives, so every process ends and is restarted.
    cluster = _cluster_mid_training(make_cluster)
    assert cluster.kill(label) == -signal.SIGKILL
    fault = time.monotonic()
    cluster.start(label)
    survivor = "worker0" if label == "worker1" else "worker1"
    _assert_ended_naming(cluster, survivor, None, fault)
    _assert_supervised_job_finishes(cluster)


def _serving(address):
    host, port = address.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=1):
            return True
    except OSError:
        return False


# A restarted worker 1 that answers at its address but never joins (it is busy
# starting, or waits for the chief): a bare TensorFlow server in its place.
_STAND_IN = """
import sys, time
import tensorflow as tf
server = tf.distribute.Server({"worker": sys.argv[1:]}, job_name="worker", task_index=1)
print("serving", flush=True)
time.sleep(600)
"""


@pytest.mark.slow
def test_a_quickly_restarted_peer_is_seen_in_seconds(make_cluster, tmp_path):
    # Worker 1 is killed and a new incarnation serves at its address before worker 0
    # can see it gone (worker 0 is stopped meanwhile, so this is certain). It
    # answers the probes but can never join worker 0's collectives: with the
    # default 600 s bound, worker 0 must still end within seconds, naming it.
    cluster = _cluster_mid_training(make_cluster, collective_timeout_secs=None)
    stand_in = None
    cluster.signal("worker0", signal.SIGSTOP)
    try:
        assert cluster.kill("worker1") == -signal.SIGKILL
        with open(tmp_path / "stand_in.log", "wb") as log:
            stand_in = zygote.Popen(
                [sys.executable, "-c", _STAND_IN, *cluster.spec["worker"]],
                stdout=log, stderr=subprocess.STDOUT)
        wait_for(lambda: _serving(cluster.spec["worker"][1]), START_SECS,
                 "the new worker 1 serving at its address")
    finally:
        cluster.signal("worker0", signal.SIGCONT)
    try:
        took = _assert_ended_naming(cluster, "worker0", "worker 1", time.monotonic())
    finally:
        stand_in.kill()
        stand_in.wait()
    log = cluster.log_text("worker0")
    assert "which was restarted: it answers as a new incarnation" in log, log[-3000:]
    assert took < SURVIVOR_END_SECS  # not the 600 s bound
    _assert_supervised_job_finishes(cluster)


@pytest.mark.slow
@pytest.mark.parametrize("label", ["worker0", "worker1"])
def test_sigterm_worker(make_cluster, label):
    # SIGTERM: the signalled worker ends its step and exits 143 (the chief saves
    # first); the other one ends by itself; restarting both finishes the job.
    cluster = _cluster_mid_training(make_cluster)
    cluster.signal(label, signal.SIGTERM)
    fault = time.monotonic()
    code = cluster.wait_exit(label, SURVIVOR_END_SECS)
    print(f"SIGTERMed {label} exited {code} after {time.monotonic() - fault:.1f} s")
    assert code == 128 + signal.SIGTERM
    reached = cluster.step_seen(label)
    if label == "worker0":
        newest = max(restores(p)[1] for p in cluster.checkpoint_paths())
        assert newest >= reached - 1, (newest, reached)
    survivor = "worker1" if label == "worker0" else "worker0"
    _assert_ended_naming(cluster, survivor, label.replace("worker", "worker "), fault)
    _assert_restarted_job_finishes(cluster)


@pytest.mark.slow
def test_sigkill_and_restart_evaluator(make_cluster):
    cluster = _cluster(make_cluster)
    # Every task's TF_CONFIG lists the evaluator (TF's multi-worker tutorial).
    cluster.spec["evaluator"] = [f"127.0.0.1:{pick_free_ports(1)[0]}"]
    _mid_training(cluster, (*TRAINERS, "evaluator0"))
    wait_for(cluster.eval_steps, START_SECS, "a first evaluation")
    assert cluster.kill("evaluator0") == -signal.SIGKILL
    cluster.start("evaluator0")
    codes = cluster.wait_all_exit(FINISH_SECS)
    assert codes == {"worker0": 0, "worker1": 0, "evaluator0": 0}, codes
    final = cluster.latest_checkpoint_step()
    assert final >= MAX_STEPS and final in cluster.eval_steps()
