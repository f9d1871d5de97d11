"""Tests for RunConfig, TaskType and TF_CONFIG parsing."""

import json

import pytest

import estimator_lite as el
from estimator_lite._tf import tf
from estimator_lite.run_config import parse_tf_config

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
ERR_BAD_ADDRESS = "'host:port' with a port from 1 to 65535"
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
    # tf.estimator's sessions ran with allow_soft_placement and one Grappler round
    # (run_config.get_default_session_config); each first run of a fetch set pays it.
    assert config.session_config.allow_soft_placement
    rewrite = config.session_config.graph_options.rewrite_options
    assert rewrite.meta_optimizer_iterations == rewrite.ONE


def test_local_mode_without_tf_config(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    config = el.RunConfig()
    assert config.cluster_spec.jobs == []
    assert (config.task_type, config.task_id) == (el.TaskType.WORKER, 0)
    assert config.is_chief
    assert config.master == ""
    assert (config.num_ps_replicas, config.num_worker_replicas) == (0, 1)
    assert config.global_id_in_cluster == 0
    assert list(config.session_config.device_filters) == []


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
    config = _config(monkeypatch, {"cluster": CLUSTER, "task": {"type": "chief",
                                                                "index": 0},
                                   "session_master": "grpc://elsewhere:1",
                                   "eval_session_master": "grpc://eval:2",
                                   "environment": "google"})
    assert config.master == "grpc://elsewhere:1"
    assert config.evaluation_master == "grpc://eval:2"
    assert config.environment == "google"


def test_model_dir_from_tf_config(monkeypatch, tmp_path):
    config = _config(monkeypatch, {"model_dir": str(tmp_path)})
    assert config.model_dir == str(tmp_path)
    same = _config(monkeypatch, {"model_dir": str(tmp_path)}, model_dir=str(tmp_path))
    assert same.model_dir == str(tmp_path)


@pytest.mark.parametrize("tf_config, message", [
    ("{not json", ERR_JSON),
    ('["a list"]', "must be a JSON object"),
    ({"cluster": ["chief"], "task": {"type": "chief", "index": 0}}, ERR_CLUSTER_DICT),
    ({"cluster": CLUSTER, "task": {"index": 0}}, ERR_NO_TYPE),
    ({"cluster": CLUSTER, "task": {"type": "boss", "index": 0}}, ERR_UNKNOWN_TYPE),
    ({"cluster": CLUSTER, "task": {"type": "worker"}}, ERR_NO_INDEX),
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": -1}}, ERR_NEGATIVE_INDEX),
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": 2}}, ERR_INDEX_RANGE),
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": "one"}}, "must be an int"),
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": 1.5}}, "must be an int"),
    ({"cluster": dict(CLUSTER, worker=["127.0.0.1:http"]),
      "task": {"type": "chief", "index": 0}}, ERR_BAD_ADDRESS),
    ({"cluster": dict(CLUSTER, worker=["127.0.0.1"]),
      "task": {"type": "chief", "index": 0}}, ERR_BAD_ADDRESS),
    ({"cluster": dict(CLUSTER, worker=["127.0.0.1:70000"]),
      "task": {"type": "chief", "index": 0}}, ERR_BAD_ADDRESS),
    ({"cluster": dict(CLUSTER, chief=[CHIEF, WORKERS[0]]),
      "task": {"type": "chief", "index": 0}}, ERR_TWO_CHIEFS),
    ({"cluster": {"worker": WORKERS, "ps": PS},
      "task": {"type": "worker", "index": 0}}, ERR_NO_CHIEF),
    ({"cluster": dict(CLUSTER, master=["127.0.0.1:1"]),
      "task": {"type": "chief", "index": 0}}, ERR_CHIEF_AND_MASTER),
    ({"cluster": MASTER_CLUSTER, "task": {"type": "evaluator", "index": 0}},
     ERR_EVALUATOR_MASTER),
    ({"cluster": CLUSTER, "task": {"type": "master", "index": 0}}, "not a job of"),
    ({"cluster": dict(CLUSTER, evaluator=["127.0.0.1:1"]),
      "task": {"type": "evaluator", "index": 1}}, ERR_INDEX_RANGE),
    ({"cluster": {"chief": CHIEF}, "task": {"type": "chief", "index": 0}},
     "must be a list"),
    ({"cluster": CLUSTER, "task": {"type": "chief", "index": 0},
      "environment": "mars"}, "'environment' must be one of"),
])
def test_invalid_tf_config(monkeypatch, tf_config, message):
    with pytest.raises(ValueError) as info:
        _config(monkeypatch, tf_config)
    assert str(info.value).startswith(ERR_FROM_TF_CONFIG)
    assert message in str(info.value)


def test_string_index_is_accepted_like_tf_estimator(monkeypatch):
    config = _config(monkeypatch, {"cluster": CLUSTER,
                                   "task": {"type": "worker", "index": "1"}})
    assert config.task_id == 1 and isinstance(config.task_id, int)
    assert config.master == f"grpc://{WORKERS[1]}"


def test_evaluator_listed_in_the_cluster(monkeypatch):
    cluster = dict(CLUSTER, evaluator=["127.0.0.1:9"])
    chief = _config(monkeypatch, {"cluster": cluster, "task": {"type": "chief",
                                                                "index": 0}})
    assert "evaluator" not in chief.cluster_spec.jobs  # training ignores it
    assert chief.num_worker_replicas == 1 + len(WORKERS)
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
    ({"save_checkpoints_steps": 0}, ValueError, "save_checkpoints_steps must be >= 1"),
    ({"save_checkpoints_secs": -1}, ValueError, "save_checkpoints_secs must be >= 0"),
    ({"save_summary_steps": -5}, ValueError, "save_summary_steps must be >= 0"),
    ({"keep_checkpoint_max": -1}, ValueError, "keep_checkpoint_max"),
    ({"log_step_count_steps": -1}, ValueError, "log_step_count_steps"),
    ({"tf_random_seed": 1.5}, TypeError, "tf_random_seed must be an int"),
    ({"tf_random_seed": True}, TypeError, "tf_random_seed must be an int"),
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
    session_config = tf.ConfigProto(inter_op_parallelism_threads=3)
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
