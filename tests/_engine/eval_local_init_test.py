"""A model_fn's own local_init_op does not hide the Estimator's evaluation locals.

adanet 0.9.0's model_fn returns `Scaffold(local_init_op=tf.group(...,
Scaffold.default_local_init_op()))`, built inside the model_fn, before the
Estimator creates its 'loss' metric (`mean/total`, `mean/count`). tf.estimator
2.15 groups such an op with a default local init op built after the metrics, so
evaluate() works; it failed here with NotFoundError on `mean/count`.
"""

import numpy as np
import tensorflow as tf

import estimator_lite as el

v1 = tf.compat.v1


def _input_fn():
    features = {"x": np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)}
    labels = np.array([[2.0], [4.0], [6.0], [8.0]], np.float32)
    return tf.data.Dataset.from_tensor_slices((features, labels)).batch(2)


def _model_fn(features, labels, mode):
    weight = v1.get_variable("w", [1, 1], initializer=v1.zeros_initializer())
    predictions = tf.matmul(features["x"], weight)
    loss = v1.losses.mean_squared_error(labels, predictions)
    train_op = v1.train.GradientDescentOptimizer(0.01).minimize(
        loss, global_step=v1.train.get_global_step())
    # A local counter of the model_fn's own, initialised by its local_init_op.
    seen = v1.get_local_variable("seen", [], tf.float32,
                                 initializer=v1.zeros_initializer())
    count = v1.assign_add(seen, tf.cast(tf.shape(labels)[0], tf.float32))
    local_init = tf.group(v1.train.Scaffold.default_local_init_op())
    metrics = None
    if mode == el.ModeKeys.EVAL:  # created after local_init: the Estimator's too
        metrics = {"seen": (tf.identity(seen), count),
                   "mse": v1.metrics.mean_squared_error(labels, predictions)}
    return el.EstimatorSpec(
        mode, predictions=predictions, loss=loss, train_op=train_op,
        eval_metric_ops=metrics, scaffold=v1.train.Scaffold(local_init_op=local_init))


def test_evaluate_with_a_model_fn_local_init_op_initialises_the_loss_metric(tmp_path):
    estimator = el.Estimator(_model_fn, model_dir=str(tmp_path))
    estimator.train(lambda: _input_fn().repeat(), steps=2)
    results = estimator.evaluate(_input_fn)
    weight = estimator.get_variable_value("w")[0, 0]
    expected = np.mean((np.array([2.0, 4.0, 6.0, 8.0]) * (1.0 - weight / 2.0)) ** 2)
    assert results["loss"] == np.float32(results["loss"])
    np.testing.assert_allclose(results["loss"], expected, rtol=1e-5)
    np.testing.assert_allclose(results["mse"], expected, rtol=1e-5)
    assert results["seen"] == 4.0
    assert results["global_step"] == 2
    # Twice: the counter starts from zero again (the model_fn's op still runs).
    assert estimator.evaluate(_input_fn)["seen"] == 4.0
