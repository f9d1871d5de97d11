"""Fault injection: a ps + chief + worker + evaluator job survives what a cluster does.

Each scenario runs real `job.py` processes (TF_CONFIG per role, 127.0.0.1 ports),
injects one fault, lets the job finish by itself, then checks the same outcome
(`_assert_job_succeeded`): every role exited 0 within a bound, max_steps was
reached (where set), the final checkpoint was evaluated and exported, every
checkpoint the `checkpoint` file lists restores, and no temp export dir is left.
"""

import glob
import os
import signal
import time

import pytest

from tests.faults.cluster import export_step, restores, wait_for

MAX_STEPS = 600
# Steps stay fast (a few ms of sleep each) so a poll for a checkpoint step lands a
# fault mid-training, whatever the machine's speed.
PACED = ("--step-sleep-ms", "5")
# 4 TF processes importing TensorFlow on 2 shared cores: generous, never asserted
# as a speed.
START_SECS = 180
# After the fault (and a restart, which imports TensorFlow again), every role
# must have ended by itself within this long.
END_SECS = 180
# A SIGTERMed chief gets this long to save and exit (Kubernetes' default grace).
SIGTERM_GRACE_SECS = 30
# A role started after the end must find out and exit within this long: its start,
# and, without max_steps, the straggler grace (15 s here, see cluster.py) for which
# an older completion marker must stay before it is believed (a new run's chief
# would clear it within that time).
LATE_ROLE_SECS = 90
# Step the training must have reached (by checkpoint) before a fault is injected.
FAULT_AT_STEP = 150


def _assert_job_succeeded(cluster, codes, max_steps):
    """The outcome every scenario must reach; returns the final step."""
    assert codes and all(code == 0 for code in codes.values()), (
        f"every role must exit 0 by itself, got {codes}")
    assert cluster.completion_marker() is not None, "the chief wrote no completion marker"
    paths = cluster.checkpoint_paths()
    assert paths, "no checkpoint listed in the checkpoint state file"
    restored = {path: restores(path) for path in paths}
    broken = {path: why for path, (ok, why) in restored.items() if not ok}
    assert not broken, f"listed checkpoints that do not restore: {broken}"
    final_step = restored[paths[-1]][1]
    if max_steps is not None:
        assert final_step >= max_steps, (final_step, max_steps)
    evaluated = cluster.eval_steps()
    assert final_step in evaluated, (
        f"final checkpoint (step {final_step}) not evaluated; evaluated {evaluated}")
    exports = cluster.exports()
    assert exports, "nothing exported"
    assert export_step(exports[-1]) == final_step, (
        f"newest export {exports[-1]} holds step {export_step(exports[-1])}, "
        f"not the final {final_step}")
    assert cluster.temp_exports() == [], "temp export dirs left behind"
    return final_step


def _start_and_wait_mid_training(cluster, labels=None):
    cluster.start_all(labels)
    wait_for(lambda: cluster.latest_checkpoint_step() >= FAULT_AT_STEP, START_SECS,
             f"a checkpoint at step >= {FAULT_AT_STEP}")
    assert cluster.completion_marker() is None, "training ended before the fault"


# 1. SIGKILL + restart of each role mid-training ---


@pytest.mark.parametrize("label", ["worker0", "chief0", "ps0", "evaluator0"])
def test_sigkill_and_restart_mid_training(make_cluster, label):
    cluster = make_cluster(["--max-steps", str(MAX_STEPS), *PACED])
    _start_and_wait_mid_training(cluster)
    if label == "evaluator0":
        wait_for(cluster.eval_steps, START_SECS, "a first evaluation")
    assert cluster.kill(label) == -signal.SIGKILL
    cluster.start(label)
    codes = cluster.wait_all_exit(END_SECS)
    print(f"global steps lost (seen by worker0): {cluster.steps_lost('worker0')}")
    _assert_job_succeeded(cluster, codes, MAX_STEPS)


def test_sigkill_evaluator_during_export_and_restart(make_cluster):
    # An export takes ~100 ms in `export/latest/temp-<stamp>/`: poll for it, kill.
    cluster = make_cluster(["--max-steps", str(MAX_STEPS), *PACED])
    cluster.start_all()
    temp = wait_for(cluster.temp_exports, START_SECS, "an export being written")
    assert cluster.kill("evaluator0") == -signal.SIGKILL
    assert os.path.exists(temp[0]), f"{temp[0]} was renamed before the SIGKILL landed"
    cluster.start("evaluator0")
    codes = cluster.wait_all_exit(END_SECS)
    _assert_job_succeeded(cluster, codes, MAX_STEPS)


# 2. SIGKILL of the ps while a checkpoint is being saved ---


@pytest.mark.slow
def test_sigkill_ps_during_checkpoint_save(make_cluster):
    # 16 MB of untrained ballast on the ps makes each save long enough (the ps
    # writes `model.ckpt-<N>_temp/` before the merge renames it) for a poll to see
    # it: the SIGKILL then lands inside the save.
    cluster = make_cluster(["--max-steps", str(MAX_STEPS), *PACED, "--ballast-mb", "16",
                            "--save-steps", "40"])
    _start_and_wait_mid_training(cluster)
    saving = wait_for(cluster.saving_checkpoint, START_SECS, "a checkpoint being saved")
    assert cluster.kill("ps0") == -signal.SIGKILL
    in_progress = os.path.exists(os.path.join(cluster.model_dir, saving))
    assert in_progress, f"the save of {saving} finished before the SIGKILL landed"
    cluster.start("ps0")
    codes = cluster.wait_all_exit(END_SECS)
    _assert_job_succeeded(cluster, codes, MAX_STEPS)


# 3. SIGTERM of the chief ---


def test_sigterm_chief_saves_then_restart_finishes(make_cluster):
    # Saves every 100 steps: only a save on SIGTERM leaves a checkpoint at the step
    # the chief reached.
    cluster = make_cluster(["--max-steps", str(MAX_STEPS), *PACED, "--save-steps", "100"])
    cluster.start_all()
    wait_for(lambda: cluster.latest_checkpoint_step() >= 100, START_SECS,
             "a checkpoint at step >= 100")
    wait_for(lambda: (cluster.step_seen("chief0") or 0) >=
             cluster.latest_checkpoint_step() + 50, START_SECS,
             "the chief half-way between two saves")
    cluster.signal("chief0", signal.SIGTERM)
    sigterm_code = cluster.wait_exit("chief0", SIGTERM_GRACE_SECS)
    reached = cluster.step_seen("chief0")
    saved = max(restores(p)[1] for p in cluster.checkpoint_paths())
    assert saved >= reached - 1, (
        f"after SIGTERM (exit code {sigterm_code}) the newest checkpoint holds step "
        f"{saved}; the chief had reached step {reached}")
    cluster.start("chief0")
    codes = cluster.wait_all_exit(END_SECS)
    _assert_job_succeeded(cluster, codes, MAX_STEPS)


# 4. An evaluator started after training ended ---


@pytest.mark.parametrize("max_steps", [MAX_STEPS, None], ids=["max_steps", "no_max_steps"])
def test_evaluator_started_after_training_ended(make_cluster, max_steps):
    # Without max_steps the training input ends (4 passes per trainer).
    steps_args = (["--max-steps", str(max_steps)] if max_steps else
                  ["--train-epochs", "4"])
    cluster = make_cluster([*steps_args, "--step-sleep-ms", "1"])
    trainers = ["ps0", "chief0", "worker0"]
    cluster.start_all(trainers)
    codes = cluster.wait_all_exit(START_SECS + END_SECS, trainers)
    assert cluster.completion_marker() is not None
    cluster.start("evaluator0")
    codes["evaluator0"] = cluster.wait_all_exit(LATE_ROLE_SECS, ["evaluator0"])[
        "evaluator0"]
    _assert_job_succeeded(cluster, codes, max_steps)


# 5. Checkpoints that break under the evaluator ---


# before_restore: keep_checkpoint_max=1 and a save every 5 fast steps; the
# checkpoint the evaluator picks is deleted during the 500 ms its eval graph takes
# to build. before_export: 3 checkpoints kept (they live ~0.5 s), a quick graph
# build, then 4 eval batches of 250 ms each: the checkpoint is deleted between its
# evaluation and its export.
GC_RACES = {
    "before_restore": ["--keep-checkpoint-max", "1", "--save-steps", "5",
                       "--eval-build-sleep-ms", "500"],
    "before_export": ["--keep-checkpoint-max", "3", "--save-steps", "10",
                      "--eval-step-sleep-ms", "250"],
}


@pytest.mark.parametrize("race", sorted(GC_RACES))
def test_checkpoint_deleted_under_evaluator(make_cluster, race):
    cluster = make_cluster(["--max-steps", str(MAX_STEPS), "--step-sleep-ms", "2",
                            *GC_RACES[race]])
    cluster.start_all()
    codes = cluster.wait_all_exit(START_SECS + END_SECS)
    _assert_job_succeeded(cluster, codes, MAX_STEPS)


def test_truncated_checkpoint_under_evaluator(make_cluster):
    # 10 checkpoints kept: enough that GC never races this (slow) evaluator, few
    # enough that the truncated one is collected before the end (30 saves).
    cluster = make_cluster(["--max-steps", str(MAX_STEPS), *PACED,
                            "--eval-build-sleep-ms", "300", "--keep-checkpoint-max", "10"])
    _start_and_wait_mid_training(cluster)
    # Freeze the trainers so the truncated checkpoint stays the newest one until
    # the evaluator tried it (its graph build takes 300 ms: it cannot have read it).
    for label in ("chief0", "worker0"):
        cluster.signal(label, signal.SIGSTOP)
    try:
        path = cluster.checkpoint_paths()[-1]
        for data_file in glob.glob(f"{path}.data-*"):
            size = os.path.getsize(data_file)
            os.truncate(data_file, size // 2)
        restore_line = f"Restoring parameters from {path}"

        def tried_it():
            if not cluster.running("evaluator0"):
                return True
            log = cluster.log_text("evaluator0")
            return restore_line in log and log.rsplit(restore_line, 1)[1].count("\n") > 1

        wait_for(tried_it, START_SECS, f"the evaluator to try {path}")
    finally:
        for label in ("chief0", "worker0"):
            cluster.signal(label, signal.SIGCONT)
    codes = cluster.wait_all_exit(END_SECS)
    _assert_job_succeeded(cluster, codes, MAX_STEPS)


# 6. A worker that never starts ---


@pytest.mark.slow
def test_worker_that_never_starts(make_cluster):
    cluster = make_cluster(["--max-steps", str(MAX_STEPS), *PACED], num_workers=2)
    started = ["ps0", "chief0", "worker0", "evaluator0"]
    cluster.start_all(started)
    cluster.wait_exit("chief0", START_SECS + END_SECS)
    chief_done = time.monotonic()
    codes = cluster.wait_all_exit(END_SECS, started)
    print(f"roles ended {time.monotonic() - chief_done:.1f} s after the chief")
    _assert_job_succeeded(cluster, codes, MAX_STEPS)
