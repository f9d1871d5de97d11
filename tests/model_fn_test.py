"""Tests for ModeKeys and EstimatorSpec validation."""

import pytest

import estimator_lite as el
from estimator_lite._tf import tf

DEFAULT_KEY = "serving_default"


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _train_parts():
    w = tf.Variable(1.0)
    loss = tf.square(w)
    return loss, tf.train.GradientDescentOptimizer(0.1).minimize(loss)


def test_mode_keys_match_tf_estimator_strings():
    assert (el.ModeKeys.TRAIN, el.ModeKeys.EVAL, el.ModeKeys.PREDICT) == (
        "train", "eval", "infer")


def test_train_spec_needs_loss_and_train_op(graph):
    loss, train_op = _train_parts()
    spec = el.EstimatorSpec(el.ModeKeys.TRAIN, loss=loss, train_op=train_op)
    assert spec.loss is loss and spec.train_op is train_op
    assert isinstance(spec.scaffold, tf.train.Scaffold)
    with pytest.raises(ValueError, match="loss is required"):
        el.EstimatorSpec(el.ModeKeys.TRAIN, train_op=train_op)
    with pytest.raises(ValueError, match="train_op is required"):
        el.EstimatorSpec(el.ModeKeys.TRAIN, loss=loss)


def test_eval_spec_needs_loss(graph):
    with pytest.raises(ValueError, match="loss is required in 'eval'"):
        el.EstimatorSpec(el.ModeKeys.EVAL)
    spec = el.EstimatorSpec(el.ModeKeys.EVAL, loss=tf.constant(1.0))
    assert spec.eval_metric_ops == {}


def test_predict_spec_needs_predictions_and_gets_default_export(graph):
    with pytest.raises(ValueError, match="predictions are required"):
        el.EstimatorSpec(el.ModeKeys.PREDICT)
    spec = el.EstimatorSpec(el.ModeKeys.PREDICT, predictions={"p": tf.constant([1.0])})
    assert list(spec.export_outputs) == [DEFAULT_KEY]
    assert isinstance(spec.export_outputs[DEFAULT_KEY], el.export.PredictOutput)


def test_single_export_output_becomes_default(graph):
    out = el.export.RegressionOutput(tf.constant([[1.0]]))
    spec = el.EstimatorSpec(el.ModeKeys.PREDICT, predictions=tf.constant([1.0]),
                            export_outputs={"regress": out})
    assert spec.export_outputs[DEFAULT_KEY] is out and spec.export_outputs["regress"] is out


def test_several_export_outputs_need_a_default(graph):
    a = el.export.PredictOutput(tf.constant([1.0]))
    with pytest.raises(ValueError, match="none is 'serving_default'"):
        el.EstimatorSpec(el.ModeKeys.PREDICT, predictions=tf.constant([1.0]),
                         export_outputs={"a": a, "b": a})
    with pytest.raises(TypeError, match="ExportOutput"):
        el.EstimatorSpec(el.ModeKeys.PREDICT, predictions=tf.constant([1.0]),
                         export_outputs={"a": tf.constant(1.0)})


def test_invalid_mode(graph):
    with pytest.raises(ValueError, match="mode must be one of"):
        el.EstimatorSpec("training", loss=tf.constant(1.0))


def test_loss_must_be_scalar(graph):
    with pytest.raises(ValueError, match="scalar"):
        el.EstimatorSpec(el.ModeKeys.EVAL, loss=tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="loss must be a Tensor"):
        el.EstimatorSpec(el.ModeKeys.EVAL, loss=1.0)
    spec = el.EstimatorSpec(el.ModeKeys.EVAL, loss=tf.constant([3.0]))
    assert spec.loss.shape.ndims == 0


def test_eval_metric_ops_are_value_update_pairs(graph):
    loss = tf.constant(1.0)
    mean = tf.metrics.mean(loss)
    spec = el.EstimatorSpec(el.ModeKeys.EVAL, loss=loss, eval_metric_ops={"m": mean})
    assert spec.eval_metric_ops["m"] == tuple(mean)
    with pytest.raises(TypeError, match=r"\(value, update_op\) pair"):
        el.EstimatorSpec(el.ModeKeys.EVAL, loss=loss, eval_metric_ops={"m": loss})
    with pytest.raises(TypeError, match="value must be a Tensor"):
        el.EstimatorSpec(el.ModeKeys.EVAL, loss=loss, eval_metric_ops={"m": (1.0, loss)})


def test_hooks_must_be_session_run_hooks(graph):
    loss, train_op = _train_parts()
    hook = tf.train.StopAtStepHook(last_step=3)
    spec = el.EstimatorSpec(el.ModeKeys.TRAIN, loss=loss, train_op=train_op,
                            training_hooks=[hook])
    assert spec.training_hooks == (hook,)
    with pytest.raises(TypeError, match="training_hooks must contain only SessionRunHook"):
        el.EstimatorSpec(el.ModeKeys.TRAIN, loss=loss, train_op=train_op,
                         training_hooks=["not a hook"])


def test_predictions_type_and_graph(graph):
    with pytest.raises(TypeError, match="predictions must be"):
        el.EstimatorSpec(el.ModeKeys.PREDICT, predictions=[1, 2])
    with tf.Graph().as_default():
        other = tf.constant(1.0)
    with pytest.raises(ValueError, match="default graph"):
        el.EstimatorSpec(el.ModeKeys.EVAL, loss=other)


def test_replace_revalidates(graph):
    loss, train_op = _train_parts()
    spec = el.EstimatorSpec(el.ModeKeys.TRAIN, loss=loss, train_op=train_op)
    with pytest.raises(ValueError, match="train_op is required"):
        spec._replace(train_op=None)
