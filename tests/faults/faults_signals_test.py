"""Fault injection: SIGKILL of the ps during a save, SIGTERM of the chief (see
scenarios.py)."""

import os
import signal

import pytest

from tests.faults.cluster import restores, wait_for
from tests.faults.scenarios import (
    END_SECS,
    MAX_STEPS,
    PACED,
    SIGTERM_GRACE_SECS,
    START_SECS,
    assert_job_succeeded,
    start_and_wait_mid_training,
)

# 2. SIGKILL of the ps while a checkpoint is being saved ---

_SAVE_KILL_ATTEMPTS = 3


@pytest.mark.slow
def test_sigkill_ps_during_checkpoint_save(make_cluster):
    # 16 MB of untrained ballast on the ps makes each save long enough (the ps
    # writes `model.ckpt-<N>_temp/` before the merge renames it) for a poll to see
    # it: the SIGKILL then lands inside the save. On a loaded machine the save can
    # still finish between the poll and the kill (CI saw it once), so a kill that
    # missed is one more ps restart mid-training, and the next save is tried.
    cluster = make_cluster(["--max-steps", str(MAX_STEPS), *PACED, "--ballast-mb", "16",
                            "--save-steps", "40"])
    start_and_wait_mid_training(cluster)
    missed = []
    for _ in range(_SAVE_KILL_ATTEMPTS):
        saving = wait_for(cluster.saving_checkpoint, START_SECS, "a checkpoint being saved")
        assert cluster.kill("ps0") == -signal.SIGKILL
        # A save the kill interrupted leaves its temp entry, or, once the chief has
        # removed that (it does as soon as it sees the failure, which on a loaded
        # machine can come first), no index file: nothing writes one while the ps is
        # down.
        index = os.path.join(cluster.model_dir, saving.split("_temp")[0] + ".index")
        in_progress = (os.path.exists(os.path.join(cluster.model_dir, saving))
                       or not os.path.exists(index))
        cluster.start("ps0")
        if in_progress:
            break
        missed.append(saving)
    else:
        pytest.fail(f"every save finished before its SIGKILL landed: {missed}")
    codes = cluster.wait_all_exit(END_SECS)
    assert_job_succeeded(cluster, codes, MAX_STEPS)


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
    assert_job_succeeded(cluster, codes, MAX_STEPS)
