"""Serving input receivers: raw, parsing, supervised and unsupervised, as tf.estimator's."""

import numpy as np
import pytest

from estimator_lite import export
from estimator_lite._tf import tf
from estimator_lite.export import receivers


def test_raw_receiver_fn_dict(graph):
    fn = export.build_raw_serving_input_receiver_fn(
        {"x": tf.TensorSpec([7, 3], tf.float32), "id": tf.TensorSpec([7], tf.int64)},
        default_batch_size=5)
    receiver = fn()
    assert isinstance(receiver, export.ServingInputReceiver)
    assert set(receiver.features) == {"x", "id"}
    assert receiver.features["x"].shape.as_list() == [5, 3]
    assert receiver.features["id"].dtype == tf.int64
    assert receiver.receiver_tensors["x"] is receiver.features["x"]


def test_raw_receiver_fn_single_tensor_is_passed_unwrapped(graph):
    receiver = export.build_raw_serving_input_receiver_fn(
        tf.TensorSpec([None, 2], tf.float32))()
    assert isinstance(receiver, export.TensorServingInputReceiver)
    assert isinstance(receiver.features, tf.Tensor)
    assert list(receiver.receiver_tensors) == ["input"]


def test_raw_receiver_fn_rejects_non_tensors():
    with pytest.raises(TypeError, match=r"features\['x'\]"):
        export.build_raw_serving_input_receiver_fn({"x": [1.0, 2.0]})


def test_parsing_receiver_fn(graph):
    receiver = export.build_parsing_serving_input_receiver_fn(
        {"x": tf.io.FixedLenFeature([2], tf.float32)})()
    assert list(receiver.receiver_tensors) == ["examples"]
    assert receiver.receiver_tensors["examples"].dtype == tf.string
    assert receiver.features["x"].shape.as_list() == [None, 2]
    with pytest.raises(TypeError, match="feature_spec"):
        export.build_parsing_serving_input_receiver_fn({})


def test_serving_input_receiver_wraps_single_feature(graph):
    x = tf.placeholder(tf.float32, [None])
    receiver = export.ServingInputReceiver(x, x)
    assert receiver.features == {"feature": x}
    assert receiver.receiver_tensors == {"input": x}
    with pytest.raises(TypeError, match="receiver_tensors"):
        export.ServingInputReceiver(x, [x])


def test_supervised_receiver_from_an_input_fn_and_the_unsupervised_receiver(graph):
    def input_fn(batch):
        return tf.data.Dataset.from_tensors(
            ({"x": np.zeros([batch, 2], np.float32)}, np.zeros([batch, 1], np.int64)))

    receiver = receivers.build_supervised_input_receiver_fn_from_input_fn(
        input_fn, batch=4)()
    assert receiver.features["x"].shape.as_list() == [None, 2]
    assert receiver.labels.dtype == tf.int64 and receiver.labels.shape.as_list() == [
        None, 1]
    assert sorted(receiver.receiver_tensors) == ["label", "x"]
    unsupervised = receivers.UnsupervisedInputReceiver({"x": tf.zeros([1])},
                                                       tf.zeros([1]))
    assert unsupervised.receiver_tensors_alternatives is None
    assert isinstance(unsupervised, export.ServingInputReceiver)
