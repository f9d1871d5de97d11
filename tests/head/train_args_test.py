"""What a head's create_estimator_spec takes to train, checked as tf.estimator 2.15.

A Keras optimizer needs `trainable_variables` (a list or tuple), `update_ops` is a
list or tuple, and a head takes an optimizer object, not a name: each refusal is a
ValueError with tf.estimator's words, as its own unit tests (head/*_head_test
``test_invalid_trainable_variables``) expect. The expected errors were seen on
tf.estimator 2.15 (the oracle) with the same programs:
``trainable_variables cannot be None. Given None``, ``trainable_variables should be
a list or a tuple. Given type: <class 'dict'>.``, ``update_ops should be a list or
a tuple. ...`` and ``The given optimizer is not a tf.keras.optimizers.Optimizer
instance. Received optimizer of type <class 'str'>``.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el

NO_VARIABLES = "trainable_variables cannot be None"
NOT_A_LIST = "trainable_variables should be a list or a tuple"
UPDATE_OPS_NOT_A_LIST = "update_ops should be a list or a tuple"
NOT_AN_OPTIMIZER = "The given optimizer is not a tf.keras.optimizers.Optimizer"


def _input_fn():
    x = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, 2.0 * x)).batch(2).repeat()


def _model_fn(pass_variables):
    """A linear model trained by a RegressionHead with Keras' SGD."""
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [1, 1],
                                      initializer=tf.compat.v1.zeros_initializer())
        return el.RegressionHead().create_estimator_spec(
            features, mode, tf.matmul(features["x"], w), labels,
            optimizer=tf.keras.optimizers.SGD(0.05),
            trainable_variables=[w] if pass_variables else None)
    return model_fn


def test_keras_optimizer_without_trainable_variables_is_refused(tmp_path):
    estimator = el.Estimator(_model_fn(pass_variables=False), str(tmp_path))
    with pytest.raises(ValueError, match=NO_VARIABLES):
        estimator.train(_input_fn, steps=1)


def test_keras_optimizer_with_trainable_variables_trains(tmp_path):
    estimator = el.Estimator(_model_fn(pass_variables=True), str(tmp_path))
    estimator.train(_input_fn, steps=20)
    assert estimator.get_variable_value("global_step") == 20
    assert 1.5 < estimator.get_variable_value("w")[0, 0] < 2.5  # Towards 2.0.


def _train_spec(**kwargs):
    """Builds a TRAIN spec of a RegressionHead on w * x in a fresh graph."""
    with tf.Graph().as_default():
        tf.compat.v1.train.get_or_create_global_step()
        w = tf.compat.v1.get_variable("w", [1], initializer=tf.ones_initializer())
        logits = tf.constant([[1.0], [2.0]]) * w
        return el.RegressionHead().create_estimator_spec(
            {}, "train", logits, tf.constant([[1.0], [0.0]]), **kwargs)


@pytest.mark.parametrize("variables", [
    {"var_list": []},
    "w",
], ids=["dict", "name"])
def test_trainable_variables_not_a_list_is_refused(variables):
    with pytest.raises(ValueError, match=NOT_A_LIST):
        _train_spec(optimizer=tf.keras.optimizers.SGD(0.1), trainable_variables=variables)
    # The same for a tf.compat.v1 optimizer (which tf.estimator 2.15 refused as a
    # whole), whose None still means every trainable variable.
    with pytest.raises(ValueError, match=NOT_A_LIST):
        _train_spec(optimizer=tf.compat.v1.train.GradientDescentOptimizer(0.1),
                    trainable_variables=variables)
    assert _train_spec(
        optimizer=tf.compat.v1.train.GradientDescentOptimizer(0.1)).train_op is not None


def test_update_ops_not_a_list_is_refused():
    with pytest.raises(ValueError, match=UPDATE_OPS_NOT_A_LIST):
        _train_spec(train_op_fn=lambda loss: tf.no_op(), update_ops={"op": tf.no_op})


@pytest.mark.parametrize("optimizer", [
    "SGD", 0.1, tf.keras.optimizers.SGD,
], ids=["name", "number", "class"])
def test_what_is_no_optimizer_object_is_a_value_error(optimizer):
    # A name is for canned estimators; a head needs the object (its message says so).
    with pytest.raises(ValueError, match=NOT_AN_OPTIMIZER) as raised:
        _train_spec(optimizer=optimizer, trainable_variables=[])
    assert f"optimizer={optimizer!r}" in str(raised.value)


def test_a_v1_optimizer_with_nothing_to_train_gets_tf_estimators_refusal():
    # tf.estimator 2.15 refused every tf.compat.v1 optimizer given to a head (its
    # own base_head_test expects that with a model of no variables); here one
    # trains, so only a model with nothing to train still gets that refusal.
    with tf.Graph().as_default(), pytest.raises(ValueError,
                                                match=NOT_AN_OPTIMIZER) as raised:
        el.BinaryClassHead().create_estimator_spec(
            {"x": np.array([[42.0]], np.float32)}, "train",
            np.array([[45.0], [-41.0]], np.float32), np.array([[1.0], [1.0]]),
            optimizer=tf.compat.v1.train.AdamOptimizer())
    assert "no trainable variables" in str(raised.value)
