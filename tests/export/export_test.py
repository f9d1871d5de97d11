"""Tests for serving input receivers, export outputs, signatures and atomic writes."""

import os
import time

import numpy as np
import pytest

import estimator_lite as el
from estimator_lite import export
from estimator_lite import exporter as exporter_lib
from estimator_lite._tf import tf
from estimator_lite.export import saved_model

SIG = tf.saved_model.signature_constants


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


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


def test_classification_output_signatures(graph):
    scores = tf.constant([[0.1, 0.9]])
    classes = tf.constant([["a", "b"]])
    out = export.ClassificationOutput(scores=scores, classes=classes)
    serialized = tf.placeholder(tf.string, [None])
    sig = out.as_signature_def({"inputs": serialized})
    assert sig.method_name == SIG.CLASSIFY_METHOD_NAME
    assert set(sig.outputs) == {"scores", "classes"}
    # Classify takes serialized tf.Examples: over raw tensors it is a ValueError,
    # and the export leaves the signature out (as tf.estimator 2.15).
    with pytest.raises(ValueError, match="single tf.string input"):
        out.as_signature_def({"x": tf.placeholder(tf.float32, [None, 2])})


def test_export_output_validation(graph):
    with pytest.raises(ValueError, match="needs scores or classes"):
        export.ClassificationOutput()
    # A wrong type is a TypeError here and a ValueError on tf.estimator: both.
    for error in (TypeError, ValueError):
        with pytest.raises(error, match="scores must be a float Tensor"):
            export.ClassificationOutput(scores=tf.constant([1]))
        with pytest.raises(error, match="classes must be a string Tensor"):
            export.ClassificationOutput(classes=tf.constant([1]))
        with pytest.raises(error, match="value must be a float Tensor"):
            export.RegressionOutput(tf.constant([1]))
        with pytest.raises(error, match="output value must be a Tensor"):
            export.PredictOutput([tf.constant(1.0)])
        with pytest.raises(error, match="output key must be a string"):
            export.PredictOutput({1: tf.constant(1.0)})
        with pytest.raises(error, match="output value must be a Tensor"):
            export.PredictOutput({"v": tf.Variable(1.0)})
    multi_head = export.PredictOutput({("head", "probabilities"): tf.constant([1.0])})
    assert set(multi_head.outputs) == {"head/probabilities"}


def test_regression_and_predict_signatures(graph):
    value = tf.constant([[1.5]])
    serialized = tf.placeholder(tf.string, [None])
    sig = export.RegressionOutput(value).as_signature_def({"inputs": serialized})
    assert sig.method_name == SIG.REGRESS_METHOD_NAME
    pred = export.PredictOutput(value).as_signature_def({"x": serialized})
    assert list(pred.outputs) == ["output"]


def test_predict_output_outputs_is_the_held_dict(graph):
    # tf.estimator's PredictOutput.outputs is the dict it holds: adanet deletes
    # entries in place and the signature then leaves them out.
    given = {"a": tf.constant([1.0]), "b": tf.constant([2.0])}
    out = export.PredictOutput(given)
    assert out.outputs is out.outputs
    assert out.outputs is not given  # a dict of its own, as tf.estimator's
    del out.outputs["b"]
    sig = out.as_signature_def({"x": tf.placeholder(tf.float32, [None])})
    assert list(sig.outputs) == ["a"]


def test_build_signature_defs_with_alternatives(graph):
    x = tf.placeholder(tf.float32, [None, 1])
    z = tf.identity(x * 3.0, name="z")  # downstream of x: a client may feed it
    unrelated = tf.placeholder(tf.float32, [None, 1])
    out = export.PredictOutput({"y": z * 2.0})
    sigs = saved_model.build_signature_defs({"serving_default": out}, {"x": x},
                                            {"alt": {"z": z}, "bad": {"u": unrelated}})
    # "bad:serving_default" needs x, which its inputs do not feed: left out, as
    # tf.estimator leaves out a signature TF Serving could not serve.
    assert set(sigs) == {"serving_default", "alt:serving_default"}
    assert set(sigs["alt:serving_default"].inputs) == {"z"}


def test_make_export_dir_is_unique_and_numeric(tmp_path):
    first = saved_model.make_export_dir(str(tmp_path))
    os.makedirs(first)
    second = saved_model.make_export_dir(str(tmp_path))
    assert os.path.basename(second).isdigit()
    assert int(os.path.basename(second)) > int(os.path.basename(first))


def test_a_new_export_is_newer_than_exports_written_ahead_of_the_clock(tmp_path):
    # Fast exports bump their stamps ahead of the clock; GC then removed some. The
    # next export must still sort last, or GC (which keeps the largest) deletes it.
    ahead = int(time.time()) + 100
    os.makedirs(tmp_path / str(ahead))
    os.makedirs(tmp_path / f"temp-{ahead + 1}")  # an export being written
    new = saved_model.make_export_dir(str(tmp_path))
    assert int(os.path.basename(new)) == ahead + 2
    os.makedirs(new)
    exporter_lib.gc_exports(str(tmp_path), 1)
    assert os.path.exists(new)


def test_write_atomically_renames_on_success(tmp_path):
    final = str(tmp_path / "123")

    def write(temp_dir):
        assert not os.path.exists(final)  # readers never see a partial export
        os.makedirs(temp_dir)
        with open(os.path.join(temp_dir, "f"), "w") as f:
            f.write("ok")

    assert saved_model.write_atomically(final, write) == final
    with open(os.path.join(final, "f")) as f:
        assert f.read() == "ok"
    assert os.listdir(tmp_path) == ["123"]


def test_write_atomically_cleans_up_on_failure(tmp_path):
    def write(temp_dir):
        os.makedirs(temp_dir)
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        saved_model.write_atomically(str(tmp_path / "9"), write)
    assert os.listdir(tmp_path) == []


def test_public_names():
    for name in ("ServingInputReceiver", "build_raw_serving_input_receiver_fn",
                 "build_parsing_serving_input_receiver_fn", "ClassificationOutput",
                 "RegressionOutput", "PredictOutput"):
        assert hasattr(el.export, name)


def test_eval_output_names_like_tf_estimator():
    with tf.Graph().as_default():
        loss = tf.constant(1.0)
        value, update = tf.metrics.mean(loss)
        out = el.export.EvalOutput(loss=loss, predictions={"a": tf.constant([1.0])},
                                   metrics={"mean": (value, update)})
        sig = out.as_signature_def({"x": tf.placeholder(tf.float32)})
        assert sig.method_name == "tensorflow/supervised/eval"
        assert sorted(sig.outputs) == ["loss", "metrics/mean/update_op",
                                       "metrics/mean/value", "predictions/a"]
        dict_loss = el.export.EvalOutput(loss={"l": loss}, predictions=tf.constant([2.0]))
        assert sorted(dict_loss.outputs) == ["loss/l", "predictions"]
        with pytest.raises(ValueError, match="loss output value must be a Tensor"):
            el.export.EvalOutput(loss="x")
        with pytest.raises(ValueError, match=r"metrics\['m'\] must be a \(value, upd"):
            el.export.EvalOutput(metrics={"m": value})


def test_supervised_receiver_from_an_input_fn_and_the_unsupervised_receiver(graph):
    from estimator_lite.export import receivers  # noqa: PLC0415

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
