"""MultiLabelHead: any subset of n_classes classes, per-class sigmoid cross-entropy."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from estimator_lite._tf import tf
from estimator_lite.head import classes, head_inputs, reduction
from estimator_lite.head.base_head import Head, check_prediction_keys
from estimator_lite.head.binary_class_head import (
    classification_export_outputs,
    threshold_metric_builders,
)
from estimator_lite.head.keys import MetricKeys, PredictionKeys
from estimator_lite.head.metrics import auc, broadcast_weights, weighted_mean
from estimator_lite.head.multi_class_head import check_n_classes

__all__ = ["MultiLabelHead"]

_KEYS = (PredictionKeys.LOGITS, PredictionKeys.PROBABILITIES, PredictionKeys.CLASSES)


def _check_class_metrics(classes_for_class_based_metrics, n_classes, label_vocabulary):
    """Returns the class ids named by `classes_for_class_based_metrics` (ids or names)."""
    if classes_for_class_based_metrics is None:
        return ()
    if isinstance(classes_for_class_based_metrics, (str, bytes)) or not hasattr(
            classes_for_class_based_metrics, "__iter__"):
        raise TypeError("classes_for_class_based_metrics must be a list of class ids or "
                        f"names, got {classes_for_class_based_metrics!r}")
    ids = []
    for value in classes_for_class_based_metrics:
        if isinstance(value, str):
            if label_vocabulary is None or value not in label_vocabulary:
                raise ValueError(f"{value!r} is not in list: classes_for_class_based_"
                                 "metrics names must be in label_vocabulary "
                                 f"{label_vocabulary!r}")
            ids.append(label_vocabulary.index(value))
        elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
            if not 0 <= value < n_classes:
                raise ValueError("All classes_for_class_based_metrics must be in range "
                                 f"[0, {n_classes - 1}]. Given: {value!r}")
            ids.append(int(value))
        else:
            raise TypeError("classes_for_class_based_metrics must contain class ids "
                            f"(int) or names (str), got {value!r}")
    return tuple(ids)


class MultiLabelHead(Head):
    """Head for multi-label classification: each class is an independent binary label.

    Labels are a multi-hot int Tensor [batch_size, n_classes], or a SparseTensor of
    class ids (or of `label_vocabulary` strings). Predictions: logits, probabilities,
    classes (every class name, per example).
    """

    _LABELS_PER_LOGIT = True
    _SHAPE_BEFORE_VALUES = False

    def __init__(self, n_classes: int, weight_column: str | Any | None = None,
                 thresholds: Iterable[float] | None = None,
                 label_vocabulary: Sequence[str] | None = None,
                 loss_reduction: str = reduction.SUM_OVER_BATCH_SIZE,
                 loss_fn: Callable[..., tf.Tensor] | None = None,
                 classes_for_class_based_metrics: Iterable[int | str] | None = None,
                 name: str | None = None) -> None:
        """Checks and stores the arguments.

        Args:
          n_classes: number of classes, > 1.
          weight_column: None, a feature key or a numeric feature column of weights.
          thresholds: floats in (0, 1); adds accuracy/precision/recall at each.
          label_vocabulary: n_classes strings naming the classes.
          loss_reduction: how the training loss is reduced (see reduction.py).
          loss_fn: callable(labels, logits[, features]) -> unreduced loss.
          classes_for_class_based_metrics: class ids or names that get their own
            probability_mean, auc and auc_precision_recall metrics.
          name: suffix of metric keys, and the head's name in a MultiHead.

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        self._n_classes = check_n_classes(
            n_classes, 2, "n_classes must be > 1 for multi-label classification. "
            "Given: {n_classes}")
        super().__init__(self._n_classes, name=name, weight_column=weight_column,
                         loss_reduction=loss_reduction, loss_fn=loss_fn)
        self._thresholds = head_inputs.check_thresholds(thresholds)
        self._label_vocabulary = head_inputs.check_label_vocabulary(label_vocabulary,
                                                                    self._n_classes)
        self._class_metric_ids = _check_class_metrics(
            classes_for_class_based_metrics, self._n_classes, self._label_vocabulary)

    n_classes = property(lambda self: self._n_classes, doc="Number of classes.")

    def _processed_labels(self, labels):
        if isinstance(labels, tf.SparseTensorValue):
            labels = tf.SparseTensor.from_value(labels)
        if isinstance(labels, tf.SparseTensor):
            return tf.cast(self._indicator(labels), tf.float32)
        if labels is not None:
            labels = tf.convert_to_tensor(labels)
            if labels.dtype == tf.string:
                raise ValueError("string labels of MultiLabelHead must be a SparseTensor "
                                 "of label_vocabulary names, got a dense string Tensor")
            # As tf.estimator: the values first, then the shape. Float labels in
            # [0, 1] are used as they are (soft labels are per-class
            # probabilities), never truncated to ids.
            labels = head_inputs.labels_in_range(
                labels, 2, message="labels must be an integer indicator Tensor with "
                "values in [0, 1]")
        labels = head_inputs.dense_labels(labels, self._n_classes)
        return tf.cast(labels, tf.float32)

    def _indicator(self, labels):
        """[batch_size, n_classes] bool from a SparseTensor of class ids or names."""
        values = labels.values
        if self._label_vocabulary is not None:
            values = head_inputs.class_ids_from_labels(values, self._label_vocabulary)
        elif values.dtype == tf.string:
            raise ValueError("labels are strings; give label_vocabulary to map them to "
                             "class ids")
        values = head_inputs.labels_in_range(
            tf.cast(values, tf.int64), self._n_classes,
            message="labels must be an integer SparseTensor with values in "
            f"[0, {self._n_classes})")
        ids = tf.SparseTensor(labels.indices, values, labels.dense_shape)
        return tf.sparse.to_indicator(ids, self._n_classes)

    def _builtin_unreduced_loss(self, labels, logits):
        loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
        return tf.reduce_mean(loss, axis=-1, keepdims=True)  # one loss per example

    def _loss_dimension(self):
        """One loss per example (summed over the classes), as tf.estimator."""
        return 1

    def predictions(self, logits: tf.Tensor, keys: str | Iterable[str] | None = None,
                    ) -> dict[str, tf.Tensor]:
        """Returns the predictions dict (only `keys` if given).

        Raises:
          ValueError: an unknown key.
        """
        keys = check_prediction_keys(keys, _KEYS)
        logits = head_inputs.check_logits(logits, self._n_classes)
        with tf.name_scope("predictions"):
            every = {
                PredictionKeys.LOGITS: logits,
                PredictionKeys.PROBABILITIES: tf.sigmoid(logits, name="probabilities"),
                PredictionKeys.CLASSES: classes.all_class_names(
                    self._n_classes, self._label_vocabulary, logits),
            }
        return {key: every[key] for key in keys}

    def _export_outputs(self, predictions):
        return classification_export_outputs(
            predictions, PredictionKeys.PROBABILITIES, predictions[PredictionKeys.CLASSES])

    def _class_name(self, class_id):
        if self._label_vocabulary is not None:
            return self._label_vocabulary[class_id]
        return f"class{class_id}"

    def _metric_builders(self):
        def probabilities(c):
            return c.predictions[PredictionKeys.PROBABILITIES]

        def weights(c):
            return broadcast_weights(c.weights, c.labels)

        builders = [
            (MetricKeys.AUC, lambda c: auc(c.labels, probabilities(c), weights(c))),
            (MetricKeys.AUC_PR, lambda c: auc(c.labels, probabilities(c), weights(c),
                                              curve="PR")),
        ]
        builders += threshold_metric_builders(self._thresholds, probabilities)
        for class_id in self._class_metric_ids:
            name = self._class_name(class_id)

            def column(tensor, i=class_id):
                return None if tensor is None else tensor[:, i:i + 1]

            builders += [
                (f"{MetricKeys.PROBABILITY_MEAN}/{name}", lambda c, col=column:
                 weighted_mean(col(probabilities(c)), col(weights(c)))),
                (f"{MetricKeys.AUC}/{name}", lambda c, col=column: auc(
                    col(c.labels), col(probabilities(c)), col(weights(c)))),
                (f"{MetricKeys.AUC_PR}/{name}", lambda c, col=column: auc(
                    col(c.labels), col(probabilities(c)), col(weights(c)), curve="PR")),
            ]
        return builders
