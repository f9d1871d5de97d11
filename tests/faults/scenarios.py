"""Fault injection: what every scenario shares (the outcome check, the bounds).

The scenarios are in faults_*_test.py, three files so the suite's workers run
them side by side (each mostly waits on its processes).

Each scenario runs real `job.py` processes (TF_CONFIG per role, 127.0.0.1 ports),
injects one fault, lets the job finish by itself, then checks the same outcome
(`assert_job_succeeded`): every role exited 0 within a bound, max_steps was
reached (where set), the final checkpoint was evaluated and exported, every
checkpoint the `checkpoint` file lists restores, and no temp export dir is left.
"""


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


def assert_job_succeeded(cluster, codes, max_steps):
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


def start_and_wait_mid_training(cluster, labels=None):
    cluster.start_all(labels)
    wait_for(lambda: cluster.latest_checkpoint_step() >= FAULT_AT_STEP, START_SECS,
             f"a checkpoint at step >= {FAULT_AT_STEP}")
    assert cluster.completion_marker() is None, "training ended before the fault"
