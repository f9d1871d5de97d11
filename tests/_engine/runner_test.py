"""The runner (estimator_lite/_engine/runner.py): plain or per replica, chosen once.

What the runners build is checked end to end by the Estimator's tests (plain) and
tests/_engine/distribute_strategies_test.py (replicated, in fresh interpreters
with logical CPUs); here: which runner a strategy gets, where it places a graph,
and what its graphs hold.
"""

import numpy as np
import pytest
import tensorflow as tf

from estimator_lite._engine import runner
from estimator_lite.model_fn import EstimatorSpec, ModeKeys

tf1 = tf.compat.v1


def _dataset(_input_context=None):
    features = {"x": np.arange(12, dtype=np.float32).reshape(6, 2)}
    labels = np.ones((6, 1), np.float32)
    return tf.data.Dataset.from_tensor_slices((features, labels)).batch(3)


def _model_fn(mode):
    def model_fn(features, labels):
        weight = tf1.get_variable("w", [2, 1], initializer=tf1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], weight) - labels))
        train_op = tf1.train.GradientDescentOptimizer(0.01).minimize(
            loss, global_step=tf1.train.get_global_step())
        return EstimatorSpec(mode, loss=loss, train_op=train_op,
                             eval_metric_ops={"mse": tf1.metrics.mean(loss)})
    return model_fn


def test_without_a_strategy_the_runner_is_plain_and_places_nothing():
    plain = runner.for_strategy(None)
    assert type(plain) is runner.PlainRunner
    with tf.Graph().as_default():
        with plain.placement():
            constant = tf.constant(1.0)
        with plain.placement(lambda op: "/cpu:0"):
            placed = tf.constant(2.0)
    assert constant.device == ""
    assert placed.device == "/cpu:0"  # the device function's answer


def test_a_one_device_strategy_is_plain_on_its_device_unless_a_device_fn_is_given():
    plain = runner.for_strategy(tf.distribute.OneDeviceStrategy("/cpu:1"))
    assert type(plain) is runner.PlainRunner
    with tf.Graph().as_default():
        with plain.placement():
            on_strategy = tf.constant(1.0)
        with plain.placement("/cpu:0"):
            on_device_fn = tf.constant(1.0)
    assert on_strategy.device.endswith("CPU:1")
    assert on_device_fn.device.endswith("CPU:0")


def test_a_strategy_over_several_replicas_gets_the_replica_runner():
    # Built in a graph: eagerly, it would check the second CPU exists (this process
    # has one; the strategy is not run here).
    with tf.Graph().as_default():
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    mirrored = runner.for_strategy(strategy)
    assert type(mirrored) is runner.ReplicaRunner
    # Its session config covers both CPUs (a graph session has one by default).
    assert mirrored.session_config(tf1.ConfigProto()).device_count["CPU"] == 2


def test_a_strategy_it_does_not_run_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="cannot train or evaluate with "
                                         "_DefaultDistributionStrategy"):
        runner.for_strategy(tf.distribute.get_strategy())


@pytest.mark.parametrize("steps_per_loop", [1, 4])
def test_plain_build_train_calls_the_input_fn_once_and_the_model_fn(steps_per_loop):
    calls = []

    def input_fn_result(input_context):
        calls.append(input_context)
        return _dataset().repeat()

    with tf.Graph().as_default():
        global_step = tf1.train.get_or_create_global_step()
        built = runner.PlainRunner().build_train(
            input_fn_result, _model_fn(ModeKeys.TRAIN), global_step, steps_per_loop)
        assert calls == [None]
        assert built.examples_per_step is None  # batch(3): the last may be short
        assert (built.loop is None) == (steps_per_loop == 1)
        assert built.input.initializer is not None
        with tf1.Session() as session:
            session.run([tf1.global_variables_initializer(), built.input.initializer])
            session.run(built.spec.train_op)
            assert session.run(global_step) == steps_per_loop  # one call: K steps


def test_plain_build_eval_has_the_metrics_loss_step_and_cardinality():
    with tf.Graph().as_default():
        global_step = tf1.train.get_or_create_global_step()
        built = runner.PlainRunner().build_eval(
            lambda ctx: _dataset(), _model_fn(ModeKeys.EVAL), global_step)
        assert set(built.values) == {"mse", "loss", "global_step"}
        assert built.hooks == []
        with tf1.Session() as session:
            session.run([tf1.global_variables_initializer(),
                         tf1.local_variables_initializer(), built.initializer])
            assert session.run(built.cardinality) == 2
            session.run(built.update_op)
            session.run(built.update_op)
            # w = 0: the loss is mean((0 - 1)^2) = 1 on every batch.
            assert session.run(built.values)["mse"] == pytest.approx(1.0)


def test_local_session_config_drops_device_filters_and_copies():
    config = tf1.ConfigProto(device_filters=["/job:ps", "/job:worker/task:1"],
                             allow_soft_placement=True)
    local = runner.local_session_config(config)
    assert list(local.device_filters) == []
    assert local.allow_soft_placement
    assert list(config.device_filters) == ["/job:ps", "/job:worker/task:1"]
