"""Graph-mode streaming metrics of the heads, built from tf.compat.v1.metrics.

A head's `metrics()` returns `Metric` objects; `update_metrics` builds each one
once in the current graph, after which it holds the `(value, update_op)` pair an
EstimatorSpec's `eval_metric_ops` needs.

Eagerly (a head's methods called outside a graph, as tf.estimator 2.15's heads
allow), a Metric accumulates like a Keras metric: each `update_state` adds a
batch and `result()` returns the value so far. It runs its graph ops in a graph
and session of its own, fed with the batch's values.
"""

from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import tf

__all__ = ["AUC_NUM_THRESHOLDS", "Metric", "auc", "broadcast_weights", "confusion_counts",
           "eval_metric_ops", "weighted_mean"]

# tf.estimator 2.15's heads use Keras AUC metrics with their default 200 thresholds.
AUC_NUM_THRESHOLDS = 200
_EPSILON = 1e-7


class Metric:
    """One streaming metric: a build function, then a built (value, update_op) pair."""

    def __init__(self, name, build_fn):
        """Stores the name and the function that builds the metric's ops.

        Args:
          name: the metric key, e.g. ``'auc/head_a'``.
          build_fn: called by `update_state` with its arguments; returns a
            ``(value, update_op)`` pair (as the tf.compat.v1.metrics functions do).
        """
        self.name = name
        self._build_fn = build_fn
        self._pair = None
        self._eager = None

    def update_state(self, *args, **kwargs):
        """Builds the metric's variables and ops; returns the update op.

        Eagerly, adds this batch to the metric instead (and returns None).

        Raises:
          ValueError: the metric was already built (graph metrics build once).
        """
        if tf.executing_eagerly():
            if self._eager is None:
                self._eager = _EagerMetric(self._build_fn, args, kwargs)
            self._eager.update(args, kwargs)
            return None
        if self._pair is not None:
            raise ValueError(f"metric {self.name!r} was already updated; call the "
                             "head's metrics() again for a new set of metrics")
        value, update_op = self._build_fn(*args, **kwargs)
        self._pair = (value, update_op)
        return update_op

    @property
    def built(self):
        """Whether `update_state` has run (in a graph; eagerly it may run again)."""
        return self._pair is not None

    def result(self):
        """Returns the value tensor (eagerly: the value over the batches so far).

        Raises:
          ValueError: the metric has not been updated yet.
        """
        if self._eager is not None and tf.executing_eagerly():
            return tf.constant(self._eager.result())
        return self.value_and_update_op[0]

    def reset_state(self):
        """Eagerly, forgets the batches added so far (a graph metric is reset by
        running the local variables' initializer)."""
        if self._eager is not None:
            self._eager.reset()

    @property
    def value_and_update_op(self):
        """The ``(value, update_op)`` pair for `eval_metric_ops`."""
        if self._pair is None:
            raise ValueError(f"metric {self.name!r} has not been updated; pass it to "
                             "the head's update_metrics first")
        return self._pair


def _map_inputs(fn, value):
    """Applies `fn` to every tensor-like leaf of a metric's inputs (EvalContexts,
    dicts, lists and tuples walked; None and Python scalars kept)."""
    if value is None or isinstance(value, (bool, str, bytes)):
        return value
    if isinstance(value, dict):
        return {key: _map_inputs(fn, item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_map_inputs(fn, item) for item in value)
    if hasattr(value, "__dict__") and not hasattr(value, "dtype"):
        # An EvalContext: the same object type, its fields mapped.
        mapped = object.__new__(type(value))
        mapped.__dict__.update(_map_inputs(fn, vars(value)))
        return mapped
    return fn(value)


class _EagerMetric:
    """A metric's graph ops in a graph and session of its own, fed eagerly.

    The first batch fixes the inputs' dtypes and shapes but for the batch size;
    each update feeds a batch's values and runs the update op.
    """

    def __init__(self, build_fn, args, kwargs):
        self._graph = tf.Graph()
        self._placeholders = []
        with self._graph.as_default():
            inputs = _map_inputs(self._placeholder, (list(args), dict(kwargs)))
            self._value, self._update = build_fn(*inputs[0], **inputs[1])
            self._reset = tf.local_variables_initializer()
            initialize = tf.group(tf.global_variables_initializer(), self._reset)
        self._session = tf.Session(graph=self._graph)
        self._session.run(initialize)

    def _placeholder(self, value):
        tensor = tf.convert_to_tensor(_numpy(value))
        shape = tensor.shape.as_list()
        # Batches may differ in size only (the first dimension).
        placeholder = tf.placeholder(tensor.dtype, [None] + shape[1:] if shape else [])
        self._placeholders.append(placeholder)
        return placeholder

    def update(self, args, kwargs):
        values = []
        _map_inputs(lambda v: values.append(_numpy(v)), (list(args), dict(kwargs)))
        self._session.run(self._update,
                          dict(zip_strict(self._placeholders, values)))

    def result(self):
        return self._session.run(self._value)

    def reset(self):
        self._session.run(self._reset)


def _numpy(value):
    """An eager tensor's (or array-like's) value."""
    return value.numpy() if hasattr(value, "numpy") else value


def eval_metric_ops(metrics):
    """Turns a dict of built Metric objects (or pairs) into `eval_metric_ops`."""
    return {name: (metric.value_and_update_op if isinstance(metric, Metric)
                   else tuple(metric))
            for name, metric in metrics.items()}


def broadcast_weights(weights, values):
    """Returns `weights` broadcast to the shape of `values` (None stays None)."""
    if weights is None:
        return None
    return weights * tf.ones_like(values, dtype=tf.float32)


def weighted_mean(values, weights):
    """Streaming weighted mean of all elements of `values`: (value, update_op)."""
    values = tf.cast(values, tf.float32)
    return tf.metrics.mean(values, weights=broadcast_weights(weights, values))


def _thresholds(num_thresholds):
    """Evenly spaced thresholds in (0, 1) plus one just below 0 and one just above 1."""
    inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - _EPSILON] + inner + [1.0 + _EPSILON]


def _roc_auc(tp, fp, tn, fn):
    """Trapezoidal area under the ROC curve from confusion counts at thresholds."""
    tpr = tf.div_no_nan(tp, tp + fn)
    fpr = tf.div_no_nan(fp, fp + tn)
    heights = (tpr[:-1] + tpr[1:]) / 2.0
    return tf.reduce_sum((fpr[:-1] - fpr[1:]) * heights)


def _pr_auc(tp, fp, fn):
    """Area under the precision-recall curve, interpolated as Davis & Goadrich (2006).

    Between two thresholds, true positives grow linearly with predicted positives
    p = tp + fp, so precision is tp/p on that line; its integral over recall has a
    closed form with a log term.
    """
    positives = tp + fp
    d_tp = tp[:-1] - tp[1:]
    d_p = positives[:-1] - positives[1:]
    slope = tf.div_no_nan(d_tp, tf.maximum(d_p, 0.0))
    intercept = tp[1:] - slope * positives[1:]
    both_positive = tf.logical_and(positives[:-1] > 0, positives[1:] > 0)
    # Where a segment touches p == 0 the log term vanishes (ratio 1).
    ratio = tf.where(both_positive,
                     tf.div_no_nan(positives[:-1], tf.maximum(positives[1:], 0.0)),
                     tf.ones_like(positives[1:]))
    increments = tf.div_no_nan(slope * (d_tp + intercept * tf.log(ratio)),
                               tf.maximum(tp[1:] + fn[1:], 0.0))
    return tf.reduce_sum(increments)


def _metric_variable(name, size):
    """A zero-initialised local float variable, reset by local_variables_initializer.

    Not `get_variable`: a variable scope's partitioner (the v1 canned models build
    their heads inside one) must not split a metric's counters.
    """
    return tf.Variable(
        lambda: tf.zeros([size], tf.float32), name=name, trainable=False,
        collections=[tf.GraphKeys.LOCAL_VARIABLES, tf.GraphKeys.METRIC_VARIABLES])


def confusion_counts(labels, predictions, weights, thresholds):
    """Streaming weighted tp, fp, tn, fn at each threshold (prediction > threshold).

    One pass builds all four counts, so an AUC costs a few dozen graph ops
    instead of the hundreds that four tf.compat.v1.metrics.*_at_thresholds make.

    Returns:
      ((tp, fp, tn, fn) variables, update_op).
    """
    with tf.variable_scope(None, default_name="confusion_counts"):
        counts = [_metric_variable(name, len(thresholds))
                  for name in ("true_positives", "false_positives", "true_negatives",
                               "false_negatives")]
        predictions = tf.reshape(tf.cast(predictions, tf.float32), [-1, 1])
        positive = tf.reshape(tf.cast(tf.cast(labels, tf.bool), tf.float32), [-1, 1])
        if weights is None:
            weights = tf.ones_like(positive)
        else:
            weights = tf.reshape(broadcast_weights(tf.cast(weights, tf.float32), labels),
                                 [-1, 1])
        above = tf.cast(tf.greater(predictions, tf.constant([thresholds], tf.float32)),
                        tf.float32)
        below = 1.0 - above
        weighted_positive = positive * weights
        weighted_negative = (1.0 - positive) * weights
        increments = [tf.reduce_sum(above * weighted_positive, 0),
                      tf.reduce_sum(above * weighted_negative, 0),
                      tf.reduce_sum(below * weighted_negative, 0),
                      tf.reduce_sum(below * weighted_positive, 0)]
        update = tf.group(*[tf.assign_add(count, increment)
                            for count, increment in zip_strict(counts, increments)])
    return counts, update


def _trapezoidal_auc(tp, fp, tn, fn, curve):
    """The trapezoidal rule over both curves, as tf.compat.v1.metrics.auc's default.

    TF 1.x's heads report this `auc_precision_recall` (it overestimates the PR area
    where precision jumps); the small epsilon terms are v1's, kept so the numbers
    agree with v1 model_dirs' eval results.
    """
    epsilon = 1e-6
    recall = (tp + epsilon) / (tp + fn + epsilon)
    if curve == "ROC":
        x, y = fp / (fp + tn + epsilon), recall
    else:
        x, y = recall, (tp + epsilon) / (tp + fp + epsilon)
    return tf.reduce_sum((x[:-1] - x[1:]) * (y[:-1] + y[1:]) / 2.0)


SUMMATION_METHODS = ("careful_interpolation", "trapezoidal")


def auc(labels, predictions, weights=None, curve="ROC", num_thresholds=AUC_NUM_THRESHOLDS,
        summation_method="careful_interpolation"):
    """Streaming AUC of `predictions` in [0, 1] against 0/1 `labels`.

    Args:
      labels: 0/1 or bool Tensor, same shape as `predictions`.
      predictions: float Tensor of probabilities.
      weights: None or a Tensor broadcastable to `predictions`.
      curve: 'ROC' or 'PR'.
      num_thresholds: number of thresholds of the confusion counts.
      summation_method: 'careful_interpolation' (TF2 heads: trapezoids for ROC, the
        interpolated PR area) or 'trapezoidal' (TF1 heads: trapezoids for both).

    Returns:
      A (value, update_op) pair.

    Raises:
      ValueError: `curve` is not 'ROC' or 'PR', or an unknown summation_method.
    """
    if curve not in ("ROC", "PR"):
        raise ValueError(f"curve must be 'ROC' or 'PR', got {curve!r}")
    if summation_method not in SUMMATION_METHODS:
        raise ValueError(f"summation_method must be one of {SUMMATION_METHODS}, got "
                         f"{summation_method!r}")
    (tp, fp, tn, fn), update = confusion_counts(labels, predictions, weights,
                                                _thresholds(num_thresholds))
    if summation_method == "trapezoidal":
        return _trapezoidal_auc(tp, fp, tn, fn, curve), update
    value = _roc_auc(tp, fp, tn, fn) if curve == "ROC" else _pr_auc(tp, fp, fn)
    return value, update
