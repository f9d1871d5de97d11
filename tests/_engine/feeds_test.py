"""Request values checked and converted for a signature's inputs (no session needed).

tests/predictor_test.py checks the same errors end to end through a Predictor.
"""

import numpy as np
import pytest
import tensorflow as tf

from estimator_lite._engine.feeds import InputSpec


def _spec(dtype, shape, key="v"):
    with tf.Graph().as_default():
        return InputSpec(key, tf.compat.v1.placeholder(dtype, shape))


@pytest.mark.parametrize("dtype,value,expected_dtype", [
    (tf.float32, [1, 2], np.float32),                  # ints to float
    (tf.float32, np.array([1.5], np.float64), np.float32),
    (tf.float64, [True], np.float64),                  # bool to float
    (tf.int64, np.array([3], np.uint8), np.int64),
    (tf.int32, np.array([7], np.int64), np.int32),     # in range
    (tf.bool, [True, False], np.bool_),
    (tf.complex64, [1.0], np.complex64),
], ids=["int-float", "f64-f32", "bool-float", "u8-i64", "i64-i32", "bool", "complex"])
def test_safe_casts_are_converted(dtype, value, expected_dtype):
    array = _spec(dtype, [None]).feed_value(value)
    assert array.dtype == expected_dtype
    assert array.tolist() == np.asarray(value).astype(expected_dtype).tolist()


@pytest.mark.parametrize("dtype,value,given", [
    (tf.int32, [1.5], "float64"),
    (tf.bool, [1], "int64"),
    (tf.float32, [1j], "complex128"),
    (tf.float32, ["1.0"], "str"),
    (tf.string, np.array([1.0]), "float64"),
    (tf.string, [b"a", 2], "object (holding bytes, int)"),
], ids=["float-int", "int-bool", "complex-float", "str-float", "float-str", "mixed-str"])
def test_unsafe_dtypes_are_type_errors(dtype, value, given):
    with pytest.raises(TypeError) as caught:
        _spec(dtype, [None]).feed_value(value)
    assert str(caught.value) == (f"input 'v' has dtype {dtype.name}; got values of "
                                 f"dtype {given}, which do not cast to it safely")


def test_integers_out_of_range_are_value_errors():
    with pytest.raises(ValueError, match=r"got values from -1 to 300, outside its "
                       r"range \[0, 255\]"):
        _spec(tf.uint8, [None]).feed_value([-1, 300])


def test_strings_keep_trailing_nul_bytes():
    value = [b"ab\x00\x00", "text"]
    array = _spec(tf.string, [None]).feed_value(value)
    assert array.dtype == object and array.tolist() == value
    assert np.array(value[:1]).tolist() == [b"ab"]  # what numpy's bytes dtype would do


def test_shapes_match_known_dims_only():
    spec = _spec(tf.float32, [None, 3])
    assert spec.feed_value(np.zeros((5, 3))).shape == (5, 3)
    with pytest.raises(ValueError, match=r"input 'v' has shape \(None, 3\) \(None: any "
                       r"size\); got shape \(5,\)"):
        spec.feed_value(np.zeros(5))
    assert _spec(tf.float32, None).feed_value(np.zeros((2, 2, 2))).shape == (2, 2, 2)
