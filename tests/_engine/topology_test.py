"""A task's cluster facts (estimator_lite/_engine/topology.py), role by role.

What the facts do is checked end to end elsewhere (the executor's tests in
tests/training_test.py, the clusters of tests/distribute/ and tests/faults/);
here: which facts each role of each job kind gets.
"""

import json
import types

import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite._engine import topology

PS_CLUSTER = {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2", "127.0.0.1:3"],
              "ps": ["127.0.0.1:4"]}
MASTER_CLUSTER = {"master": ["127.0.0.1:1"], "worker": ["127.0.0.1:2", "127.0.0.1:3"],
                  "ps": ["127.0.0.1:4"]}
# A collective job as MultiWorkerMirroredStrategy's are written: workers only.
COLLECTIVE_CLUSTER = {"worker": ["127.0.0.1:1", "127.0.0.1:2"]}


class MultiWorkerMirroredStrategy:
    """Stands in for tf.distribute's (a strategy is known by its class name); the
    real one starts a server when built, which a unit test must not."""

    extended = types.SimpleNamespace(_std_server_started=False)

    def scope(self):
        raise NotImplementedError  # RunConfig checks it exists; nothing runs it


def _config(task_type, task_id, cluster=None, strategy=None, is_chief=None, master=None,
            **more):
    """A RunConfig-like object (what train_and_evaluate accepts from an estimator)."""
    return types.SimpleNamespace(
        cluster_spec=tf.train.ClusterSpec(cluster or {}), task_type=task_type,
        task_id=task_id,
        is_chief=task_type in ("chief", "master") if is_chief is None else is_chief,
        master=(master if master is not None else
                "grpc://127.0.0.1:1" if cluster else ""),
        train_distribute=strategy, environment="cloud", **more)


def _facts(record):
    return (record.kind, record.is_chief, record.workers_hold_variables,
            record.writes_summaries, record.worker_wait, record.failure_ends_job)


def _expect(kind, chief=False, summaries=False):
    """What `_facts` gives for a role of a job of `kind`."""
    collective = kind == "collective"
    return (kind, chief, collective, summaries,
            "with the chief" if collective else "staggered start", collective)


MWMS = MultiWorkerMirroredStrategy()
ROLES = {
    "local": (_config("worker", 0, is_chief=True), _expect("local", True, True)),
    "ps chief": (_config("chief", 0, PS_CLUSTER), _expect("ps", True, True)),
    "ps worker": (_config("worker", 1, PS_CLUSTER), _expect("ps")),
    "ps": (_config("ps", 0, PS_CLUSTER), _expect("ps")),
    "evaluator": (_config("evaluator", 0), _expect("local")),
    # Beside a legacy master with workers, worker 0 writes the summaries.
    "master": (_config("master", 0, MASTER_CLUSTER), _expect("ps", chief=True)),
    "master's worker 0": (_config("worker", 0, MASTER_CLUSTER),
                          _expect("ps", summaries=True)),
    "master's worker 1": (_config("worker", 1, MASTER_CLUSTER), _expect("ps")),
    # Worker 0 of a chief-less collective cluster leads.
    "collective worker 0": (_config("worker", 0, COLLECTIVE_CLUSTER, MWMS, True),
                            _expect("collective", True, True)),
    "collective worker 1": (_config("worker", 1, COLLECTIVE_CLUSTER, MWMS, False),
                            _expect("collective")),
    # A collective strategy beside a legacy master: the master's summaries rule is
    # between-graph replication's only.
    "collective master": (_config("master", 0, MASTER_CLUSTER, MWMS),
                          _expect("collective", True, True)),
}


def test_a_collective_job_of_one_worker_recreates_its_session():
    # No peer to lose: a failed step recreates the session, as a local job's does.
    record = topology.for_config(_config("worker", 0, None, MWMS, True))
    assert _facts(record) == ("collective", True, True, True, "with the chief", False)


@pytest.mark.parametrize("role", sorted(ROLES))
def test_each_role_gets_its_facts(role):
    config, expected = ROLES[role]
    record = topology.for_config(config)
    assert _facts(record) == expected
    assert record.master == config.master
    assert record.server_started_by == topology.THIS_TASK


def test_the_record_is_frozen():
    record = topology.for_config(ROLES["ps chief"][0])
    with pytest.raises(AttributeError):
        record.is_chief = False


def test_the_platform_or_the_strategy_may_start_the_server(monkeypatch):
    google = _config("chief", 0, PS_CLUSTER)
    google.environment = "google"
    assert topology.for_config(google).server_started_by == topology.PLATFORM
    # TF_CONFIG's environment is read when the record is made, as tf.estimator does.
    monkeypatch.setenv("TF_CONFIG", json.dumps({"environment": "google"}))
    assert (topology.for_config(_config("chief", 0, PS_CLUSTER)).server_started_by
            == topology.PLATFORM)
    monkeypatch.delenv("TF_CONFIG")
    strategy = MultiWorkerMirroredStrategy()
    strategy.extended = types.SimpleNamespace(_std_server_started=True)
    started = _config("worker", 1, COLLECTIVE_CLUSTER, strategy, False)
    assert topology.for_config(started).server_started_by == topology.STRATEGY


def test_an_estimator_likes_config_may_lack_strategy_environment_and_chief():
    # train_and_evaluate drives any estimator-like object, tf.estimator's too.
    bare = types.SimpleNamespace(cluster_spec=tf.train.ClusterSpec(PS_CLUSTER),
                                 task_type="worker", task_id=1, master="grpc://w:1")
    assert _facts(topology.for_config(bare)) == _expect("ps")
    # A test double whose attribute is not a strategy counts as none.
    double = _config("worker", 1, COLLECTIVE_CLUSTER, object())
    assert topology.train_strategy(double) is None
    assert topology.for_config(double).kind == topology.PS


def test_the_bare_question_for_a_strategy():
    assert topology.runs_collectives(MultiWorkerMirroredStrategy())
    assert not topology.runs_collectives(None)
    with tf.Graph().as_default():
        mirrored = tf.distribute.MirroredStrategy(["/cpu:0"])
    assert not topology.runs_collectives(mirrored)


def test_has_cluster():
    assert not topology.has_cluster(_config("worker", 0))
    assert topology.has_cluster(_config("chief", 0, PS_CLUSTER))


def test_a_run_config_from_tf_config(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", json.dumps(
        {"cluster": COLLECTIVE_CLUSTER, "task": {"type": "worker", "index": 1}}))
    # Workers only is a valid cluster for a collective strategy: worker 0 leads.
    config = el.RunConfig(train_distribute=MultiWorkerMirroredStrategy())
    record = topology.for_config(config)
    assert _facts(record) == _expect("collective")
    assert record.master == "grpc://127.0.0.1:2"
    monkeypatch.setenv("TF_CONFIG", json.dumps(
        {"cluster": PS_CLUSTER, "task": {"type": "chief", "index": 0}}))
    assert _facts(topology.for_config(el.RunConfig())) == _expect("ps", True, True)
