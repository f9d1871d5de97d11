"""TF_CONFIG parsed into one task's view of its cluster (`ClusterInfo`).

`RunConfig` reads the `TF_CONFIG` environment variable once, at construction, through
`parse_tf_config`. Every inconsistency is a ValueError whose message starts with
"TF_CONFIG" and shows the offending value (a TypeError where tf.estimator raises one:
a `cluster` or `service` of the wrong type). What tf.estimator accepts is accepted:
any job name, any address, any `environment`, and a job given as a dict of task
index to address (a sparse job, as `tf.train.ClusterSpec` takes it).
"""

import json
import os

from estimator_lite._engine import roles
from estimator_lite._tf import logging, tf

__all__ = ["ClusterInfo", "parse_tf_config"]

_TF_CONFIG_ENV = "TF_CONFIG"


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
    (a server reports a bad address when it starts). A job may also be a dict of
    task index to address (a sparse job: `{"worker": {"1": "host:port"}}`), as
    `tf.train.ClusterSpec` takes it. `workers_only_ok`: a cluster of workers
    without a chief is valid (worker 0 leads; MultiWorkerMirroredStrategy clusters).

    Returns:
      {job: list of addresses, or {int index: address} for a sparse job}.

    Raises:
      TypeError: `cluster` is not a dict of lists or dicts (tf.estimator's type).
      ValueError: a sparse job's index is not a number; two chiefs, both chief
        and master, or no chief.
    """
    if not isinstance(cluster, dict):
        raise _tf_config_error("'cluster' must be a dict of job name to address list",
                               cluster, TypeError)
    cluster = {job: _job(job, addresses) for job, addresses in cluster.items()}
    if roles.CHIEF in cluster and roles.MASTER in cluster:
        raise _tf_config_error("'chief' and 'master' cannot both be in the cluster",
                               cluster, as_tf_estimator="If `master` node exists in "
                               "`cluster`, job `chief` is not supported.")
    for single in roles.CHIEFS:
        if _job_size(cluster, single) > 1:
            raise _tf_config_error(f"at most one {single!r} task is allowed",
                                   cluster[single], as_tf_estimator=(
                                       f'The "cluster" in TF_CONFIG must have only '
                                       f'one "{single}" node.'))
    training_jobs = set(cluster) - {roles.EVALUATOR}
    if (training_jobs and not training_jobs & {roles.CHIEF, roles.MASTER}
            and not (workers_only_ok and training_jobs == {roles.WORKER})):
        raise _tf_config_error("a cluster needs one 'chief' (or legacy 'master') task",
                               cluster, as_tf_estimator='If "cluster" is set in '
                               'TF_CONFIG, it must have one "chief" node.')
    return cluster


def _job(job, addresses):
    """One job's addresses: a list, or {int index: address} for a sparse job (a
    dict whose indices are 0..n-1 is that list, as in tf.train.ClusterSpec)."""
    if isinstance(addresses, dict):
        tasks = {}
        for index, address in addresses.items():
            try:
                tasks[int(index)] = address
            except (TypeError, ValueError):
                raise _tf_config_error(f"cluster[{job!r}] is a dict of task index to "
                                       "address; its keys must be ints", index) from None
        if sorted(tasks) == list(range(len(tasks))):
            return [tasks[i] for i in range(len(tasks))]
        return tasks
    if isinstance(addresses, str) or not isinstance(addresses, (list, tuple)):
        raise _tf_config_error(f"cluster[{job!r}] must be a list of 'host:port' strings "
                               "(or a dict of task index to address)", addresses,
                               TypeError)
    return list(addresses)


def _job_tasks(cluster, job):
    """The job's addresses by task index; None where a sparse job has no task (as
    tf.train.ClusterSpec.job_tasks)."""
    addresses = cluster.get(job, ())
    if not isinstance(addresses, dict):
        return list(addresses)
    tasks = [None] * (max(addresses, default=-1) + 1)
    for index, address in addresses.items():
        if index >= 0:
            tasks[index] = address
    return tasks


def _job_size(cluster, job):
    """1 + the job's highest task index: what task indices and global ids count."""
    return len(_job_tasks(cluster, job))


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
                               f"{', '.join(roles.ALL)})", task,
                               as_tf_estimator='If "cluster" is set in TF_CONFIG, '
                               'task type must be set.')
    if task.get("index") is None:
        raise _tf_config_error("'task' has no 'index'", task, as_tf_estimator=(
            'If "cluster" is set in TF_CONFIG, task index must be set.'))
    index = _task_index(task["index"])
    if task_type == roles.EVALUATOR:
        if roles.MASTER in cluster:
            raise _tf_config_error("an evaluator is not supported with a legacy "
                                   "'master' cluster; use 'chief'", cluster,
                                   as_tf_estimator="If `master` node exists in "
                                   "`cluster`, task_type `evaluator` is not supported.")
        # Outside the training cluster: any index (train_and_evaluate wants 0).
        return task_type, index
    if task_type not in cluster:
        if task_type not in roles.ALL:
            raise _tf_config_error(f"unknown task type {task_type!r}: not a job of "
                                   f"'cluster' (jobs: {sorted(cluster)})", task)
        raise _tf_config_error(f"task type {task_type!r} is not a job of 'cluster' "
                               f"(jobs: {sorted(cluster)})", task, as_tf_estimator=(
                                   f"{task_type} is not a valid task_type in the "
                                   "cluster_spec."))
    size = _job_size(cluster, task_type)
    if index >= size:
        raise _tf_config_error(f"task 'index' must be < {size}, the number of "
                               f"{task_type!r} tasks", index,
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
    task_type = task.get("type", roles.WORKER)
    if task_type != roles.WORKER:
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
    chief_job = roles.CHIEF if roles.CHIEF in cluster else roles.MASTER
    order = [chief_job] + sorted(j for j in cluster if j not in (chief_job, roles.PS))
    order.append(roles.PS)
    offset = 0
    for job in order:
        if job == task_type:
            return offset + task_id
        offset += _job_size(cluster, job)
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
    return len(cluster) == 1 and _job_size(cluster, next(iter(cluster))) == 1


def _task_address(cluster, task_type, task_id):
    """The task's address; a sparse job's missing task is a TypeError (tf.estimator's
    type: it fails joining None to 'grpc://')."""
    address = _job_tasks(cluster, task_type)[task_id]
    if address is None:
        raise _tf_config_error(f"cluster[{task_type!r}] has no task {task_id} (a sparse "
                               "job lists only its tasks' indices)", cluster[task_type],
                               TypeError)
    return address


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
            cluster_spec=tf.train.ClusterSpec({}), task_type=roles.WORKER,
            task_id=0, is_chief=True, master=session_master or "",
            evaluation_master=eval_master, num_ps_replicas=0, num_worker_replicas=1,
            global_id_in_cluster=0, **shared)
    task_type, task_id = _check_task(task or {}, cluster)
    if task_type == roles.EVALUATOR:
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
        master = "grpc://" + _task_address(cluster, task_type, task_id)
    workers = sum(len(cluster.get(j, ())) for j in roles.TRAINING)
    # Training tasks keep every job in their cluster_spec (an evaluator listed there
    # too, as tf.estimator); the default device filters keep sessions off it.
    return ClusterInfo(
        cluster_spec=tf.train.ClusterSpec(cluster), task_type=task_type,
        task_id=task_id, is_chief=task_type in roles.CHIEFS or (
            task_type == roles.WORKER and task_id == 0
            and not set(cluster) & set(roles.CHIEFS)),
        master=master, evaluation_master="",
        num_ps_replicas=len(cluster.get(roles.PS, ())), num_worker_replicas=workers,
        global_id_in_cluster=_global_id(cluster, task_type, task_id), **shared)
