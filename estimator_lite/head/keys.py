"""Prediction and metric key strings of the heads (the same strings as tf.estimator's)."""

__all__ = ["MetricKeys", "PredictionKeys", "SignatureKeys", "metric_key", "threshold_key"]


class PredictionKeys:
    """Keys of the predictions dict a head returns."""

    LOGITS = "logits"
    LOGISTIC = "logistic"
    PROBABILITIES = "probabilities"
    CLASS_IDS = "class_ids"
    CLASSES = "classes"
    ALL_CLASS_IDS = "all_class_ids"
    ALL_CLASSES = "all_classes"
    PREDICTIONS = "predictions"


class SignatureKeys:
    """Export output (SignatureDef) keys of the heads, besides 'serving_default'."""

    SERVING_DEFAULT = "serving_default"
    CLASSIFICATION = "classification"
    REGRESSION = "regression"
    PREDICT = "predict"


class MetricKeys:
    """Keys of the eval metrics a head returns (before the head-name suffix)."""

    LOSS = "loss"
    LOSS_MEAN = "average_loss"
    LOSS_REGULARIZATION = "regularization_loss"
    ACCURACY = "accuracy"
    PRECISION = "precision"
    RECALL = "recall"
    ACCURACY_BASELINE = "accuracy_baseline"
    AUC = "auc"
    AUC_PR = "auc_precision_recall"
    LABEL_MEAN = "label/mean"
    PREDICTION_MEAN = "prediction/mean"
    PROBABILITY_MEAN = "probability_mean"
    ACCURACY_AT_THRESHOLD = "accuracy/positive_threshold_%g"
    PRECISION_AT_THRESHOLD = "precision/positive_threshold_%g"
    RECALL_AT_THRESHOLD = "recall/positive_threshold_%g"


def metric_key(key, head_name=None):
    """Returns `key`, suffixed with ``/<head_name>`` when the head is named."""
    return f"{key}/{head_name}" if head_name else key


def threshold_key(pattern, threshold, head_name=None):
    """Returns a threshold metric key such as ``accuracy/positive_threshold_0.5``."""
    return metric_key(pattern % threshold, head_name)
