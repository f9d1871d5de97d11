"""Export outputs: what each signature holds and refuses, as tf.estimator's."""

import pytest

import estimator_lite as el
from estimator_lite import export
from estimator_lite._tf import tf

SIG = tf.saved_model.signature_constants

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
