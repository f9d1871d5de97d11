"""How a head reduces its per-example losses to the scalar training loss.

tf.estimator 2.15's heads take the Keras reduction strings ('sum_over_batch_size',
the default, 'sum', and 'auto' which means 'sum_over_batch_size'). Programs written
for the TF1 canned estimators pass `tf.compat.v1.losses.Reduction` strings; those are
accepted too, with their TF1 meaning.
"""

from estimator_lite._engine import distribute
from estimator_lite._tf import tf

__all__ = ["SUM", "SUM_OVER_BATCH_SIZE", "V1_SUM", "VALID_REDUCTIONS",
           "check_loss_reduction", "reduce_loss"]

SUM_OVER_BATCH_SIZE = "sum_over_batch_size"
SUM = "sum"
_AUTO = "auto"
# tf.compat.v1.losses.Reduction.SUM: the v1 canned estimators' default.
V1_SUM = "weighted_sum"
_V1_SUM = V1_SUM
_V1_SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
_V1_MEAN = "weighted_mean"
_V1_SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"

VALID_REDUCTIONS = (SUM_OVER_BATCH_SIZE, SUM, _AUTO, _V1_SUM, _V1_SUM_OVER_BATCH_SIZE,
                    _V1_MEAN, _V1_SUM_BY_NONZERO_WEIGHTS)


def check_loss_reduction(loss_reduction):
    """Checks a `loss_reduction` argument.

    Returns:
      The reduction string.

    Raises:
      TypeError: `loss_reduction` is not a string.
      ValueError: it is not one of VALID_REDUCTIONS ('none' cannot train).
    """
    if not isinstance(loss_reduction, str):
        raise TypeError(f"loss_reduction must be a str, one of {VALID_REDUCTIONS}; got "
                        f"{loss_reduction!r} of type {type(loss_reduction).__name__}")
    if loss_reduction not in VALID_REDUCTIONS:
        raise ValueError(f"Invalid loss_reduction: {loss_reduction}. loss_reduction must "
                         f"be one of {VALID_REDUCTIONS} (a head needs a scalar training "
                         "loss).")
    return loss_reduction


def reduce_loss(unreduced_loss, weights, loss_reduction):
    """Reduces weighted per-example losses to a scalar.

    Args:
      unreduced_loss: float Tensor [batch_size, d].
      weights: None or a float Tensor broadcastable to `unreduced_loss`.
      loss_reduction: a checked reduction string.

    Returns:
      A scalar float Tensor.
    """
    if weights is None:
        weights = tf.ones_like(unreduced_loss)
    weights = weights * tf.ones_like(unreduced_loss)  # broadcast to the loss shape
    total = tf.reduce_sum(unreduced_loss * weights)
    distribute.note_loss_reduction(loss_reduction in (SUM, _V1_SUM))
    if loss_reduction in (SUM, _V1_SUM):
        return total
    if loss_reduction == _V1_MEAN:
        return tf.div_no_nan(total, tf.reduce_sum(weights))
    if loss_reduction == _V1_SUM_BY_NONZERO_WEIGHTS:
        nonzero = tf.reduce_sum(tf.cast(tf.not_equal(weights, 0.0), tf.float32))
        return tf.div_no_nan(total, nonzero)
    return tf.div_no_nan(total, tf.cast(tf.size(unreduced_loss), tf.float32))
