"""Regression heads: RegressionHead (squared error), PoissonRegressionHead and
LogisticRegressionHead (regression of values in [0, 1])."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from estimator_lite import export as export_lib
from estimator_lite._tf import tf
from estimator_lite.head import head_inputs, reduction
from estimator_lite.head.base_head import Head
from estimator_lite.head.keys import MetricKeys, PredictionKeys, SignatureKeys
from estimator_lite.head.metrics import weighted_mean

__all__ = ["LogisticRegressionHead", "PoissonRegressionHead", "RegressionHead"]


def _check_label_dimension(label_dimension):
    if isinstance(label_dimension, bool) or not isinstance(label_dimension,
                                                           numbers.Integral):
        raise TypeError(f"label_dimension must be an int >= 1, got {label_dimension!r} "
                        f"of type {type(label_dimension).__name__}")
    if label_dimension < 1:
        raise ValueError(f"Invalid label_dimension {label_dimension!r}: label_dimension "
                         "must be >= 1.")
    return int(label_dimension)


class RegressionHead(Head):
    """Head for regression: squared error between labels and logits, per dimension.

    Predictions: 'predictions' (inverse_link_fn(logits), or the logits), plus 'logits'
    when an inverse link is given.
    """

    _PER_LOGIT_WEIGHTS = True
    _LABELS_PER_LOGIT = True

    def __init__(self, label_dimension: int = 1, weight_column: str | Any | None = None,
                 loss_reduction: str = reduction.SUM_OVER_BATCH_SIZE,
                 loss_fn: Callable[..., tf.Tensor] | None = None,
                 inverse_link_fn: Callable[[tf.Tensor], tf.Tensor] | None = None,
                 name: str | None = None) -> None:
        """Checks and stores the arguments.

        Args:
          label_dimension: number of regression targets per example.
          weight_column: None, a feature key or a numeric feature column of weights.
          loss_reduction: how the training loss is reduced (see reduction.py).
          loss_fn: callable(labels, logits[, features]) -> unreduced loss.
          inverse_link_fn: callable(logits) -> predictions (e.g. tf.exp).
          name: suffix of metric keys, and the head's name in a MultiHead.

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        label_dimension = _check_label_dimension(label_dimension)
        super().__init__(label_dimension, name=name, weight_column=weight_column,
                         loss_reduction=loss_reduction, loss_fn=loss_fn)
        if inverse_link_fn is not None and not callable(inverse_link_fn):
            raise TypeError(f"inverse_link_fn must be callable or None, got "
                            f"{inverse_link_fn!r} of type {type(inverse_link_fn).__name__}")
        self._inverse_link_fn = inverse_link_fn

    def _processed_labels(self, labels):
        labels = head_inputs.dense_labels(labels, self._logits_dimension)
        if labels.dtype == tf.string:
            # tf.estimator's error class (its cast of the labels fails when run),
            # raised here when the graph is built.
            raise tf.errors.UnimplementedError(
                None, None, "regression labels must be numbers, got a string Tensor "
                f"{labels!r} (casting strings to float is not supported; convert them, "
                "e.g. with tf.strings.to_number, in the input_fn)")
        return tf.cast(labels, tf.float32)

    def _builtin_unreduced_loss(self, labels, logits):
        return tf.squared_difference(labels, logits)

    def predictions(  # type: ignore[override]  # no `keys`, as tf.estimator's
            self, logits: tf.Tensor) -> dict[str, tf.Tensor]:
        """Returns the predictions dict: 'predictions', and 'logits' with an
        inverse link.

        Unlike the classification heads it takes no `keys` (as tf.estimator's
        regression heads: passing one is a TypeError).
        """
        logits = head_inputs.check_logits(logits, self._logits_dimension)
        with tf.name_scope("predictions"):
            if self._inverse_link_fn is None:
                return {PredictionKeys.PREDICTIONS: logits}
            return {PredictionKeys.PREDICTIONS: tf.identity(
                self._inverse_link_fn(logits), name="predictions"),
                    PredictionKeys.LOGITS: logits}

    def _export_outputs(self, predictions):
        regression = export_lib.RegressionOutput(predictions[PredictionKeys.PREDICTIONS])
        return {SignatureKeys.SERVING_DEFAULT: regression,
                SignatureKeys.REGRESSION: regression,
                SignatureKeys.PREDICT: export_lib.PredictOutput(predictions)}

    def _metric_builders(self):
        return [
            (MetricKeys.PREDICTION_MEAN, lambda c: weighted_mean(
                c.predictions[PredictionKeys.PREDICTIONS], c.weights)),
            (MetricKeys.LABEL_MEAN, lambda c: weighted_mean(c.labels, c.weights)),
        ]


class PoissonRegressionHead(RegressionHead):
    """Regression of counts: Poisson log-loss on log-rate logits; predicts exp(logits)."""

    def __init__(self, label_dimension: int = 1, weight_column: str | Any | None = None,
                 loss_reduction: str = reduction.SUM_OVER_BATCH_SIZE,
                 compute_full_loss: bool = True, name: str | None = None) -> None:
        """Checks and stores the arguments.

        Args:
          label_dimension: number of count targets per example.
          weight_column: None, a feature key or a numeric feature column of weights.
          loss_reduction: how the training loss is reduced (see reduction.py).
          compute_full_loss: add the Stirling term of log(labels!) to the loss.
          name: suffix of metric keys, and the head's name in a MultiHead.

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        if not isinstance(compute_full_loss, bool):
            raise TypeError(f"compute_full_loss must be a bool, got {compute_full_loss!r}")
        self._compute_full_loss = compute_full_loss
        super().__init__(label_dimension=label_dimension, weight_column=weight_column,
                         loss_reduction=loss_reduction, inverse_link_fn=tf.exp, name=name)

    def _builtin_unreduced_loss(self, labels, logits):
        return tf.nn.log_poisson_loss(targets=labels, log_input=logits,
                                      compute_full_loss=self._compute_full_loss)


class LogisticRegressionHead(RegressionHead):
    """Regression of values in [0, 1]: sigmoid cross-entropy; predicts sigmoid(logits)."""

    def __init__(self, weight_column: str | Any | None = None,
                 loss_reduction: str = reduction.SUM_OVER_BATCH_SIZE,
                 name: str | None = None) -> None:
        """Checks and stores the arguments.

        Args:
          weight_column: None, a feature key or a numeric feature column of weights.
          loss_reduction: how the training loss is reduced (see reduction.py).
          name: suffix of metric keys, and the head's name in a MultiHead.

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        super().__init__(label_dimension=1, weight_column=weight_column,
                         loss_reduction=loss_reduction, inverse_link_fn=tf.sigmoid,
                         name=name)

    def _processed_labels(self, labels):
        labels = super()._processed_labels(labels)
        return head_inputs.labels_in_range(labels, 2,
                                           message="Labels must be in range [0, 1]")

    def _builtin_unreduced_loss(self, labels, logits):
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
