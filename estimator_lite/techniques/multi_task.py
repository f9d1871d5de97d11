"""Multi-task models: several heads combined into one EstimatorSpec."""

import collections

from estimator_lite._tf import tf
from estimator_lite.model_fn import EstimatorSpec, ModeKeys

__all__ = ["Task", "multi_task_spec"]


class Task(collections.namedtuple("Task", [
        "name", "loss", "eval_metric_ops", "predictions", "weight", "validate"])):
    """One head: its loss, metrics and predictions.

    Attributes:
      name: task name; prefixes its metrics (`<name>/<metric>`) and predictions.
      loss: scalar loss tensor (None in PREDICT mode).
      eval_metric_ops: dict of metric name to (value, update_op), or None.
      predictions: a Tensor or dict of Tensors, or None.
      weight: factor of this task's loss in the total loss.
      validate: whether the task counts in evaluation (its metrics and its loss in
        the eval loss); a task with validate=False is trained but not validated.
    """

    def __new__(cls, name, loss=None, eval_metric_ops=None, predictions=None, weight=1.0,
                validate=True):
        if not isinstance(name, str) or not name or "/" in name:
            raise ValueError(f"task name must be a non-empty string without '/', got "
                             f"{name!r}")
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight < 0:
            raise ValueError(f"task {name!r}: weight must be a number >= 0, got "
                             f"{weight!r}")
        return super().__new__(cls, name, loss, dict(eval_metric_ops or {}), predictions,
                               float(weight), bool(validate))


def _weighted_loss(tasks):
    return tf.add_n([task.loss * task.weight for task in tasks], name="multi_task_loss")


def _predictions(tasks):
    combined = {}
    for task in tasks:
        if task.predictions is None:
            continue
        if isinstance(task.predictions, dict):
            combined.update({f"{task.name}/{k}": v for k, v in task.predictions.items()})
        else:
            combined[task.name] = task.predictions
    return combined or None


def _metrics(tasks):
    metrics = {}
    for task in tasks:
        if not task.validate:
            continue
        metrics[f"{task.name}/loss"] = tf.metrics.mean(task.loss)
        metrics.update({f"{task.name}/{k}": v for k, v in task.eval_metric_ops.items()})
    return metrics


def multi_task_spec(mode, tasks, optimizer=None, train_op_fn=None, export_outputs=None,
                    **spec_kwargs):
    """Combines tasks into one EstimatorSpec.

    TRAIN: loss is the weighted sum over all tasks; train_op comes from
    `optimizer.minimize(loss, global_step)` or `train_op_fn(loss)`; each task's loss
    is written as the summary `<task>/loss`. EVAL: loss is the weighted sum over the
    validated tasks; metrics are `<task>/<metric>` plus `<task>/loss`. Predictions
    are keyed `<task>/<key>` (or `<task>` for a single tensor).

    Args:
      mode: a ModeKeys value.
      tasks: list of Task with unique names.
      optimizer: an Optimizer (TRAIN), or give train_op_fn.
      train_op_fn: function(loss) -> train_op (TRAIN), instead of optimizer.
      export_outputs: passed on (PREDICT).
      **spec_kwargs: other EstimatorSpec fields (hooks, scaffold).

    Returns:
      An EstimatorSpec.

    Raises:
      ValueError: no tasks, repeated names, no validated task in EVAL, a task
        without loss in TRAIN/EVAL, or neither/both of optimizer and train_op_fn.
    """
    tasks = list(tasks)
    names = [task.name for task in tasks]
    if not tasks or len(set(names)) != len(names):
        raise ValueError(f"tasks must be a non-empty list with unique names, got {names}")
    predictions = _predictions(tasks)
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions=predictions, export_outputs=export_outputs,
                             **spec_kwargs)
    missing = [task.name for task in tasks if task.loss is None]
    if missing:
        raise ValueError(f"tasks {missing} have no loss in {mode!r} mode")
    if mode == ModeKeys.EVAL:
        validated = [task for task in tasks if task.validate]
        if not validated:
            raise ValueError("EVAL needs at least one task with validate=True")
        return EstimatorSpec(mode, loss=_weighted_loss(validated),
                             eval_metric_ops=_metrics(tasks), predictions=predictions,
                             **spec_kwargs)
    if (optimizer is None) == (train_op_fn is None):
        raise ValueError("give exactly one of optimizer and train_op_fn for TRAIN")
    loss = _weighted_loss(tasks)
    for task in tasks:
        tf.summary.scalar(f"{task.name}/loss", task.loss)
    train_op = (optimizer.minimize(loss, global_step=tf.train.get_global_step())
                if optimizer is not None else train_op_fn(loss))
    return EstimatorSpec(mode, loss=loss, train_op=train_op, predictions=predictions,
                         **spec_kwargs)
