"""Tests for RunConfig, TaskType and TF_CONFIG parsing."""

import json
import os
from unittest import mock

import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite.run_config import parse_tf_config
from tests.oracle import driver_path, load_driver, requires_oracle, run_oracle_driver
from tests.support.tf_versions import tf2_only

TABLE_DRIVER = driver_path("run_config_driver.py")

CHIEF = "127.0.0.1:2220"
WORKERS = ["127.0.0.1:2221", "127.0.0.1:2222"]
PS = ["127.0.0.1:2223", "127.0.0.1:2224"]
CLUSTER = {"chief": [CHIEF], "worker": WORKERS, "ps": PS}
MASTER_CLUSTER = {"master": [CHIEF], "worker": WORKERS, "ps": PS}

ERR_FROM_TF_CONFIG = "TF_CONFIG"
ERR_JSON = "not valid JSON"
ERR_CLUSTER_DICT = "'cluster' must be a dict"
ERR_NO_TYPE = "has no 'type'"
ERR_UNKNOWN_TYPE = "unknown task type"
ERR_NO_INDEX = "has no 'index'"
ERR_NEGATIVE_INDEX = "must be >= 0"
ERR_INDEX_RANGE = "must be <"
ERR_TWO_CHIEFS = "at most one 'chief'"
ERR_NO_CHIEF = "needs one 'chief'"
ERR_CHIEF_AND_MASTER = "cannot both be in the cluster"
ERR_EVALUATOR_MASTER = "not supported with a legacy 'master'"
ERR_MODEL_DIR_CONFLICT = "conflicts with the model_dir argument"
ERR_NO_CLUSTER_TYPE = "without a 'cluster', the task type must be 'worker'"
ERR_NO_CLUSTER_INDEX = "without a 'cluster', the task index must be 0"


def _config(monkeypatch, tf_config, **kwargs):
    raw = tf_config if isinstance(tf_config, str) else json.dumps(tf_config)
    monkeypatch.setenv("TF_CONFIG", raw)
    return el.RunConfig(**kwargs)


def test_defaults_follow_tf_estimator(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    config = el.RunConfig()
    assert config.save_checkpoints_secs == 600
    assert config.save_checkpoints_steps is None
    assert config.save_summary_steps == 100
    assert config.keep_checkpoint_max == 5
    assert config.keep_checkpoint_every_n_hours == 10000
    assert config.log_step_count_steps == 100
    assert config.session_creation_timeout_secs == 7200
    assert config.model_dir is None and config.tf_random_seed is None
    # As tf.estimator: None locally; the Estimator fills in the default, which runs
    # sessions with allow_soft_placement and one Grappler round
    # (run_config.get_default_session_config); each first run of a fetch set pays it.
    assert config.session_config is None
    estimator = el.Estimator(lambda features, labels, mode: None, config=config)
    assert estimator.config.session_config.allow_soft_placement
    rewrite = estimator.config.session_config.graph_options.rewrite_options
    assert rewrite.meta_optimizer_iterations == rewrite.ONE
    assert config.session_config is None  # the user's config is not changed


def test_local_mode_without_tf_config(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    config = el.RunConfig()
    assert config.cluster_spec.jobs == []
    assert (config.task_type, config.task_id) == (el.TaskType.WORKER, 0)
    assert config.is_chief
    assert config.master == ""
    assert (config.num_ps_replicas, config.num_worker_replicas) == (0, 1)
    assert config.global_id_in_cluster == 0
    assert config.session_config is None


def test_empty_tf_config_is_local(monkeypatch):
    assert _config(monkeypatch, "  ").is_chief
    assert _config(monkeypatch, {}).cluster_spec.jobs == []


def test_chief_mode_chief(monkeypatch):
    config = _config(monkeypatch, {"cluster": CLUSTER,
                                   "task": {"type": "chief", "index": 0}})
    assert config.task_type == el.TaskType.CHIEF and config.task_id == 0
    assert config.is_chief
    assert config.master == f"grpc://{CHIEF}"
    assert config.num_ps_replicas == 2 and config.num_worker_replicas == 3
    assert config.global_id_in_cluster == 0
    assert sorted(config.cluster_spec.jobs) == ["chief", "ps", "worker"]
    assert list(config.session_config.device_filters) == ["/job:ps", "/job:chief"]


def test_chief_mode_worker(monkeypatch):
    config = _config(monkeypatch, {"cluster": CLUSTER,
                                   "task": {"type": "worker", "index": 1}})
    assert not config.is_chief
    assert config.master == f"grpc://{WORKERS[1]}"
    assert config.global_id_in_cluster == 2
    assert list(config.session_config.device_filters) == ["/job:ps",
                                                          "/job:worker/task:1"]


def test_ps_global_id_comes_last(monkeypatch):
    config = _config(monkeypatch, {"cluster": CLUSTER, "task": {"type": "ps", "index": 1}})
    assert not config.is_chief
    assert config.global_id_in_cluster == 4  # chief 0, workers 1-2, ps 3-4
    assert config.master == f"grpc://{PS[1]}"


def test_legacy_master_mode(monkeypatch):
    config = _config(monkeypatch, {"cluster": MASTER_CLUSTER,
                                   "task": {"type": "master", "index": 0}})
    assert config.is_chief and config.task_type == el.TaskType.MASTER
    assert config.num_worker_replicas == 3
    assert list(config.session_config.device_filters) == ["/job:ps", "/job:master"]


def test_evaluator_is_outside_the_cluster(monkeypatch):
    config = _config(monkeypatch, {"cluster": CLUSTER,
                                   "task": {"type": "evaluator", "index": 0}})
    assert config.task_type == el.TaskType.EVALUATOR
    assert config.cluster_spec.jobs == []
    assert not config.is_chief
    assert config.num_worker_replicas == 0 and config.num_ps_replicas == 0
    assert config.global_id_in_cluster is None
    assert config.master == ""


def test_single_node_cluster_has_empty_master(monkeypatch):
    config = _config(monkeypatch, {"cluster": {"chief": [CHIEF]},
                                   "task": {"type": "chief", "index": 0}})
    assert config.master == ""
    assert config.is_chief


def test_session_masters_and_environment(monkeypatch):
    tf_config = {"cluster": CLUSTER, "task": {"type": "chief", "index": 0},
                 "session_master": "grpc://elsewhere:1",
                 "eval_session_master": "grpc://eval:2", "environment": "google"}
    config = _config(monkeypatch, tf_config)
    assert config.master == "grpc://elsewhere:1"
    # As tf.estimator: only the evaluator (or a local task) evaluates elsewhere.
    assert config.evaluation_master == ""
    assert config.environment == "google"
    evaluator = _config(monkeypatch, dict(tf_config, task={"type": "evaluator",
                                                           "index": 0}))
    assert (evaluator.master, evaluator.evaluation_master) == ("", "grpc://eval:2")


def test_model_dir_from_tf_config(monkeypatch, tmp_path):
    config = _config(monkeypatch, {"model_dir": str(tmp_path)})
    assert config.model_dir == str(tmp_path)
    same = _config(monkeypatch, {"model_dir": str(tmp_path)}, model_dir=str(tmp_path))
    assert same.model_dir == str(tmp_path)


def _assert_tf_config_refused(monkeypatch, tf_config, error_type, message):
    """A RunConfig under `tf_config` raises `error_type`: tf.estimator's words first,
    then `message`."""
    with pytest.raises(error_type) as info:
        _config(monkeypatch, tf_config)
    assert str(info.value).startswith(ERR_FROM_TF_CONFIG)
    assert message in str(info.value)


@pytest.mark.parametrize("tf_config, message", [
    ("{not json", ERR_JSON),
    ('["a list"]', "must be a JSON object"),
    ({"cluster": CLUSTER, "task": {"index": 0}}, ERR_NO_TYPE),
    ({"cluster": CLUSTER, "task": {"type": "boss", "index": 0}}, ERR_UNKNOWN_TYPE),
    ({"cluster": CLUSTER, "task": {"type": "worker"}}, ERR_NO_INDEX),
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": -1}}, ERR_NEGATIVE_INDEX),
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": 2}}, ERR_INDEX_RANGE),
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": "one"}}, "must be an int"),
    ({"cluster": dict(CLUSTER, chief=[CHIEF, WORKERS[0]]),
      "task": {"type": "chief", "index": 0}}, ERR_TWO_CHIEFS),
    ({"cluster": {"worker": WORKERS, "ps": PS},
      "task": {"type": "worker", "index": 0}}, ERR_NO_CHIEF),
    ({"cluster": dict(CLUSTER, master=["127.0.0.1:1"]),
      "task": {"type": "chief", "index": 0}}, ERR_CHIEF_AND_MASTER),
    ({"cluster": MASTER_CLUSTER, "task": {"type": "evaluator", "index": 0}},
     ERR_EVALUATOR_MASTER),
    ({"cluster": CLUSTER, "task": {"type": "master", "index": 0}}, "not a job of"),
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": None}}, ERR_NO_INDEX),
    ({"model_dir": ""}, "'model_dir' must be a non-empty path"),
])
def test_invalid_tf_config(monkeypatch, tf_config, message):
    _assert_tf_config_refused(monkeypatch, tf_config, ValueError, message)


@pytest.mark.parametrize("tf_config, message", [
    ({"cluster": ["chief"], "task": {"type": "chief", "index": 0}}, ERR_CLUSTER_DICT),
    ({"cluster": {"chief": CHIEF}, "task": {"type": "chief", "index": 0}},
     "must be a list"),
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": [1]}}, "must be an int"),
    ({"service": "my-service"}, "'service' must be a dict"),
])
def test_tf_config_of_the_wrong_type(monkeypatch, tf_config, message):
    # TypeError where tf.estimator raises one (it builds a ClusterSpec, calls int()).
    _assert_tf_config_refused(monkeypatch, tf_config, TypeError, message)


@pytest.mark.parametrize("tf_config", [
    {"cluster": {"chief": ["c:0"], "worker": ["w:0"]},
     "task": {"type": "worker", "index": 0}},
    {"cluster": {"chief": ["chief-0"], "worker": ["worker-0"]},
     "task": {"type": "chief", "index": 0}},
    {"cluster": CLUSTER, "task": {"type": "chief", "index": 0}, "environment": "mars"},
    {"cluster": dict(CLUSTER, evaluator=["127.0.0.1:1"]),
     "task": {"type": "evaluator", "index": 1}},
])
def test_what_tf_estimator_accepts_is_accepted(monkeypatch, tf_config):
    # Addresses are not parsed (a server reports a bad one when it starts), any
    # environment is kept, an evaluator's index is not bounded by the cluster
    # (train_and_evaluate wants 0).
    config = _config(monkeypatch, tf_config)
    assert config.task_type == tf_config["task"]["type"]


def test_other_jobs_are_kept_and_neither_train_nor_lead(monkeypatch):
    cluster = {"chief": [CHIEF], "worker": WORKERS, "sidecar": ["127.0.0.1:9"]}
    config = _config(monkeypatch, {"cluster": cluster,
                                   "task": {"type": "sidecar", "index": 0}})
    assert (config.task_type, config.is_chief) == ("sidecar", False)
    assert config.master == "grpc://127.0.0.1:9"
    assert config.num_worker_replicas == 3 and config.global_id_in_cluster == 1
    assert config.session_config is None
    chief = _config(monkeypatch, {"cluster": cluster,
                                  "task": {"type": "chief", "index": 0}})
    assert sorted(chief.cluster_spec.jobs) == ["chief", "sidecar", "worker"]


def test_service_comes_from_tf_config(monkeypatch):
    service = {"name": "trainer", "ports": [1, 2]}
    assert _config(monkeypatch, {"service": service}).service == service
    assert _config(monkeypatch, {}).service is None


def test_ps_default_device_filters_see_every_training_job(monkeypatch):
    config = _config(monkeypatch, {"cluster": CLUSTER, "task": {"type": "ps",
                                                                "index": 0}})
    assert list(config.session_config.device_filters) == [
        "/job:ps", "/job:worker", "/job:chief", "/job:master"]


def test_string_index_is_accepted_like_tf_estimator(monkeypatch):
    config = _config(monkeypatch, {"cluster": CLUSTER,
                                   "task": {"type": "worker", "index": "1"}})
    assert config.task_id == 1 and isinstance(config.task_id, int)
    assert config.master == f"grpc://{WORKERS[1]}"


def test_evaluator_listed_in_the_cluster(monkeypatch):
    cluster = dict(CLUSTER, evaluator=["127.0.0.1:9"])
    chief = _config(monkeypatch, {"cluster": cluster, "task": {"type": "chief",
                                                                "index": 0}})
    # Kept in the cluster_spec as tf.estimator does; the default device filters keep
    # the training sessions off it, and it is no worker replica.
    assert "evaluator" in chief.cluster_spec.jobs
    assert list(chief.session_config.device_filters) == ["/job:ps", "/job:chief"]
    assert chief.num_worker_replicas == 1 + len(WORKERS)
    worker = _config(monkeypatch, {"cluster": cluster, "task": {"type": "worker",
                                                                 "index": 1}})
    assert worker.global_id_in_cluster == 3  # chief, evaluator, worker 0, worker 1
    evaluator = _config(monkeypatch, {"cluster": cluster,
                                      "task": {"type": "evaluator", "index": 0}})
    assert evaluator.task_type == "evaluator" and not evaluator.is_chief
    assert not evaluator.cluster_spec.jobs


def test_task_without_cluster_trains_locally(monkeypatch):
    config = _config(monkeypatch, {"task": {"type": "worker", "index": 0}})
    assert config.is_chief and config.master == ""
    assert not config.cluster_spec.jobs and config.num_worker_replicas == 1


@pytest.mark.parametrize("task, message", [
    ({"type": "chief", "index": 0}, ERR_NO_CLUSTER_TYPE),
    ({"type": "ps", "index": 0}, ERR_NO_CLUSTER_TYPE),
    ({"type": "worker", "index": 1}, ERR_NO_CLUSTER_INDEX),
    ({"type": "worker", "index": "1"}, ERR_NO_CLUSTER_INDEX)])
def test_only_worker_0_may_run_without_a_cluster(monkeypatch, task, message):
    # Any other role would train a model of its own into the shared model_dir.
    with pytest.raises(ValueError, match=message) as error:
        _config(monkeypatch, {"task": task})
    assert str(error.value).startswith(ERR_FROM_TF_CONFIG)
    assert repr(task) in str(error.value)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"protocol": "http"}, ValueError, "protocol must be one of ('grpc', 'grpc+verbs')"),
    ({"protocol": 7}, TypeError, "protocol must be a str or None"),
    ({"log_step_count_steps": 0}, ValueError, "log_step_count_steps must be >= 1"),
    ({"log_step_count_steps": "x"}, TypeError, "log_step_count_steps must be an int"),
    ({"keep_checkpoint_every_n_hours": 0}, ValueError,
     "keep_checkpoint_every_n_hours must be > 0"),
    ({"keep_checkpoint_every_n_hours": "x"}, TypeError,
     "keep_checkpoint_every_n_hours must be a number"),
])
def test_run_config_validates_at_construction(kwargs, error, message):
    with pytest.raises(error) as info:
        el.RunConfig(**kwargs)
    assert message in str(info.value)


def test_invalid_tf_config_shows_the_value():
    with pytest.raises(ValueError, match=r"got 7"):
        parse_tf_config(json.dumps({"cluster": CLUSTER,
                                    "task": {"type": "worker", "index": 7}}))


def test_model_dir_conflict(monkeypatch, tmp_path):
    with pytest.raises(ValueError, match=ERR_MODEL_DIR_CONFLICT):
        _config(monkeypatch, {"model_dir": str(tmp_path / "a")},
                model_dir=str(tmp_path / "b"))


@pytest.mark.parametrize("kwargs, error, message", [
    ({"save_checkpoints_steps": 10, "save_checkpoints_secs": 5}, ValueError,
     "cannot both be set"),
    ({"save_checkpoints_steps": -1}, ValueError, "save_checkpoints_steps must be >= 0"),
    ({"save_checkpoints_secs": -1}, ValueError, "save_checkpoints_secs must be >= 0"),
    ({"save_summary_steps": -5}, ValueError, "save_summary_steps must be >= 0"),
    ({"keep_checkpoint_max": -1}, ValueError, "keep_checkpoint_max"),
    ({"log_step_count_steps": -1}, ValueError, "log_step_count_steps"),
    ({"tf_random_seed": 1.5}, ValueError, "tf_random_seed must be an int"),
    ({"tf_random_seed": "1"}, ValueError, "tf_random_seed must be an int"),
    ({"session_config": {"a": 1}}, TypeError, "session_config must be"),
    ({"model_dir": 3}, TypeError, "model_dir must be"),
    ({"session_creation_timeout_secs": 0}, ValueError, "session_creation_timeout_secs"),
    ({"device_fn": "cpu"}, TypeError, "device_fn must be callable"),
    ({"train_distribute": object()}, TypeError,
     "train_distribute must be a tf.distribute strategy or None, got <object"),
    ({"experimental_max_worker_delay_secs": -2}, ValueError,
     "experimental_max_worker_delay_secs"),
])
def test_invalid_arguments(monkeypatch, kwargs, error, message):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(error, match=message):
        el.RunConfig(**kwargs)


def test_checkpoint_steps_clears_default_secs(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    config = el.RunConfig(save_checkpoints_steps=10)
    assert (config.save_checkpoints_steps, config.save_checkpoints_secs) == (10, None)
    off = el.RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None)
    assert (off.save_checkpoints_steps, off.save_checkpoints_secs) == (None, None)


def test_user_session_config_is_kept(monkeypatch):
    session_config = tf.compat.v1.ConfigProto(inter_op_parallelism_threads=3)
    config = _config(monkeypatch, {"cluster": CLUSTER,
                                   "task": {"type": "worker", "index": 0}},
                     session_config=session_config)
    assert config.session_config is session_config


def test_replace_revalidates_and_keeps_cluster(monkeypatch):
    config = _config(monkeypatch, {"cluster": CLUSTER,
                                   "task": {"type": "worker", "index": 1}})
    monkeypatch.delenv("TF_CONFIG")
    new = config.replace(save_checkpoints_steps=50, model_dir="/tmp/x")
    assert new.save_checkpoints_steps == 50 and new.save_checkpoints_secs is None
    assert new.model_dir == "/tmp/x"
    assert (new.task_type, new.task_id) == ("worker", 1)
    assert config.save_checkpoints_secs == 600  # the original is unchanged
    with pytest.raises(ValueError, match="keep_checkpoint_max"):
        config.replace(keep_checkpoint_max=-3)
    with pytest.raises(ValueError, match="unknown arguments"):
        config.replace(not_an_arg=1)


def test_replace_sets_a_model_dir_beside_tf_config_model_dir(monkeypatch, tmp_path):
    """As tf.estimator's replace(): no comparison with TF_CONFIG's model_dir there
    (adanet's subestimators replace it with a folder inside it); construction
    still compares."""
    monkeypatch.setenv("TF_CONFIG", json.dumps({"model_dir": str(tmp_path)}))
    config = el.RunConfig()
    assert config.model_dir == str(tmp_path)
    inner = str(tmp_path / "assets" / "t0_dnn")
    assert config.replace(model_dir=inner).model_dir == inner
    assert config.replace(tf_random_seed=3).model_dir == str(tmp_path)
    with pytest.raises(ValueError, match="must have the same value"):
        el.RunConfig(model_dir=inner)


def test_replace_clears_the_other_checkpoint_argument_only_for_a_value(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    # tf.estimator 2.15 (recorded): replacing one with None keeps the other.
    kept = el.RunConfig().replace(save_checkpoints_steps=None)
    assert (kept.save_checkpoints_steps, kept.save_checkpoints_secs) == (None, 600)
    cleared = el.RunConfig().replace(save_checkpoints_secs=30)
    assert (cleared.save_checkpoints_steps, cleared.save_checkpoints_secs) == (None, 30)
    with pytest.raises(ValueError, match="cannot both be set"):
        el.RunConfig().replace(save_checkpoints_steps=4, save_checkpoints_secs=30)


class _NonChiefConfig(el.RunConfig):
    """A user's config: extra attributes, and a property saying "not the chief"."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.owner = "team-a"

    @property
    def is_chief(self):
        return False


def test_replace_keeps_the_subclass_and_its_attributes(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    config = _NonChiefConfig(save_checkpoints_steps=5)
    new = config.replace(model_dir="/tmp/somewhere")
    assert type(new) is _NonChiefConfig and new.owner == "team-a"
    assert new.is_chief is False and new.model_dir == "/tmp/somewhere"
    assert (new.save_checkpoints_steps, new.save_checkpoints_secs) == (5, None)
    assert config.model_dir is None  # a copy: the original is unchanged
    new.owner = "team-b"
    assert config.owner == "team-a"


def _counting_model_fn(seen):
    class ChiefHook(tf.compat.v1.train.SessionRunHook):
        def begin(self):
            seen["chief_hook_ran"] = True

    def model_fn(features, labels, mode, config):
        seen["config"] = config
        w = tf.compat.v1.get_variable("w", [], initializer=tf.compat.v1.zeros_initializer())
        return el.EstimatorSpec(
            mode, loss=tf.reduce_sum(features * w),
            train_op=tf.compat.v1.assign_add(tf.compat.v1.train.get_global_step(), 1),
            training_chief_hooks=[ChiefHook()])
    return model_fn


def _ones():
    return tf.data.Dataset.from_tensors(1.0).repeat()


def test_estimator_keeps_a_subclassed_config(monkeypatch, tmp_path):
    # The Estimator fills in model_dir and session_config through replace(): the
    # model_fn still gets the user's class and attributes, and a config saying
    # "not the chief" runs no chief-only hooks (as tf.estimator's own test, which
    # also stands in for the chief by mocking SessionManager.wait_for_session).
    monkeypatch.delenv("TF_CONFIG", raising=False)
    seen = {}

    def initialized_session(manager, master, config=None, max_wait_secs=None):  # noqa: ARG001
        session = tf.compat.v1.Session(master, config=config)
        # What the chief would have done: the variables' own initializers (the graph
        # is finalized), then the local init op (the input iterator).
        session.run([v.initializer for v in tf.compat.v1.global_variables()])
        session.run(manager._local_init_op)  # noqa: SLF001
        return session

    estimator = el.Estimator(_counting_model_fn(seen), model_dir=str(tmp_path),
                             config=_NonChiefConfig())
    assert type(estimator.config) is _NonChiefConfig
    assert estimator.config.owner == "team-a"
    with mock.patch.object(tf.compat.v1.train.SessionManager, "wait_for_session",
                           autospec=True, side_effect=initialized_session):
        estimator.train(_ones, steps=1)
    assert type(seen["config"]) is _NonChiefConfig and seen["config"].owner == "team-a"
    assert "chief_hook_ran" not in seen


def test_an_evaluator_or_ps_config_does_not_train(monkeypatch, tmp_path):
    monkeypatch.delenv("TF_CONFIG", raising=False)

    class EvaluatorConfig(el.RunConfig):
        @property
        def task_type(self):
            return el.TaskType.EVALUATOR

    estimator = el.Estimator(_counting_model_fn({}), model_dir=str(tmp_path),
                             config=EvaluatorConfig())
    with pytest.raises(ValueError, match="train_and_evaluate"):
        estimator.train(_ones, steps=1)
    ps = _config(monkeypatch, {"cluster": CLUSTER, "task": {"type": "ps", "index": 0}})
    with pytest.raises(ValueError, match="train_and_evaluate"):
        el.Estimator(_counting_model_fn({}), model_dir=str(tmp_path / "ps"),
                     config=ps).train(_ones, steps=1)


def test_none_arguments_tf_estimator_accepts_train(monkeypatch, tmp_path):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    config = el.RunConfig(keep_checkpoint_every_n_hours=None,
                          session_creation_timeout_secs=None, model_dir=str(tmp_path))
    assert config.keep_checkpoint_every_n_hours is None
    assert config.session_creation_timeout_secs is None
    el.Estimator(_counting_model_fn({}), config=config).train(_ones, steps=2)
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-2")


def test_save_checkpoints_steps_0_saves_no_checkpoint(monkeypatch, tmp_path):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    config = el.RunConfig(save_checkpoints_steps=0, model_dir=str(tmp_path))
    el.Estimator(_counting_model_fn({}), config=config).train(_ones, steps=2)
    assert tf.train.latest_checkpoint(str(tmp_path)) is None


def test_bytes_model_dir_is_decoded(monkeypatch, tmp_path):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    assert el.RunConfig(model_dir=os.fsencode(tmp_path)).model_dir == str(tmp_path)
    estimator = el.Estimator(_counting_model_fn({}), model_dir=os.fsencode(tmp_path))
    assert estimator.model_dir == str(tmp_path)


# Deliberate differences from tf.estimator's table: a bytes model_dir is decoded.
_NOT_COMPARED = {("arguments:model_dir_bytes", "model_dir")}



@requires_oracle
def test_run_config_table_matches_tf_estimator(monkeypatch):
    oracle = run_oracle_driver(TABLE_DRIVER, timeout_secs=300)
    driver = load_driver(TABLE_DRIVER, "run_config_driver")
    # estimator_lite has every tf.estimator property (and `environment` besides).
    assert set(oracle["properties"]) <= set(driver.public_properties(el))
    monkeypatch.delenv("TF_CONFIG", raising=False)
    lite = driver.run(el, oracle["properties"])
    assert sorted(lite) == sorted(oracle["table"])
    for case, expected in oracle["table"].items():
        actual = lite[case]
        if "error" in expected or "error" in actual:
            # The same exception type; the wording is estimator_lite's own.
            assert actual.get("error") == expected.get("error"), (case, actual, expected)
            continue
        for name, value in expected.items():
            if (case, name) not in _NOT_COMPARED:
                assert actual[name] == value, (case, name, actual[name], value)


def _tf_config(cluster, task):
    return {"TF_CONFIG": json.dumps({"cluster": cluster, "task": task})}


@pytest.mark.parametrize("make, error, phrase", [
    (lambda: el.RunConfig(model_dir=""), ValueError, "model_dir should be non-empty"),
    (lambda: el.RunConfig(save_summary_steps=-1), ValueError,
     "save_summary_steps should be >= 0"),
    (lambda: el.RunConfig(keep_checkpoint_every_n_hours=0), ValueError,
     "keep_checkpoint_every_n_hours should be > 0"),
    (lambda: el.RunConfig(save_checkpoints_steps=1, save_checkpoints_secs=1), ValueError,
     "`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set."),
    (lambda: el.RunConfig().replace(master="x"), ValueError,
     "Replacing .*is not supported"),
    (lambda: el.RunConfig(device_fn=lambda x: "/cpu:0"), ValueError,
     'device_fn must be callable with exactly one argument "op".'),
])
def test_errors_carry_tf_estimators_wording(make, error, phrase):
    # Code written against tf.estimator matches its messages: they still match, and
    # ours still names the argument and the value.
    with pytest.raises(error, match=phrase):
        make()


@pytest.mark.parametrize("cluster, task, phrase", [
    ({"chief": ["a:1", "b:2"]}, {"type": "chief", "index": 0},
     'The "cluster" in TF_CONFIG must have only one "chief" node.'),
    ({"worker": ["a:1"]}, {"type": "worker", "index": 0},
     'If "cluster" is set .* it must have one "chief" node'),
    ({"chief": ["a:1"]}, {"type": "chief", "index": 1}, "is not a valid task_id"),
    ({"chief": ["a:1"]}, {"type": "chief", "index": -1},
     "Task index must be non-negative number."),
    ({"chief": ["a:1"]}, {"type": "worker", "index": 0}, "is not a valid task_type"),
    ({"master": ["a:1"], "chief": ["b:2"]}, {"type": "master", "index": 0},
     "If `master` node exists in `cluster`, job `chief` is not supported."),
])
def test_tf_config_errors_carry_tf_estimators_wording(cluster, task, phrase):
    with mock.patch.dict(os.environ, _tf_config(cluster, task)), pytest.raises(
            ValueError, match=phrase):
        el.RunConfig()


# A job given as a dict of task index to address (tf.train.ClusterSpec's sparse
# jobs). The values are tf.estimator 2.15's (checked on it): indices and global ids
# count up to the highest index, the replica count counts the listed tasks.
SPARSE_CLUSTER = {"chief": ["h0:1"], "worker": {"3": "h3:1", "1": "h1:1"}}


@pytest.mark.parametrize("task_type, index, master, global_id, filters", [
    ("worker", 3, "grpc://h3:1", 4, ["/job:ps", "/job:worker/task:3"]),
    ("worker", 1, "grpc://h1:1", 2, ["/job:ps", "/job:worker/task:1"]),
    ("chief", 0, "grpc://h0:1", 0, ["/job:ps", "/job:chief"]),
])
def test_sparse_job_as_tf_estimator(monkeypatch, task_type, index, master, global_id,
                                    filters):
    config = _config(monkeypatch, {"cluster": SPARSE_CLUSTER,
                                   "task": {"type": task_type, "index": index}})
    assert (config.task_type, config.task_id) == (task_type, index)
    assert config.master == master
    assert config.is_chief == (task_type == "chief")
    assert config.num_worker_replicas == 3 and config.num_ps_replicas == 0
    assert config.global_id_in_cluster == global_id
    assert config.cluster_spec.as_dict() == {"chief": ["h0:1"],
                                             "worker": {1: "h1:1", 3: "h3:1"}}
    assert list(config.session_config.device_filters) == filters


def test_sparse_ps_job_counts_its_tasks(monkeypatch):
    config = _config(monkeypatch, {
        "cluster": {"chief": ["h0:1"], "worker": ["h1:1"], "ps": {"2": "p2:1"}},
        "task": {"type": "ps", "index": 2}})
    assert config.master == "grpc://p2:1"
    assert (config.num_ps_replicas, config.num_worker_replicas) == (1, 2)
    assert config.global_id_in_cluster == 4


def test_dict_job_with_every_index_is_a_list(monkeypatch):
    config = _config(monkeypatch, {"cluster": {"chief": {"0": "h0:1"},
                                               "worker": {"1": "h2:1", "0": "h1:1"}},
                                   "task": {"type": "worker", "index": 1}})
    assert config.cluster_spec.as_dict() == {"chief": ["h0:1"],
                                             "worker": ["h1:1", "h2:1"]}
    assert config.master == "grpc://h2:1" and config.global_id_in_cluster == 2


@pytest.mark.parametrize("cluster, task, error, message", [
    # A missing task of a sparse job: tf.estimator's type (it joins None to
    # 'grpc://'), with a message naming the job and the index.
    (SPARSE_CLUSTER, {"type": "worker", "index": 2}, TypeError, "has no task 2"),
    (SPARSE_CLUSTER, {"type": "worker", "index": 0}, TypeError, "has no task 0"),
    (SPARSE_CLUSTER, {"type": "worker", "index": 4}, ValueError, "must be < 4"),
    ({"chief": {"1": "h0:1"}, "worker": ["h1:1"]}, {"type": "chief", "index": 1},
     ValueError, "at most one 'chief'"),
    ({"chief": ["h0:1"], "worker": {"a": "h1:1"}}, {"type": "chief", "index": 0},
     ValueError, "keys must be ints"),
])
def test_sparse_job_errors(monkeypatch, cluster, task, error, message):
    with pytest.raises(error, match=message):
        _config(monkeypatch, {"cluster": cluster, "task": task})


def _ps_v2():
    # TF2's ParameterServerStrategy needs running ps/worker servers to be built; its
    # class is what RunConfig checks, so an unbuilt instance stands in for one.
    cls = tf.distribute.experimental.ParameterServerStrategy
    return cls.__new__(cls)


@tf2_only("TF2's tf.distribute.experimental.ParameterServerStrategy")
def test_tf2_parameter_server_strategy_refused_at_construction(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(ValueError, match="tf.compat.v1.distribute.experimental"):
        el.RunConfig(train_distribute=_ps_v2())


@tf2_only("TF2's tf.distribute.experimental.ParameterServerStrategy")
@pytest.mark.parametrize("argument", ["train_distribute", "eval_distribute"])
def test_replace_takes_tf2_parameter_server_strategy_and_training_fails(
        monkeypatch, tmp_path, argument):
    # As tf.estimator: replace() takes it (the original is unchanged) and running a
    # model with it fails, here with a ValueError naming the strategy to use.
    monkeypatch.delenv("TF_CONFIG", raising=False)
    original = el.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=5)
    strategy = _ps_v2()
    config = original.replace(**{argument: strategy})
    assert getattr(config, argument) is strategy
    assert getattr(original, argument) is None
    assert config.save_checkpoints_steps == 5
    estimator = el.Estimator(_counting_model_fn({}), config=config)
    run = (lambda: estimator.train(_ones, max_steps=1)) if argument == (
        "train_distribute") else (lambda: estimator.evaluate(lambda: _ones().take(2)))
    with pytest.raises(ValueError, match="ParameterServerStrategyV2.*"
                       "tf.compat.v1.distribute.experimental.ParameterServerStrategy"):
        run()
