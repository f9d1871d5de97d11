"""Optimizer arguments of canned estimators: names, instances, callables, Keras.

The update rules are checked against numpy here and against tf.estimator 2.15 in
canned_compat_test.py.
"""

import logging

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite.canned import optimizers
from estimator_lite.compat import v1 as el_v1

UNKNOWN_NAME = "optimizer must be one of"
WRONG_TYPE = "optimizer must be an optimizer name"
CALLABLE_RESULT = "callable must return an optimizer instance"
UNSUPPORTED_OPTION = "is not supported in graph mode"
UNKNOWN_HYPER = "unknown hyperparameters"


def _apply(optimizer, grads, steps, initial=(1.0, -2.0), sparse=False):
    """Applies `grads` for `steps` steps to a 2-vector; returns {name: value}."""
    with tf.Graph().as_default():
        var = tf.compat.v1.get_variable(
            "w", initializer=tf.constant(initial, tf.float32), use_resource=True)
        grad = tf.constant(grads, tf.float32)
        if sparse:
            grad = tf.IndexedSlices(grad, tf.constant([0, 1]), tf.constant([2]))
        train_op = optimizer.apply_gradients([(grad, var)])
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            for _ in range(steps):
                session.run(train_op)
            return {v.op.name: session.run(v) for v in tf.compat.v1.global_variables()}


def test_names_build_keras_style_optimizers_with_the_given_default_rate():
    build = optimizers.optimizer_factory("Adam", default_learning_rate=0.2)
    assert isinstance(build(), optimizers.Adam)
    assert build().learning_rate == 0.2
    assert optimizers.optimizer_factory("RMSProp")().learning_rate == 0.001
    assert optimizers.optimizer_factory("SGD")().learning_rate == 0.01


def test_adam_matches_the_keras_update_rule():
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-7
    grads = np.array([0.5, -1.0], np.float32)
    values = _apply(optimizers.Adam(learning_rate=lr), grads, steps=2)
    w, m, v = np.array([1.0, -2.0]), np.zeros(2), np.zeros(2)
    for t in (1, 2):
        m = b1 * m + (1 - b1) * grads
        v = b2 * v + (1 - b2) * grads ** 2
        w = w - lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (np.sqrt(v) + eps)
    # float32 kernels against float64 numpy.
    np.testing.assert_allclose(values["w"], w, rtol=1e-5)
    np.testing.assert_allclose(values["training/Adam/w/m"], m, rtol=1e-4)
    np.testing.assert_allclose(values["training/Adam/w/v"], v, rtol=1e-4)
    assert values["training/Adam/iter"] == 2  # No global step given: its own counter.
    assert values["training/Adam/learning_rate"] == pytest.approx(lr)


@pytest.mark.parametrize("name", sorted(optimizers.OPTIMIZER_NAMES))
def test_sparse_and_dense_gradients_give_the_same_update(name):
    grads = [0.5, -1.0]
    build = optimizers.optimizer_factory(name, default_learning_rate=0.1)
    dense = _apply(build(), grads, steps=3)
    sparse = _apply(build(), grads, steps=3, sparse=True)
    assert sorted(dense) == sorted(sparse)
    for key, value in dense.items():
        np.testing.assert_allclose(sparse[key], value, rtol=1e-5, err_msg=key)
    assert not np.allclose(dense["w"], [1.0, -2.0])  # It did train.


def test_adagrad_and_sgd_follow_their_update_rules():
    grads = np.array([0.5, -1.0], np.float32)
    values = _apply(optimizers.Adagrad(learning_rate=0.1), grads, steps=1)
    accumulator = 0.1 + grads ** 2
    np.testing.assert_allclose(values["w"], [1.0, -2.0] - 0.1 * grads /
                               (np.sqrt(accumulator) + 1e-7), rtol=1e-6)
    values = _apply(optimizers.SGD(learning_rate=0.1, momentum=0.5), grads, steps=2)
    velocity = -0.1 * grads
    velocity = 0.5 * velocity - 0.1 * grads
    np.testing.assert_allclose(values["w"], [1.0, -2.0] - 0.1 * grads + velocity,
                               rtol=1e-6)


def test_keras_instance_is_mapped_to_its_graph_equivalent(caplog):
    keras_adam = tf.keras.optimizers.Adam(0.01, beta_1=0.8)
    with caplog.at_level(logging.INFO, logger="tensorflow"):
        built = optimizers.optimizer_factory(keras_adam)()
    assert isinstance(built, optimizers.Adam)
    assert built.get_config()["learning_rate"] == pytest.approx(0.01)
    assert built.get_config()["beta_1"] == pytest.approx(0.8)
    assert "cannot run in graph mode" in caplog.text


def test_keras_options_that_change_the_update_are_refused():
    with pytest.raises(ValueError, match=UNSUPPORTED_OPTION):
        optimizers.optimizer_factory(tf.keras.optimizers.SGD(0.1, clipnorm=1.0))


def test_v1_instances_and_callables_are_accepted():
    v1 = tf.compat.v1.train.GradientDescentOptimizer(0.5)
    values = _apply(optimizers.optimizer_factory(v1)(), [1.0, 1.0], steps=1)
    np.testing.assert_allclose(values["w"], [0.5, -2.5])
    build = optimizers.optimizer_factory(lambda: tf.keras.optimizers.Ftrl(0.3))
    assert isinstance(build(), optimizers.Ftrl)
    assert build().learning_rate == pytest.approx(0.3)


def test_bad_optimizer_arguments():
    with pytest.raises(ValueError, match=UNKNOWN_NAME):
        optimizers.optimizer_factory("adam")  # tf.estimator's names are case-sensitive.
    with pytest.raises(TypeError, match=WRONG_TYPE):
        optimizers.optimizer_factory(3)
    with pytest.raises(TypeError, match=CALLABLE_RESULT):
        optimizers.optimizer_factory(lambda: "Adam")()
    with pytest.raises(ValueError, match=UNKNOWN_HYPER):
        optimizers.Adam(learning_rate=0.1, momentum=0.9)


NOT_AN_OPTIMIZER = "optimizer must be an optimizer instance"
NO_EQUIVALENT = "Keras optimizer Lion has no graph-mode equivalent"


@pytest.mark.parametrize("keras_optimizer", [
    tf.keras.optimizers.Adam(0.02, beta_1=0.8, beta_2=0.99, epsilon=1e-5),
    tf.keras.optimizers.SGD(0.3, momentum=0.5, nesterov=True),
    tf.keras.optimizers.Adagrad(0.2, initial_accumulator_value=0.3, epsilon=1e-6),
    tf.keras.optimizers.RMSprop(0.01, rho=0.8, momentum=0.1, centered=True),
    tf.keras.optimizers.Ftrl(0.4, learning_rate_power=-0.3, beta=0.1,
                             l1_regularization_strength=0.01,
                             l2_shrinkage_regularization_strength=0.02),
], ids=lambda o: type(o).__name__)
def test_graph_optimizer_keeps_every_keras_hyperparameter(keras_optimizer):
    # graph_optimizer reads attributes (get_config fails in a graph under tf-keras);
    # they must be exactly what get_config reports.
    built = optimizers.graph_optimizer(keras_optimizer)
    config = keras_optimizer.get_config()
    for key, value in built.get_config().items():
        if key in config:
            assert value == pytest.approx(config[key]), key
    assert type(keras_optimizer).__name__ == type(built).KERAS_NAME


def test_graph_optimizer_refuses_what_it_cannot_run():
    with pytest.raises(TypeError, match=NOT_AN_OPTIMIZER):
        optimizers.graph_optimizer("Adam")  # Names are for canned estimators only.
    with pytest.raises(ValueError, match=NO_EQUIVALENT):
        optimizers.graph_optimizer(tf.keras.optimizers.Lion(0.1))
    v1 = tf.compat.v1.train.GradientDescentOptimizer(0.5)
    values = _apply(optimizers.graph_optimizer(v1), [1.0, 1.0], steps=1)
    np.testing.assert_allclose(values["w"], [0.5, -2.5])


def test_get_optimizer_instance_v2_names_instances_and_callables():
    # tf.estimator's helper for Keras-optimizer model_fns (tensorflow_lattice's).
    # Keras 3 here, which has no legacy optimizers: a name gives the graph
    # optimizer of that name (with TF_USE_LEGACY_KERAS=1, tf-keras' legacy one,
    # as tf.estimator 2.15: tests/third_party/libraries_test.py).
    get = optimizers.get_optimizer_instance_v2
    adagrad = get("Adagrad")
    assert isinstance(adagrad, optimizers.Adagrad) and adagrad.learning_rate == 0.001
    assert get("SGD", learning_rate=0).learning_rate == 0.01  # 0: the default, too
    assert get("RMSProp", learning_rate=0.3).learning_rate == 0.3
    assert get(adagrad) is adagrad
    assert get(lambda: adagrad) is adagrad
    mapped = get(tf.keras.optimizers.Adam(learning_rate=0.2, beta_1=0.8))
    assert isinstance(mapped, optimizers.Adam)
    assert mapped.get_config()["beta_1"] == 0.8
    assert mapped.learning_rate == pytest.approx(0.2)  # Keras keeps it as float32
    with pytest.raises(ValueError, match="opt must be one of"):
        get("Adadelta")
    v1_optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    for error in (TypeError, ValueError):  # tf.estimator: ValueError
        with pytest.raises(error, match="opt must be a Keras optimizer"):
            get(v1_optimizer)


_COLUMNS = [tf.feature_column.numeric_column("x")]


@pytest.mark.parametrize("make", [
    lambda opt: el.DNNClassifier([2], _COLUMNS, optimizer=opt),
    lambda opt: el.LinearRegressor(_COLUMNS, optimizer=opt),
    lambda opt: el.BaselineClassifier(optimizer=opt),
    lambda opt: el.DNNLinearCombinedClassifier(
        linear_feature_columns=_COLUMNS, dnn_feature_columns=_COLUMNS,
        dnn_hidden_units=[2], dnn_optimizer=opt),
    lambda opt: el_v1.DNNClassifier([2], _COLUMNS, optimizer=opt),
    lambda opt: el_v1.LinearClassifier(_COLUMNS, optimizer=opt),
])
def test_an_optimizer_that_is_no_optimizer_is_a_value_error_as_in_tf_estimator(make):
    # tf.estimator 2.15 raises ValueError; the error is a TypeError too.
    for optimizer in (object(), 3):
        with pytest.raises(ValueError, match="optimizer must be") as raised:
            make(optimizer)
        assert isinstance(raised.value, TypeError)


def test_an_optimizer_callable_returning_no_optimizer_fails_train_with_value_error(
        tmp_path):
    def input_fn():
        return tf.data.Dataset.from_tensor_slices(
            ({"x": np.ones((4, 1), np.float32)}, np.ones((4, 1), np.int64))).batch(2)

    def no_optimizer():
        return "SGD"  # A name is for the argument itself, not for its callable.

    for module in (el, el_v1):
        estimator = module.DNNClassifier([2], _COLUMNS, model_dir=str(
            tmp_path / module.__name__), optimizer=no_optimizer)
        with pytest.raises(ValueError, match=CALLABLE_RESULT + "|must be a tf.compat"):
            estimator.train(input_fn, steps=1)
