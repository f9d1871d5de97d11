"""compile(metrics=[...]) entries of a Keras model as tf.compat.v1 metric builders.

For `model_to_estimator`: each metric a Keras model was compiled with (a name such
as 'accuracy', a Keras Metric object, or its serialized config) becomes a builder
(labels, predictions) -> (value, update_op) with Keras' update rule: the accuracy
family (resolved by the loss, as Keras resolves 'accuracy'), MSE, MAE and AUC.
"""

import re

from estimator_lite._tf import tf

__all__ = ["SUPPORTED_METRICS", "metric_spec"]


def _loss_kind(loss):
    """'sparse', 'binary', 'categorical' or None: what Keras' 'accuracy' resolves by."""
    text = " ".join(str(part) for part in (
        type(loss).__name__, getattr(loss, "name", ""), getattr(loss, "fn", ""),
        getattr(loss, "__name__", ""))).lower()
    for kind in ("sparse", "binary", "categorical"):
        if kind in text:
            return kind
    return None


def _accuracy(kind, labels, predictions, threshold=0.5):
    labels = tf.convert_to_tensor(labels)
    if kind == "sparse":
        if labels.shape.ndims is not None and labels.shape.ndims == predictions.shape.ndims:
            labels = tf.squeeze(labels, axis=-1)
        return tf.metrics.accuracy(tf.cast(labels, tf.int64),
                                   tf.argmax(predictions, axis=-1))
    if kind == "categorical":
        return tf.metrics.accuracy(tf.argmax(labels, axis=-1),
                                   tf.argmax(predictions, axis=-1))
    if kind == "binary":
        return tf.metrics.accuracy(tf.cast(labels, tf.float32),
                                   tf.cast(predictions > threshold, tf.float32))
    return tf.metrics.accuracy(labels, predictions)  # keras Accuracy: exact equality


_ACCURACY_KINDS = {
    "sparse_categorical_accuracy": "sparse", "categorical_accuracy": "categorical",
    "binary_accuracy": "binary", "accuracy_exact": "exact",
}
_ERROR_METRICS = {
    "mse": tf.metrics.mean_squared_error,
    "mean_squared_error": tf.metrics.mean_squared_error,
    "mae": tf.metrics.mean_absolute_error,
    "mean_absolute_error": tf.metrics.mean_absolute_error,
}
SUPPORTED_METRICS = sorted(["accuracy", "acc", "auc", *_ACCURACY_KINDS,
                            *_ERROR_METRICS])
# Keras AUC's summation methods as tf.compat.v1.metrics.auc names them: Keras'
# 'interpolation' is the trapezoidal rule on ROC and Davis & Goadrich's
# interpolation on PR, which is tf.compat.v1's 'careful_interpolation'.
_AUC_SUMMATION = {"interpolation": "careful_interpolation", "minoring": "minoring",
                  "majoring": "majoring"}


def _auc_builder(config):
    """builder(labels, predictions) for a Keras AUC metric with `config`.

    Raises:
      ValueError: options with no tf.compat.v1.metrics.auc equivalent
        (multi_label, label_weights) or an unknown curve / summation method.
    """
    if config.get("multi_label") or config.get("label_weights") is not None:
        raise ValueError("keras_model metric AUC: multi_label and label_weights have "
                         "no graph-mode equivalent in model_to_estimator, got "
                         f"multi_label={config.get('multi_label')!r}, label_weights="
                         f"{config.get('label_weights')!r}")
    curve = str(config.get("curve", "ROC")).upper()
    method = str(config.get("summation_method", "interpolation")).lower()
    if curve not in ("ROC", "PR") or method not in _AUC_SUMMATION:
        raise ValueError(f"keras_model metric AUC: curve must be ROC or PR and "
                         f"summation_method one of {sorted(_AUC_SUMMATION)}, got "
                         f"curve={curve!r}, summation_method={method!r}")
    thresholds = config.get("thresholds")
    from_logits = bool(config.get("from_logits"))

    def build(labels, predictions):
        predictions = tf.sigmoid(predictions) if from_logits else predictions
        return tf.metrics.auc(
            tf.cast(labels, tf.bool), tf.cast(predictions, tf.float32),
            num_thresholds=int(config.get("num_thresholds") or 200), curve=curve,
            summation_method=_AUC_SUMMATION[method],
            thresholds=list(thresholds) if thresholds is not None else None)
    return build


def _snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def metric_spec(metric, loss):
    """(result name, builder(labels, predictions) -> (value, update_op)) of a metric.

    Raises:
      ValueError: a metric with no graph-mode equivalent here.
    """
    if isinstance(metric, str):
        key, name, threshold = metric.lower(), metric, 0.5
    else:
        if isinstance(metric, dict):  # serialized by get_compile_config()
            class_name, config = metric.get("class_name", ""), metric.get("config", {})
        else:
            class_name, config = type(metric).__name__, metric.get_config()
        key = {"Accuracy": "accuracy_exact", "AUC": "auc"}.get(class_name,
                                                            _snake(class_name))
        name, threshold = config.get("name", key), config.get("threshold", 0.5)
    if key in ("accuracy", "acc"):
        kind = _loss_kind(loss) or "categorical"
        return name, lambda y, p: _accuracy(kind, y, p, threshold)
    if key in _ACCURACY_KINDS:
        return name, lambda y, p: _accuracy(_ACCURACY_KINDS[key], y, p, threshold)
    if key == "auc":
        return name, _auc_builder(config if not isinstance(metric, str) else {})
    if key in _ERROR_METRICS:
        fn = _ERROR_METRICS[key]
        return name, lambda y, p: fn(tf.cast(y, p.dtype), p)
    raise ValueError(f"keras_model metric {metric!r} has no graph-mode equivalent in "
                     f"model_to_estimator; supported: {SUPPORTED_METRICS}")
