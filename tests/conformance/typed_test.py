"""The conformance suite's typed observations tell apart what a user's code can:
types, numpy dtypes and shapes, dict key order (tests/conformance/typed.py)."""

import collections
import json

import numpy as np
import tensorflow as tf

from tests.conformance.typed import differences, to_json, type_name


def recorded(value):
    """`value` encoded and through JSON, as the driver prints and records it."""
    return json.loads(json.dumps(to_json(value), sort_keys=True))


def test_values_equal_in_type_and_value_show_no_difference():
    value = {"loss": np.float32(0.5), "global_step": np.int64(3), "path": b"/a/1",
             "pair": (1, [2.0]), "array": np.zeros((2, 1), np.float32),
             "ordered": collections.OrderedDict(b=1, a=2), "nan": float("nan"),
             "keys": {1: "x"}, "names": {"b", "a"}, "text": np.array([b"a"], object)}
    assert not differences(recorded(value), recorded(value))


def test_a_python_number_is_not_a_numpy_scalar():
    found = differences(recorded({"loss": np.float32(0.5)}), recorded({"loss": 0.5}))
    assert found == ["/loss: 0.5 is a builtins.float, tf.estimator's "
                     "{'__type__': 'numpy.float32', 'dtype': 'float32', 'shape': [], "
                     "'value': 0.5} a numpy.float32"]
    assert differences(recorded(np.int64(2)), recorded(2))
    assert differences(recorded(2), recorded(2.0))


def test_containers_bytes_dtypes_and_shapes_are_told_apart():
    assert differences(recorded((1, 2)), recorded([1, 2]))
    assert differences(recorded(b"x"), recorded("x"))
    assert differences(recorded(np.zeros(2, np.float32)), recorded(np.zeros(2)))
    assert differences(recorded(np.zeros((2, 1))), recorded(np.zeros((1, 2))))
    assert differences(recorded(collections.OrderedDict(a=1)), recorded({"a": 1}))


def test_dict_key_order_is_compared():
    found = differences(recorded({"acc": 1, "loss": 2, "global_step": 3}),
                        recorded({"loss": 2, "acc": 1, "global_step": 3}))
    assert found == [": keys in order ['loss', 'acc', 'global_step'], tf.estimator "
                     "['acc', 'loss', 'global_step']"]
    assert not differences(recorded({"a": 1, "b": 2}), recorded({"a": 1, "b": 2}))


def test_numbers_compare_within_tolerance_and_encoding_twice_changes_nothing():
    assert not differences(recorded(np.float32(1.0)), recorded(np.float32(1.00001)))
    assert differences(recorded(np.float32(1.0)), recorded(np.float32(1.1)))
    value = to_json({"b": (np.int64(1),), "a": {"z": 1, "y": b"q"}})
    assert to_json(value) == value


def test_version_internal_type_names_are_normalised():
    with tf.Graph().as_default():
        tensor = tf.constant(1.0)
        assert type_name(type(tensor)) == "tf.Tensor"
    assert type_name(type(tf.constant(1.0))) == "tf.Tensor"  # EagerTensor
    assert type_name(type(tf.compat.v1.RunOptions())) == "tf.RunOptions"
    assert type_name(np.bool_) == "numpy.bool"
    assert type_name(tuple) == "builtins.tuple"
