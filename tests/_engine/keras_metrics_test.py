"""Keras 3 `Metric` objects become evaluation (value, update_op) pairs.

The comparison with tf-keras and tf.estimator 2.15 (metric values through
`Estimator.evaluate` and `add_metrics`) is in state_updates_compat_test.py.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite._engine import keras_metrics

v1 = tf.compat.v1
NO_UPDATE = r"Please call update_state\(\.\.\.\)"


def test_metric_in_eval_metric_ops_runs_its_updates_on_local_variables():
    graph = tf.Graph()
    with graph.as_default():
        values = v1.placeholder(tf.float32, [None])
        mean = tf.keras.metrics.Mean()
        mean.update_state(values)
        mean.update_state(values * 2.0)  # two writes per variable: they add up
        spec = el.EstimatorSpec(el.ModeKeys.EVAL, loss=tf.constant(0.0),
                                eval_metric_ops={"mean": mean})
        value, update_op = spec.eval_metric_ops["mean"]
        names = sorted(v.op.name for v in v1.local_variables())
        assert names == sorted(v.op.name for v in v1.get_collection(
            v1.GraphKeys.METRIC_VARIABLES))
        assert len(names) == 2
        assert not [v for v in v1.global_variables() if v.op.name in names]
        with v1.Session() as session:
            for _ in range(2):  # two evaluations: each starts from zero
                session.run(v1.local_variables_initializer())
                session.run(update_op, {values: [1.0, 2.0]})
                session.run(update_op, {values: [6.0]})
                assert session.run(value) == pytest.approx(27.0 / 6.0)


def test_metric_without_update_state_is_a_value_error():
    with tf.Graph().as_default(), pytest.raises(ValueError, match=NO_UPDATE):
        el.EstimatorSpec(el.ModeKeys.EVAL, loss=tf.constant(0.0),
                         eval_metric_ops={"auc": tf.keras.metrics.AUC()})


@pytest.mark.parametrize("updated", [True, False], ids=["updated", "never_updated"])
def test_metric_from_another_graph_is_refused_as_tf_estimator(updated):
    # tf.estimator 2.15's order: a metric never updated is told to call
    # update_state; one updated in another graph is not from the default graph.
    with tf.Graph().as_default():
        mean = tf.keras.metrics.Mean()
        if updated:
            mean.update_state(tf.constant(1.0))
    expected = "must be from the default graph" if updated else NO_UPDATE
    with tf.Graph().as_default(), pytest.raises(ValueError, match=expected):
        el.EstimatorSpec(el.ModeKeys.EVAL, loss=tf.constant(0.0),
                         eval_metric_ops={"metric": mean})


def test_only_metric_objects_are_recognised():
    with tf.Graph().as_default():
        pair = v1.metrics.mean(tf.constant([1.0]))
        assert not keras_metrics.is_keras_metric(pair)
        assert keras_metrics.is_keras_metric(tf.keras.metrics.Mean())


def test_evaluate_restores_the_model_but_not_the_metrics(tmp_path):
    """Keras 3 metric variables are global when made: the checkpoint lacks them."""
    x = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, 2 * x)).batch(3)

    def model_fn(features, labels, mode):
        prediction = tf.keras.layers.Dense(1, kernel_initializer="ones")(features["x"])
        loss = v1.losses.mean_squared_error(labels, prediction)
        if mode == el.ModeKeys.EVAL:
            error = tf.keras.metrics.MeanAbsoluteError()
            error.update_state(labels, prediction)
            return el.EstimatorSpec(mode, loss=loss, eval_metric_ops={"mae": error})
        return el.EstimatorSpec(mode, loss=loss, train_op=v1.train.get_global_step(
            ).assign_add(1))

    estimator = el.Estimator(model_fn, str(tmp_path))
    estimator.train(input_fn, steps=1)
    first, second = (estimator.evaluate(input_fn) for _ in range(2))
    assert first["mae"] == pytest.approx(np.abs(x).mean()) == second["mae"]
    assert estimator.get_variable_names() == ["dense/bias", "dense/kernel",
                                              "global_step"]


def test_metrics_of_replicated_towers_cover_the_whole_batch(tmp_path):
    """replicate_model_fn folds every tower's metric variables into tower 0's."""
    x = np.array([[1.0, 2.0], [3.0, 6.0], [-1.0, 0.0], [5.0, 2.0]], np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, x[:, :1])).batch(4)

    def model_fn(features, labels, mode):
        logits = tf.matmul(features["x"], v1.get_variable("w", initializer=[[1.0],
                                                                             [1.0]]))
        mean = tf.keras.metrics.Mean()
        mean.update_state(logits)
        error = tf.keras.metrics.MeanAbsoluteError()
        error.update_state(labels, logits)
        return el.EstimatorSpec(mode, loss=v1.losses.mean_squared_error(labels, logits),
                                eval_metric_ops={"mean": mean, "mae": error})

    config = el.RunConfig(session_config=v1.ConfigProto(device_count={"CPU": 2}))
    estimator = el.Estimator(el.replicate_model_fn(
        model_fn, devices=["/device:CPU:0", "/device:CPU:1"]), str(tmp_path),
        config=config)
    metrics = estimator.evaluate(input_fn)
    assert metrics["mean"] == pytest.approx(x.sum(1).mean())
    assert metrics["mae"] == pytest.approx(np.abs(x[:, 1]).mean())
