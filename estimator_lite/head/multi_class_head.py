"""MultiClassHead: one of n_classes > 2 classes, softmax cross-entropy."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from estimator_lite._tf import TENSOR_TYPES, tf
from estimator_lite.head import classes, head_inputs, reduction
from estimator_lite.head.base_head import Head, check_prediction_keys
from estimator_lite.head.binary_class_head import classification_export_outputs
from estimator_lite.head.keys import MetricKeys, PredictionKeys
from estimator_lite.head.metrics import broadcast_weights

__all__ = ["MultiClassHead", "check_n_classes"]

_KEYS = (PredictionKeys.LOGITS, PredictionKeys.PROBABILITIES, PredictionKeys.CLASS_IDS,
         PredictionKeys.CLASSES, PredictionKeys.ALL_CLASS_IDS, PredictionKeys.ALL_CLASSES)


def check_n_classes(n_classes, minimum, too_small_message):
    """Checks `n_classes`: an int >= `minimum`.

    Args:
      n_classes: the argument.
      minimum: its least valid value.
      too_small_message: the ValueError's message when it is None or smaller
        (formatted with ``n_classes``).

    Raises:
      ValueError: None or below `minimum` (as tf.estimator's heads).
      TypeError: not an int.
    """
    if n_classes is None:
        raise ValueError(too_small_message.format(n_classes=n_classes))
    if isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral):
        raise TypeError(f"n_classes must be an int >= {minimum}, got {n_classes!r} of "
                        f"type {type(n_classes).__name__}")
    if n_classes < minimum:
        raise ValueError(too_small_message.format(n_classes=n_classes))
    return int(n_classes)


def _n_classes_value(n_classes):
    """The int a MultiClassHead's `n_classes` stands for (a Tensor: its value).

    tf.estimator 2.15 takes an int32 scalar Tensor too and keeps it as the
    head's `logits_dimension`. Here its value must be known when the head is
    built (a constant): the head's shapes and class names are static.

    Raises:
      TypeError: neither an int nor an int32 Tensor (tf.estimator refuses other
        dtypes with a TypeError too).
      ValueError: a Tensor that is not a scalar, or whose value is not known
        before the graph runs (a placeholder, a variable).
      tf.errors.InvalidArgumentError: a Tensor of value <= 2 (tf.estimator's
        assertion on it fails so too).
    """
    if not isinstance(n_classes, TENSOR_TYPES):
        return check_n_classes(
            n_classes, 3, "n_classes must be > 2: {n_classes}. (MultiClassHead needs "
            "at least 3 classes; use BinaryClassHead for 2.)")
    if n_classes.dtype.base_dtype != tf.int32:
        raise TypeError(f"n_classes must be an int or an int32 scalar Tensor, got "
                        f"{n_classes!r} of dtype {n_classes.dtype.base_dtype.name}")
    if n_classes.shape.ndims != 0:
        raise ValueError(f"n_classes must be a scalar Tensor, got {n_classes!r} of "
                         f"shape {n_classes.shape}")
    value = None if isinstance(n_classes, tf.Variable) else tf.get_static_value(
        n_classes)
    if value is None:
        raise ValueError(f"n_classes Tensor {n_classes!r} has no value known before "
                         "the graph runs; MultiClassHead needs a constant (e.g. "
                         "tf.constant(3)) or an int")
    if value <= 2:
        raise tf.errors.InvalidArgumentError(
            None, None, f"n_classes must be greater than 2, got {n_classes!r} of "
            f"value {int(value)}. (Use BinaryClassHead for 2 classes.)")
    return int(value)


class MultiClassHead(Head):
    """Head for single-label classification into n_classes > 2 classes.

    Labels are class ids in [0, n_classes), or strings of `label_vocabulary`.
    Predictions: logits, probabilities, class_ids, classes, all_class_ids, all_classes.
    """

    # tf.estimator's metrics of this head take weights of any static shape (a
    # wrong one fails when the graph runs).
    _METRIC_WEIGHTS_BROADCAST = False

    def __init__(self, n_classes: int | tf.Tensor, weight_column: str | Any | None = None,
                 label_vocabulary: Sequence[str] | None = None,
                 loss_reduction: str = reduction.SUM_OVER_BATCH_SIZE,
                 loss_fn: Callable[..., tf.Tensor] | None = None,
                 name: str | None = None) -> None:
        """Checks and stores the arguments.

        Args:
          n_classes: number of classes, > 2 (use BinaryClassHead for 2): an int,
            or an int32 scalar Tensor of known value (then `logits_dimension`).
          weight_column: None, a feature key or a numeric feature column of weights.
          label_vocabulary: n_classes strings naming the classes.
          loss_reduction: how the training loss is reduced (see reduction.py).
          loss_fn: callable(labels, logits[, features]) -> unreduced loss.
          name: suffix of metric keys, and the head's name in a MultiHead.

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        if n_classes is None:
            raise ValueError("n_classes cannot be None: MultiClassHead needs the number "
                             "of classes (> 2)")
        self._n_classes = _n_classes_value(n_classes)
        self._n_classes_given = n_classes
        super().__init__(self._n_classes, name=name, weight_column=weight_column,
                         loss_reduction=loss_reduction, loss_fn=loss_fn)
        self._label_vocabulary = head_inputs.check_label_vocabulary(label_vocabulary,
                                                                    self._n_classes)

    n_classes = property(lambda self: self._n_classes, doc="Number of classes.")

    @property
    def logits_dimension(self) -> int | tf.Tensor:
        """n_classes as given: an int32 Tensor stays that Tensor, as in tf.estimator."""
        return self._n_classes_given

    def _processed_labels(self, labels):
        labels = head_inputs.dense_labels(labels, 1)
        if self._label_vocabulary is None and labels.dtype.is_floating:
            # Not truncated to ids (tf.estimator refuses them too).
            raise ValueError(f"Labels dtype should be integer. Instead got "
                             f"{labels.dtype.name} (MultiClassHead's labels are class "
                             "ids, or strings with label_vocabulary).")
        ids = head_inputs.class_ids_from_labels(labels, self._label_vocabulary)
        return head_inputs.labels_in_range(ids, self._n_classes)

    def _builtin_unreduced_loss(self, labels, logits):
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels[..., 0],
                                                              logits=logits)
        return tf.expand_dims(loss, -1)

    def predictions(self, logits: tf.Tensor, keys: str | Iterable[str] | None = None,
                    ) -> dict[str, tf.Tensor]:
        """Returns the predictions dict (only `keys` if given).

        Raises:
          ValueError: an unknown key.
        """
        keys = check_prediction_keys(keys, _KEYS)
        logits = head_inputs.check_logits(logits, self._n_classes)
        with tf.name_scope("predictions"):
            class_ids = tf.expand_dims(tf.argmax(logits, axis=-1), -1)
            every = {
                PredictionKeys.LOGITS: logits,
                PredictionKeys.PROBABILITIES: tf.nn.softmax(logits, name="probabilities"),
                PredictionKeys.CLASS_IDS: class_ids,
                PredictionKeys.CLASSES: classes.class_names(
                    class_ids, self._n_classes, self._label_vocabulary),
                PredictionKeys.ALL_CLASS_IDS: classes.all_class_ids(self._n_classes,
                                                                    logits),
                PredictionKeys.ALL_CLASSES: classes.all_class_names(
                    self._n_classes, self._label_vocabulary, logits),
            }
        return {key: every[key] for key in keys}

    def _export_outputs(self, predictions):
        return classification_export_outputs(
            predictions, PredictionKeys.PROBABILITIES, classes.all_class_names(
                self._n_classes, self._label_vocabulary,
                predictions[PredictionKeys.LOGITS]))

    def _metric_builders(self):
        def accuracy(c):
            return tf.metrics.accuracy(
                labels=c.labels, predictions=c.predictions[PredictionKeys.CLASS_IDS],
                weights=broadcast_weights(c.weights, c.labels))

        return [(MetricKeys.ACCURACY, accuracy)]
