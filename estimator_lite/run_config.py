"""RunConfig and TaskType, and the RunConfig an Estimator runs with.

`RunConfig` mirrors TF Estimator's RunConfig (2.15): the same arguments, defaults and
derived cluster properties. The cluster comes from the `TF_CONFIG` environment
variable, read once at construction by `parse_tf_config` (`_engine/cluster_info.py`,
re-exported here with `ClusterInfo`).
"""

from __future__ import annotations

import copy
import inspect
import os
from collections.abc import Callable, Iterable
from typing import Any

from estimator_lite._engine import distribute, mixed_precision, roles, topology, validation
from estimator_lite._engine import model_dir as model_dir_lib
from estimator_lite._engine.cluster_info import ClusterInfo, parse_tf_config
from estimator_lite._tf import logging, tf

__all__ = ["RunConfig", "TaskType", "ClusterInfo", "default_session_config",
           "parse_tf_config"]

_DEFAULT_SAVE_CHECKPOINTS_SECS = 600
_USE_DEFAULT: Any = object()  # Any: the default of int arguments
# How long a collective (MultiWorkerMirroredStrategy) step may wait for its peers:
# far above a step plus the chief's checkpoint save (which the other workers wait
# out inside their next step); a peer that stops answering ends it much sooner.
_COLLECTIVE_TIMEOUT_SECS = 600


class TaskType:
    """Task types of a TF_CONFIG cluster, as in TF Estimator's RunConfig.

    The names and what each role does are owned by `_engine/roles.py`.
    """

    MASTER = roles.MASTER
    PS = roles.PS
    WORKER = roles.WORKER
    CHIEF = roles.CHIEF
    EVALUATOR = roles.EVALUATOR


_VALID_PROTOCOLS = ("grpc", "grpc+verbs")

# RewriterConfig.ONE: Grappler optimizes each graph once instead of twice. This is
# tf.estimator's default session config too; each first run of a new fetch set
# (restore, init, every eval/predict/train step signature) pays it.
_ONE_GRAPPLER_ITERATION = 1


def _check_device_fn(device_fn):
    """None, or a function of exactly one argument named `op` (tf.estimator's rule).

    Raises:
      WrongTypeError (a TypeError and a ValueError): not callable.
      ValueError: other arguments.
    """
    if device_fn is None:
        return None
    if not callable(device_fn):
        raise validation.WrongTypeError(f"device_fn must be callable, got {device_fn!r}")
    try:
        parameters = list(inspect.signature(device_fn).parameters)
    except (TypeError, ValueError):
        return device_fn  # a builtin without a signature: nothing to check
    if parameters != ["op"]:
        raise ValueError("device_fn must take exactly one argument, named 'op'; "
                         f"{device_fn!r} takes {parameters}")
    return device_fn


def default_session_config(device_filters: Iterable[str] | None = None,
                           ) -> tf.ConfigProto:
    """The session config an Estimator uses when RunConfig.session_config is None.

    Soft placement and one Grappler round, as tf.estimator's
    run_config.get_default_session_config; `device_filters` are added if given.
    """
    config = tf.ConfigProto(allow_soft_placement=True)
    config.graph_options.rewrite_options.meta_optimizer_iterations = (
        _ONE_GRAPPLER_ITERATION)
    if device_filters:
        config.device_filters.extend(device_filters)
    return config


def _default_session_config(info):
    """RunConfig's session_config when none is given: None locally and for the
    evaluator (the Estimator fills in `default_session_config()`), else the
    between-graph default with the role's device filters."""
    if not info.cluster_spec.jobs:
        return None
    filters = roles.default_device_filters(info.task_type, info.task_id)
    return default_session_config(filters) if filters else None


def maybe_overwrite_model_dir_and_session_config(
        config: RunConfig | None, model_dir: str | os.PathLike[str] | None) -> RunConfig:
    """The RunConfig an Estimator built with (`config`, `model_dir`) runs with.

    tf.estimator's helper of that name (its `estimator` module's, where
    `estimator_lite.estimator` serves it too), which `Estimator.__init__` runs first
    and libraries' Estimator subclasses (tensorflow_lattice's canned estimators)
    call before their own constructor work, e.g. to write files into the
    model_dir. The rules are Estimator's: no config is a default RunConfig, and the
    model_dir is the argument, the config's, or a new temporary directory.

    Args:
      config: a RunConfig or None.
      model_dir: a path (str or os.PathLike) or None.

    Returns:
      `config` itself when its model_dir and session_config are set, else a copy
      of it with the model_dir resolved and the default session_config.

    Raises:
      TypeError: config is not a RunConfig (also a ValueError, what tf.estimator
        raises), or model_dir is not a path.
      ValueError: model_dir and config.model_dir are both given and differ.
    """
    if config is None:
        logging.info("Using default config.")
        config = RunConfig()
    if not isinstance(config, RunConfig):
        raise validation.WrongTypeError(
            f"config must be an estimator_lite.RunConfig (an instance of `RunConfig`), "
            f"got {config!r} of type {type(config).__name__}")
    # replace() copies the config (its class and attributes kept), as tf.estimator.
    if config.session_config is None:
        config = config.replace(session_config=default_session_config())
    resolved = model_dir_lib.resolve_model_dir(model_dir, config.model_dir)
    return config if config.model_dir == resolved else config.replace(model_dir=resolved)


def _resolve_checkpoint_args(steps, secs):
    """Applies TF Estimator's rule: 600 secs unless one of the two is given."""
    if steps is _USE_DEFAULT and secs is _USE_DEFAULT:
        return None, _DEFAULT_SAVE_CHECKPOINTS_SECS
    steps = None if steps is _USE_DEFAULT else steps
    secs = None if secs is _USE_DEFAULT else secs
    if steps is not None and secs is not None:
        raise ValueError("save_checkpoints_steps and save_checkpoints_secs cannot both "
                         f"be set; got save_checkpoints_steps={steps!r}, "
                         f"save_checkpoints_secs={secs!r}. `save_checkpoints_steps` and "
                         "`save_checkpoints_secs` cannot be both set.")
    # 0 is accepted (no step-based saving), as in tf.estimator.
    return (validation.check_int("save_checkpoints_steps", steps, 0, allow_none=True),
            validation.check_number("save_checkpoints_secs", secs, 0, allow_none=True))


def _check_model_dir(model_dir, tf_config_model_dir):
    """The model_dir: the argument or TF_CONFIG's (they must agree), or None.

    A bytes path is decoded (tf.estimator accepts one too).
    """
    if model_dir is not None and not isinstance(model_dir, (str, bytes, os.PathLike)):
        raise TypeError(f"model_dir must be a str or os.PathLike, got {model_dir!r}")
    model_dir = os.fsdecode(model_dir) if model_dir is not None else None
    if model_dir == "":
        raise ValueError("model_dir must be a non-empty path or None, got ''. "
                         "model_dir should be non-empty.")
    if tf_config_model_dir is not None:
        if model_dir is not None and (os.path.abspath(model_dir) !=
                                      os.path.abspath(tf_config_model_dir)):
            raise ValueError(f"TF_CONFIG: 'model_dir' {tf_config_model_dir!r} conflicts "
                             f"with the model_dir argument {model_dir!r}. `model_dir` "
                             "provided in RunConfig construct, if set, must have the "
                             "same value as the model_dir in TF_CONFIG. ")
        return tf_config_model_dir
    return model_dir


def _check_tf_random_seed(seed):
    """None or an int; another type is a ValueError, as in tf.estimator."""
    if seed is not None and not isinstance(seed, int):
        raise ValueError(f"tf_random_seed must be an int or None, got {seed!r} of type "
                         f"{type(seed).__name__}")
    return seed


# tf.estimator's wording of RunConfig's argument rules, added to ours.
_TF_ESTIMATOR_WORDING = {
    "save_summary_steps": "save_summary_steps should be >= 0.",
    "save_checkpoints_steps": "save_checkpoints_steps should be >= 0.",
    "save_checkpoints_secs": "save_checkpoints_secs should be >= 0.",
    "session_config": "session_config must be instance of ConfigProto.",
    "keep_checkpoint_max": "keep_checkpoint_max should be >= 0.",
    "keep_checkpoint_every_n_hours": "keep_checkpoint_every_n_hours should be > 0.",
    "tf_random_seed": "tf_random_seed must be integer.",
    "device_fn": 'device_fn must be callable with exactly one argument "op".',
    "experimental_max_worker_delay_secs": ("experimental_max_worker_delay_secs must "
                                           "be an integer if set."),
    "session_creation_timeout_secs": "session_creation_timeout_secs should be > 0.",
}


def _is_ps_v2(strategy):
    """TF2's ParameterServerStrategy (estimator_lite runs the tf.compat.v1 one)."""
    return type(strategy).__name__ == "ParameterServerStrategyV2"


def _check_strategy(name, strategy, replacing=False):
    """distribute.check_strategy; for TF2's ParameterServerStrategy the error also
    names the one to use, as tf.estimator's does.

    `replacing`: RunConfig.replace() takes TF2's ParameterServerStrategy, as
    tf.estimator's replace() does; training with it fails then (in
    `distribute.replicated`), with the same message.
    """
    if replacing and _is_ps_v2(strategy):
        return
    try:
        distribute.check_strategy(name, strategy)
    except ValueError as e:
        if not _is_ps_v2(strategy):
            raise
        raise type(e)(f"{e}. Please use "
                      "`tf.compat.v1.distribute.experimental.ParameterServerStrategy` "
                      "for parameter server training.") from None


class RunConfig:
    """How an Estimator runs: checkpointing, summaries, session and cluster.

    Arguments and defaults follow TF Estimator's RunConfig (2.15). The cluster is read
    from the TF_CONFIG environment variable at construction.
    """

    _ARG_NAMES = ("model_dir", "tf_random_seed", "save_summary_steps",
                  "save_checkpoints_steps", "save_checkpoints_secs", "session_config",
                  "keep_checkpoint_max", "keep_checkpoint_every_n_hours",
                  "log_step_count_steps", "train_distribute", "device_fn", "protocol",
                  "eval_distribute", "experimental_distribute",
                  "experimental_max_worker_delay_secs", "session_creation_timeout_secs",
                  "checkpoint_save_graph_def", "experimental_jit_compile",
                  "experimental_mixed_precision", "experimental_steps_per_loop",
                  "experimental_collective_timeout_secs")

    def __init__(self, model_dir: str | os.PathLike[str] | None = None,
                 tf_random_seed: int | None = None, save_summary_steps: int | None = 100,
                 save_checkpoints_steps: int | None = _USE_DEFAULT,
                 save_checkpoints_secs: int | None = _USE_DEFAULT,
                 session_config: tf.ConfigProto | None = None,
                 keep_checkpoint_max: int | None = 5,
                 keep_checkpoint_every_n_hours: float = 10000,
                 log_step_count_steps: int | None = 100,
                 train_distribute: tf.distribute.Strategy | None = None,
                 device_fn: Callable[[tf.Operation], Any] | None = None,
                 protocol: str | None = None,
                 eval_distribute: tf.distribute.Strategy | None = None,
                 experimental_distribute: Any = None,
                 experimental_max_worker_delay_secs: int | None = None,
                 session_creation_timeout_secs: int = 7200,
                 checkpoint_save_graph_def: bool = True,
                 experimental_jit_compile: bool = False,
                 experimental_mixed_precision: str | None = None,
                 experimental_steps_per_loop: int = 1,
                 experimental_collective_timeout_secs: float | None = (
                     _COLLECTIVE_TIMEOUT_SECS)) -> None:
        """Validates the arguments and reads TF_CONFIG.

        The arguments are tf.estimator 2.15's, plus opt-in ones it lacked:
        `experimental_jit_compile=True` compiles the training step with XLA
        (see `_engine/xla.py`), `experimental_mixed_precision`
        ("mixed_bfloat16" or "mixed_float16") computes in half precision with
        float32 variables (see `_engine/mixed_precision.py`), and
        `experimental_steps_per_loop` (int >= 1) runs that many training steps in
        one session call; hooks, summaries, step logs and checkpoints then happen
        between loops (docs/performance.md, "Multi-step loops").
        `experimental_collective_timeout_secs` (seconds > 0, or None: wait forever
        as tf.estimator did) bounds how long a MultiWorkerMirroredStrategy worker
        waits for its peers in a training step: past it (or as soon as a peer stops
        answering) the worker logs which task was lost and the newest checkpoint,
        and exits 1 for the orchestrator to restart the job (docs/reliability.md,
        "Collective jobs"). Session creation and the first step wait up to
        `session_creation_timeout_secs` instead (peers may still be starting).

        Raises:
          TypeError: an argument has the wrong type.
          ValueError: an argument has a bad value, or TF_CONFIG is invalid.
        """
        self._init(locals(), parse_tf_config(
            workers_only_ok=topology.runs_collectives(train_distribute)))

    def _init(self, args, cluster_info, replacing=False):
        """Validates and stores the arguments (a bad one's error also carries
        tf.estimator's wording of the rule, for code that matches it).
        `replacing`: called by replace() (see `_check_strategy`); the model_dir is
        then not compared with TF_CONFIG's, as tf.estimator's replace() never does
        (adanet's subestimators replace it inside a TF_CONFIG model_dir)."""
        try:
            self._init_checked(args, cluster_info, replacing)
        except ValueError as e:
            message = str(e)
            for name, wording in _TF_ESTIMATOR_WORDING.items():
                if message.startswith((f"{name} must be", f"{name} must take")) and (
                        wording not in message):
                    raise type(e)(f"{message}. {wording}") from None
            raise

    def _init_checked(self, args, cluster_info, replacing):
        self._args = {name: args[name] for name in self._ARG_NAMES}
        self._cluster = cluster_info
        self._model_dir = _check_model_dir(
            args["model_dir"], None if replacing else cluster_info.model_dir)
        self._tf_random_seed = _check_tf_random_seed(args["tf_random_seed"])
        self._save_summary_steps = validation.check_number(
            "save_summary_steps", args["save_summary_steps"], 0, allow_none=True)
        self._save_checkpoints_steps, self._save_checkpoints_secs = (
            _resolve_checkpoint_args(args["save_checkpoints_steps"],
                                     args["save_checkpoints_secs"]))
        # Resolved values, not the default marker: replace() starts from these.
        self._args["save_checkpoints_steps"] = self._save_checkpoints_steps
        self._args["save_checkpoints_secs"] = self._save_checkpoints_secs
        self._keep_checkpoint_max = validation.check_int(
            "keep_checkpoint_max", args["keep_checkpoint_max"], 0, allow_none=True)
        # None is accepted, as tf.estimator does (the Saver then keeps no extra ones).
        self._keep_checkpoint_every_n_hours = validation.check_number(
            "keep_checkpoint_every_n_hours", args["keep_checkpoint_every_n_hours"],
            allow_none=True)
        if self._keep_checkpoint_every_n_hours is not None and (
                self._keep_checkpoint_every_n_hours <= 0):
            raise ValueError("keep_checkpoint_every_n_hours must be > 0, got "
                             f"{self._keep_checkpoint_every_n_hours!r}")
        self._log_step_count_steps = validation.check_int(
            "log_step_count_steps", args["log_step_count_steps"], 1, allow_none=True)
        # tf.estimator raises ValueError for these wrong types: so do we (and a
        # TypeError, what a wrong type is here).
        delay = args["experimental_max_worker_delay_secs"]
        if delay is not None and (isinstance(delay, bool) or not isinstance(delay, int)):
            raise validation.WrongTypeError(
                "experimental_max_worker_delay_secs must be an int or None, got "
                f"{delay!r} of type {type(delay).__name__}")
        self._experimental_max_worker_delay_secs = validation.check_int(
            "experimental_max_worker_delay_secs", delay, 0, allow_none=True)
        self._session_creation_timeout_secs = validation.check_number(
            "session_creation_timeout_secs", args["session_creation_timeout_secs"],
            allow_none=True)
        if (self._session_creation_timeout_secs is not None
                and self._session_creation_timeout_secs <= 0):
            raise ValueError("session_creation_timeout_secs must be > 0, got "
                             f"{self._session_creation_timeout_secs!r}")
        self._device_fn = _check_device_fn(args["device_fn"])
        protocol = args["protocol"]
        if protocol is not None and not isinstance(protocol, str):
            raise TypeError(f"protocol must be a str or None, got {protocol!r}")
        if protocol is not None and protocol not in _VALID_PROTOCOLS:
            raise ValueError(f"protocol must be one of {_VALID_PROTOCOLS} or None, got "
                             f"{protocol!r}")
        self._protocol = protocol
        self._train_distribute = args["train_distribute"]
        self._eval_distribute = args["eval_distribute"]
        for name in ("train_distribute", "eval_distribute"):
            _check_strategy(name, args[name], replacing)
        if args["experimental_distribute"] is not None:
            raise ValueError("experimental_distribute (a multi-worker DistributeConfig) is "
                             "not supported: use TF_CONFIG roles; got "
                             f"{args['experimental_distribute']!r}")
        jit_compile = args["experimental_jit_compile"]
        if not isinstance(jit_compile, bool):
            raise TypeError("experimental_jit_compile must be a bool, got "
                            f"{jit_compile!r} of type {type(jit_compile).__name__}")
        self._experimental_jit_compile = jit_compile
        self._experimental_mixed_precision = mixed_precision.check_policy(
            args["experimental_mixed_precision"])
        self._experimental_steps_per_loop = validation.check_int(
            "experimental_steps_per_loop", args["experimental_steps_per_loop"], 1)
        self._experimental_collective_timeout_secs = validation.check_number(
            "experimental_collective_timeout_secs",
            args["experimental_collective_timeout_secs"], allow_none=True)
        if (self._experimental_collective_timeout_secs is not None
                and self._experimental_collective_timeout_secs <= 0):
            raise ValueError("experimental_collective_timeout_secs must be > 0 or None, "
                             f"got {self._experimental_collective_timeout_secs!r}")
        # Kept as given (None too), as tf.estimator; read for its truth value.
        self._checkpoint_save_graph_def = args["checkpoint_save_graph_def"]
        session_config = args["session_config"]
        if session_config is not None and not isinstance(session_config, tf.ConfigProto):
            raise validation.WrongTypeError(
                "session_config must be a tf.compat.v1.ConfigProto or None, "
                            f"got {session_config!r} of type "
                            f"{type(session_config).__name__}")
        self._session_config = (session_config if session_config is not None
                                else _default_session_config(cluster_info))

    def replace(self, **kwargs: Any) -> RunConfig:
        """Returns a deep copy with some arguments replaced, validated again.

        As in tf.estimator the copy keeps the config's class (a subclass's overridden
        properties) and any attributes set on it; the cluster read from TF_CONFIG at
        construction is kept. Replacing one of save_checkpoints_steps/_secs with a
        value clears the other. TF2's ParameterServerStrategy is taken, as by
        tf.estimator's replace(); training or evaluating with it fails.

        Raises:
          ValueError: an unknown argument name is given, or a value is invalid.
          TypeError: a value has the wrong type.
        """
        unknown = sorted(set(kwargs) - set(self._ARG_NAMES))
        if unknown:
            raise ValueError(f"replace() got unknown arguments {unknown}; valid ones: "
                             f"{', '.join(self._ARG_NAMES)}. Replacing {unknown} is "
                             "not supported.")
        # The strategies are shared, not copied: they own devices and servers.
        shared = {id(s): s for s in (self._train_distribute, self._eval_distribute)
                  if s is not None}
        new = copy.deepcopy(self, shared)
        args = dict(new._args)
        args.update(kwargs)
        steps, secs = "save_checkpoints_steps", "save_checkpoints_secs"
        if steps in kwargs and secs not in kwargs and kwargs[steps] is not None:
            args[secs] = None
        elif secs in kwargs and steps not in kwargs and kwargs[secs] is not None:
            args[steps] = None
        if "model_dir" not in kwargs:  # the config's, TF_CONFIG's if it came from there
            args["model_dir"] = self._model_dir
        new._init(args, self._cluster, replacing=True)
        return new

    def __repr__(self):
        return (f"RunConfig(model_dir={self._model_dir!r}, task_type={self.task_type!r}, "
                f"task_id={self.task_id}, is_chief={self.is_chief}, "
                f"master={self.master!r})")

    model_dir = property(lambda self: self._model_dir)
    tf_random_seed = property(lambda self: self._tf_random_seed)
    save_summary_steps = property(lambda self: self._save_summary_steps)
    save_checkpoints_steps = property(lambda self: self._save_checkpoints_steps)
    save_checkpoints_secs = property(lambda self: self._save_checkpoints_secs)
    session_config = property(lambda self: self._session_config)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_every_n_hours = property(
        lambda self: self._keep_checkpoint_every_n_hours)
    log_step_count_steps = property(lambda self: self._log_step_count_steps)
    protocol = property(lambda self: self._protocol)
    device_fn = property(lambda self: self._device_fn)
    experimental_max_worker_delay_secs = property(
        lambda self: self._experimental_max_worker_delay_secs)
    session_creation_timeout_secs = property(
        lambda self: self._session_creation_timeout_secs)
    checkpoint_save_graph_def = property(lambda self: self._checkpoint_save_graph_def)
    experimental_jit_compile = property(lambda self: self._experimental_jit_compile)
    experimental_mixed_precision = property(
        lambda self: self._experimental_mixed_precision)
    experimental_steps_per_loop = property(
        lambda self: self._experimental_steps_per_loop,
        doc="Training steps per session call (1: one step, tf.estimator's loop).")
    experimental_collective_timeout_secs = property(
        lambda self: self._experimental_collective_timeout_secs,
        doc="Longest wait of a collective training step for its peers (None: no end).")
    train_distribute = property(lambda self: self._train_distribute)
    eval_distribute = property(lambda self: self._eval_distribute)
    service = property(lambda self: self._cluster.service,
                       doc="TF_CONFIG's 'service' dict (set by the platform), or None.")
    cluster_spec = property(lambda self: self._cluster.cluster_spec)
    task_type = property(lambda self: self._cluster.task_type)
    task_id = property(lambda self: self._cluster.task_id)
    is_chief = property(lambda self: self._cluster.is_chief)
    master = property(lambda self: self._cluster.master)
    evaluation_master = property(lambda self: self._cluster.evaluation_master)
    num_ps_replicas = property(lambda self: self._cluster.num_ps_replicas)
    num_worker_replicas = property(lambda self: self._cluster.num_worker_replicas)
    global_id_in_cluster = property(lambda self: self._cluster.global_id_in_cluster)
    environment = property(lambda self: self._cluster.environment)
