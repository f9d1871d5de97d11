"""This task's place in its job, decided once: the one answer to "is it a collective job?".

A training task's cluster facts follow from its RunConfig (TF_CONFIG's cluster and
task, `master`, `environment`) and its `train_distribute` strategy. `for_config`
reads them into a `Topology` record; `training` (servers, a worker's start and
end) and `train_setup` (summaries, restores, what a failed step does) read the
record, never the strategy. No other module asks whether a strategy is collective
(tests/repository/layering_test.py checks it); `runs_collectives` answers the bare question
where no RunConfig exists yet.

| job kind     | when                          | variables held by | a failed step    |
| ------------ | ----------------------------- | ----------------- | ---------------- |
| `local`      | no cluster, and no collective | this task         | recreates the    |
|              | strategy                      |                   | session          |
| `ps`         | a cluster, and no collective  | the ps tasks (or  | recreates the    |
|              | strategy                      | the chief)        | session          |
| `collective` | MultiWorkerMirroredStrategy   | every trainer     | ends the job     |
|              |                               |                   | (with peers)     |

A collective strategy without a cluster is a collective job of one worker: its
trainers hold their variables, but it has no peer to lose, so a failed step
recreates its session as a local job's does.
"""

import dataclasses
import json
import os

from estimator_lite._engine import collective_watchdog, distribute, roles
from estimator_lite._tf import tf

__all__ = ["LOCAL", "PS", "COLLECTIVE", "PLATFORM", "STRATEGY", "THIS_TASK",
           "STAGGERED_START", "WITH_CHIEF", "Topology", "device_fn", "for_config",
           "has_cluster",
           "runs_collectives", "train_strategy"]

# Job kinds.
LOCAL = "local"
PS = "ps"
COLLECTIVE = "collective"
# Who starts this task's TensorFlow server.
PLATFORM = "the platform"  # TF_CONFIG's environment 'google'
STRATEGY = "the strategy"  # MultiWorkerMirroredStrategy, built eagerly with a cluster
THIS_TASK = "this task"
# How a (non-chief) worker waits.
STAGGERED_START = "staggered start"  # a start delay growing with its index
WITH_CHIEF = "with the chief"  # no delay; it ends after the chief's final checkpoint


@dataclasses.dataclass(frozen=True)
class Topology:
    """A training task's cluster facts (see the module docstring).

    Attributes:
      kind: LOCAL, PS or COLLECTIVE.
      is_chief: the task initialises or restores the model and saves checkpoints.
      master: the session target ('' for in-process).
      workers_hold_variables: every trainer keeps (so initialises or restores) its
        own copy of the variables (collective jobs), not only the chief or the ps.
      writes_summaries: the task writes the training summaries and the step rate
        (the chief; worker 0 beside a legacy master with workers).
      server_started_by: PLATFORM, STRATEGY or THIS_TASK.
      worker_wait: STAGGERED_START (workers train independently) or WITH_CHIEF
        (collective workers step together with the chief).
      failure_ends_job: a failed step or session creation ends the job (a
        collective job with peers: collectives cannot be formed again in this
        process) instead of recreating the session.
    """

    kind: str
    is_chief: bool
    master: str
    workers_hold_variables: bool
    writes_summaries: bool
    server_started_by: str
    worker_wait: str
    failure_ends_job: bool


def runs_collectives(strategy):
    """Whether `strategy` makes its job a collective one (MultiWorkerMirroredStrategy).

    Args:
      strategy: a tf.distribute strategy, or None.
    """
    return distribute.is_collective(strategy)


def train_strategy(config):
    """The config's train_distribute strategy; None when it has none (or when a test
    double's attribute is not a strategy).

    Args:
      config: a RunConfig, or an object with its attributes (an Estimator-like's).
    """
    strategy = getattr(config, "train_distribute", None)
    return strategy if hasattr(type(strategy), "extended") else None


def device_fn(config):
    """Where a training graph's ops go: the RunConfig's `device_fn`, else (with ps
    tasks) a replica device setter placing the variables on the ps tasks, else None.

    Args:
      config: the Estimator's RunConfig.
    """
    if config.device_fn is not None:
        return config.device_fn
    if config.num_ps_replicas > 0:
        return tf.train.replica_device_setter(
            ps_tasks=config.num_ps_replicas,
            worker_device=f"/job:{config.task_type}/task:{config.task_id}",
            merge_devices=True, cluster=config.cluster_spec)
    return None


def has_cluster(config):
    """Whether the config names a cluster (TF_CONFIG's 'cluster' or a cluster_spec)."""
    spec = config.cluster_spec
    return bool(spec) and bool(getattr(spec, "jobs", spec))


def for_config(config):
    """The cluster facts of the task that `config` describes.

    Args:
      config: a RunConfig, or an object with its attributes (an Estimator-like's,
        such as tf.estimator's own RunConfig); `train_distribute`, `environment`
        and `is_chief` may be missing.

    Returns:
      A `Topology`.
    """
    strategy = train_strategy(config)
    collective = runs_collectives(strategy)
    if collective:
        kind = COLLECTIVE
    else:
        kind = PS if has_cluster(config) else LOCAL
    is_chief = getattr(config, "is_chief", False)
    return Topology(
        kind=kind, is_chief=is_chief, master=getattr(config, "master", ""),
        workers_hold_variables=collective,
        writes_summaries=_writes_summaries(config, collective, is_chief),
        server_started_by=_server_started_by(config, strategy),
        worker_wait=WITH_CHIEF if collective else STAGGERED_START,
        failure_ends_job=collective and bool(collective_watchdog.peers(
            config.cluster_spec, config.task_type, config.task_id)))


def _writes_summaries(config, collective, is_chief):
    """Whether this task writes the training summaries and step rate to model_dir.

    The chief does, except beside a legacy master with workers (between-graph
    replication): the master also evaluates, so worker 0 writes them, as with
    tf.estimator.
    """
    cluster = config.cluster_spec
    jobs = getattr(cluster, "jobs", cluster) if cluster else ()
    if roles.MASTER in jobs and roles.WORKER in jobs and not collective:
        return config.task_type == roles.WORKER and config.task_id == 0
    return is_chief


def _server_started_by(config, strategy):
    if _is_google_env(config):
        return PLATFORM
    if distribute.server_started(strategy):
        return STRATEGY
    return THIS_TASK


def _is_google_env(config):
    """Whether the platform runs the servers (TF_CONFIG's environment 'google')."""
    if getattr(config, "environment", None) == "google":
        return True
    # Read at run time too, as tf.estimator does (the variable may change).
    try:
        tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    except ValueError:
        return False
    return isinstance(tf_config, dict) and tf_config.get("environment") == "google"
