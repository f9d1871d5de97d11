"""Every public RunConfig property for a table of TF_CONFIGs and arguments.

Written once for both libraries: run as a script by the TF 2.15 interpreter
(ESTIMATOR_LITE_TF215_PYTHON) it builds tf.estimator.RunConfig and prints one JSON
line; tests/run_config_test.py imports it and calls `run` with estimator_lite,
then compares the two tables (an error is compared by its type only: the
wording is each library's own).

Usage: run_config_driver.py
"""

import json
import os
import sys

import tensorflow as tf

_CLUSTER = {"chief": ["c:1"], "worker": ["w0:2", "w1:3"], "ps": ["p:4"]}

TF_CONFIGS = {
    "none": None,
    "empty": {},
    "chief": {"cluster": _CLUSTER, "task": {"type": "chief", "index": 0}},
    "worker1": {"cluster": _CLUSTER, "task": {"type": "worker", "index": 1}},
    "ps": {"cluster": _CLUSTER, "task": {"type": "ps", "index": 0}},
    "evaluator": {"cluster": _CLUSTER, "task": {"type": "evaluator", "index": 0}},
    "evaluator_index_3": {"cluster": _CLUSTER,
                          "task": {"type": "evaluator", "index": 3}},
    "evaluator_listed": {"cluster": dict(_CLUSTER, evaluator=["e:5"]),
                         "task": {"type": "evaluator", "index": 1}},
    "worker_beside_listed_evaluator": {"cluster": dict(_CLUSTER, evaluator=["e:5"]),
                                       "task": {"type": "worker", "index": 1}},
    "master": {"cluster": {"master": ["m:1"], "worker": ["w:2"]},
               "task": {"type": "master", "index": 0}},
    "master_cluster_ps": {"cluster": {"master": ["m:1"], "worker": ["w:2"],
                                      "ps": ["p:3"]},
                          "task": {"type": "ps", "index": 0}},
    "single_node": {"cluster": {"chief": ["c:1"]}, "task": {"type": "chief", "index": 0}},
    "empty_job": {"cluster": {"chief": ["c:1"], "worker": []},
                  "task": {"type": "chief", "index": 0}},
    "port_0": {"cluster": {"chief": ["c:0"], "worker": ["w:0"]},
               "task": {"type": "worker", "index": 0}},
    "no_port": {"cluster": {"chief": ["c"], "worker": ["w"]},
                "task": {"type": "worker", "index": 0}},
    "other_job_task": {"cluster": {"chief": ["c:1"], "foo": ["f:2"], "worker": ["w:3"]},
                       "task": {"type": "foo", "index": 0}},
    "other_job_chief": {"cluster": {"chief": ["c:1"], "foo": ["f:2"], "worker": ["w:3"]},
                        "task": {"type": "chief", "index": 0}},
    "service": {"service": {"name": "svc", "x": 1}},
    "service_in_cluster": {"cluster": _CLUSTER, "task": {"type": "worker", "index": 0},
                           "service": {"a": [1]}},
    "service_not_a_dict": {"service": "svc"},
    "model_dir": {"model_dir": "/tmp/run_config_driver_model"},
    "model_dir_empty": {"model_dir": ""},
    "session_masters_worker": {"cluster": _CLUSTER,
                               "task": {"type": "worker", "index": 0},
                               "session_master": "grpc://x:1",
                               "eval_session_master": "grpc://e:1"},
    "eval_session_master_chief": {"cluster": _CLUSTER,
                                  "task": {"type": "chief", "index": 0},
                                  "eval_session_master": "grpc://e:1"},
    "session_masters_evaluator": {"cluster": _CLUSTER,
                                  "task": {"type": "evaluator", "index": 0},
                                  "session_master": "grpc://x:1",
                                  "eval_session_master": "grpc://e:1"},
    "session_masters_local": {"session_master": "grpc://s:1",
                              "eval_session_master": "grpc://e:1"},
    "task_without_cluster": {"task": {"type": "worker", "index": 0}},
    "chief_without_cluster": {"task": {"type": "chief", "index": 0}},
    "worker_1_without_cluster": {"task": {"type": "worker", "index": 1}},
    "index_str": {"cluster": _CLUSTER, "task": {"type": "worker", "index": "1"}},
    "index_float": {"cluster": _CLUSTER, "task": {"type": "worker", "index": 1.0}},
    "index_word": {"cluster": _CLUSTER, "task": {"type": "worker", "index": "one"}},
    "index_list": {"cluster": _CLUSTER, "task": {"type": "worker", "index": [1]}},
    "index_negative": {"cluster": _CLUSTER, "task": {"type": "worker", "index": -1}},
    "index_too_big": {"cluster": _CLUSTER, "task": {"type": "worker", "index": 5}},
    "no_task": {"cluster": _CLUSTER},
    "no_index": {"cluster": _CLUSTER, "task": {"type": "worker"}},
    "unknown_type": {"cluster": _CLUSTER, "task": {"type": "boss", "index": 0}},
    "no_chief": {"cluster": {"worker": ["w:1", "w:2"]},
                 "task": {"type": "worker", "index": 0}},
    "two_chiefs": {"cluster": {"chief": ["c:1", "c:2"]},
                   "task": {"type": "chief", "index": 0}},
    "chief_and_master": {"cluster": {"chief": ["c:1"], "master": ["m:2"]},
                         "task": {"type": "chief", "index": 0}},
    "evaluator_with_master": {"cluster": {"master": ["m:1"]},
                              "task": {"type": "evaluator", "index": 0}},
    "cluster_not_a_dict": {"cluster": ["chief"], "task": {"type": "chief", "index": 0}},
    "job_not_a_list": {"cluster": {"chief": "c:1"}, "task": {"type": "chief", "index": 0}},
    "environment": {"environment": "cloud"},
    "environment_other": {"environment": "weird"},
    "unknown_key": {"foo": 1},
}

ARGUMENTS = {
    "default": {},
    "keep_every_n_hours_none": {"keep_checkpoint_every_n_hours": None},
    "keep_every_n_hours_float": {"keep_checkpoint_every_n_hours": 0.5},
    "keep_max_none": {"keep_checkpoint_max": None},
    "model_dir_empty": {"model_dir": ""},
    "model_dir_bytes": {"model_dir": b"/tmp/run_config_driver_bytes"},
    "save_steps": {"save_checkpoints_steps": 10},
    "save_steps_0": {"save_checkpoints_steps": 0},
    "save_secs_0": {"save_checkpoints_secs": 0},
    "save_both": {"save_checkpoints_steps": 10, "save_checkpoints_secs": 5},
    "save_both_none": {"save_checkpoints_steps": None, "save_checkpoints_secs": None},
    "summary_none": {"save_summary_steps": None},
    "log_none": {"log_step_count_steps": None},
    "creation_timeout_none": {"session_creation_timeout_secs": None},
    "seed_float": {"tf_random_seed": 1.5},
    "seed_int": {"tf_random_seed": 7},
    "session_config": {"session_config": "given"},
}

# (TF_CONFIG key, arguments key) pairs run together, beyond each table alone.
COMBINED = (("chief", "keep_every_n_hours_none"), ("chief", "session_config"),
            ("model_dir", "model_dir_same"), ("model_dir", "model_dir_other"))
EXTRA_ARGUMENTS = {"model_dir_same": {"model_dir": "/tmp/run_config_driver_model"},
                   "model_dir_other": {"model_dir": "/tmp/run_config_driver_other"}}


def _jsonable(value):
    if isinstance(value, tf.train.ClusterSpec):
        return value.as_dict()
    if isinstance(value, tf.compat.v1.ConfigProto):
        return {"ConfigProto": str(value)}
    if value is None or isinstance(value, (str, int, float, bool, dict, list)):
        return value
    return {"type": type(value).__name__}


def _properties(config, names):
    out = {}
    for name in names:
        try:
            out[name] = _jsonable(getattr(config, name))
        except Exception as error:  # noqa: BLE001 (reported as a value)
            out[name] = {"error": type(error).__name__}
    return out


def _one(lib, names, tf_config, arguments):
    os.environ.pop("TF_CONFIG", None)
    if tf_config is not None:
        os.environ["TF_CONFIG"] = json.dumps(tf_config)
    arguments = dict(arguments)
    if arguments.get("session_config") == "given":
        arguments["session_config"] = tf.compat.v1.ConfigProto(
            inter_op_parallelism_threads=3)
    try:
        return _properties(lib.RunConfig(**arguments), names)
    except Exception as error:  # noqa: BLE001 (compared by type)
        return {"error": type(error).__name__, "message": str(error)}
    finally:
        os.environ.pop("TF_CONFIG", None)


def public_properties(lib):
    """RunConfig's public properties in `lib` (tf.estimator or estimator_lite)."""
    return sorted(name for name in dir(lib.RunConfig) if not name.startswith("_")
                  and isinstance(getattr(lib.RunConfig, name), property))


def run(lib, names):
    """{case: properties or error} for every row of the tables."""
    saved = os.environ.get("TF_CONFIG")
    try:
        table = {f"tf_config:{key}": _one(lib, names, value, {})
                 for key, value in TF_CONFIGS.items()}
        table.update({f"arguments:{key}": _one(lib, names, None, value)
                      for key, value in ARGUMENTS.items()})
        arguments = dict(ARGUMENTS, **EXTRA_ARGUMENTS)
        table.update({f"both:{a}+{b}": _one(lib, names, TF_CONFIGS[a], arguments[b])
                      for a, b in COMBINED})
    finally:
        os.environ.pop("TF_CONFIG", None)
        if saved is not None:
            os.environ["TF_CONFIG"] = saved
    return table


def main():
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    names = public_properties(tf.estimator)
    print(json.dumps({"tf_version": tf.__version__, "properties": names,
                      "table": run(tf.estimator, names)}))


if __name__ == "__main__":
    sys.exit(main())
