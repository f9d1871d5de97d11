"""Canned estimators with Keras optimizers whose learning rate decays, as users write.

DNNClassifier's docstring example (``optimizer=lambda: tf.keras.optimizers.Adam(
learning_rate=tf.compat.v1.train.exponential_decay(..., global_step=...))``) and a
wide-and-deep model with an ``ExponentialDecay`` schedule on the linear part (its
optimizer keeps its own iteration count) and a decayed tensor on the DNN part (from
tests/oracle/keras_optimizer_driver.py) train 10 steps from the same starting
weights on tf.estimator 2.15 (legacy optimizers), on estimator_lite with Keras 3
(DNNClassifier's tensor passed to Adam as the docstring writes it, which Keras 3
alone refuses; the combined model's as a callable), with tf-keras' optimizers and
with its legacy ones: same checkpoints, same metrics. So does a user's own subclass
of Keras' SGD (defined in the user's program), which is what its base class is.
"""

import threading

import numpy as np
import pytest
import tensorflow as tf

from estimator_lite.canned import optimizers
from tests.oracle import keras_optimizer_runs as runs
from tests.oracle import requires_oracle


@pytest.mark.slow
@requires_oracle
@pytest.mark.parametrize("run_key", [runs.KERAS3, runs.TF_KERAS, runs.TF_KERAS_LEGACY])
@pytest.mark.parametrize("case", ["combined_sgd_schedule_adagrad_tensor",
                                  "dnn_adam_exponential_decay_tensor"])
def test_canned_decayed_learning_rate_trains_as_tf_estimator(run_key, case):
    expected, _ = runs.assert_trains_as_oracle(run_key, case)
    # A decayed or scheduled rate is not a checkpointed hyperparameter.
    assert not any(name.endswith("/learning_rate") for name in expected["variables"])


@requires_oracle
@pytest.mark.parametrize("run_key", [runs.KERAS3, runs.TF_KERAS, runs.TF_KERAS_LEGACY])
def test_user_subclass_of_a_keras_optimizer_trains_as_its_base(run_key):
    expected, _ = runs.assert_trains_as_oracle(run_key, "dnn_user_sgd_subclass")
    # Its checkpoint holds SGD's hyperparameters and momentum slots.
    assert expected["variables"]["training/SGD/momentum"] == pytest.approx(0.5)
    assert "training/SGD/dnn/logits/kernel/momentum" in expected["variables"]


def test_user_subclass_overriding_the_update_rule_is_refused():
    class ClippedSGD(tf.keras.optimizers.SGD):
        def update_step(self, gradient, variable, learning_rate):
            super().update_step(tf.clip_by_value(gradient, -1.0, 1.0), variable,
                                learning_rate)
    with pytest.raises(ValueError, match=r"ClippedSGD overrides \['update_step'\]"):
        optimizers.graph_optimizer(ClippedSGD())


def test_keras_own_derived_optimizers_are_not_taken_for_their_base():
    # AdamW derives from Adam in Keras 3; its weight decay has no graph equivalent.
    with pytest.raises(ValueError, match="AdamW has no graph-mode equivalent"):
        optimizers.graph_optimizer(tf.keras.optimizers.AdamW())


def test_keras3_tensor_rate_is_taken_only_inside_an_optimizer_callable():
    def build():
        rate = tf.compat.v1.train.exponential_decay(
            0.2, tf.compat.v1.train.get_global_step(), 1, 0.5, staircase=True)
        return tf.keras.optimizers.SGD(learning_rate=rate)
    with tf.Graph().as_default():
        tf.compat.v1.train.get_or_create_global_step()
        built = optimizers.optimizer_factory(build)()
        assert isinstance(built.learning_rate, tf.Tensor)
        with pytest.raises(ValueError, match="learning_rate"):
            build()  # Keras 3's own constructor, outside the factory, as before.


def test_keras3_tensor_rate_is_not_taken_by_another_thread_meanwhile():
    # While one thread's optimizer callable runs (inside the factory), another
    # thread building a Keras optimizer gets Keras' own constructor: a tensor is
    # refused there as without estimator_lite, a number taken as usual.
    inside, done = threading.Event(), threading.Event()
    seen = {}

    def build():
        inside.set()
        assert done.wait(60), "the other thread did not finish"
        rate = tf.compat.v1.train.exponential_decay(
            0.2, tf.compat.v1.train.get_global_step(), 1, 0.5, staircase=True)
        return tf.keras.optimizers.SGD(learning_rate=rate)

    def other_thread():
        try:
            assert inside.wait(60), "the factory's callable did not start"
            with tf.Graph().as_default():
                tensor = tf.constant(0.1)
                try:
                    tf.keras.optimizers.SGD(learning_rate=tensor)
                except ValueError as error:
                    seen["tensor"] = str(error)
            seen["number"] = tf.keras.optimizers.SGD(learning_rate=0.5).learning_rate
        finally:
            done.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with tf.Graph().as_default():
        tf.compat.v1.train.get_or_create_global_step()
        built = optimizers.optimizer_factory(build)()
    thread.join(60)
    assert isinstance(built.learning_rate, tf.Tensor)
    assert "Argument `learning_rate` should be float" in seen["tensor"]
    assert float(seen["number"].numpy()) == 0.5


def _lr_per_step(optimizer, steps):
    """The learning rate the graph optimizer applies at steps 0..steps-1."""
    with tf.Graph().as_default():
        iterations = tf.compat.v1.train.get_or_create_global_step()
        built = optimizers.graph_optimizer(optimizer)
        built.apply_gradients([(tf.ones([1]), tf.compat.v1.get_variable("w", [1]))],
                              iterations=iterations)
        lr = built._learning_rate_tensor(iterations)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            values = []
            for step in range(steps):
                session.run(iterations.assign(step))
                values.append(session.run(lr))
    return np.array(values)


def test_keras3_schedules_are_evaluated_on_the_iterations():
    schedule = tf.keras.optimizers.schedules.ExponentialDecay(0.1, 2, 0.5)
    np.testing.assert_allclose(_lr_per_step(tf.keras.optimizers.Adam(schedule), 4),
                               0.1 * 0.5 ** (np.arange(4) / 2), rtol=1e-6)


def test_keras3_callable_rate_is_called_in_the_graph():
    def rate():
        return tf.compat.v1.train.exponential_decay(
            0.2, tf.compat.v1.train.get_global_step(), 1, 0.5, staircase=True)
    np.testing.assert_allclose(_lr_per_step(tf.keras.optimizers.SGD(rate), 3),
                               [0.2, 0.1, 0.05], rtol=1e-6)
