"""Fault injection: SIGKILL and restart of each role mid-training, and of the
evaluator mid-export (see scenarios.py)."""

import os
import signal

import pytest

from tests.faults.cluster import wait_for
from tests.faults.scenarios import (
    END_SECS,
    MAX_STEPS,
    PACED,
    START_SECS,
    assert_job_succeeded,
    start_and_wait_mid_training,
)

pytestmark = pytest.mark.slow

# 1. SIGKILL + restart of each role mid-training ---


@pytest.mark.parametrize("label", ["worker0", "chief0", "ps0", "evaluator0"])
def test_sigkill_and_restart_mid_training(make_cluster, label):
    cluster = make_cluster(["--max-steps", str(MAX_STEPS), *PACED])
    start_and_wait_mid_training(cluster)
    if label == "evaluator0":
        wait_for(cluster.eval_steps, START_SECS, "a first evaluation")
    assert cluster.kill(label) == -signal.SIGKILL
    cluster.start(label)
    codes = cluster.wait_all_exit(END_SECS)
    print(f"global steps lost (seen by worker0): {cluster.steps_lost('worker0')}")
    assert_job_succeeded(cluster, codes, MAX_STEPS)


def test_sigkill_evaluator_during_export_and_restart(make_cluster):
    # An export takes ~100 ms in `export/latest/temp-<stamp>/`: poll for it, kill.
    cluster = make_cluster(["--max-steps", str(MAX_STEPS), *PACED])
    cluster.start_all()
    temp = wait_for(cluster.temp_exports, START_SECS, "an export being written")
    assert cluster.kill("evaluator0") == -signal.SIGKILL
    assert os.path.exists(temp[0]), f"{temp[0]} was renamed before the SIGKILL landed"
    cluster.start("evaluator0")
    codes = cluster.wait_all_exit(END_SECS)
    assert_job_succeeded(cluster, codes, MAX_STEPS)
