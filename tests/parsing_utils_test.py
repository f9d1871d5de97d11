"""Parse-example specs for canned-estimator training data, as tf.estimator's."""

import pytest
import tensorflow as tf

import estimator_lite as el

FC = tf.compat.v1.feature_column
COLUMNS = [FC.numeric_column("age"),
           FC.categorical_column_with_vocabulary_list("color", ["red", "blue"])]


def test_classifier_spec_adds_label_and_weight():
    spec = el.classifier_parse_example_spec(COLUMNS, "label", weight_column="w")
    assert spec["label"] == tf.io.FixedLenFeature((1,), tf.int64)
    assert spec["w"] == tf.io.FixedLenFeature((1,), tf.float32)
    assert spec["age"] == tf.io.FixedLenFeature((1,), tf.float32)
    assert spec["color"] == tf.io.VarLenFeature(tf.string)


def test_regressor_spec_has_label_dimension_and_numeric_weight_column():
    spec = el.regressor_parse_example_spec(
        COLUMNS, "y", label_dimension=2, weight_column=FC.numeric_column("w"),
        label_default=(0.0, 0.0))
    assert spec["y"] == tf.io.FixedLenFeature((2,), tf.float32, (0.0, 0.0))
    assert spec["w"] == tf.io.FixedLenFeature((1,), tf.float32)


def test_spec_parses_a_real_example():
    example = tf.train.Example(features=tf.train.Features(feature={
        "age": tf.train.Feature(float_list=tf.train.FloatList(value=[30.0])),
        "color": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"red"])),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[1]))}))
    spec = el.classifier_parse_example_spec(COLUMNS, "label")
    parsed = tf.io.parse_example([example.SerializeToString()], spec)
    assert int(parsed["label"][0, 0]) == 1


@pytest.mark.parametrize("kwargs, error, message", [
    ({"label_key": "age"}, ValueError, "label must not be used as a feature"),
    ({"label_key": ""}, ValueError, "label_key must be a non-empty string"),
    ({"label_key": "y", "weight_column": 3}, ValueError,
     "weight_column must be a string key or a numeric column"),
])
def test_classifier_spec_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        el.classifier_parse_example_spec(COLUMNS, **kwargs)


def test_regressor_spec_rejects_a_bad_label_dimension():
    with pytest.raises(ValueError, match="label_dimension must be >= 1"):
        el.regressor_parse_example_spec(COLUMNS, "y", label_dimension=0)
