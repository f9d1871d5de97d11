"""Checks and conversions of what heads receive: arguments, logits, labels, weights."""

import inspect
import numbers

from estimator_lite._tf import tf

__all__ = [
    "call_loss_fn", "check_label_vocabulary", "check_labels_match_logits",
    "check_logits", "check_loss_fn", "check_name", "check_thresholds",
    "check_weight_column", "class_ids_from_labels", "dense_labels", "labels_in_range",
    "labels_like_logits", "weights_from_features",
]


def check_name(name):
    """Checks a head `name`: None or a non-empty string (it suffixes metric keys)."""
    if name is None:
        return None
    if not isinstance(name, str):
        raise TypeError(f"name must be a str or None, got {name!r} of type "
                        f"{type(name).__name__}")
    if not name:
        raise ValueError("name must be a non-empty string or None, got ''")
    return name


def _is_numeric_column(column):
    """A tf.compat.v1.feature_column.numeric_column (duck-typed: it has no public class)."""
    return (isinstance(getattr(column, "key", None), str)
            and hasattr(column, "normalizer_fn") and hasattr(column, "dtype"))


def check_weight_column(weight_column):
    """Checks `weight_column`: None, a feature key or a numeric feature column."""
    if weight_column is None or _is_numeric_column(weight_column):
        return weight_column
    if not isinstance(weight_column, str):
        raise TypeError("weight_column must be a str feature key or a "
                        "tf.compat.v1.feature_column.numeric_column, got "
                        f"{weight_column!r} of type {type(weight_column).__name__}")
    if not weight_column:
        raise ValueError("weight_column must be a non-empty feature key, got ''")
    return weight_column


def check_thresholds(thresholds):
    """Checks `thresholds`: None or numbers strictly between 0 and 1; returns a tuple."""
    if thresholds is None:
        return ()
    if isinstance(thresholds, (str, bytes)) or not hasattr(thresholds, "__iter__"):
        raise TypeError(f"thresholds must be a list or tuple of floats in (0, 1), got "
                        f"{thresholds!r} of type {type(thresholds).__name__}")
    thresholds = tuple(thresholds)
    for value in thresholds:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"thresholds must contain only numbers, got {value!r} in "
                            f"{thresholds!r}")
        if not 0.0 < value < 1.0:
            raise ValueError(f"thresholds must be strictly between 0 and 1, got {value!r} "
                             f"in {thresholds!r}")
    return thresholds


def check_label_vocabulary(label_vocabulary, n_classes):
    """Checks `label_vocabulary`: None or a list/tuple of `n_classes` distinct strings."""
    if label_vocabulary is None:
        return None
    if not isinstance(label_vocabulary, (list, tuple)):
        raise TypeError("label_vocabulary must be a list or tuple of strings, got "
                        f"{label_vocabulary!r} of type {type(label_vocabulary).__name__}")
    vocabulary = tuple(label_vocabulary)
    for value in vocabulary:
        if not isinstance(value, str):
            raise TypeError(f"label_vocabulary must contain only strings, got {value!r} "
                            f"in {vocabulary!r}")
    if len(vocabulary) != n_classes:
        raise ValueError(f"label_vocabulary must have n_classes={n_classes} items, got "
                         f"{len(vocabulary)}: {vocabulary!r}")
    if len(set(vocabulary)) != len(vocabulary):
        raise ValueError(f"label_vocabulary must not repeat a class, got {vocabulary!r}")
    return vocabulary


def check_loss_fn(loss_fn):
    """Checks `loss_fn`: None or a callable taking `labels` and `logits` (and maybe
    `features`), returning the unreduced loss."""
    if loss_fn is None:
        return None
    if not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable, got {loss_fn!r} of type "
                        f"{type(loss_fn).__name__}")
    args = _declared_args(loss_fn)
    if args is not None:
        missing = [a for a in ("labels", "logits") if a not in args]
        unknown = [a for a in args if a not in ("labels", "logits", "features")]
        if missing or unknown:
            raise ValueError("loss_fn must take arguments labels, logits and optionally "
                             f"features; it takes {args}")
    return loss_fn


def _declared_args(fn):
    """Names of fn's parameters, or None when it takes **kwargs or has no signature."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) for p in params):
        return None
    return [p.name for p in params]


def call_loss_fn(loss_fn, labels, logits, features, expected_shape_tensor):
    """Calls a user `loss_fn` and checks it returned one loss per label element.

    Returns:
      The unreduced loss as float32, same shape as `expected_shape_tensor`.

    Raises:
      ValueError: the loss has a different static shape than the labels.
    """
    args = _declared_args(loss_fn)
    kwargs = {"labels": labels, "logits": logits}
    if args is None or "features" in args:
        kwargs["features"] = features
    loss = tf.convert_to_tensor(loss_fn(**kwargs))
    loss = tf.cast(loss, tf.float32)
    if loss.shape.ndims == 1:
        loss = tf.expand_dims(loss, -1)
    expected = expected_shape_tensor.shape
    if loss.shape.ndims is not None and expected.ndims is not None and (
            not loss.shape.is_compatible_with(expected)):
        raise ValueError("loss_fn must return the unreduced loss of shape "
                         f"{expected} (one value per label), got shape {loss.shape}")
    return loss


def check_logits(logits, logits_dimension):
    """Returns `logits` as a float32 Tensor [D0, ..., DN, logits_dimension].

    Integer logits are cast, as tf.estimator's heads do.

    Raises:
      ValueError: not numbers, rank below 2, or the last dimension is not
        `logits_dimension`.
    """
    logits = tf.convert_to_tensor(logits)
    if not (logits.dtype.is_floating or logits.dtype.is_integer):
        raise ValueError(f"logits must be a float Tensor, got dtype {logits.dtype.name}")
    logits = tf.cast(logits, tf.float32)
    last = logits.shape[-1] if logits.shape.ndims else None
    last = getattr(last, "value", last)
    if logits.shape.ndims is not None and (logits.shape.ndims < 2 or (
            last is not None and last != logits_dimension)):
        raise ValueError("logits must have shape [batch_size, logits_dimension] (or "
                         f"[D0, ..., DN, logits_dimension]) with logits_dimension="
                         f"{logits_dimension}, got shape {logits.shape}")
    return logits


def labels_like_logits(labels, logits):
    """Dense labels one rank below the logits get a last dimension of 1 (as in
    tf.estimator: [D0, ..., DN] class ids for [D0, ..., DN, n] logits)."""
    if labels is None or isinstance(labels, (tf.SparseTensor, tf.SparseTensorValue)):
        return labels
    labels = tf.convert_to_tensor(labels)
    if (labels.shape.ndims is not None and logits.shape.ndims is not None
            and labels.shape.ndims == logits.shape.ndims - 1 and labels.shape.ndims > 1):
        labels = tf.expand_dims(labels, -1)
    return labels


def check_labels_match_logits(labels, logits):
    """Checks that processed labels and logits agree on all but the last dimension.

    Raises:
      ValueError: e.g. a batch of labels of another size than the logits' (it
        would broadcast into a wrong loss).
    """
    if labels.shape.ndims is None or logits.shape.ndims is None:
        return
    if labels.shape.ndims != logits.shape.ndims or not labels.shape[:-1].is_compatible_with(
            logits.shape[:-1]):
        raise ValueError("labels and logits must have the same shape but for the last "
                         f"dimension, got labels of shape {labels.shape} and logits of "
                         f"shape {logits.shape}")


def dense_labels(labels, label_dimension):
    """Returns dense `labels` with shape [batch_size, label_dimension].

    Raises:
      ValueError: labels are missing, sparse, or have another last dimension.
    """
    if labels is None:
        raise ValueError("labels must be a Tensor in TRAIN and EVAL modes, got None; "
                         "check that the input_fn returns (features, labels)")
    if isinstance(labels, (tf.SparseTensor, tf.SparseTensorValue)):
        raise ValueError(f"labels must be a dense Tensor for this head, got {labels!r}")
    labels = tf.convert_to_tensor(labels)
    if labels.shape.ndims == 1 and label_dimension == 1:
        labels = tf.expand_dims(labels, -1)
    last = labels.shape[-1] if labels.shape.ndims else None
    last = getattr(last, "value", last)
    if labels.shape.ndims is not None and (labels.shape.ndims < 2 or (
            last is not None and last != label_dimension)):
        raise ValueError(f"labels must have shape [batch_size, {label_dimension}] "
                         f"(label dimension {label_dimension}), got shape {labels.shape}")
    return labels


def class_ids_from_labels(labels, label_vocabulary):
    """Maps string labels to int64 class ids by their position in `label_vocabulary`.

    Without a vocabulary, labels must already be integer (or 0/1 float) class ids.
    A label outside the vocabulary fails at run time with InvalidArgumentError.
    """
    if label_vocabulary is None:
        if labels.dtype == tf.string:
            raise ValueError("labels are strings; give label_vocabulary to map them "
                             "to class ids")
        return tf.cast(labels, tf.int64)
    if labels.dtype != tf.string:
        raise ValueError("labels must be strings when label_vocabulary is given, got "
                         f"dtype {labels.dtype.name}")
    matches = tf.equal(tf.expand_dims(labels, -1), tf.constant(label_vocabulary))
    found = tf.Assert(tf.reduce_all(tf.reduce_any(matches, -1)), [
        f"labels must be in label_vocabulary {list(label_vocabulary)}; got", labels],
        summarize=10)
    with tf.control_dependencies([found]):
        return tf.argmax(tf.cast(matches, tf.int32), axis=-1)


def labels_in_range(labels, low, high, what):
    """Returns `labels` with a run-time check that low <= labels <= high."""
    checks = [
        tf.assert_greater_equal(labels, tf.cast(low, labels.dtype),
                                message=f"{what} must be >= {low}"),
        tf.assert_less_equal(labels, tf.cast(high, labels.dtype),
                             message=f"{what} must be <= {high}"),
    ]
    with tf.control_dependencies(checks):
        return tf.identity(labels)


def weights_from_features(features, weight_column, logits, per_logit=True):
    """Returns the example weights as float32 [batch_size, 1 or d], or None.

    Args:
      features: the features dict.
      weight_column: None, a feature key or a numeric feature column.
      logits: the head's logits [batch_size, d].
      per_logit: whether [batch_size, d] weights (one per logit) are allowed; where
        not (classification heads), such weights fail when the graph runs, with
        InvalidArgumentError, as in tf.estimator.

    Raises:
      ValueError: the weight feature is missing or has an incompatible shape.
    """
    if weight_column is None:
        return None
    key = weight_column if isinstance(weight_column, str) else weight_column.key
    if not isinstance(features, dict) or key not in features:
        raise ValueError(f"weight_column {key!r} is not in features; feature keys: "
                         f"{sorted(features) if isinstance(features, dict) else features}")
    if isinstance(weight_column, str):
        weights = tf.cast(tf.convert_to_tensor(features[key]), tf.float32)
    else:
        weights = tf.feature_column.input_layer({key: features[key]}, [weight_column])
    if weights.shape.ndims == 1:
        weights = tf.expand_dims(weights, -1)
    last = weights.shape[-1] if weights.shape.ndims else None
    last = getattr(last, "value", last)
    dim = logits.shape[-1]
    dim = getattr(dim, "value", dim)
    if weights.shape.ndims is not None and (weights.shape.ndims != 2 or (
            last is not None and last not in (1, dim))):
        shapes = (f"[batch_size], [batch_size, 1] or [batch_size, {dim}]" if per_logit
                  else "[batch_size] or [batch_size, 1]")
        raise ValueError(f"weights (feature {key!r}) must have shape {shapes}, got "
                         f"{weights.shape}")
    if not per_logit and last is not None and last != 1:
        failed = tf.Assert(False, [f"weights (feature {key!r}) must have shape "
                                   "[batch_size] or [batch_size, 1] for this head; got "
                                   "shape", tf.shape(weights)])
        with tf.control_dependencies([failed]):
            # Unknown static shape, so building the loss does not fail first.
            weights = tf.placeholder_with_default(weights, [None, None])
    return weights
