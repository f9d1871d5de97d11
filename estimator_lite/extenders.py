"""add_metrics: give an existing estimator more evaluation metrics (tf.estimator's)."""

from estimator_lite._engine import validation
from estimator_lite._engine.fn_args import call_with_declared_args, check_declared_args
from estimator_lite.estimator import Estimator, call_model_fn, warm_start_settings
from estimator_lite.model_fn import ModeKeys

__all__ = ["add_metrics"]

_METRIC_FN_ARGS = ("features", "labels", "predictions", "config")


def _check_metric_fn(metric_fn):
    validation.check_callable("metric_fn", metric_fn)
    return check_declared_args("metric_fn", metric_fn, _METRIC_FN_ARGS)


def add_metrics(estimator, metric_fn):
    """Returns an Estimator like `estimator` whose evaluations add `metric_fn`'s metrics.

    Args:
      estimator: an estimator_lite Estimator (canned ones included).
      metric_fn: takes any of `features`, `labels`, `predictions`, `config` and
        returns a dict of metric name to `(value_op, update_op)` or to a Keras
        `Metric` on which it called `update_state`; a name that the model
        already reports is replaced.

    Returns:
      A new Estimator with the same model_dir, config and warm start.

    Raises:
      TypeError: estimator is not an Estimator, metric_fn not callable, or
        metric_fn does not return a dict.
      ValueError: metric_fn takes other arguments.
    """
    if not isinstance(estimator, Estimator):
        raise TypeError(f"estimator must be an estimator_lite Estimator, got "
                        f"{estimator!r}")
    _check_metric_fn(metric_fn)

    def model_fn(features, labels, mode, config):
        spec = call_model_fn(estimator, features, labels, mode)
        if mode != ModeKeys.EVAL:
            return spec
        available = {"features": features, "labels": labels,
                     "predictions": spec.predictions, "config": config}
        extra = call_with_declared_args(metric_fn, available)
        if not isinstance(extra, dict):
            raise TypeError(f"metric_fn must return a dict of name to (value, "
                            f"update_op) or Keras Metric, got {extra!r}")
        return spec._replace(eval_metric_ops={**spec.eval_metric_ops, **extra})

    return Estimator(model_fn, model_dir=estimator.model_dir, config=estimator.config,
                     warm_start_from=warm_start_settings(estimator))
