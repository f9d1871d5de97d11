"""Fault injection: roles started after the end, checkpoints breaking under the
evaluator, a worker that never starts (see scenarios.py)."""

import glob
import os
import signal
import time

import pytest

from tests.faults.cluster import wait_for
from tests.faults.scenarios import (
    END_SECS,
    LATE_ROLE_SECS,
    MAX_STEPS,
    PACED,
    START_SECS,
    assert_job_succeeded,
    start_and_wait_mid_training,
)

pytestmark = pytest.mark.slow

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
    assert_job_succeeded(cluster, codes, max_steps)


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
    assert_job_succeeded(cluster, codes, MAX_STEPS)


def test_truncated_checkpoint_under_evaluator(make_cluster):
    # 10 checkpoints kept: enough that GC never races this (slow) evaluator, few
    # enough that the truncated one is collected before the end (30 saves).
    cluster = make_cluster(["--max-steps", str(MAX_STEPS), *PACED,
                            "--eval-build-sleep-ms", "300", "--keep-checkpoint-max", "10"])
    start_and_wait_mid_training(cluster)
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
    assert_job_succeeded(cluster, codes, MAX_STEPS)


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
    assert_job_succeeded(cluster, codes, MAX_STEPS)
