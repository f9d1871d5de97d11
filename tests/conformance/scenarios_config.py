"""Conformance: RunConfig — every constructor argument, TF_CONFIG's cluster
descriptions, replace(), and what an Estimator makes of its config."""

import copy
import json
import os
import pathlib

import numpy as np

from tests.conformance import programs
from tests.conformance.registry import outcome, scenario, scenarios

# The public properties of tf.estimator 2.15's RunConfig.
_PROPERTIES = (
    "model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
    "save_checkpoints_secs", "keep_checkpoint_max", "keep_checkpoint_every_n_hours",
    "log_step_count_steps", "train_distribute", "device_fn", "protocol",
    "eval_distribute", "experimental_max_worker_delay_secs",
    "session_creation_timeout_secs", "checkpoint_save_graph_def", "task_type",
    "task_id", "master", "evaluation_master", "is_chief", "num_ps_replicas",
    "num_worker_replicas", "global_id_in_cluster", "service")


def _session_config(proto):
    """A few fields of a ConfigProto (None stays None)."""
    if proto is None:
        return None
    if type(proto).__name__ != "ConfigProto":
        return f"<{type(proto).__name__}>"
    return {"allow_soft_placement": proto.allow_soft_placement,
            "log_device_placement": proto.log_device_placement,
            "device_filters": list(proto.device_filters),
            "inter_op_parallelism_threads": proto.inter_op_parallelism_threads,
            "meta_optimizer_iterations":
                proto.graph_options.rewrite_options.meta_optimizer_iterations}


def _describe(value):
    """Callables by kind (functions differ in identity), the rest as they are."""
    if callable(value) and not isinstance(value, type):
        return "<callable>"
    return value


def observe(config):
    """Every public property of `config` a user can read."""
    seen = {name: _describe(getattr(config, name)) for name in _PROPERTIES}
    seen["session_config"] = _session_config(config.session_config)
    seen["cluster_spec"] = config.cluster_spec.as_dict()
    seen["cluster_spec_truthy"] = bool(config.cluster_spec)
    seen["class"] = type(config).__name__
    return seen


def _build(env, **kwargs):
    return observe(env.est.RunConfig(**kwargs))


# ---------------------------------------------------------------------------
# Constructor arguments, one at a time.

def _config_proto(tf, **fields):
    return lambda: tf.compat.v1.ConfigProto(**fields)


_ARGUMENTS = {
    "defaults": {},
    "model_dir/str": {"model_dir": "/tmp/conformance_model"},
    "model_dir/empty": {"model_dir": ""},
    "model_dir/pathlib": {"model_dir": pathlib.PurePosixPath("/tmp/conformance_path")},
    "model_dir/relative": {"model_dir": "relative/dir"},
    "model_dir/trailing_slash": {"model_dir": "/tmp/conformance_model/"},
    "model_dir/none": {"model_dir": None},
    "tf_random_seed/0": {"tf_random_seed": 0},
    "tf_random_seed/42": {"tf_random_seed": 42},
    "tf_random_seed/negative": {"tf_random_seed": -3},
    "tf_random_seed/float": {"tf_random_seed": 1.5},
    "tf_random_seed/str": {"tf_random_seed": "1"},
    "tf_random_seed/numpy_int": {"tf_random_seed": np.int64(5)},
    "tf_random_seed/bool": {"tf_random_seed": True},
    "save_summary_steps/0": {"save_summary_steps": 0},
    "save_summary_steps/1": {"save_summary_steps": 1},
    "save_summary_steps/none": {"save_summary_steps": None},
    "save_summary_steps/negative": {"save_summary_steps": -1},
    "save_summary_steps/float": {"save_summary_steps": 2.5},
    "save_checkpoints_steps/none": {"save_checkpoints_steps": None},
    "save_checkpoints_steps/0": {"save_checkpoints_steps": 0},
    "save_checkpoints_steps/1": {"save_checkpoints_steps": 1},
    "save_checkpoints_steps/100": {"save_checkpoints_steps": 100},
    "save_checkpoints_steps/negative": {"save_checkpoints_steps": -1},
    "save_checkpoints_secs/none": {"save_checkpoints_secs": None},
    "save_checkpoints_secs/0": {"save_checkpoints_secs": 0},
    "save_checkpoints_secs/60": {"save_checkpoints_secs": 60},
    "save_checkpoints_secs/float": {"save_checkpoints_secs": 0.5},
    "save_checkpoints_secs/negative": {"save_checkpoints_secs": -5},
    "save_checkpoints/both_set": {"save_checkpoints_steps": 10,
                                  "save_checkpoints_secs": 10},
    "save_checkpoints/both_none": {"save_checkpoints_steps": None,
                                   "save_checkpoints_secs": None},
    "save_checkpoints/steps_and_secs_none": {"save_checkpoints_steps": 5,
                                             "save_checkpoints_secs": None},
    "save_checkpoints/steps_none_secs_set": {"save_checkpoints_steps": None,
                                             "save_checkpoints_secs": 30},
    "session_config/none": {"session_config": None},
    "session_config/default_proto": {"session_config": "proto:"},
    "session_config/soft_placement_off": {"session_config": "proto:allow_soft_placement=0"},
    "session_config/log_placement": {"session_config": "proto:log_device_placement=1"},
    "session_config/device_filters": {"session_config": "proto:device_filters=/job:ps"},
    "session_config/dict": {"session_config": {"allow_soft_placement": True}},
    "session_config/str": {"session_config": "allow_soft_placement: true"},
    "keep_checkpoint_max/0": {"keep_checkpoint_max": 0},
    "keep_checkpoint_max/1": {"keep_checkpoint_max": 1},
    "keep_checkpoint_max/none": {"keep_checkpoint_max": None},
    "keep_checkpoint_max/negative": {"keep_checkpoint_max": -1},
    "keep_checkpoint_every_n_hours/1": {"keep_checkpoint_every_n_hours": 1},
    "keep_checkpoint_every_n_hours/fraction": {"keep_checkpoint_every_n_hours": 0.5},
    "keep_checkpoint_every_n_hours/0": {"keep_checkpoint_every_n_hours": 0},
    "keep_checkpoint_every_n_hours/negative": {"keep_checkpoint_every_n_hours": -2},
    "keep_checkpoint_every_n_hours/none": {"keep_checkpoint_every_n_hours": None},
    "log_step_count_steps/none": {"log_step_count_steps": None},
    "log_step_count_steps/1": {"log_step_count_steps": 1},
    "log_step_count_steps/0": {"log_step_count_steps": 0},
    "log_step_count_steps/negative": {"log_step_count_steps": -1},
    "device_fn/none": {"device_fn": None},
    "device_fn/op_lambda": {"device_fn": lambda op: "/cpu:0"},
    "device_fn/wrong_arg_name": {"device_fn": lambda x: "/cpu:0"},
    "device_fn/two_args": {"device_fn": lambda op, extra: "/cpu:0"},
    "device_fn/no_args": {"device_fn": lambda: "/cpu:0"},
    "device_fn/not_callable": {"device_fn": "/cpu:0"},
    "device_fn/default_second_arg": {"device_fn": lambda op, extra=1: "/cpu:0"},
    "protocol/none": {"protocol": None},
    "protocol/grpc": {"protocol": "grpc"},
    "protocol/grpc_verbs": {"protocol": "grpc+verbs"},
    "protocol/http": {"protocol": "http"},
    "protocol/empty": {"protocol": ""},
    "experimental_max_worker_delay_secs/int": {"experimental_max_worker_delay_secs": 5},
    "experimental_max_worker_delay_secs/0": {"experimental_max_worker_delay_secs": 0},
    "experimental_max_worker_delay_secs/float": {"experimental_max_worker_delay_secs": 1.5},
    "experimental_max_worker_delay_secs/str": {"experimental_max_worker_delay_secs": "5"},
    "session_creation_timeout_secs/1": {"session_creation_timeout_secs": 1},
    "session_creation_timeout_secs/0": {"session_creation_timeout_secs": 0},
    "session_creation_timeout_secs/negative": {"session_creation_timeout_secs": -1},
    "session_creation_timeout_secs/float": {"session_creation_timeout_secs": 0.5},
    "checkpoint_save_graph_def/false": {"checkpoint_save_graph_def": False},
    "checkpoint_save_graph_def/none": {"checkpoint_save_graph_def": None},
    "experimental_distribute/none": {"experimental_distribute": None},
    "train_distribute/none": {"train_distribute": None},
    "train_distribute/one_device": {"train_distribute": "one_device"},
    "train_distribute/mirrored_v1": {"train_distribute": "mirrored_v1"},
    "train_distribute/parameter_server_v2": {"train_distribute": "ps_v2"},
    "eval_distribute/one_device": {"eval_distribute": "one_device"},
    "eval_distribute/parameter_server_v2": {"eval_distribute": "ps_v2"},
}


def _strategy(tf, name):
    if name == "one_device":
        return tf.distribute.OneDeviceStrategy("/cpu:0")
    if name == "mirrored_v1":
        return tf.compat.v1.distribute.MirroredStrategy(["/cpu:0"])
    if name == "ps_v2":
        # A ParameterServerStrategy without a cluster cannot be built; its class is
        # what RunConfig checks, so an uninitialised instance is enough.
        cls = tf.distribute.experimental.ParameterServerStrategy
        return cls.__new__(cls)
    raise ValueError(name)


def _resolve(tf, kwargs):
    """Builds the TensorFlow objects the table names by text."""
    kwargs = dict(kwargs)
    config = kwargs.get("session_config")
    if isinstance(config, str) and config.startswith("proto:"):
        fields = {}
        for item in filter(None, config[len("proto:"):].split(",")):
            key, value = item.split("=")
            fields[key] = [value] if key == "device_filters" else bool(int(value))
        kwargs["session_config"] = tf.compat.v1.ConfigProto(**fields)
    for key in ("train_distribute", "eval_distribute"):
        if isinstance(kwargs.get(key), str):
            kwargs[key] = _strategy(tf, kwargs[key])
    return kwargs


@scenarios("config/argument", _ARGUMENTS)
def constructor_argument(env, case):
    return outcome(lambda: _build(env, **_resolve(env.tf, case)))


@scenario("config/argument/unknown_keyword")
def unknown_keyword(env):
    return outcome(lambda: env.est.RunConfig(model_dirs="/tmp/x"))


@scenario("config/argument/positional")
def positional_arguments(env):
    return outcome(lambda: _build(env, *["/tmp/conformance_pos", 3, 7]))


@scenario("config/argument/distribute_with_tf_config")
def distribute_with_tf_config(env):
    """A train_distribute with a TF_CONFIG cluster: the distribute coordinator
    decides the cluster properties."""
    cluster = {"chief": ["host0:2222"], "worker": ["host1:2222"]}
    return _with_tf_config(
        {"cluster": cluster, "task": {"type": "worker", "index": 0}},
        lambda: _build(env, train_distribute=_strategy(env.tf, "mirrored_v1")))


# ---------------------------------------------------------------------------
# TF_CONFIG.

def _with_tf_config(tf_config, fn):
    """fn()'s outcome with TF_CONFIG set (a dict is dumped as JSON), restored after."""
    saved = os.environ.get("TF_CONFIG")
    os.environ["TF_CONFIG"] = (tf_config if isinstance(tf_config, str)
                               else json.dumps(tf_config))
    try:
        return outcome(fn)
    finally:
        if saved is None:
            os.environ.pop("TF_CONFIG", None)
        else:
            os.environ["TF_CONFIG"] = saved


_CLUSTER = {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"],
            "ps": ["host3:2222", "host4:2222"]}
_MASTER_CLUSTER = {"master": ["host0:2222"], "worker": ["host1:2222", "host2:2222"],
                   "ps": ["host3:2222"]}


def _task(task_type, index, cluster=None, **extra):
    tf_config = {"task": {"type": task_type, "index": index}, **extra}
    if cluster is not None:
        tf_config["cluster"] = cluster
    return tf_config


_TF_CONFIGS = {
    "empty_object": {},
    "empty_string": "",
    "invalid_json": "{not json",
    "json_list": "[]",
    "local/worker_0": _task("worker", 0),
    "local/worker_1": _task("worker", 1),
    "local/chief_0": _task("chief", 0),
    "local/ps_0": _task("ps", 0),
    "local/evaluator_0": _task("evaluator", 0),
    "local/index_as_str": _task("worker", "0"),
    "local/type_only": {"task": {"type": "worker"}},
    "local/session_master": {"session_master": "grpc://local:1"},
    "local/eval_session_master": {"eval_session_master": "grpc://eval:1"},
    "local/both_masters": {"session_master": "grpc://a:1", "eval_session_master": "b"},
    "cluster/chief_0": _task("chief", 0, _CLUSTER),
    "cluster/chief_1": _task("chief", 1, _CLUSTER),
    "cluster/worker_0": _task("worker", 0, _CLUSTER),
    "cluster/worker_1": _task("worker", 1, _CLUSTER),
    "cluster/worker_2": _task("worker", 2, _CLUSTER),
    "cluster/worker_negative": _task("worker", -1, _CLUSTER),
    "cluster/worker_index_str": _task("worker", "1", _CLUSTER),
    "cluster/ps_0": _task("ps", 0, _CLUSTER),
    "cluster/ps_1": _task("ps", 1, _CLUSTER),
    "cluster/ps_2": _task("ps", 2, _CLUSTER),
    "cluster/evaluator_0": _task("evaluator", 0, _CLUSTER),
    "cluster/evaluator_3": _task("evaluator", 3, _CLUSTER),
    "cluster/evaluator_in_cluster": _task("evaluator", 0, {
        **_CLUSTER, "evaluator": ["host9:2222"]}),
    "cluster/unknown_task_type": _task("trainer", 0, _CLUSTER),
    "cluster/missing_task": {"cluster": _CLUSTER},
    "cluster/missing_type": {"cluster": _CLUSTER, "task": {"index": 0}},
    "cluster/missing_index": {"cluster": _CLUSTER, "task": {"type": "worker"}},
    "cluster/no_chief": _task("worker", 0, {"worker": ["h1:1", "h2:1"]}),
    "cluster/two_chiefs": _task("chief", 0, {"chief": ["h0:1", "h1:1"],
                                             "worker": ["h2:1"]}),
    "cluster/chief_only": _task("chief", 0, {"chief": ["host0:2222"]}),
    "cluster/chief_and_ps": _task("chief", 0, {"chief": ["h0:1"], "ps": ["h1:1"]}),
    "cluster/port_0": _task("worker", 0, {"chief": ["localhost:0"],
                                          "worker": ["localhost:0"]}),
    "cluster/chief_port_0": _task("chief", 0, {"chief": ["localhost:0"],
                                               "worker": ["localhost:0"]}),
    "cluster/unknown_job_as_task": _task("trainer", 0, {
        "chief": ["h0:1"], "worker": ["h1:1"], "trainer": ["h2:1"]}),
    "cluster/unknown_job_worker_task": _task("worker", 0, {
        "chief": ["h0:1"], "worker": ["h1:1"], "trainer": ["h2:1", "h3:1"]}),
    "cluster/unknown_job_chief_task": _task("chief", 0, {
        "chief": ["h0:1"], "worker": ["h1:1"], "trainer": ["h2:1"]}),
    "cluster/sparse_dict_job": _task("worker", 3, {
        "chief": ["h0:1"], "worker": {"3": "h3:1", "1": "h1:1"}}),
    "cluster/empty_dict": _task("worker", 0, {}),
    "cluster/session_master": _task("worker", 1, _CLUSTER, session_master="grpc://sm:1"),
    "cluster/eval_session_master_evaluator": _task(
        "evaluator", 0, _CLUSTER, eval_session_master="grpc://esm:1"),
    "cluster/eval_session_master_worker": _task(
        "worker", 0, _CLUSTER, eval_session_master="grpc://esm:1"),
    "cluster/rpc_layer": _task("worker", 1, _CLUSTER, rpc_layer="grpc"),
    "cluster/environment_cloud": _task("worker", 0, _CLUSTER, environment="cloud"),
    "cluster/environment_google": _task("worker", 0, _CLUSTER, environment="google"),
    "cluster/service": _task("worker", 0, _CLUSTER, service={"name": "svc", "port": 1}),
    "local/service": {"service": {"name": "svc"}},
    "local/service_not_dict": {"service": "svc"},
    "local/service_none": {"service": None},
    "local/environment_google": {"environment": "google"},
    "local/rpc_layer": {"rpc_layer": "grpc"},
    "master/master_0": _task("master", 0, _MASTER_CLUSTER),
    "master/worker_0": _task("worker", 0, _MASTER_CLUSTER),
    "master/worker_1": _task("worker", 1, _MASTER_CLUSTER),
    "master/ps_0": _task("ps", 0, _MASTER_CLUSTER),
    "master/evaluator_0": _task("evaluator", 0, _MASTER_CLUSTER),
    "master/master_1": _task("master", 1, _MASTER_CLUSTER),
    "master/with_chief": _task("master", 0, {**_MASTER_CLUSTER, "chief": ["h9:1"]}),
    "master/master_only": _task("master", 0, {"master": ["host0:2222"]}),
    "master/missing_task": {"cluster": _MASTER_CLUSTER},
    "master/session_master": _task("worker", 0, _MASTER_CLUSTER,
                                   session_master="grpc://sm:1"),
}


@scenarios("config/tf_config", _TF_CONFIGS)
def tf_config_cases(env, case):
    return _with_tf_config(case, lambda: _build(env))


_MODEL_DIRS = {
    "tf_config_only": ("/tmp/conformance_tfc", None),
    "equal": ("/tmp/conformance_tfc", "/tmp/conformance_tfc"),
    "different": ("/tmp/conformance_tfc", "/tmp/conformance_arg"),
    "tf_config_empty": ("", None),
    "tf_config_empty_argument_set": ("", "/tmp/conformance_arg"),
    "argument_empty": ("/tmp/conformance_tfc", ""),
    "tf_config_none": (None, "/tmp/conformance_arg"),
    "equal_pathlib": ("/tmp/conformance_tfc",
                      pathlib.PurePosixPath("/tmp/conformance_tfc")),
    "trailing_slash": ("/tmp/conformance_tfc/", "/tmp/conformance_tfc"),
}


@scenarios("config/tf_config_model_dir", _MODEL_DIRS)
def tf_config_model_dir(env, case):
    in_tf_config, argument = case
    kwargs = {} if argument is None else {"model_dir": argument}
    return _with_tf_config({"model_dir": in_tf_config}, lambda: _build(env, **kwargs))


@scenario("config/tf_config/read_at_construction")
def tf_config_read_at_construction(env):
    """TF_CONFIG is read when the RunConfig is built, not when properties are read."""
    config = _with_tf_config(_task("worker", 1, _CLUSTER), env.est.RunConfig)
    built = _with_tf_config(_task("worker", 1, _CLUSTER),
                            lambda: observe(env.est.RunConfig()))
    return {"built": built, "type": config,
            "after_restore": observe(env.est.RunConfig())}


@scenario("config/tf_config/replace_keeps_cluster")
def tf_config_replace_keeps_cluster(env):
    """A config built as ps 1 of a cluster, replaced after TF_CONFIG is gone (and
    under another TF_CONFIG): replace() keeps the cluster view it was built with."""
    holder = {}

    def build():
        holder["config"] = env.est.RunConfig()
        return observe(holder["config"])
    built = _with_tf_config(_task("ps", 1, _CLUSTER), build)
    original = holder["config"]
    return {"built": built,
            "replaced": outcome(lambda: observe(original.replace(save_summary_steps=7))),
            "replaced_session_config": outcome(lambda: observe(original.replace(
                session_config=env.tf.compat.v1.ConfigProto(log_device_placement=True)))),
            "replaced_under_other": _with_tf_config(_task("worker", 0, _CLUSTER),
                                                    lambda: observe(original.replace(
                                                        tf_random_seed=1)))}


# ---------------------------------------------------------------------------
# replace().

_REPLACEMENTS = {
    "model_dir": {"model_dir": "/tmp/conformance_replaced"},
    "model_dir_empty": {"model_dir": ""},
    "model_dir_none": {"model_dir": None},
    "tf_random_seed": {"tf_random_seed": 11},
    "tf_random_seed_float": {"tf_random_seed": 1.5},
    "save_summary_steps": {"save_summary_steps": 3},
    "save_summary_steps_negative": {"save_summary_steps": -3},
    "save_checkpoints_steps": {"save_checkpoints_steps": 4},
    "save_checkpoints_steps_none": {"save_checkpoints_steps": None},
    "save_checkpoints_secs": {"save_checkpoints_secs": 9},
    "save_checkpoints_secs_none": {"save_checkpoints_secs": None},
    "save_checkpoints_both": {"save_checkpoints_steps": 4, "save_checkpoints_secs": 9},
    "save_checkpoints_both_none": {"save_checkpoints_steps": None,
                                   "save_checkpoints_secs": None},
    "session_config": {"session_config": "proto:log_device_placement=1"},
    "session_config_none": {"session_config": None},
    "session_config_bad": {"session_config": 3},
    "keep_checkpoint_max": {"keep_checkpoint_max": 2},
    "keep_checkpoint_max_negative": {"keep_checkpoint_max": -2},
    "keep_checkpoint_every_n_hours": {"keep_checkpoint_every_n_hours": 3},
    "keep_checkpoint_every_n_hours_none": {"keep_checkpoint_every_n_hours": None},
    "log_step_count_steps": {"log_step_count_steps": 5},
    "log_step_count_steps_zero": {"log_step_count_steps": 0},
    "train_distribute": {"train_distribute": "one_device"},
    "train_distribute_ps_v2": {"train_distribute": "ps_v2"},
    "device_fn": {"device_fn": lambda op: ""},
    "device_fn_bad": {"device_fn": lambda node: ""},
    "protocol": {"protocol": "grpc"},
    "protocol_bad": {"protocol": "udp"},
    "eval_distribute": {"eval_distribute": "one_device"},
    "experimental_distribute": {"experimental_distribute": None},
    "experimental_max_worker_delay_secs": {"experimental_max_worker_delay_secs": 3},
    "experimental_max_worker_delay_secs_bad": {"experimental_max_worker_delay_secs": 0.5},
    "session_creation_timeout_secs": {"session_creation_timeout_secs": 8},
    "session_creation_timeout_secs_zero": {"session_creation_timeout_secs": 0},
    "checkpoint_save_graph_def": {"checkpoint_save_graph_def": False},
    "several": {"model_dir": "/tmp/conformance_several", "tf_random_seed": 1,
                "keep_checkpoint_max": 9},
    "nothing": {},
    "unknown_key": {"learning_rate": 0.1},
    "task_type": {"task_type": "ps"},
    "task_id": {"task_id": 2},
    "master": {"master": "grpc://x:1"},
    "cluster_spec": {"cluster_spec": {}},
    "is_chief": {"is_chief": False},
    "num_ps_replicas": {"num_ps_replicas": 2},
    "service": {"service": {}},
    "evaluation_master": {"evaluation_master": "x"},
    "global_id_in_cluster": {"global_id_in_cluster": 3},
    "valid_and_unknown": {"tf_random_seed": 3, "bogus": 1},
}


@scenarios("config/replace", _REPLACEMENTS)
def replace_cases(env, case):
    """replace() from a config with steps-based checkpoints: the new config, and
    the original left unchanged."""
    original = env.est.RunConfig(save_checkpoints_steps=50, tf_random_seed=2,
                                 model_dir="/tmp/conformance_original")
    before = observe(original)
    replaced = outcome(lambda: observe(original.replace(**_resolve(env.tf, case))))
    return {"replaced": replaced, "original_unchanged": observe(original) == before}


@scenario("config/replace/from_secs_to_steps")
def replace_from_secs_to_steps(env):
    original = env.est.RunConfig(save_checkpoints_secs=30)
    return {"steps": outcome(lambda: observe(original.replace(save_checkpoints_steps=3))),
            "secs": outcome(lambda: observe(original.replace(save_checkpoints_secs=3)))}


@scenario("config/replace/positional")
def replace_positional(env):
    return outcome(lambda: env.est.RunConfig().replace("/tmp/x"))


@scenario("config/replace/returns_new_object")
def replace_returns_new_object(env):
    original = env.est.RunConfig()
    replaced = original.replace(tf_random_seed=1)
    empty = original.replace()
    return {"new": replaced is not original, "empty_new": empty is not original,
            "original_seed": original.tf_random_seed}


class _Extra:
    """A mixin defining what a user's RunConfig subclass adds."""

    def __init__(self, *args, extra=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.extra = extra if extra is not None else {"learning_rate": 0.1}
        self._hidden = "kept"


def _subclass(env):
    return type("MyRunConfig", (_Extra, env.est.RunConfig), {})


@scenario("config/subclass/replace")
def subclass_replace(env):
    config = _subclass(env)(model_dir="/tmp/conformance_sub", tf_random_seed=4)
    replaced = config.replace(tf_random_seed=5)
    return {"original": observe(config), "replaced": observe(replaced),
            "extra": getattr(replaced, "extra", "<missing>"),
            "hidden": getattr(replaced, "_hidden", "<missing>"),
            "is_subclass": isinstance(replaced, type(config)),
            "extra_is_copy": getattr(replaced, "extra", None) is not config.extra}


@scenario("config/subclass/replace_unknown_key")
def subclass_replace_unknown_key(env):
    config = _subclass(env)()
    return outcome(lambda: config.replace(extra={"x": 1}))


@scenario("config/subclass/properties")
def subclass_properties(env):
    return outcome(lambda: observe(_subclass(env)(save_checkpoints_steps=3, extra=[1])))


@scenario("config/subclass/in_estimator")
def subclass_in_estimator(env):
    config = _subclass(env)(tf_random_seed=4)
    est = env.est.Estimator(programs.regression_model_fn(env), model_dir=env.tmpdir(),
                            config=config)
    return {"class": type(est.config).__name__,
            "extra": getattr(est.config, "extra", "<missing>"),
            "same_object": est.config is config,
            "model_dir_set": est.config.model_dir is not None,
            "original_model_dir": config.model_dir}


@scenario("config/deepcopy")
def deepcopy_config(env):
    config = env.est.RunConfig(
        tf_random_seed=3,
        session_config=env.tf.compat.v1.ConfigProto(log_device_placement=True))
    copied = copy.deepcopy(config)
    return {"equal": observe(copied) == observe(config), "copied": observe(copied)}


# ---------------------------------------------------------------------------
# What an Estimator makes of its config.

_ESTIMATOR_CONFIGS = {
    "no_config_no_dir": (None, False),
    "no_config_dir": (None, True),
    "config_dir_only": ({"model_dir": "<dir>"}, False),
    "config_dir_equal_argument": ({"model_dir": "<dir>"}, True),
    "config_dir_differs": ({"model_dir": "/tmp/conformance_other"}, True),
    "config_without_dir": ({"tf_random_seed": 1}, True),
    "config_without_dir_no_argument": ({"tf_random_seed": 1}, False),
    "config_session_config": ({"session_config": "proto:log_device_placement=1"}, True),
    "config_not_runconfig": ("not a config", True),
    "config_dict": ({"__dict__": True}, True),
}


@scenarios("config/estimator", _ESTIMATOR_CONFIGS)
def estimator_config(env, case):
    """The Estimator's config and model_dir for each way of giving them."""
    config_kwargs, with_argument = case
    directory = env.tmpdir()

    def build():
        kwargs = {}
        if with_argument:
            kwargs["model_dir"] = directory
        if isinstance(config_kwargs, dict) and "__dict__" in config_kwargs:
            kwargs["config"] = {"model_dir": directory}
        elif isinstance(config_kwargs, dict):
            made = {k: directory if v == "<dir>" else v for k, v in config_kwargs.items()}
            kwargs["config"] = env.est.RunConfig(**_resolve(env.tf, made))
        elif config_kwargs is not None:
            kwargs["config"] = config_kwargs
        est = env.est.Estimator(programs.regression_model_fn(env), **kwargs)
        seen = observe(est.config)
        seen["model_dir"] = ("<argument>" if est.model_dir == directory
                             else "<temp>" if est.model_dir else None)
        seen["config_model_dir_is_estimators"] = est.config.model_dir == est.model_dir
        seen["same_object"] = est.config is kwargs.get("config")
        return seen
    return outcome(build)


@scenario("config/estimator/tf_config_model_dir")
def estimator_tf_config_model_dir(env):
    directory = env.tmpdir()

    def build():
        est = env.est.Estimator(programs.regression_model_fn(env))
        return {"model_dir_is_tf_configs": est.model_dir == directory,
                "config_model_dir": est.config.model_dir == directory}
    return _with_tf_config({"model_dir": directory}, build)


@scenario("config/estimator/tf_config_worker_cluster")
def estimator_tf_config_worker_cluster(env):
    """An Estimator built as worker 1 of a cluster: its config's cluster view."""
    directory = env.tmpdir()

    def build():
        est = env.est.Estimator(programs.regression_model_fn(env), model_dir=directory)
        seen = observe(est.config)
        seen["model_dir"] = seen["model_dir"] == directory
        return seen
    return _with_tf_config(_task("worker", 1, _CLUSTER), build)


@scenario("config/estimator/train_uses_seed")
def estimator_train_uses_seed(env):
    """tf_random_seed reaches the graph: a random initializer gives the same value
    twice with the same seed."""
    tf = env.tf

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [2, 1])
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
        return env.est.EstimatorSpec(mode, loss=loss, train_op=programs.sgd_train_op(
            env, loss, 0.0))

    def trained(seed):
        est = env.est.Estimator(model_fn, model_dir=env.tmpdir(),
                                config=env.est.RunConfig(tf_random_seed=seed))
        est.train(programs.input_fn(env), steps=1)
        return est.get_variable_value("w")
    return {"same_seed_same_init": bool(np.array_equal(trained(3), trained(3))),
            "other_seed_differs": not np.array_equal(trained(3), trained(4))}


_CHECKPOINT_CONFIGS = {
    "steps_1": {"save_checkpoints_steps": 1},
    "steps_2": {"save_checkpoints_steps": 2},
    "steps_0": {"save_checkpoints_steps": 0},
    "steps_none_secs_none": {"save_checkpoints_steps": None, "save_checkpoints_secs": None},
    "secs_large": {"save_checkpoints_secs": 10000},
    "secs_0": {"save_checkpoints_secs": 0},
    "keep_max_1": {"save_checkpoints_steps": 1, "keep_checkpoint_max": 1},
    "keep_max_0": {"save_checkpoints_steps": 1, "keep_checkpoint_max": 0},
    "keep_max_none": {"save_checkpoints_steps": 1, "keep_checkpoint_max": None},
    "no_graph_def": {"save_checkpoints_steps": 2, "checkpoint_save_graph_def": False},
    "summary_steps_0": {"save_checkpoints_steps": 2, "save_summary_steps": 0},
    "summary_steps_none": {"save_checkpoints_steps": 2, "save_summary_steps": None},
    "log_steps_none": {"save_checkpoints_steps": 2, "log_step_count_steps": None},
}


@scenarios("config/train_effect", _CHECKPOINT_CONFIGS)
def train_effect(env, case):
    """Training 5 steps: checkpoints listed and files written under model_dir."""
    def run():
        est = programs.estimator(env, programs.regression_model_fn(env), **case)
        est.train(programs.input_fn(env), steps=5)
        return {"checkpoints": programs.checkpoint_steps(env, est.model_dir),
                "files": _checkpoint_files(est.model_dir)}
    return outcome(run)


def _checkpoint_files(model_dir):
    from tests.conformance.registry import files_under  # noqa: PLC0415
    return [f for f in files_under(model_dir) if not f.startswith("eval")]
