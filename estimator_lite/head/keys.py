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
    # Metrics at a constraint on a competing metric (a float in (0, 1)).
    PRECISION_AT_RECALL = "precision_at_recall_%g"
    RECALL_AT_PRECISION = "recall_at_precision_%g"
    SENSITIVITY_AT_SPECIFICITY = "sensitivity_at_specificity_%g"
    SPECIFICITY_AT_SENSITIVITY = "specificity_at_sensitivity_%g"
    # MultiLabelHead's per-class metrics (classes_for_class_based_metrics), by class
    # id or, with a label_vocabulary, by class name.
    PROBABILITY_MEAN_AT_CLASS = "probability_mean/class%d"
    AUC_AT_CLASS = "auc/class%d"
    AUC_PR_AT_CLASS = "auc_precision_recall/class%d"
    PROBABILITY_MEAN_AT_NAME = "probability_mean/%s"
    AUC_AT_NAME = "auc/%s"
    AUC_PR_AT_NAME = "auc_precision_recall/%s"


def metric_key(key, head_name=None):
    """Returns `key`, suffixed with ``/<head_name>`` when the head is named."""
    return f"{key}/{head_name}" if head_name else key


def threshold_key(pattern, threshold, head_name=None):
    """Returns a threshold metric key such as ``accuracy/positive_threshold_0.5``."""
    return metric_key(pattern % threshold, head_name)
