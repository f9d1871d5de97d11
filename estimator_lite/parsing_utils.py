"""Parse-example specs for canned estimators' training data (tf.estimator's names).

`classifier_parse_example_spec` and `regressor_parse_example_spec` return the
`tf.io.parse_example` spec of the feature columns plus the label (and weight)
feature, so one spec parses tf.Example training data.
"""

from estimator_lite._engine import validation
from estimator_lite._tf import tf

__all__ = ["classifier_parse_example_spec", "regressor_parse_example_spec"]


def _weight_column_spec(weight_column):
    """The parse spec of the weight column (a key or a numeric column), or {}."""
    if weight_column is None:
        return {}
    if isinstance(weight_column, str):
        return {weight_column: tf.io.FixedLenFeature((1,), tf.float32)}
    spec = getattr(weight_column, "parse_example_spec", None)
    if spec is None or not hasattr(weight_column, "key"):
        raise ValueError("weight_column must be a string key or a numeric column "
                         "(tf.feature_column.numeric_column); got "
                         f"{weight_column!r} of type {type(weight_column).__name__}")
    return dict(spec)


def _parse_spec(feature_columns, label_key, label_feature, weight_column):
    if not isinstance(label_key, str) or not label_key:
        raise ValueError(f"label_key must be a non-empty string, got {label_key!r}")
    spec = tf.feature_column.make_parse_example_spec(list(feature_columns))
    if label_key in spec:
        raise ValueError(f"label_key {label_key!r} is also a feature; the label must "
                         f"not be used as a feature (features: {sorted(spec)})")
    spec[label_key] = label_feature
    spec.update(_weight_column_spec(weight_column))
    return spec


def classifier_parse_example_spec(feature_columns, label_key, label_dtype=tf.int64,
                                  label_default=None, weight_column=None):
    """The parse spec of features, an integer or string class label, and weights.

    Args:
      feature_columns: the model's feature columns.
      label_key: the label's feature name in the tf.Example.
      label_dtype: tf.int64 (class ids) or tf.string (with label_vocabulary).
      label_default: default label for examples without one, or None (required).
      weight_column: a key or numeric column of per-example weights, or None.

    Returns:
      A dict of feature name to FixedLenFeature/VarLenFeature.

    Raises:
      ValueError: label_key is empty or also a feature, or a bad weight_column.
    """
    label = tf.io.FixedLenFeature((1,), label_dtype, label_default)
    return _parse_spec(feature_columns, label_key, label, weight_column)


def regressor_parse_example_spec(feature_columns, label_key, label_dtype=tf.float32,
                                 label_default=None, label_dimension=1,
                                 weight_column=None):
    """The parse spec of features, a `label_dimension`-wide float label, and weights.

    Raises:
      ValueError: label_key is empty or also a feature, label_dimension < 1, or a
        bad weight_column.
      TypeError: label_dimension is not an int.
    """
    validation.check_int("label_dimension", label_dimension, 1)
    label = tf.io.FixedLenFeature((label_dimension,), label_dtype, label_default)
    return _parse_spec(feature_columns, label_key, label, weight_column)
