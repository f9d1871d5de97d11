"""The roles of a TF_CONFIG cluster (task types) and what each one does.

The one place that spells the role names and knows their facts. It imports
nothing (no TensorFlow), so the launcher and `local_cluster` can read it without
loading TF; `run_config.TaskType` exposes the same names under tf.estimator's
spelling.

| role        | trains | chief | at most one | writes a done marker         |
| ----------- | ------ | ----- | ----------- | ---------------------------- |
| `chief`     | yes    | yes   | yes         | `training_complete.json`     |
| `master`    | yes    | yes   | yes         | `training_complete.json`     |
| `worker`    | yes    | no    | no          | `workers_done/worker-<i>.json` |
| `ps`        | no     | no    | no          | none (waits for the markers) |
| `evaluator` | no     | no    | yes         | none (waits for the markers) |

`master` is the legacy chief (no `chief`, no evaluator in its cluster); the
evaluator is outside the training cluster. A cluster may name other jobs too (as
tf.estimator allows): such a task neither trains nor leads, and gets no default
device filters.
"""

__all__ = ["CHIEF", "MASTER", "WORKER", "PS", "EVALUATOR", "ALL", "CHIEFS", "TRAINING",
           "UNIQUE", "MARKS_TRAINING_COMPLETE", "MARKS_WORKER_DONE", "trains",
           "is_unique", "check_evaluator_index", "default_device_filters"]

CHIEF = "chief"
MASTER = "master"
WORKER = "worker"
PS = "ps"
EVALUATOR = "evaluator"

# Every role, in the order error messages list them.
ALL = (CHIEF, WORKER, PS, MASTER, EVALUATOR)
# Roles whose task is the chief (initialises, saves checkpoints and summaries).
CHIEFS = (CHIEF, MASTER)
# Roles that run the training loop (the worker replicas).
TRAINING = (CHIEF, MASTER, WORKER)
# Roles with at most one task in a cluster (index 0).
UNIQUE = (CHIEF, MASTER, EVALUATOR)
# Roles that mark the end of training in model_dir (see _engine/completion.py).
MARKS_TRAINING_COMPLETE = (CHIEF, MASTER)
MARKS_WORKER_DONE = (WORKER,)


def trains(task_type):
    """Whether a task of this type runs the training loop."""
    return task_type in TRAINING


def is_unique(task_type):
    """Whether a cluster has at most one task of this type."""
    return task_type in UNIQUE


def check_evaluator_index(task_type, task_index):
    """Checks that an evaluator is the one evaluator (index 0).

    Raises:
      ValueError: an evaluator with another index.
    """
    if task_type == EVALUATOR and task_index != 0:
        raise ValueError(f"there can only be one `evaluator` task (with task id 0): "
                         f"only one evaluator (index 0) is supported, got index "
                         f"{task_index}")


def default_device_filters(task_type, task_id):
    """The devices a task of a between-graph cluster talks to by default, or None.

    The chief and workers see the ps and themselves (not each other); a ps sees
    every training job; the evaluator and other jobs get no filters (tf.estimator's
    defaults).
    """
    if task_type in CHIEFS:
        return [f"/job:{PS}", f"/job:{task_type}"]
    if task_type == WORKER:
        return [f"/job:{PS}", f"/job:{WORKER}/task:{task_id}"]
    if task_type == PS:
        return [f"/job:{PS}", f"/job:{WORKER}", f"/job:{CHIEF}", f"/job:{MASTER}"]
    return None
