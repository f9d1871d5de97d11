"""Fault injection: a bad network between the roles, through the fault proxy.

Every role's TF_CONFIG names, for each peer, the port of a `proxy.Link` that
forwards to the peer (proxied.py), so the test can slow, reset or black-hole the
traffic between chosen roles while the job runs: no root, no ``sch_netem``
(which this kernel and CI's lack). Each scenario runs on a ps-style cluster
(job.py) and on a MultiWorkerMirroredStrategy cluster (collective_job.py):

- latency (50-200 ms each way) on every link: training is slower, and every
  checkpoint and the export hold the same values as a run without it;
- every connection reset every few seconds: the ps job finishes (its sessions
  recover), every listed checkpoint restores; the collective job ends (a reset
  aborts collectives, which TensorFlow cannot resume in a process) and finishes
  once the group is restarted;
- a black hole on a worker's links shorter than the bound (the ps job's
  ``operation_timeout_in_ms``, the collective job's
  ``experimental_collective_timeout_secs``): the steps wait and the job
  finishes; longer: the cut-off task ends (exit 1) with the clear error, and
  the job finishes without it (ps) or after a restart (collective).

Every process's exit code, the time to the end, restarts and steps lost are
printed as ``PROXY_OUTCOME {json}`` lines (docs/reliability.md's table; run with
-s). All `slow`: CI runs them with the other slow scenarios.
"""

import json
import os
import time

import numpy as np
import pytest
import tensorflow as tf

from tests.faults.cluster import closing_clusters, export_step, restores, wait_for
from tests.faults.proxied import ProxiedCluster
from tests.faults.scenarios import START_SECS, assert_job_succeeded

pytestmark = pytest.mark.slow

_COLLECTIVE_JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "collective_job.py")
# 50-200 ms each way: 125 +- 75 ms.
LATENCY_MS, JITTER_MS = 125, 75
RESET_EVERY_SECS = 3
OPERATION_TIMEOUT_MS = 8000
COLLECTIVE_TIMEOUT_SECS = 20
SHORT_HOLE_SECS = 3
# Every role must have ended this long after the fault began (or, for the
# latency runs, after the start): a hang fails by this deadline.
END_SECS = 240
LOST_MESSAGE = "of a MultiWorkerMirroredStrategy job"


@pytest.fixture
def make_proxied_cluster(tmp_path, request):
    """A factory of ProxiedClusters; each is closed at teardown, and its logs'
    tails are printed when the test failed."""
    with closing_clusters(ProxiedCluster, tmp_path, request) as make:
        yield make


def _black_hole(cluster, label):
    """Black-holes every link of role `label` until healed; returns the links."""
    links = cluster.links_of(label)
    for link in links:
        link.black_hole()
    return links


def _wait_roles(cluster, labels, deadline):
    """Polls until every role of `labels` exited or `deadline`; returns
    {label: exit code (None: still running)}."""
    while True:
        codes = {label: cluster.process(label).poll() for label in labels}
        if all(code is not None for code in codes.values()) or (
                time.monotonic() >= deadline):
            return codes
        time.sleep(0.1)


def _record(scenario, cluster, labels, start, trainers, restarts=0, lost=None):
    """Prints and returns the scenario's row: every process's exit code (every
    incarnation), seconds from `start` to the end, restarts, steps lost (`lost`,
    else what the trainers' logs say they saw thrown away)."""
    codes = {label: [cluster.process_of(label, i).poll()
                     for i in range(cluster.incarnations(label))] for label in labels}
    row = {"scenario": scenario, "exit_codes": codes,
           "secs_to_end": round(time.monotonic() - start, 1), "restarts": restarts,
           "steps_lost": lost if lost is not None else {
               label: cluster.steps_lost(label) for label in trainers},
           "resets": sum(link.connections_reset for link in cluster.proxy.links),
           # What the resets did: steps failed with UnavailableError, sessions
           # recreated (a reset between two RPCs costs nothing).
           "session_recreations": {label: sum(
               cluster.log_text(label, i).count("); recreating it.")
               for i in range(cluster.incarnations(label))) for label in trainers}}
    print("PROXY_OUTCOME " + json.dumps(row))
    return row


def _variables(checkpoint_path):
    reader = tf.compat.v1.train.NewCheckpointReader(checkpoint_path)
    return {name: reader.get_tensor(name)
            for name in reader.get_variable_to_shape_map()}


def _assert_same_values(first, second):
    """Two checkpoints (or exports' variables) hold the same tensors."""
    a, b = _variables(first), _variables(second)
    assert sorted(a) == sorted(b), (sorted(a), sorted(b))
    for name in a:
        assert np.array_equal(a[name], b[name]), (
            f"{name} differs between {first} and {second}: max abs diff "
            f"{np.max(np.abs(np.asarray(a[name], float) - np.asarray(b[name], float)))}")


def _training_secs(cluster):
    """Seconds between the first and the last listed checkpoint's writes."""
    times = [os.path.getmtime(f"{path}.index") for path in cluster.checkpoint_paths()]
    return max(times) - min(times)


def _run_to_end(cluster, labels, start):
    cluster.start_all(labels)
    codes = _wait_roles(cluster, labels, start + START_SECS + END_SECS)
    assert all(code == 0 for code in codes.values()), codes
    return codes


# ps-style cluster (job.py: ps, chief, worker, evaluator) ---------------------------

_PS_LABELS = ["ps0", "chief0", "evaluator0"]


def test_latency_on_ps_links_same_checkpoints_and_export(make_proxied_cluster):
    # One trainer (ps + chief): its steps run one after another, so a run's
    # values are fixed by the seed and the data, whatever the network does.
    args = ["--max-steps", "60", "--save-steps", "20", "--keep-checkpoint-max", "10"]
    reference = make_proxied_cluster(args, num_workers=0)
    _run_to_end(reference, _PS_LABELS, time.monotonic())
    slowed = make_proxied_cluster(args, num_workers=0)
    for link in slowed.links_of("ps0"):
        link.set(latency_ms=LATENCY_MS, jitter_ms=JITTER_MS)
    start = time.monotonic()
    _run_to_end(slowed, _PS_LABELS, start)
    row = _record("ps: 50-200 ms latency on the ps links", slowed, _PS_LABELS, start,
                  ["chief0"])
    assert_job_succeeded(slowed, dict.fromkeys(_PS_LABELS, 0), 60)
    steps = [restores(p)[1] for p in reference.checkpoint_paths()]
    assert [restores(p)[1] for p in slowed.checkpoint_paths()] == steps
    for first, second in zip(reference.checkpoint_paths(), slowed.checkpoint_paths(),
                             strict=True):
        _assert_same_values(first, second)
    exports = reference.exports()[-1], slowed.exports()[-1]
    assert export_step(exports[0]) == export_step(exports[1]) == 60
    _assert_same_values(*(os.path.join(e, "variables", "variables") for e in exports))
    plain, slow = _training_secs(reference), _training_secs(slowed)
    print(f"checkpoints {steps}: identical; training (first to last checkpoint) "
          f"{plain:.1f} s without latency, {slow:.1f} s with")
    assert slow > plain, (plain, slow)
    assert row["steps_lost"] == {"chief0": 0}


PS_MAX_STEPS = 600


def _ps_cluster(make_proxied_cluster, *extra):
    return make_proxied_cluster(["--max-steps", str(PS_MAX_STEPS), "--step-sleep-ms",
                                 "20", *extra])


def _mid_training(cluster, labels=None, step=40):
    """Starts the roles; returns once a checkpoint at `step` exists and every
    trainer has made a step (a late worker's session creation is not a fault
    landing mid-training)."""
    cluster.start_all(labels)
    wait_for(lambda: cluster.latest_checkpoint_step() >= step, START_SECS,
             f"a checkpoint at step >= {step}")
    trainers = [label for label in cluster.started_labels()
                if label.startswith(("chief", "worker"))]
    wait_for(lambda: all(cluster.step_seen(label) for label in trainers), START_SECS,
             f"a step of every trainer ({trainers})")
    assert cluster.completion_marker() is None, "training ended before the fault"
    return time.monotonic()


RESET_MAX_STEPS = 3000


def test_connection_resets_on_every_ps_link(make_proxied_cluster):
    # Steps back to back (no sleep), so that resets land on RPCs in flight.
    cluster = make_proxied_cluster(["--max-steps", str(RESET_MAX_STEPS)])
    labels = cluster.labels()
    start = _mid_training(cluster)
    for link in cluster.proxy.links:
        link.set(reset_every_secs=RESET_EVERY_SECS)
    codes = _wait_roles(cluster, labels, start + END_SECS)
    row = _record(f"ps: every connection reset every {RESET_EVERY_SECS} s", cluster,
                  labels, start, ["chief0", "worker0"])
    assert row["resets"] > 0, "no connection was open to reset"
    assert sum(row["session_recreations"].values()) > 0, (
        f"no step failed of a reset: {row}")
    assert_job_succeeded(cluster, codes, RESET_MAX_STEPS)


def _steps_during(cluster, trainers, secs):
    """The steps each trainer made in the next `secs` seconds."""
    before = {t: cluster.step_seen(t) for t in trainers}
    time.sleep(secs)
    return {t: cluster.step_seen(t) - before[t] for t in trainers}


def test_short_black_hole_of_the_worker_links(make_proxied_cluster):
    cluster = _ps_cluster(make_proxied_cluster, "--operation-timeout-ms",
                          str(OPERATION_TIMEOUT_MS))
    labels = cluster.labels()
    start = _mid_training(cluster)
    links = _black_hole(cluster, "worker0")
    time.sleep(1)  # a step in flight may still end
    made = _steps_during(cluster, ["worker0"], SHORT_HOLE_SECS - 1)
    for link in links:
        link.heal()
    assert made == {"worker0": 0}, f"the worker stepped in the black hole: {made}"
    codes = _wait_roles(cluster, labels, start + END_SECS)
    _record(f"ps: worker's links black-holed {SHORT_HOLE_SECS} s "
            f"(< operation_timeout_in_ms={OPERATION_TIMEOUT_MS})", cluster, labels,
            start, ["chief0", "worker0"])
    assert_job_succeeded(cluster, codes, PS_MAX_STEPS)


def test_long_black_hole_of_the_worker_links_ends_the_worker(make_proxied_cluster):
    cluster = _ps_cluster(make_proxied_cluster, "--operation-timeout-ms",
                          str(OPERATION_TIMEOUT_MS))
    labels = cluster.labels()
    start = _mid_training(cluster)
    _black_hole(cluster, "worker0")  # for good: until the test ends
    codes = _wait_roles(cluster, labels, start + END_SECS)
    _record(f"ps: worker's links black-holed for good "
            f"(> operation_timeout_in_ms={OPERATION_TIMEOUT_MS})", cluster, labels,
            start, ["chief0", "worker0"])
    assert codes["worker0"] == 1, codes
    log = cluster.log_text("worker0")
    assert "DeadlineExceededError" in log and "/job:ps/task:0" in log, log[-3000:]
    assert f"operation_timeout_in_ms={OPERATION_TIMEOUT_MS}" in log
    assert_job_succeeded(cluster, {k: v for k, v in codes.items() if k != "worker0"},
                         PS_MAX_STEPS)


# MultiWorkerMirroredStrategy cluster (collective_job.py: two workers) --------------

_TRAINERS = ["worker0", "worker1"]
COLLECTIVE_RESET_MAX_STEPS = 1500


def _collective_cluster(make_proxied_cluster, max_steps=300, save_steps=50,
                        step_sleep_ms=20):
    return make_proxied_cluster(
        ["--max-steps", str(max_steps), "--save-steps", str(save_steps),
         "--step-sleep-ms", str(step_sleep_ms),
         "--collective-timeout-secs", str(COLLECTIVE_TIMEOUT_SECS),
         "--session-timeout-secs", str(START_SECS)],
        num_workers=2, num_ps=0, chief=False, program=_COLLECTIVE_JOB)


def _lost_at_restart(cluster):
    """Once every worker ended: the highest step reached minus the newest
    checkpoint's (what a restart resumes from)."""
    reached = max(cluster.step_seen(label) or 0 for label in _TRAINERS)
    return max(reached - max(cluster.latest_checkpoint_step(), 0), 0)


def _restart_until_done(cluster, deadline, max_restarts=3):
    """An orchestrator restarting the whole worker group (collectives cannot be
    rejoined) whenever a worker exited non-zero; returns (restarts, steps lost)."""
    restarts = lost = 0
    while True:
        codes = {label: cluster.process(label).poll() for label in _TRAINERS}
        if all(code == 0 for code in codes.values()):
            return restarts, lost
        if any(code not in (None, 0) for code in codes.values()):
            assert restarts < max_restarts, f"workers keep failing: {codes}"
            for label in _TRAINERS:
                if cluster.running(label):
                    cluster.wait_exit(label, COLLECTIVE_TIMEOUT_SECS + 40)
            restarts += 1
            lost += _lost_at_restart(cluster)
            cluster.start_all(_TRAINERS)
        assert time.monotonic() < deadline, f"workers still running: {codes}"
        time.sleep(0.1)


def _assert_collective_finished(cluster, max_steps):
    paths = cluster.checkpoint_paths()
    restored = {path: restores(path) for path in paths}
    broken = {p: why for p, (ok, why) in restored.items() if not ok}
    assert paths and not broken, f"listed checkpoints that do not restore: {broken}"
    assert restored[paths[-1]][1] >= max_steps


def test_latency_on_collective_links_same_checkpoints(make_proxied_cluster):
    # Synchronous all-reduce: the values depend only on the seed and the data.
    reference = _collective_cluster(make_proxied_cluster, max_steps=40, save_steps=20,
                                    step_sleep_ms=0)
    _run_to_end(reference, _TRAINERS, time.monotonic())
    slowed = _collective_cluster(make_proxied_cluster, max_steps=40, save_steps=20,
                                 step_sleep_ms=0)
    for link in slowed.proxy.links:
        link.set(latency_ms=LATENCY_MS, jitter_ms=JITTER_MS)
    start = time.monotonic()
    _run_to_end(slowed, _TRAINERS, start)
    row = _record("collective: 50-200 ms latency on every link", slowed, _TRAINERS,
                  start, _TRAINERS)
    _assert_collective_finished(slowed, 40)
    steps = [restores(p)[1] for p in reference.checkpoint_paths()]
    assert [restores(p)[1] for p in slowed.checkpoint_paths()] == steps
    for first, second in zip(reference.checkpoint_paths(), slowed.checkpoint_paths(),
                             strict=True):
        _assert_same_values(first, second)
    plain, slow = _training_secs(reference), _training_secs(slowed)
    print(f"checkpoints {steps}: identical; training (first to last checkpoint) "
          f"{plain:.1f} s without latency, {slow:.1f} s with")
    assert slow > plain, (plain, slow)
    assert row["steps_lost"] == {"worker0": 0, "worker1": 0}


def test_connection_resets_on_collective_links(make_proxied_cluster):
    # A reset that hits a collective's RPC in flight aborts the collectives, which
    # TensorFlow cannot resume in the process: every worker ends (exit 1, the clear
    # message), and the job finishes once the orchestrator restarts the group after
    # the resets stop. Resets that land between RPCs cost nothing (gRPC reconnects).
    # Steps back to back (no sleep), so that resets land on RPCs in flight.
    cluster = _collective_cluster(make_proxied_cluster,
                                  max_steps=COLLECTIVE_RESET_MAX_STEPS, step_sleep_ms=0)
    start = _mid_training(cluster, _TRAINERS, step=50)
    for link in cluster.proxy.links:
        link.set(reset_every_secs=RESET_EVERY_SECS)
    codes = _wait_roles(cluster, _TRAINERS, start + COLLECTIVE_TIMEOUT_SECS + 60)
    ended = round(time.monotonic() - start, 1)
    for link in cluster.proxy.links:
        link.set(reset_every_secs=0)
    resets = sum(link.connections_reset for link in cluster.proxy.links)
    print(f"both workers ended {ended} s after the resets began: {codes}")
    assert resets > 0, "no connection was open to reset"
    lost = restarts = 0
    if codes != {"worker0": 0, "worker1": 0}:
        assert codes == {"worker0": 1, "worker1": 1}, codes
        for label in _TRAINERS:
            log = cluster.log_text(label)
            assert LOST_MESSAGE in log and "Newest checkpoint: " in log, log[-3000:]
        lost = _lost_at_restart(cluster)
        cluster.start_all(_TRAINERS)
        restarts, more_lost = _restart_until_done(cluster, start + END_SECS)
        restarts, lost = restarts + 1, lost + more_lost
    _record(f"collective: every connection reset every {RESET_EVERY_SECS} s until "
            "the workers ended, then the group restarted", cluster, _TRAINERS, start,
            _TRAINERS, restarts, {"group": lost})
    _assert_collective_finished(cluster, COLLECTIVE_RESET_MAX_STEPS)


def test_short_black_hole_of_a_collective_worker(make_proxied_cluster):
    cluster = _collective_cluster(make_proxied_cluster)
    start = _mid_training(cluster, _TRAINERS, step=50)
    links = _black_hole(cluster, "worker1")
    time.sleep(1)
    made = _steps_during(cluster, _TRAINERS, SHORT_HOLE_SECS - 1)
    for link in links:
        link.heal()
    assert made == {"worker0": 0, "worker1": 0}, f"steps in the black hole: {made}"
    codes = _wait_roles(cluster, _TRAINERS, start + END_SECS)
    _record(f"collective: worker 1's links black-holed {SHORT_HOLE_SECS} s "
            f"(< experimental_collective_timeout_secs={COLLECTIVE_TIMEOUT_SECS})",
            cluster, _TRAINERS, start, _TRAINERS)
    assert codes == {"worker0": 0, "worker1": 0}, codes
    _assert_collective_finished(cluster, 300)


def test_long_black_hole_of_a_collective_worker_ends_both(make_proxied_cluster):
    cluster = _collective_cluster(make_proxied_cluster)
    start = _mid_training(cluster, _TRAINERS, step=50)
    links = _black_hole(cluster, "worker1")
    codes = _wait_roles(cluster, _TRAINERS, start + COLLECTIVE_TIMEOUT_SECS + 60)
    ended = round(time.monotonic() - start, 1)
    print(f"both workers ended {ended} s after the black hole began: {codes}")
    assert codes == {"worker0": 1, "worker1": 1}, codes
    for label in _TRAINERS:
        log = cluster.log_text(label)
        assert LOST_MESSAGE in log and "Newest checkpoint: " in log, log[-3000:]
    for link in links:
        link.heal()
    # The orchestrator restarts the group: it resumes from the newest checkpoint.
    lost = _lost_at_restart(cluster)
    cluster.start_all(_TRAINERS)
    restarts, more_lost = _restart_until_done(cluster, start + END_SECS)
    _record("collective: worker 1's links black-holed for good (> "
            f"experimental_collective_timeout_secs={COLLECTIVE_TIMEOUT_SECS}), then "
            "healed and the group restarted", cluster, _TRAINERS, start, _TRAINERS,
            1 + restarts, {"group": lost + more_lost})
    _assert_collective_finished(cluster, 300)
