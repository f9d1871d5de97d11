"""BinaryClassHead: two classes, one logit, sigmoid cross-entropy."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from estimator_lite import export as export_lib
from estimator_lite._tf import tf
from estimator_lite.head import classes, head_inputs, reduction
from estimator_lite.head.base_head import Head, check_prediction_keys
from estimator_lite.head.keys import (
    MetricKeys,
    PredictionKeys,
    SignatureKeys,
    threshold_key,
)
from estimator_lite.head.metrics import auc, broadcast_weights, weighted_mean

__all__ = ["BinaryClassHead", "classification_export_outputs"]

# Named in the run-time error of a label outside [0, 1].
_KEYS = (PredictionKeys.LOGITS, PredictionKeys.LOGISTIC, PredictionKeys.PROBABILITIES,
         PredictionKeys.CLASS_IDS, PredictionKeys.CLASSES, PredictionKeys.ALL_CLASS_IDS,
         PredictionKeys.ALL_CLASSES)


def classification_export_outputs(predictions, scores_key, export_classes):
    """The serving_default/classification/predict outputs of a classification head.

    Binary and multi-class heads build `export_classes` apart from the `all_classes`
    prediction, in the head's own scope, so the served tensor has tf.estimator's
    name (`head/Tile:0`) too.
    """
    classification = export_lib.ClassificationOutput(
        scores=predictions[scores_key], classes=export_classes)
    return {SignatureKeys.SERVING_DEFAULT: classification,
            SignatureKeys.CLASSIFICATION: classification,
            SignatureKeys.PREDICT: export_lib.PredictOutput(predictions)}


def _weighted(metric_fn, labels, predictions, weights):
    return metric_fn(labels=labels, predictions=predictions,
                     weights=broadcast_weights(weights, labels))


class BinaryClassHead(Head):
    """Head for binary classification: sigmoid cross-entropy on one logit per example.

    Labels are 0/1 ids, floats in [0, 1] (probabilities of class 1: the loss is the
    soft cross-entropy, and precision/recall/AUC count any non-zero label as
    positive, as tf.estimator's do), or strings from `label_vocabulary` (its first
    two entries).
    Predictions:
    logits, logistic, probabilities, class_ids, classes, all_class_ids, all_classes.
    """

    # How auc and auc_precision_recall sum their areas (metrics.SUMMATION_METHODS);
    # the v1 canned estimators use a subclass with TF 1.x's 'trapezoidal'.
    _AUC_SUMMATION = "careful_interpolation"
    # tf.estimator's TF2 head reports accuracy_baseline 0 for an evaluation of no
    # data (its total and count stay 0); its v1 head max(0, 1 - 0) = 1.
    _BASELINE_OF_NO_DATA: float | None = 0.0

    def __init__(self, weight_column: str | Any | None = None,
                 thresholds: Iterable[float] | None = None,
                 label_vocabulary: Sequence[str] | None = None,
                 loss_reduction: str = reduction.SUM_OVER_BATCH_SIZE,
                 loss_fn: Callable[..., tf.Tensor] | None = None,
                 name: str | None = None) -> None:
        """Checks and stores the arguments.

        Args:
          weight_column: None, a feature key or a numeric feature column of weights.
          thresholds: floats in (0, 1); adds accuracy/precision/recall at each.
          label_vocabulary: strings naming classes 0 and 1. As tf.estimator, a
            list of another length is taken: the first two words name the
            classes, a label of a later word is out of range (an error when the
            graph runs), and the export outputs' `classes` list every word.
          loss_reduction: how the training loss is reduced (see reduction.py).
          loss_fn: callable(labels, logits[, features]) -> unreduced loss.
          name: suffix of metric keys, and the head's name in a MultiHead.

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        super().__init__(1, name=name, weight_column=weight_column,
                         loss_reduction=loss_reduction, loss_fn=loss_fn)
        self._thresholds = head_inputs.check_thresholds(thresholds)
        self._label_vocabulary = head_inputs.check_label_vocabulary(
            label_vocabulary, 2, exact_length=False)

    def _processed_labels(self, labels):
        labels = head_inputs.dense_labels(labels, 1)
        if self._label_vocabulary is not None or labels.dtype == tf.string:
            # TypeError for non-string labels with a vocabulary, as tf.estimator's
            # binary head (its lookup table refuses their dtype).
            labels = head_inputs.class_ids_from_labels(labels, self._label_vocabulary,
                                                       error_class=TypeError)
        # Float labels are kept, not truncated to ids: as in tf.estimator, a label in
        # [0, 1] is the probability of class 1 in the sigmoid cross-entropy.
        labels = tf.cast(labels, tf.float32)
        return head_inputs.labels_in_range(labels, 2)

    def _builtin_unreduced_loss(self, labels, logits):
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)

    def predictions(self, logits: tf.Tensor, keys: str | Iterable[str] | None = None,
                    ) -> dict[str, tf.Tensor]:
        """Returns the predictions dict (only `keys` if given).

        Raises:
          ValueError: an unknown key.
        """
        keys = check_prediction_keys(keys, _KEYS)
        logits = head_inputs.check_logits(logits, 1)
        with tf.name_scope("predictions"):
            two_class_logits = tf.concat([tf.zeros_like(logits), logits], axis=-1)
            class_ids = tf.expand_dims(tf.argmax(two_class_logits, axis=-1), -1)
            every = {
                PredictionKeys.LOGITS: logits,
                PredictionKeys.LOGISTIC: tf.sigmoid(logits, name="logistic"),
                PredictionKeys.PROBABILITIES: tf.nn.softmax(two_class_logits,
                                                            name="probabilities"),
                PredictionKeys.CLASS_IDS: class_ids,
                PredictionKeys.CLASSES: classes.class_names(class_ids, 2,
                                                            self._label_vocabulary),
                PredictionKeys.ALL_CLASS_IDS: classes.all_class_ids(2, logits),
                PredictionKeys.ALL_CLASSES: classes.all_class_names(
                    2, self._label_vocabulary, logits),
            }
        return {key: every[key] for key in keys}

    def _export_outputs(self, predictions):
        outputs = classification_export_outputs(
            predictions, PredictionKeys.PROBABILITIES, classes.all_class_names(
                2, self._label_vocabulary, predictions[PredictionKeys.LOGITS]))
        # tf.estimator's order: serving_default, classification, regression, predict.
        predict = outputs.pop(SignatureKeys.PREDICT)
        outputs[SignatureKeys.REGRESSION] = export_lib.RegressionOutput(
            predictions[PredictionKeys.LOGISTIC])
        outputs[SignatureKeys.PREDICT] = predict
        return outputs

    def _metric_builders(self):
        def class_ids(c):
            return tf.cast(c.predictions[PredictionKeys.CLASS_IDS], tf.float32)

        def logistic(c):
            return c.predictions[PredictionKeys.LOGISTIC]

        def accuracy_baseline(c):
            label_mean, update = weighted_mean(c.labels, c.weights)
            baseline = tf.maximum(label_mean, 1.0 - label_mean)
            if self._BASELINE_OF_NO_DATA is None:
                return baseline, update
            # The mean's count variable, just created: zero until a batch ran.
            count = _created_count_variable(label_mean)
            return tf.where(count > 0, baseline, self._BASELINE_OF_NO_DATA), update

        builders = [
            (MetricKeys.ACCURACY, lambda c: _weighted(
                tf.metrics.accuracy, c.labels, class_ids(c), c.weights)),
            (MetricKeys.PRECISION, lambda c: _weighted(
                tf.metrics.precision, c.labels, class_ids(c), c.weights)),
            (MetricKeys.RECALL, lambda c: _weighted(
                tf.metrics.recall, c.labels, class_ids(c), c.weights)),
            (MetricKeys.PREDICTION_MEAN, lambda c: weighted_mean(logistic(c), c.weights)),
            (MetricKeys.LABEL_MEAN, lambda c: weighted_mean(c.labels, c.weights)),
            (MetricKeys.ACCURACY_BASELINE, accuracy_baseline),
            (MetricKeys.AUC, lambda c: auc(c.labels, logistic(c), broadcast_weights(
                c.weights, c.labels), summation_method=self._AUC_SUMMATION)),
            (MetricKeys.AUC_PR, lambda c: auc(c.labels, logistic(c), broadcast_weights(
                c.weights, c.labels), curve="PR", summation_method=self._AUC_SUMMATION)),
        ]
        return builders + threshold_metric_builders(self._thresholds, logistic)


def threshold_metric_builders(thresholds, probabilities_fn):
    """accuracy/precision/recall at each threshold, as (key, builder) pairs.

    A key has no head name yet; `probabilities_fn(context)` gives the scores.
    """
    builders = []
    for threshold in thresholds:
        def positive(c, t=threshold):
            return tf.cast(tf.greater(probabilities_fn(c), t), tf.float32)

        for pattern, metric_fn in (
                (MetricKeys.ACCURACY_AT_THRESHOLD, tf.metrics.accuracy),
                (MetricKeys.PRECISION_AT_THRESHOLD, tf.metrics.precision),
                (MetricKeys.RECALL_AT_THRESHOLD, tf.metrics.recall)):
            builders.append((threshold_key(pattern, threshold), lambda c, f=metric_fn,
                             p=positive: _weighted(f, c.labels, p(c), c.weights)))
    return builders


def _created_count_variable(mean_value):
    """The `count` local variable of the tf.compat.v1 streaming mean whose value
    tensor is `mean_value` (it lives in the same name scope).

    Raises:
      ValueError: no such variable (a TensorFlow release that names it otherwise).
    """
    scope = mean_value.op.name.rpartition("/")[0]
    for variable in tf.get_collection(tf.GraphKeys.METRIC_VARIABLES):
        if variable.op.name == f"{scope}/count":
            return variable
    raise ValueError(f"the streaming mean {mean_value.name} has no count variable "
                     f"'{scope}/count' among the metric variables")
