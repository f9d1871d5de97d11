"""Feature-column inputs of canned models, with tf.estimator 2.15's variable names.

`dense_input` is the DNN's input layer (``dnn/input_from_feature_columns/
input_layer/<column>/...``); `linear_logits` is the linear model
(``linear/linear_model/<column>/weights`` and ``.../bias_weights``). Both are built
from ``tf.compat.v1.feature_column.input_layer``, which needs no Keras: the linear
model looks up each categorical column's weights as a zero-initialised embedding of
width `units`, combined with `sparse_combiner`, and renames the variable to the name
tf.estimator's linear model gives it.
"""

import re

from estimator_lite import _keras
from estimator_lite._engine.validation import WrongTypeError
from estimator_lite._tf import tf

__all__ = ["SPARSE_COMBINERS", "check_feature_columns", "dense_input", "is_categorical",
           "check_v2_columns", "is_feature_column_v2", "linear_logits"]

SPARSE_COMBINERS = ("mean", "sqrtn", "sum")
_CATEGORICAL_BASES = ("CategoricalColumn", "_CategoricalColumn")
_INPUT_LAYER_RE = re.compile(r"/input_layer(_\d+)?/")
_EMBEDDING_SUFFIX = "_embedding/embedding_weights"


def _is_feature_column(obj):
    return any(cls.__name__ in ("FeatureColumn", "_FeatureColumn")
               for cls in type(obj).__mro__)


def is_feature_column_v2(feature_columns):
    """Whether every column is a TensorFlow v2 column (tf.feature_column's).

    TF 2's columns derive from both the v2 base ``FeatureColumn`` and the v1 one;
    TF 1's private v1-only columns derive from ``_FeatureColumn`` alone.
    """
    return all(any(cls.__name__ == "FeatureColumn" for cls in type(column).__mro__)
               for column in feature_columns)


def check_v2_columns(feature_columns):
    """Checks that a v2 canned model got no TensorFlow v1-only column.

    tf.estimator's v2 models check when they build their graph (train, evaluate,
    predict, export), so the estimators do too.

    Raises:
      ValueError: a column is v1-only (TF 1's private ``_NumericColumn`` & co.).
    """
    v1_only = [column for column in feature_columns
               if not is_feature_column_v2([column])]
    if v1_only:
        raise ValueError(
            f"Received a feature column from TensorFlow v1 ({v1_only[0]!r}), but a "
            "TensorFlow v2 estimator needs v2 columns (tf.feature_column); with v1 "
            "columns use tf.compat.v1.estimator's estimators")


def is_categorical(column):
    """Whether the linear model treats `column` as sparse ids (bucketized included).

    Checked by class name: reading the columns' properties logs deprecations.
    """
    return any(cls.__name__ in _CATEGORICAL_BASES for cls in type(column).__mro__)


def check_feature_columns(feature_columns, argument="feature_columns", allow_empty=False):
    """Validates feature columns; returns them as a tuple.

    Args:
      feature_columns: an iterable of tf.feature_column / tf.compat.v1.feature_column
        columns.
      argument: argument name for messages.
      allow_empty: whether None or an empty iterable is accepted.

    Returns:
      A tuple of the columns (empty when allowed and none were given).

    Raises:
      TypeError: not an iterable, a single column, or an element is not a feature
        column (the last two also ValueErrors, as tf.estimator raises).
      ValueError: empty (when not allowed) or two columns share a name.
    """
    if _is_feature_column(feature_columns):
        # tf.estimator iterates the column itself (a namedtuple) and fails.
        raise WrongTypeError(f"{argument} must be a list of feature columns, got the "
                             f"single column {feature_columns!r}: put it in a list")
    if feature_columns is None or isinstance(feature_columns, (str, bytes)):
        items = () if feature_columns is None else None
    else:
        try:
            items = tuple(feature_columns)
        except TypeError:
            items = None
    if items is None:
        raise TypeError(f"{argument} must be an iterable of feature columns, got "
                        f"{feature_columns!r} of type {type(feature_columns).__name__}")
    for column in items:
        if not _is_feature_column(column):
            # A TypeError that tf.estimator's ValueError handlers catch too.
            raise WrongTypeError(f"{argument} must contain only feature columns (from "
                            f"tf.feature_column), got {column!r} of type "
                            f"{type(column).__name__}")
    if not items and not allow_empty:
        raise ValueError(f"{argument} must contain at least one feature column, got "
                         f"{feature_columns!r}")
    names = [c.name for c in items]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"{argument} has several columns named {duplicates}; column "
                         "names must be unique")
    return items


def dense_input(features, feature_columns, partitioner=None):
    """The DNN input: the columns' dense values concatenated in name order.

    Call inside the ``dnn`` variable scope; variables (embeddings) are created as
    ``input_from_feature_columns/input_layer/<column>/...``, split by `partitioner`
    when one is given (v1 canned estimators).
    """
    with tf.variable_scope("input_from_feature_columns", partitioner=partitioner):
        return tf.feature_column.input_layer(features, list(feature_columns))


def _strip_input_layer(getter, name, *args, **kwargs):
    """Custom getter: a dense column's variables live directly under linear_model."""
    return getter(_INPUT_LAYER_RE.sub("/", name, count=1), *args, **kwargs)


def _categorical_weights_name(getter, name, *args, **kwargs):
    """Custom getter: ``input_layer/<c>_embedding/embedding_weights`` -> ``<c>/weights``.

    The embedding of a categorical column with width `units` *is* the linear
    model's weight matrix [num_buckets, units]; tf.estimator names it so.
    """
    if name.endswith(_EMBEDDING_SUFFIX):
        name = _INPUT_LAYER_RE.sub("/", name, count=1)
        name = name[:-len(_EMBEDDING_SUFFIX)] + "/weights"
    return getter(name, *args, **kwargs)


def _dense_part(features, dense_columns, units, trainable):
    with tf.variable_scope(tf.get_variable_scope(), custom_getter=_strip_input_layer):
        values = tf.feature_column.input_layer(features, list(dense_columns),
                                               trainable=trainable)
    weights = []
    for column in dense_columns:  # input_layer's order: sorted by name.
        shape = _keras.feature_column_variable_shape(column)
        size = int(tf.TensorShape(shape).num_elements())
        weights.append(tf.get_variable(f"{column.name}/weights", [size, units],
                                       initializer=tf.zeros_initializer(),
                                       trainable=trainable, use_resource=True))
    kernel = weights[0] if len(weights) == 1 else tf.concat(weights, axis=0)
    return tf.matmul(values, kernel)


def _categorical_part(features, categorical_columns, units, sparse_combiner, trainable):
    embeddings = [tf.feature_column.embedding_column(
        column, dimension=units, combiner=sparse_combiner,
        initializer=tf.zeros_initializer(), trainable=trainable)
        for column in categorical_columns]
    with tf.variable_scope(tf.get_variable_scope(),
                           custom_getter=_categorical_weights_name):
        looked_up = tf.feature_column.input_layer(features, embeddings,
                                                  trainable=trainable)
    if len(embeddings) == 1:
        return looked_up
    return tf.reduce_sum(tf.reshape(looked_up, [-1, len(embeddings), units]), axis=1)


def linear_logits(features, feature_columns, units, sparse_combiner="sum",
                  name="linear_model", trainable=True):
    """Logits of a linear model: sum of every column's weighted value, plus a bias.

    Call inside the ``linear`` variable scope (canned models); variables are
    created as ``<name>/<column>/weights`` [size, units] and
    ``<name>/bias_weights`` [units], all zero-initialised.

    Args:
      features: dict of feature name to Tensor/SparseTensor.
      feature_columns: validated feature columns.
      units: number of logits.
      sparse_combiner: how a categorical column's weights for several ids in one
        example combine: 'sum', 'mean' or 'sqrtn'.
      name: the variable scope of the model's variables.
      trainable: whether the variables are trainable.

    Returns:
      A [batch, units] float32 Tensor.
    """
    ordered = sorted(feature_columns, key=lambda c: c.name)
    categorical = [c for c in ordered if is_categorical(c)]
    dense = [c for c in ordered if not is_categorical(c)]
    with tf.variable_scope(name):
        parts = []
        if dense:
            parts.append(_dense_part(features, dense, units, trainable))
        if categorical:
            parts.append(_categorical_part(features, categorical, units, sparse_combiner,
                                           trainable))
        bias = tf.get_variable("bias_weights", [units], initializer=tf.zeros_initializer(),
                               trainable=trainable, use_resource=True)
        total = parts[0] if len(parts) == 1 else tf.add_n(parts)
        return tf.nn.bias_add(total, bias, name="weighted_sum")
