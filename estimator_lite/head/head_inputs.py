"""Checks and conversions of what heads receive: arguments, logits, labels, weights."""

import inspect
import numbers

from estimator_lite._pycompat import zip_strict
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
            # The opening words are tf.estimator's (programs may match them).
            raise ValueError(f"thresholds must be in (0, 1) range. Given: {value!r} "
                             f"(thresholds not in (0, 1): {thresholds!r}; each must be "
                             "strictly between 0 and 1)")
    return thresholds


def check_label_vocabulary(label_vocabulary, n_classes, exact_length=True):
    """Checks `label_vocabulary`: None or a list/tuple of `n_classes` distinct strings.

    With `exact_length=False` any non-empty list is taken (the binary heads: as
    tf.estimator's, labels map to their word's position, so the first two words
    name classes 0 and 1 and a label of a later word is out of range).
    """
    if label_vocabulary is None:
        return None
    if not isinstance(label_vocabulary, (list, tuple)):
        # ValueError, as tf.estimator's heads.
        raise ValueError("label_vocabulary must be a list or tuple. Given type: "
                         f"{type(label_vocabulary)}. (It names the classes with "
                         f"strings; got {label_vocabulary!r}.)")
    vocabulary = tuple(label_vocabulary)
    for value in vocabulary:
        if not isinstance(value, str):
            raise TypeError(f"label_vocabulary must contain only strings, got {value!r} "
                            f"in {vocabulary!r}")
    if not exact_length and not vocabulary:
        raise ValueError(f"label_vocabulary must not be empty, got {vocabulary!r}")
    if exact_length and len(vocabulary) != n_classes:
        raise ValueError(f"Length of label_vocabulary must be n_classes ({n_classes}). "
                         f"Given: {len(vocabulary)}; label_vocabulary must have "
                         f"n_classes={n_classes} items, got "
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
    if args is None:
        return loss_fn
    for required in ("labels", "logits"):
        if required not in args:
            raise ValueError(f"loss_fn must contain argument: {required}. Given "
                             f"arguments: {tuple(args)} (loss_fn takes labels, logits "
                             "and optionally features)")
    unknown = [a for a in args if a not in _LOSS_FN_ARGS]
    if unknown:
        raise ValueError(f"loss_fn has unexpected args: {unknown} (it may take only "
                         f"{list(_LOSS_FN_ARGS)})")
    return loss_fn


# What a loss_fn may declare; loss_reduction is accepted (as by tf.estimator) but
# never passed, so it needs a default.
_LOSS_FN_ARGS = ("labels", "logits", "features", "loss_reduction")


def _declared_args(fn):
    """Names of fn's parameters, or None when it takes **kwargs or has no signature."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) for p in params):
        return None
    return [p.name for p in params]


def call_loss_fn(loss_fn, labels, logits, features, expected_loss_dim=1):
    """Calls a user `loss_fn` and checks that it returned the unreduced loss.

    The loss must have shape [D0, ..., DN, expected_loss_dim] for logits
    [D0, ..., DN, d]. As in tf.estimator, a graph checks that when it runs
    (InvalidArgumentError naming both shapes); eagerly a wrong shape is a
    ValueError at once.

    Args:
      loss_fn: callable(labels, logits[, features]).
      labels: the processed labels.
      logits: the logits.
      features: the features dict (passed if loss_fn takes `features`).
      expected_loss_dim: the loss's last dimension.

    Returns:
      The unreduced loss as float32.

    Raises:
      ValueError: eagerly, the loss has another shape.
    """
    args = _declared_args(loss_fn)
    kwargs = {"labels": labels, "logits": logits}
    if args is None or "features" in args:
        kwargs["features"] = features
    loss = tf.cast(tf.convert_to_tensor(loss_fn(**kwargs)), tf.float32)
    message = f"loss_fn must return Tensor of shape [D0, D1, ... DN, {expected_loss_dim}]. "
    if tf.executing_eagerly():
        logits_shape = tuple(logits.shape.as_list())
        if tuple(loss.shape.as_list()) != logits_shape[:-1] + (expected_loss_dim,):
            raise ValueError(f"{message}logits_shape: {logits_shape}. loss_shape: "
                             f"{tuple(loss.shape.as_list())}.")
        return loss
    logits_shape, loss_shape = tf.shape(logits), tf.shape(loss)
    expected = tf.concat([logits_shape[:-1], [expected_loss_dim]], 0)
    check = tf.Assert(_same_shape(expected, loss_shape), [
        message, "logits_shape: ", logits_shape, "loss_shape: ", loss_shape])
    with tf.control_dependencies([check]):
        return tf.identity(loss)


def check_logits(logits, logits_dimension):
    """Returns `logits` as a float32 Tensor [D0, ..., DN, logits_dimension].

    Integer logits are cast, as tf.estimator's heads do. A shape not known when
    the graph is built is checked when it runs (InvalidArgumentError).

    Raises:
      ValueError: not numbers, or a known rank below 2 or last dimension other
        than `logits_dimension`.
    """
    logits = tf.convert_to_tensor(logits)
    if not (logits.dtype.is_floating or logits.dtype.is_integer):
        raise ValueError(f"logits must be a float Tensor, got dtype {logits.dtype.name}")
    logits = tf.cast(logits, tf.float32)
    shape = logits.shape
    last = shape[-1] if shape.ndims else None
    last = getattr(last, "value", last)
    if shape.ndims is not None and (shape.ndims < 2 or (
            last is not None and last != logits_dimension)):
        raise ValueError(f"{_LOGITS_SHAPE} (e.g. [batch_size, logits_dimension]) with "
                         f"logits_dimension={logits_dimension}, got {shape}.")
    if last is not None or not isinstance(logits_dimension, int):
        return logits
    logits_shape = tf.shape(logits)
    checks = [tf.assert_rank_at_least(logits, 2, data=[logits_shape],
                                      message=_LOGITS_SHAPE),
              tf.assert_equal(logits_dimension, logits_shape[-1], data=[logits_shape],
                              message=_LOGITS_SHAPE)]
    with tf.control_dependencies(checks):
        return tf.identity(logits)


_LOGITS_SHAPE = "logits shape must be [D0, D1, ... DN, logits_dimension]"


def labels_like_logits(labels, logits):
    """Dense labels one rank below the logits get a last dimension of 1 (as in
    tf.estimator: [D0, ..., DN] class ids for [D0, ..., DN, n] logits)."""
    if labels is None or isinstance(labels, (tf.SparseTensor, tf.SparseTensorValue)):
        return labels
    labels = tf.convert_to_tensor(labels)
    if (labels.shape.ndims is not None and logits.shape.ndims is not None
            and labels.shape.ndims == logits.shape.ndims - 1):
        labels = tf.expand_dims(labels, -1)
    return labels


def _leading(shape):
    """All but the last dimension of a TensorShape of known rank, e.g. (3,)."""
    return shape[:-1] if shape.ndims else shape


def check_labels_match_logits(labels, logits, label_dimension=None):
    """Checks that processed labels and logits agree on all but the last dimension.

    Known shapes are checked at once; others when the graph runs
    (InvalidArgumentError naming the expected and actual labels shapes), as in
    tf.estimator.

    Args:
      labels: the processed labels.
      logits: the logits.
      label_dimension: the labels' expected last dimension (None: any).

    Returns:
      The labels (with the run-time check attached when one is needed).

    Raises:
      ValueError: e.g. a batch of labels of another size than the logits' (it
        would broadcast into a wrong loss).
    """
    if labels.shape.ndims is not None and logits.shape.ndims is not None and (
            labels.shape.ndims != logits.shape.ndims
            or not labels.shape[:-1].is_compatible_with(logits.shape[:-1])):
        # The leading dimensions are what must agree, so name them too.
        raise ValueError("logits and labels must have the same shape but for the last "
                         f"dimension, got labels shape {labels.shape} (leading "
                         f"dimensions {_leading(labels.shape)}) and logits shape "
                         f"{logits.shape} (leading dimensions {_leading(logits.shape)})")
    if labels.shape.is_fully_defined() and logits.shape.is_fully_defined():
        return labels
    logits_shape, labels_shape = tf.shape(logits), tf.shape(labels)
    last = labels_shape[-1:] if label_dimension is None else [label_dimension]
    message = f"labels shape must be [D0, D1, ... DN, {label_dimension or 'd'}]."
    checks = []
    if labels.shape.ndims is None:
        checks.append(tf.assert_rank_at_least(labels, 2, message=message))
    with tf.control_dependencies(checks):
        expected = tf.concat([logits_shape[:-1], last], 0)
        checks.append(tf.Assert(_same_shape(expected, labels_shape), [
            message, "expected_labels_shape: ", expected, "labels_shape: ",
            labels_shape]))
    with tf.control_dependencies(checks):
        return tf.identity(labels)


def dense_labels(labels, label_dimension):
    """Returns dense `labels` with shape [batch_size, label_dimension].

    Raises:
      ValueError: labels are missing, sparse, or have another last dimension.
    """
    if labels is None:
        raise ValueError("You must provide a labels Tensor. Given: None. Labels are "
                         "needed in TRAIN and EVAL modes; "
                         "check that the input_fn returns (features, labels)")
    if isinstance(labels, (tf.SparseTensor, tf.SparseTensorValue)):
        raise ValueError("SparseTensor labels are not supported. Labels must be a "
                         f"dense Tensor [batch_size, {label_dimension}] for this head, "
                         f"got {labels!r}")
    labels = tf.convert_to_tensor(labels)
    if labels.shape.ndims == 1 and label_dimension == 1:
        labels = tf.expand_dims(labels, -1)
    last = labels.shape[-1] if labels.shape.ndims else None
    last = getattr(last, "value", last)
    if labels.shape.ndims is not None and (labels.shape.ndims < 2 or (
            last is not None and last != label_dimension)):
        raise ValueError(f"Mismatched label shape. Expected labels dimension="
                         f"{label_dimension}. Received {last}. labels must have shape "
                         f"[batch_size, {label_dimension}], got shape {labels.shape}")
    return labels


def class_ids_from_labels(labels, label_vocabulary, error_class=ValueError):
    """Maps string labels to int64 class ids by their position in `label_vocabulary`.

    Without a vocabulary, labels must already be integer (or 0/1 float) class ids.
    A label outside the vocabulary fails at run time with InvalidArgumentError.

    Args:
      labels: the dense labels Tensor.
      label_vocabulary: a tuple of strings, or None.
      error_class: raised for labels that are not strings with a vocabulary
        (tf.estimator's binary head raises TypeError there, its others
        ValueError).

    Raises:
      ValueError: string labels without a vocabulary.
      error_class: labels of another dtype than string with a vocabulary.
    """
    if label_vocabulary is None:
        if labels.dtype == tf.string:
            raise ValueError("labels are strings; give label_vocabulary to map them "
                             "to class ids")
        return tf.cast(labels, tf.int64)
    if labels.dtype != tf.string:
        raise error_class("labels must be strings when label_vocabulary is given, got "
                          f"dtype {labels.dtype.name}")
    matches = tf.equal(tf.expand_dims(labels, -1), tf.constant(label_vocabulary))
    found = tf.Assert(tf.reduce_all(tf.reduce_any(matches, -1)), [
        f"labels must be in label_vocabulary {list(label_vocabulary)}; got", labels],
        summarize=10)
    with tf.control_dependencies([found]):
        return tf.argmax(tf.cast(matches, tf.int32), axis=-1)


def labels_in_range(labels, n_classes, message=None):
    """Returns `labels` with a check that 0 <= labels <= n_classes - 1.

    In a graph the check runs with the graph (InvalidArgumentError; at once when
    the labels are constants); eagerly it is a ValueError, as tf.estimator's.

    Args:
      labels: class ids (or 0/1 probabilities for n_classes=2).
      n_classes: the number of classes.
      message: the error message; by default tf.estimator's wording.
    """
    high = n_classes - 1
    if tf.executing_eagerly():
        if not bool(tf.reduce_all(labels <= tf.cast(high, labels.dtype))):
            raise ValueError(message or f"Labels must be <= {n_classes} - 1")
        if not bool(tf.reduce_all(labels >= tf.cast(0, labels.dtype))):
            raise ValueError(message or "Labels must be >= 0")
        return labels
    checks = [
        tf.assert_less_equal(labels, tf.cast(high, labels.dtype),
                             message=message or "Labels must be <= n_classes - 1"),
        tf.assert_non_negative(labels, message=message or "Labels must be >= 0"),
    ]
    with tf.control_dependencies(checks):
        return tf.identity(labels)


def weights_from_features(features, weight_column, logits, per_logit=True,
                          broadcast_to_logits=False):
    """Returns the example weights as float32 [D0, ..., DN, 1 or d], or None.

    Logits are [D0, ..., DN, d]; weights may be [D0, ..., DN] (given a last
    dimension of 1), [D0, ..., DN, 1], or, with `per_logit`, [D0, ..., DN, d]. As
    in tf.estimator, a graph checks the shape when it runs (InvalidArgumentError
    naming both shapes); eagerly a wrong shape is a ValueError at once.

    Args:
      features: the features dict.
      weight_column: None, a feature key or a numeric feature column.
      logits: the head's logits [D0, ..., DN, d].
      per_logit: whether weights may be given per logit (regression heads).
      broadcast_to_logits: also refuse, when the graph is built, weights whose
        known static shape cannot broadcast to the logits' (what tf.estimator's
        eval metrics of most heads check, with a ValueError).

    Raises:
      ValueError: the weight feature is missing or not numeric; eagerly, its
        shape does not fit the logits; with `broadcast_to_logits`, its static
        shape cannot broadcast to theirs.
    """
    if weight_column is None:
        return None
    key = weight_column if isinstance(weight_column, str) else weight_column.key
    if not isinstance(features, dict) or key not in features:
        raise ValueError(f"weight_column {key!r} is not in features; feature keys: "
                         f"{sorted(features) if isinstance(features, dict) else features}")
    if isinstance(weight_column, str):
        weights = tf.convert_to_tensor(features[key])
        if not (weights.dtype.is_floating or weights.dtype.is_integer):
            raise ValueError("Weight column should be castable to float. Given dtype: "
                             f"{weights.dtype.name} (feature {key!r})")
        weights = tf.cast(weights, tf.float32)
    else:
        weights = tf.feature_column.input_layer({key: features[key]}, [weight_column])
    if broadcast_to_logits and not tf.executing_eagerly():
        _check_broadcastable(key, weights.shape, logits.shape)
    return _weights_matching_logits(weights, logits, per_logit)


def _check_broadcastable(key, weights_shape, logits_shape):
    """Refuses weights whose static shape cannot broadcast to the logits' shape.

    Weights one rank below the logits are taken with a last dimension of 1, as
    the heads use them. Unknown ranks and dimensions pass (the graph checks
    them when it runs).

    Raises:
      ValueError: a rank or a known dimension that cannot broadcast (the
        opening words are tf.estimator's).
    """
    if weights_shape.ndims is None or logits_shape.ndims is None:
        return
    if weights_shape.ndims == logits_shape.ndims - 1:
        weights_shape = weights_shape.concatenate([1])
    if weights_shape.ndims == 0 or weights_shape.is_compatible_with(logits_shape):
        return
    shapes = (f"values.shape={logits_shape.as_list()}, weights.shape="
              f"{weights_shape.as_list()}. (The eval metrics need the weights of "
              f"weight_column {key!r} to broadcast to the logits' shape [D0, D1, ... "
              "DN, logits_dimension].)")
    if weights_shape.ndims != logits_shape.ndims:
        raise ValueError(f"weights can not be broadcast to values. values.rank="
                         f"{logits_shape.ndims}. weights.rank={weights_shape.ndims}. "
                         f"{shapes}")
    for dim, (weight, value) in enumerate(zip_strict(weights_shape.as_list(),
                                                     logits_shape.as_list())):
        if weight is not None and value is not None and weight not in (1, value):
            raise ValueError(f"weights can not be broadcast to values. Mismatch at "
                             f"dim {dim}. {shapes}")


def _weights_shape_message(per_logit):
    shapes = ("[D0, D1, ... DN], [D0, D1, ... DN, 1] or [D0, D1, ... DN, "
              "logits_dimension]" if per_logit
              else "[D0, D1, ... DN] or [D0, D1, ... DN, 1]")
    return f"weights shape must be {shapes}"


def _weights_matching_logits(weights, logits, per_logit):
    """`weights` checked against the logits' shape, one rank below made [..., 1]."""
    message = _weights_shape_message(per_logit)
    weights_rank, logits_rank = weights.shape.ndims, logits.shape.ndims
    one_rank_below = (weights_rank is not None and logits_rank is not None
                      and weights_rank == logits_rank - 1)
    if tf.executing_eagerly():
        logits_shape = tuple(logits.shape.as_list())
        weights_shape = tuple(weights.shape.as_list())
        allowed = [logits_shape[:-1]] if one_rank_below else (
            [logits_shape[:-1] + (1,)] + ([logits_shape] if per_logit else []))
        if weights_shape not in allowed:
            raise ValueError(f"{message}, logits_shape: {logits_shape}. weights_shape: "
                             f"{weights_shape}.")
        return tf.expand_dims(weights, -1) if one_rank_below else weights
    logits_shape, weights_shape = tf.shape(logits), tf.shape(weights)
    if one_rank_below:
        expected = logits_shape[:-1]
        fits = _same_shape(expected, weights_shape)
    else:
        expected = tf.concat([logits_shape[:-1], [1]], 0)
        fits = _same_shape(expected, weights_shape)
        if per_logit:
            fits = tf.logical_or(fits, _same_shape(logits_shape, weights_shape))
    check = tf.Assert(fits, [message, "logits_shape: ", logits_shape,
                             "weights_shape: ", weights_shape])
    with tf.control_dependencies([check]):
        weights = tf.identity(weights)
        if _known_misfit(weights.shape, logits.shape, one_rank_below, per_logit):
            # Unknown static shape, so building the loss and metrics does not fail
            # first with another error: the check above reports it when run.
            weights = tf.placeholder_with_default(weights, [None] * weights.shape.ndims)
    return tf.expand_dims(weights, -1) if one_rank_below else weights


def _known_misfit(weights_shape, logits_shape, one_rank_below, per_logit):
    """Whether fully known static shapes already show that the weights do not fit."""
    if not (weights_shape.is_fully_defined() and logits_shape.is_fully_defined()):
        return False
    weights_shape, logits_shape = weights_shape.as_list(), logits_shape.as_list()
    if one_rank_below:
        return weights_shape != logits_shape[:-1]
    allowed = [logits_shape[:-1] + [1]] + ([logits_shape] if per_logit else [])
    return weights_shape not in allowed


def _same_shape(shape_a, shape_b):
    """Whether two 1-D shape tensors are equal (False, not an error, for other
    ranks)."""
    same_rank = tf.equal(tf.size(shape_a), tf.size(shape_b))
    return tf.cond(same_rank,
                   lambda: tf.reduce_all(tf.equal(shape_a, shape_b)),
                   lambda: tf.constant(False))
