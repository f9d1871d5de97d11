"""MultiClassHead: one of n_classes > 2 classes, softmax cross-entropy."""

import numbers

from estimator_lite._tf import tf
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


class MultiClassHead(Head):
    """Head for single-label classification into n_classes > 2 classes.

    Labels are class ids in [0, n_classes), or strings of `label_vocabulary`.
    Predictions: logits, probabilities, class_ids, classes, all_class_ids, all_classes.
    """

    def __init__(self, n_classes, weight_column=None, label_vocabulary=None,
                 loss_reduction=reduction.SUM_OVER_BATCH_SIZE, loss_fn=None, name=None):
        """Checks and stores the arguments.

        Args:
          n_classes: number of classes, > 2 (use BinaryClassHead for 2).
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
        self._n_classes = check_n_classes(
            n_classes, 3, "n_classes must be > 2: {n_classes}. (MultiClassHead needs "
            "at least 3 classes; use BinaryClassHead for 2.)")
        super().__init__(self._n_classes, name=name, weight_column=weight_column,
                         loss_reduction=loss_reduction, loss_fn=loss_fn)
        self._label_vocabulary = head_inputs.check_label_vocabulary(label_vocabulary,
                                                                    self._n_classes)

    n_classes = property(lambda self: self._n_classes, doc="Number of classes.")

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

    def predictions(self, logits, keys=None):
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
