"""Fault injection: a ParameterServerStrategy job under the faults a plain ps job
survives (issue 32, item 2).

Every role runs `job.py --strategy ps`: the same program as the plain ps-style
scenarios, with `tf.compat.v1.distribute.experimental.ParameterServerStrategy()`
given as `RunConfig(train_distribute=...)`, as tf.estimator 2.15 ran it. Each test
injects one fault mid-training (a checkpoint at step >= 150 of 600 exists), lets
the job end by itself, and checks what scenarios.py's `assert_job_succeeded`
checks (every role exits 0, max_steps reached, every listed checkpoint restores,
the final checkpoint evaluated and exported, no temp export dir), plus the time
from the fault to the end (< END_SECS) and the global steps lost (at most the
steps since the newest checkpoint at the fault). It prints the numbers
docs/reliability.md's "ParameterServerStrategy jobs" table gives; what tf.estimator
does under the same faults is recorded by `ps_strategy_record.py`.
"""

import signal
import time

import pytest

from tests.faults.cluster import ROLLBACK_TAG, restores, wait_for
from tests.faults.scenarios import (
    END_SECS,
    MAX_STEPS,
    PACED,
    SIGTERM_GRACE_SECS,
    START_SECS,
    assert_job_succeeded,
    start_and_wait_mid_training,
)

STRATEGY = ("--strategy", "ps")
SAVE_STEPS = 20  # job.py's default --save-steps
TRAINERS = ("chief0", "worker0")


def _half_way(cluster):
    """Waits until both trainers are half a save period past the newest
    checkpoint (a fault then has steps to lose)."""
    start_and_wait_mid_training(cluster)
    wait_for(lambda: min(cluster.step_seen(label) or 0 for label in TRAINERS) >=
             cluster.latest_checkpoint_step() + SAVE_STEPS // 2, START_SECS,
             "both trainers half-way between two saves")


def _rollbacks(cluster):
    """Every (step before, step after) a trainer logged when the global step went
    back, over all its runs."""
    found = []
    for label in TRAINERS:
        for i in range(cluster.incarnations(label)):
            for line in cluster.log_text(label, i).splitlines():
                if ROLLBACK_TAG in line:
                    before, after = line.rsplit(ROLLBACK_TAG, 1)[1].split()
                    found.append((int(before), int(after)))
    return found


def _report(cluster, codes, fault_time, saved_at_fault):
    """Checks the outcome; prints and returns (seconds to the end, steps lost).

    Steps lost are at most those since the newest checkpoint at the fault: a
    trainer's global step may only go back to (just past) that checkpoint's step.
    """
    took = time.monotonic() - fault_time
    final = assert_job_succeeded(cluster, codes, MAX_STEPS)
    lost = max(cluster.steps_lost(label) for label in TRAINERS)
    rollbacks = _rollbacks(cluster)
    assert all(after >= saved_at_fault for _, after in rollbacks), (
        f"the global step went back past the newest checkpoint at the fault (step "
        f"{saved_at_fault}): {rollbacks}")
    runs = {label: [cluster.process_of(label, i).returncode
                    for i in range(cluster.incarnations(label))]
            for label in cluster.started_labels()}
    print(f"exit codes of every run: {runs}; every role ended {took:.1f} s after the "
          f"fault; newest checkpoint at the fault: step {saved_at_fault}; global steps "
          f"lost: {lost}; final checkpoint step {final}, restorable, evaluated and "
          "exported")
    assert took < END_SECS
    return took, lost


@pytest.mark.slow
@pytest.mark.parametrize("label", ["worker0", "chief0"])
def test_sigkill_and_restart_trainer(make_cluster, label):
    # (a) worker, (b) chief: SIGKILLed mid-training, restarted at once.
    cluster = make_cluster(["--max-steps", str(MAX_STEPS), *PACED, *STRATEGY])
    _half_way(cluster)
    assert cluster.kill(label) == -signal.SIGKILL
    fault = time.monotonic()
    saved = cluster.latest_checkpoint_step()
    cluster.start(label)
    codes = cluster.wait_all_exit(END_SECS)
    _, lost = _report(cluster, codes, fault, saved)
    # The ps kept the model: nothing is restored (a restarted chief keeps the live
    # variables instead of restoring the older checkpoint over them, which cost
    # tf.estimator 36 steps here).
    assert lost == 0, f"{lost} global steps lost"


@pytest.mark.slow
def test_sigkill_and_restart_ps(make_cluster):
    # (c) the ps holds every variable: chief and worker recreate their sessions on
    # the restarted ps and the chief restores the newest checkpoint into it.
    cluster = make_cluster(["--max-steps", str(MAX_STEPS), *PACED, *STRATEGY])
    _half_way(cluster)
    assert cluster.kill("ps0") == -signal.SIGKILL
    fault = time.monotonic()
    saved = cluster.latest_checkpoint_step()
    cluster.start("ps0")
    codes = cluster.wait_all_exit(END_SECS)
    _report(cluster, codes, fault, saved)


@pytest.mark.slow
def test_sigterm_chief_saves_then_restart_finishes(make_cluster):
    # (d) saves every 100 steps: only a save on SIGTERM leaves a checkpoint at the
    # step the chief reached.
    cluster = make_cluster(["--max-steps", str(MAX_STEPS), *PACED, "--save-steps", "100",
                            *STRATEGY])
    cluster.start_all()
    wait_for(lambda: cluster.latest_checkpoint_step() >= 100, START_SECS,
             "a checkpoint at step >= 100")
    wait_for(lambda: (cluster.step_seen("chief0") or 0) >=
             cluster.latest_checkpoint_step() + 50, START_SECS,
             "the chief half-way between two saves")
    cluster.signal("chief0", signal.SIGTERM)
    fault = time.monotonic()
    sigterm_code = cluster.wait_exit("chief0", SIGTERM_GRACE_SECS)
    exited_after = time.monotonic() - fault
    reached = cluster.step_seen("chief0")
    saved = max(restores(p)[1] for p in cluster.checkpoint_paths())
    print(f"SIGTERMed chief exited {sigterm_code} after {exited_after:.2f} s; reached "
          f"step {reached}, newest checkpoint step {saved}")
    assert sigterm_code == 128 + signal.SIGTERM
    assert saved >= reached - 1, (
        f"after SIGTERM the newest checkpoint holds step {saved}; the chief had "
        f"reached step {reached}")
    cluster.start("chief0")
    codes = cluster.wait_all_exit(END_SECS)
    _report(cluster, codes, fault, saved)
