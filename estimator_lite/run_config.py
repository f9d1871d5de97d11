"""RunConfig, TaskType and TF_CONFIG parsing.

`RunConfig` mirrors TF Estimator's RunConfig (2.15): the same arguments, defaults and
derived cluster properties. The cluster comes from the `TF_CONFIG` environment
variable, read once at construction. Every inconsistency in TF_CONFIG is a
ValueError whose message starts with "TF_CONFIG" and shows the offending value (a
TypeError where tf.estimator raises one: a `cluster` or `service` of the wrong type).
What tf.estimator accepts is accepted: any job name, any address, any `environment`.
"""

import copy
import inspect
import json
import os

from estimator_lite._engine import distribute, mixed_precision, roles, validation
from estimator_lite._tf import logging, tf

__all__ = ["RunConfig", "TaskType", "ClusterInfo", "default_session_config",
           "parse_tf_config"]

_TF_CONFIG_ENV = "TF_CONFIG"
_DEFAULT_SAVE_CHECKPOINTS_SECS = 600
_USE_DEFAULT = object()
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


_VALID_TASK_TYPES = roles.ALL


class ClusterInfo:
    """The cluster-derived part of a RunConfig (immutable, computed once).

    Attributes mirror RunConfig's properties of the same names.
    """

    __slots__ = ("cluster_spec", "task_type", "task_id", "is_chief", "master",
                 "evaluation_master", "num_ps_replicas", "num_worker_replicas",
                 "global_id_in_cluster", "environment", "model_dir", "service")

    def __init__(self, **fields):
        for name in self.__slots__:
            object.__setattr__(self, name, fields[name])

    def __setattr__(self, name, value):
        raise AttributeError("ClusterInfo is immutable")

    # Immutable: copies (RunConfig.replace deep-copies the config) share it.
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __repr__(self):
        parts = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__
                          if n != "cluster_spec")
        return f"ClusterInfo({parts})"


_VALID_PROTOCOLS = ("grpc", "grpc+verbs")


def _tf_config_error(rule, value, error=ValueError, as_tf_estimator=None):
    """The error for a bad TF_CONFIG; `as_tf_estimator` adds tf.estimator's wording
    of the same rule (code that matches those messages keeps working)."""
    tail = f" {as_tf_estimator}" if as_tf_estimator else ""
    return error(f"TF_CONFIG: {rule}; got {value!r}.{tail}")


def _load_tf_config(raw):
    """Decodes the TF_CONFIG string into a dict ({} when unset or empty)."""
    if raw is None or not raw.strip():
        return {}
    try:
        config = json.loads(raw)
    except ValueError as e:
        raise ValueError(f"TF_CONFIG: not valid JSON ({e}); got {raw!r}") from None
    if not isinstance(config, dict):
        raise _tf_config_error("must be a JSON object", config)
    return config


def _check_cluster(cluster, workers_only_ok=False):
    """Validates the `cluster` entry: {job_name: [address, ...]}.

    Any job name is accepted and addresses are not parsed, as in tf.estimator
    (a server reports a bad address when it starts). `workers_only_ok`: a cluster
    of workers without a chief is valid (worker 0 leads; MultiWorkerMirroredStrategy
    clusters).

    Raises:
      TypeError: `cluster` is not a dict of lists (tf.estimator's type).
      ValueError: two chiefs, both chief and master, or no chief.
    """
    if not isinstance(cluster, dict):
        raise _tf_config_error("'cluster' must be a dict of job name to address list",
                               cluster, TypeError)
    for job, addresses in cluster.items():
        if isinstance(addresses, str) or not isinstance(addresses, (list, tuple)):
            raise _tf_config_error(f"cluster[{job!r}] must be a list of 'host:port' "
                                   "strings", addresses, TypeError)
    if TaskType.CHIEF in cluster and TaskType.MASTER in cluster:
        raise _tf_config_error("'chief' and 'master' cannot both be in the cluster",
                               cluster, as_tf_estimator="If `master` node exists in "
                               "`cluster`, job `chief` is not supported.")
    for single in roles.CHIEFS:
        if len(cluster.get(single, ())) > 1:
            raise _tf_config_error(f"at most one {single!r} task is allowed",
                                   cluster[single], as_tf_estimator=(
                                       f'The "cluster" in TF_CONFIG must have only '
                                       f'one "{single}" node.'))
    training_jobs = set(cluster) - {TaskType.EVALUATOR}
    if (training_jobs and not training_jobs & {TaskType.CHIEF, TaskType.MASTER}
            and not (workers_only_ok and training_jobs == {TaskType.WORKER})):
        raise _tf_config_error("a cluster needs one 'chief' (or legacy 'master') task",
                               cluster, as_tf_estimator='If "cluster" is set in '
                               'TF_CONFIG, it must have one "chief" node.')
    return {job: list(addresses) for job, addresses in cluster.items()}


def _task_index(index):
    """The task index as an int, converted as tf.estimator does (`int(index)`).

    Raises:
      TypeError: the index cannot be converted (a list, a dict).
      ValueError: a string that is not a number, or a negative index.
    """
    if isinstance(index, bool):
        raise _tf_config_error("task 'index' must be an int", index, TypeError)
    try:
        value = int(index)
    except ValueError:
        raise _tf_config_error("task 'index' must be an int", index) from None
    except TypeError:
        raise _tf_config_error("task 'index' must be an int", index, TypeError) from None
    if value < 0:
        raise _tf_config_error("task 'index' must be >= 0", index,
                               as_tf_estimator="Task index must be non-negative number.")
    return value


def _check_task(task, cluster):
    """Validates the `task` entry and returns (task_type, task_id)."""
    if not isinstance(task, dict):
        raise _tf_config_error("'task' must be a dict with 'type' and 'index'", task)
    task_type = task.get("type")
    if not task_type:
        raise _tf_config_error("'task' has no 'type' (valid types: "
                               f"{', '.join(_VALID_TASK_TYPES)})", task,
                               as_tf_estimator='If "cluster" is set in TF_CONFIG, '
                               'task type must be set.')
    if task.get("index") is None:
        raise _tf_config_error("'task' has no 'index'", task, as_tf_estimator=(
            'If "cluster" is set in TF_CONFIG, task index must be set.'))
    index = _task_index(task["index"])
    if task_type == TaskType.EVALUATOR:
        if TaskType.MASTER in cluster:
            raise _tf_config_error("an evaluator is not supported with a legacy "
                                   "'master' cluster; use 'chief'", cluster,
                                   as_tf_estimator="If `master` node exists in "
                                   "`cluster`, task_type `evaluator` is not supported.")
        # Outside the training cluster: any index (train_and_evaluate wants 0).
        return task_type, index
    if task_type not in cluster:
        if task_type not in _VALID_TASK_TYPES:
            raise _tf_config_error(f"unknown task type {task_type!r}: not a job of "
                                   f"'cluster' (jobs: {sorted(cluster)})", task)
        raise _tf_config_error(f"task type {task_type!r} is not a job of 'cluster' "
                               f"(jobs: {sorted(cluster)})", task, as_tf_estimator=(
                                   f"{task_type} is not a valid task_type in the "
                                   "cluster_spec."))
    if index >= len(cluster[task_type]):
        raise _tf_config_error(f"task 'index' must be < {len(cluster[task_type])}, the "
                               f"number of {task_type!r} tasks", index,
                               as_tf_estimator=f"{index} is not a valid task_id for "
                               f"task_type {task_type}.")
    return task_type, index


def _check_task_without_cluster(task):
    """Without a cluster only worker 0 may train (locally), as in tf.estimator.

    A chief, ps or second worker with no cluster is a misconfigured job: training
    locally it would write its own model into the shared model_dir.

    Raises:
      ValueError: the task is not ``{"type": "worker", "index": 0}``.
    """
    if not isinstance(task, dict):
        raise _tf_config_error("'task' must be a dict with 'type' and 'index'", task)
    task_type = task.get("type", TaskType.WORKER)
    if task_type != TaskType.WORKER:
        raise _tf_config_error("without a 'cluster', the task type must be 'worker' "
                               "(local training); add a 'cluster' for other roles",
                               task, as_tf_estimator='If "cluster" is not set in '
                               'TF_CONFIG, task type must be WORKER.')
    if _task_index(task.get("index", 0)) != 0:
        raise _tf_config_error("without a 'cluster', the task index must be 0 (local "
                               "training); add a 'cluster' for other workers", task,
                               as_tf_estimator='If "cluster" is not set in TF_CONFIG, '
                               'task index must be 0.')


def _global_id(cluster, task_type, task_id):
    """Global id: chief/master first, then other jobs sorted by name, ps last."""
    chief_job = TaskType.CHIEF if TaskType.CHIEF in cluster else TaskType.MASTER
    order = [chief_job] + sorted(j for j in cluster if j not in (chief_job, TaskType.PS))
    order.append(TaskType.PS)
    offset = 0
    for job in order:
        if job == task_type:
            return offset + task_id
        offset += len(cluster.get(job, ()))
    raise AssertionError(f"task type {task_type!r} not in cluster")  # checked before


def _optional_str(config, key):
    value = config.get(key)
    if value is not None and not isinstance(value, str):
        raise _tf_config_error(f"{key!r} must be a string", value)
    return value


def _tf_config_model_dir(config):
    """TF_CONFIG's 'model_dir': None or a non-empty string."""
    model_dir = _optional_str(config, "model_dir")
    if model_dir == "":
        raise _tf_config_error("'model_dir' must be a non-empty path", model_dir,
                               as_tf_estimator="model_dir in TF_CONFIG should be "
                               "non-empty.")
    return model_dir


def _service(config):
    """TF_CONFIG's platform 'service' entry: None or a dict (RunConfig.service).

    Raises:
      TypeError: it is not a dict (as tf.estimator).
    """
    service = config.get("service")
    if service is not None and not isinstance(service, dict):
        raise _tf_config_error("'service' must be a dict", service, TypeError,
                               as_tf_estimator='If "service" is set in TF_CONFIG, it '
                               f'must be a dict. Given {service!r}')
    return service


def _single_node(cluster):
    """One job with one task: the session runs in-process (master '')."""
    return len(cluster) == 1 and len(next(iter(cluster.values()))) == 1


def parse_tf_config(raw=None, workers_only_ok=False):
    """Parses and validates a TF_CONFIG JSON string.

    Args:
      raw: the TF_CONFIG string; None reads the `TF_CONFIG` environment variable.
      workers_only_ok: accept a cluster of workers only, worker 0 being the chief
        (as tf.estimator did for MultiWorkerMirroredStrategy).

    Returns:
      A `ClusterInfo` with the derived cluster properties.

    Raises:
      ValueError: TF_CONFIG is malformed or inconsistent (message starts with
        "TF_CONFIG").
      TypeError: 'cluster' or 'service' has the wrong type, as tf.estimator.
    """
    if raw is None:
        raw = os.environ.get(_TF_CONFIG_ENV)
    config = _load_tf_config(raw)
    shared = {"environment": config.get("environment", "cloud"),
              "model_dir": _tf_config_model_dir(config), "service": _service(config)}
    cluster = _check_cluster(config.get("cluster", {}), workers_only_ok)
    session_master = _optional_str(config, "session_master")
    eval_master = _optional_str(config, "eval_session_master") or ""
    task = config.get("task")
    if not cluster:
        if task:
            _check_task_without_cluster(task)
            logging.info("TF_CONFIG has a task but no cluster: training locally.")
        return ClusterInfo(
            cluster_spec=tf.train.ClusterSpec({}), task_type=TaskType.WORKER,
            task_id=0, is_chief=True, master=session_master or "",
            evaluation_master=eval_master, num_ps_replicas=0, num_worker_replicas=1,
            global_id_in_cluster=0, **shared)
    task_type, task_id = _check_task(task or {}, cluster)
    if task_type == TaskType.EVALUATOR:
        # The evaluator is outside the training cluster: it sees no cluster and
        # runs its sessions in-process.
        return ClusterInfo(
            cluster_spec=tf.train.ClusterSpec({}), task_type=task_type,
            task_id=task_id, is_chief=False, master="", evaluation_master=eval_master,
            num_ps_replicas=0, num_worker_replicas=0, global_id_in_cluster=None,
            **shared)
    if session_master is not None:
        master = session_master
    elif _single_node(cluster):
        master = ""
    else:
        master = "grpc://" + cluster[task_type][task_id]
    workers = sum(len(cluster.get(j, ())) for j in roles.TRAINING)
    # Training tasks keep every job in their cluster_spec (an evaluator listed there
    # too, as tf.estimator); the default device filters keep sessions off it.
    return ClusterInfo(
        cluster_spec=tf.train.ClusterSpec(cluster), task_type=task_type,
        task_id=task_id, is_chief=task_type in roles.CHIEFS or (
            task_type == TaskType.WORKER and task_id == 0
            and not set(cluster) & set(roles.CHIEFS)),
        master=master, evaluation_master="",
        num_ps_replicas=len(cluster.get(TaskType.PS, ())), num_worker_replicas=workers,
        global_id_in_cluster=_global_id(cluster, task_type, task_id), **shared)


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


def default_session_config(device_filters=None):
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


def _check_strategy(name, strategy):
    """distribute.check_strategy; for TF2's ParameterServerStrategy the error also
    names the one to use, as tf.estimator's does."""
    try:
        distribute.check_strategy(name, strategy)
    except ValueError as e:
        if type(strategy).__name__ != "ParameterServerStrategyV2":
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

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=_USE_DEFAULT, save_checkpoints_secs=_USE_DEFAULT,
                 session_config=None, keep_checkpoint_max=5,
                 keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 train_distribute=None, device_fn=None, protocol=None,
                 eval_distribute=None, experimental_distribute=None,
                 experimental_max_worker_delay_secs=None,
                 session_creation_timeout_secs=7200, checkpoint_save_graph_def=True,
                 experimental_jit_compile=False, experimental_mixed_precision=None,
                 experimental_steps_per_loop=1,
                 experimental_collective_timeout_secs=_COLLECTIVE_TIMEOUT_SECS):
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
            workers_only_ok=distribute.is_collective(train_distribute)))

    def _init(self, args, cluster_info):
        """Validates and stores the arguments (a bad one's error also carries
        tf.estimator's wording of the rule, for code that matches it)."""
        try:
            self._init_checked(args, cluster_info)
        except ValueError as e:
            message = str(e)
            for name, wording in _TF_ESTIMATOR_WORDING.items():
                if message.startswith((f"{name} must be", f"{name} must take")) and (
                        wording not in message):
                    raise type(e)(f"{message}. {wording}") from None
            raise

    def _init_checked(self, args, cluster_info):
        self._args = {name: args[name] for name in self._ARG_NAMES}
        self._cluster = cluster_info
        self._model_dir = _check_model_dir(args["model_dir"], cluster_info.model_dir)
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
            _check_strategy(name, args[name])
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

    def replace(self, **kwargs):
        """Returns a deep copy with some arguments replaced, validated again.

        As in tf.estimator the copy keeps the config's class (a subclass's overridden
        properties) and any attributes set on it; the cluster read from TF_CONFIG at
        construction is kept. Replacing one of save_checkpoints_steps/_secs with a
        value clears the other.

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
        new._init(args, self._cluster)
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
