"""Tests for ModeKeys and EstimatorSpec validation."""

import numpy as np
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
    with pytest.raises(ValueError, match="Missing loss"):
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


def test_mode_is_not_checked_as_on_tf_estimator(graph):
    # tf.estimator 2.15 validates the fields for the three known modes only; any
    # other mode (None included) keeps what it was given, predictions as {}.
    for mode in (None, "training"):
        spec = el.EstimatorSpec(mode, loss=tf.constant(1.0))
        assert spec.mode == mode and spec.predictions == {}
        assert spec.export_outputs is None
    spec = el.EstimatorSpec(el.ModeKeys.EVAL, loss=tf.constant(1.0))
    with pytest.raises(ValueError, match="cannot be changed"):
        spec._replace(mode=el.ModeKeys.TRAIN)


def test_loss_must_be_scalar(graph):
    with pytest.raises(ValueError, match="scalar"):
        el.EstimatorSpec(el.ModeKeys.EVAL, loss=tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="loss must be Tensor"):
        el.EstimatorSpec(el.ModeKeys.EVAL, loss=1.0)
    spec = el.EstimatorSpec(el.ModeKeys.EVAL, loss=tf.constant([3.0]))
    assert spec.loss.shape.ndims == 0


def test_a_loss_of_unknown_element_count_becomes_a_scalar(graph):
    # tf.estimator refuses only a loss whose element count is known and not 1: a
    # per-example loss of a batch of one ((None,) or (None, 1)) is reshaped.
    for shape in ([None], [None, 1]):
        per_example = tf.placeholder(tf.float32, shape)
        spec = el.EstimatorSpec(el.ModeKeys.EVAL, loss=per_example)
        assert spec.loss.shape.ndims == 0
        with tf.Session() as session:
            value = session.run(spec.loss, {per_example: np.full([1] * len(shape), 2.5)})
        assert value == 2.5
    unknown_rank = tf.placeholder(tf.float32)
    assert el.EstimatorSpec(el.ModeKeys.EVAL, loss=unknown_rank).loss is unknown_rank
    with pytest.raises(ValueError, match="scalar"):
        el.EstimatorSpec(el.ModeKeys.EVAL, loss=tf.placeholder(tf.float32, [None, 2]) *
                         tf.ones([3, 2]))


def test_variables_count_as_tensors(graph):
    # tf.estimator's Tensor type includes variables: as loss and as predictions.
    weight = tf.get_variable("w", [], initializer=tf.ones_initializer())
    column = tf.get_variable("c", [2], initializer=tf.zeros_initializer())
    spec = el.EstimatorSpec(el.ModeKeys.EVAL, loss=weight)
    assert spec.loss is weight
    spec = el.EstimatorSpec(el.ModeKeys.EVAL, loss=weight, predictions={"c": column})
    assert spec.predictions["c"] is column
    # In PREDICT mode the default PredictOutput takes Tensors only: a ValueError on
    # tf.estimator 2.15 too ("Prediction output value must be a Tensor").
    with pytest.raises(ValueError, match="output value must be a Tensor"):
        el.EstimatorSpec(el.ModeKeys.PREDICT, predictions={"c": column})
    with pytest.raises(TypeError, match="predictions"):
        el.EstimatorSpec(el.ModeKeys.PREDICT,
                         predictions=tf.SparseTensor([[0]], [1.0], [2]))


def test_eval_metric_ops_are_value_update_pairs(graph):
    loss = tf.constant(1.0)
    mean = tf.metrics.mean(loss)
    spec = el.EstimatorSpec(el.ModeKeys.EVAL, loss=loss, eval_metric_ops={"m": mean})
    assert spec.eval_metric_ops["m"] == tuple(mean)
    with pytest.raises(TypeError, match=r"\(metric_value, update_op\) tuples"):
        el.EstimatorSpec(el.ModeKeys.EVAL, loss=loss, eval_metric_ops={"m": loss})
    with pytest.raises(TypeError, match=r"\(metric_value, update_op\) tuples"):
        el.EstimatorSpec(el.ModeKeys.EVAL, loss=loss, eval_metric_ops={"m": list(mean)})
    # As tf.estimator: the pair's members are fetched as they are (an Operation as
    # the value, or a nested tuple), only their graph is checked.
    spec = el.EstimatorSpec(el.ModeKeys.EVAL, loss=loss,
                            eval_metric_ops={"op": (mean[1].op, mean[1]),
                                             "nested": ((mean[0], mean[0]), mean[1])})
    assert spec.eval_metric_ops["nested"][0] == (mean[0], mean[0])
    with tf.Graph().as_default():
        other = tf.constant(1.0)
    with pytest.raises(ValueError, match="default graph"):
        el.EstimatorSpec(el.ModeKeys.EVAL, loss=loss, eval_metric_ops={"m": (other, loss)})


def test_hooks_must_be_session_run_hooks(graph):
    loss, train_op = _train_parts()
    hook = tf.train.StopAtStepHook(last_step=3)
    spec = el.EstimatorSpec(el.ModeKeys.TRAIN, loss=loss, train_op=train_op,
                            training_hooks=[hook])
    assert spec.training_hooks == (hook,)
    with pytest.raises(TypeError, match="must be SessionRunHook instances.*training_hooks"):
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
