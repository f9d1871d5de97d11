"""Heads take Keras optimizers as tf.estimator 2.15 did, on both Keras stacks.

The head programs of tests/oracle/keras_optimizer_driver.py (a linear model with
fixed weights, a head, ``tf.keras.optimizers.*`` with constant rates, a decayed
tensor and schedules, 10 steps) run on tf.estimator 2.15 (legacy optimizers, as it
required), on estimator_lite with Keras 3, with tf-keras' optimizers and with
tf-keras' legacy optimizers; the checkpoints and eval metrics must agree.
The fast checks below need neither the oracle nor tf-keras.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from tests.oracle import keras_optimizer_runs as runs
from tests.oracle import requires_oracle

NO_EQUIVALENT = "Keras optimizer Nadam has no graph-mode equivalent"


@requires_oracle
@pytest.mark.parametrize("run_key", [runs.KERAS3, runs.TF_KERAS, runs.TF_KERAS_LEGACY])
@pytest.mark.parametrize("case", sorted(runs.driver.HEAD_CASES))
def test_head_with_keras_optimizer_trains_as_tf_estimator(run_key, case):
    expected, actual = runs.assert_trains_as_oracle(run_key, case)
    # The global step is the optimizer's iterations: no separate counter, and it
    # advanced once per step (tied by estimator_lite when the user did not).
    assert actual["variables"]["global_step"] == runs.driver.TRAIN_STEPS
    assert not any(name.endswith("/iter") for name in actual["variables"])
    assert expected["variables"]["global_step"] == runs.driver.TRAIN_STEPS


def _train_in_graph(optimizer_fn, steps):
    """Trains w (2 numbers) on loss = sum(w^2) with a head-free spec; returns values."""
    with tf.Graph().as_default():
        global_step = tf.compat.v1.train.get_or_create_global_step()
        w = tf.compat.v1.get_variable("w", initializer=tf.constant([1.0, -2.0]))
        head = el.RegressionHead(label_dimension=2)
        spec = head.create_estimator_spec(
            {}, el.ModeKeys.TRAIN, tf.reshape(w, [1, 2]), labels=tf.zeros([1, 2]),
            optimizer=optimizer_fn(), trainable_variables=[w])
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            for _ in range(steps):
                session.run(spec.train_op)
            return session.run([w, global_step])


def test_keras3_sgd_with_a_schedule_follows_it_on_the_global_step():
    schedule = tf.keras.optimizers.schedules.PiecewiseConstantDecay([1], [0.1, 0.01])
    w, step = _train_in_graph(lambda: tf.keras.optimizers.SGD(schedule), steps=3)
    expected = np.array([1.0, -2.0])
    for lr in (0.1, 0.1, 0.01):  # Steps 0 and 1 (<= boundary), then step 2.
        expected = expected - lr * expected  # d/dw mean((w - 0)^2) over 2 = w.
    np.testing.assert_allclose(w, expected, rtol=1e-6)
    assert step == 3


def test_optimizer_without_graph_equivalent_is_named():
    with pytest.raises(ValueError, match=NO_EQUIVALENT):
        _train_in_graph(lambda: tf.keras.optimizers.Nadam(0.1), steps=1)


def test_v1_optimizer_in_a_head_takes_keras3_trainable_variables():
    # head.create_estimator_spec(optimizer=<tf.compat.v1 optimizer>,
    # trainable_variables=layer.trainable_variables) with Keras 3 layers: the
    # variables are unwrapped for minimize(), as they are for Keras optimizers.
    with tf.Graph().as_default():
        tf.compat.v1.train.get_or_create_global_step()
        layer = tf.keras.layers.Dense(1)
        logits = layer(tf.constant([[1.0, 2.0]]))
        spec = el.BinaryClassHead().create_estimator_spec(
            features={}, mode=el.ModeKeys.TRAIN, logits=logits,
            labels=tf.constant([[1.0]]),
            optimizer=tf.compat.v1.train.GradientDescentOptimizer(0.1),
            trainable_variables=layer.trainable_variables)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            before = session.run(layer.kernel.value)
            session.run(spec.train_op)
            assert not np.allclose(session.run(layer.kernel.value), before)
