"""Fault injection: network faults between the roles of a ps-style cluster.

Every role (ps, chief, worker, evaluator) runs in its own network namespace
(netns.py: a bridge, one veth pair per role, a private /24), so a test can cut
one role's link and restore it, as a switch or a node's NIC failing would:

- a partition of the worker, or of the ps, for a few seconds mid-training: the
  blocked steps wait on TCP, go on when the link is back, and the job finishes by
  itself (nothing lost, every checkpoint restores, the final one is exported);
- a partition that outlasts ``session_config.operation_timeout_in_ms``: the cut
  off worker ends (exit 1) with a DeadlineExceededError naming the task it could
  not reach, the others finish without it; without that setting a step waits on
  a partition without end (TCP retransmits), as on tf.estimator;
- delay and loss (``tc netem``): skipped where the kernel lacks sch_netem.

Each scenario also runs on tf.estimator 2.15 (the same job through
netns_job.py), which is what docs/reliability.md's table compares. Needs root
and iproute2; skipped otherwise.
"""

import json
import time

import pytest

from tests.faults.cluster import closing_clusters, restores, wait_for
from tests.faults.netns import (
    ORACLE_LIBRARY,
    NetnsCluster,
    netem_unavailable_reason,
    unavailable_reason,
)
from tests.faults.scenarios import FAULT_AT_STEP, START_SECS
from tests.oracle import ORACLE_REASON, TF215_PYTHON

_UNAVAILABLE = unavailable_reason()
pytestmark = pytest.mark.skipif(_UNAVAILABLE is not None,
                                reason=f"network namespaces: {_UNAVAILABLE}")

MAX_STEPS = 600
# ~45 steps/s per trainer: training lasts long enough for a fault of a few seconds.
PACED = ("--step-sleep-ms", "20")
PARTITION_SECS = 5
# The bound of scenario (c): session_config.operation_timeout_in_ms.
OPERATION_TIMEOUT_MS = 8000
# Every role must have ended this long after the fault began (a hang fails fast).
END_SECS = 120
LIBRARIES = {"estimator_lite": None, "tf.estimator": ORACLE_LIBRARY}


@pytest.fixture
def make_netns_cluster(tmp_path, request):
    """A factory of NetnsClusters; each is closed (processes, devices) at teardown,
    and its logs' tails are printed when the test failed."""
    with closing_clusters(NetnsCluster, tmp_path, request) as make:

        def make_for(job_args=(), library=None):
            if library == ORACLE_LIBRARY and not TF215_PYTHON:
                pytest.skip(ORACLE_REASON)
            python = TF215_PYTHON if library == ORACLE_LIBRARY else None
            kwargs = {"python": python} if python else {}
            return make(job_args, library=library, **kwargs)

        yield make_for


def _start_and_wait_mid_training(cluster):
    cluster.start_all()
    wait_for(lambda: cluster.latest_checkpoint_step() >= FAULT_AT_STEP, START_SECS,
             f"a checkpoint at step >= {FAULT_AT_STEP}")


def _wait_roles(cluster, labels, start, deadline):
    """Polls until every role in `labels` exited or `deadline`; returns their exit
    codes (None = still running) and the seconds from `start` to each exit."""
    ended = {}
    while True:
        codes = {label: cluster.process(label).poll() for label in labels}
        for label, code in codes.items():
            if code is not None and label not in ended:
                ended[label] = round(time.monotonic() - start, 1)
        if all(code is not None for code in codes.values()):
            return codes, ended
        if time.monotonic() >= deadline:
            return codes, ended
        time.sleep(0.1)


def _outcome(cluster, library, fault_start, waited):
    """Every role's exit code (None: still running when the test stopped waiting),
    the seconds from the fault to the end, and the steps each trainer lost."""
    codes, ended = _wait_roles(cluster, waited, fault_start, fault_start + END_SECS)
    elapsed = round(time.monotonic() - fault_start, 1)
    codes.update({label: cluster.process(label).poll() for label in cluster.labels()
                  if label not in waited})
    outcome = {"library": library or "estimator_lite", "codes": codes,
               "secs_after_fault": elapsed, "exit_secs_after_fault": ended,
               "steps_lost": {label: cluster.steps_lost(label)
                              for label in ("chief0", "worker0")}}
    # The docs table is made from these lines (run with -s).
    print("NETWORK_OUTCOME " + json.dumps(outcome))
    return outcome


def _assert_checkpoints_restore(cluster):
    """Every listed checkpoint restores, the newest at max_steps; returns its step."""
    paths = cluster.checkpoint_paths()
    restored = {path: restores(path) for path in paths}
    assert paths and all(ok for ok, _ in restored.values()), restored
    final_step = restored[paths[-1]][1]
    assert final_step >= MAX_STEPS, (final_step, MAX_STEPS)
    return final_step


def _assert_model_dir_complete(cluster, library):
    """max_steps reached; every listed checkpoint restores; the final one was
    evaluated and exported; no temp export dir is left."""
    final_step = _assert_checkpoints_restore(cluster)
    assert final_step in cluster.eval_steps(), (final_step, cluster.eval_steps())
    exports = cluster.exports()
    assert exports, "nothing exported"
    ok, _ = restores(f"{exports[-1]}/variables/variables")
    assert ok, f"the newest export {exports[-1]} does not restore"
    assert restores(f"{exports[-1]}/variables/variables")[1] == final_step
    assert cluster.temp_exports() == []
    if library is None:
        assert cluster.completion_marker() is not None


def _partition_for(cluster, label, secs, blocked):
    """Cuts `label` off for `secs`; asserts the `blocked` trainers made (almost)
    no step meanwhile, so the fault really hit. Returns when the fault began."""
    start = time.monotonic()
    cluster.partition(label)
    time.sleep(1)  # a step in flight when the link went down may still end
    before = {trainer: cluster.step_seen(trainer) for trainer in blocked}
    time.sleep(secs - 1)  # the fault's length: what the scenario is about
    after = {trainer: cluster.step_seen(trainer) for trainer in blocked}
    cluster.heal(label)
    assert before == after, f"trainers stepped while {label} was cut off: {before} {after}"
    return start


def _run_brief_partition(make_netns_cluster, label, library):
    cluster = make_netns_cluster(["--max-steps", str(MAX_STEPS), *PACED], library)
    _start_and_wait_mid_training(cluster)
    # The ps holds every variable: both trainers wait; a cut-off worker only itself.
    blocked = ["worker0", "chief0"] if label == "ps0" else [label]
    fault_start = _partition_for(cluster, label, PARTITION_SECS, blocked)
    # tf.estimator's ps serves forever (it never exits by itself): not waited for.
    waited = [lb for lb in cluster.labels() if not (library and lb == "ps0")]
    outcome = _outcome(cluster, library, fault_start, waited)
    codes = outcome["codes"]
    assert codes["chief0"] == 0 and codes["worker0"] == 0, outcome
    assert outcome["steps_lost"] == {"chief0": 0, "worker0": 0}, outcome
    if library is None:
        assert codes["ps0"] == 0, outcome
    _assert_end_state(cluster, library, outcome)


def _assert_end_state(cluster, library, outcome):
    """estimator_lite: the evaluator exited 0 and the model_dir is complete.
    tf.estimator: its ps serves on; its evaluator may die of a checkpoint
    garbage-collected under it (ValueError: not a valid checkpoint): recorded, not
    asserted; the checkpoints must restore all the same."""
    codes = outcome["codes"]
    if library is None:
        assert codes["evaluator0"] == 0, outcome
        _assert_model_dir_complete(cluster, library)
        return
    assert codes["ps0"] is None, "tf.estimator's ps exited by itself"
    _assert_checkpoints_restore(cluster)
    if codes["evaluator0"] == 0:
        _assert_model_dir_complete(cluster, library)


# (a) + (b): a brief partition of the worker or the ps, then the link is back ---


@pytest.mark.slow
def test_brief_worker_partition(make_netns_cluster):
    _run_brief_partition(make_netns_cluster, "worker0", None)


@pytest.mark.slow
def test_brief_ps_partition(make_netns_cluster):
    _run_brief_partition(make_netns_cluster, "ps0", None)


@pytest.mark.slow
@pytest.mark.parametrize("label", ["worker0", "ps0"])
def test_brief_partition_on_tf_estimator(make_netns_cluster, label):
    _run_brief_partition(make_netns_cluster, label, ORACLE_LIBRARY)


# (c): a partition that outlasts session_config.operation_timeout_in_ms ---


@pytest.mark.slow
@pytest.mark.parametrize("library", list(LIBRARIES))
def test_long_worker_partition_ends_the_worker(make_netns_cluster, library):
    library = LIBRARIES[library]
    cluster = make_netns_cluster(["--max-steps", str(MAX_STEPS), *PACED,
                                  "--operation-timeout-ms", str(OPERATION_TIMEOUT_MS)],
                                 library)
    _start_and_wait_mid_training(cluster)
    fault_start = time.monotonic()
    cluster.partition("worker0")
    waited = [lb for lb in cluster.labels() if not (library and lb == "ps0")]
    outcome = _outcome(cluster, library, fault_start, waited)
    cluster.heal("worker0")
    codes = outcome["codes"]
    assert codes["chief0"] == 0, outcome
    _assert_end_state(cluster, library, outcome)
    if library is None:
        # The worker gave up after the bound, naming the ps it could not reach.
        assert codes["worker0"] == 1, outcome
        assert codes["ps0"] == 0, outcome
        log = cluster.log_text("worker0")
        assert "DeadlineExceededError" in log and "/job:ps/task:0" in log, log[-3000:]
        assert f"operation_timeout_in_ms={OPERATION_TIMEOUT_MS}" in log
    else:
        # tf.estimator: the timed-out worker blocks while closing its session,
        # so it never ends while the partition lasts.
        assert codes["worker0"] is None, outcome


# (d): delay and loss ---


_NETEM = netem_unavailable_reason()


@pytest.mark.slow
@pytest.mark.skipif(_NETEM is not None, reason=f"{_NETEM}")
@pytest.mark.parametrize("library", list(LIBRARIES))
def test_delay_and_loss_slow_training_down(make_netns_cluster, library):
    library = LIBRARIES[library]
    cluster = make_netns_cluster(["--max-steps", str(MAX_STEPS), *PACED], library)
    _start_and_wait_mid_training(cluster)
    fault_start = time.monotonic()
    for label in ("worker0", "ps0"):
        cluster.netem(label, delay_ms=20, loss_percent=5)
    waited = [lb for lb in cluster.labels() if not (library and lb == "ps0")]
    outcome = _outcome(cluster, library, fault_start, waited)
    codes = outcome["codes"]
    assert codes["chief0"] == 0 and codes["worker0"] == 0, outcome
    if library is None:
        assert codes["ps0"] == 0, outcome
    _assert_end_state(cluster, library, outcome)
