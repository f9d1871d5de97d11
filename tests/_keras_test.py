"""estimator_lite._keras reads Keras' and TensorFlow's private attributes, and says
which release lacks one it needs (tests/repository/private_attributes_test.py checks that no
other module reads them)."""

import pytest
import tensorflow as tf

from estimator_lite import _keras
from tests.oracle import LEGACY_KERAS_REASON, legacy_keras_available


def _bare(cls):
    """An instance of `cls` whose constructor never ran: it has no attributes,
    as an object of a Keras release that renamed them would lack them."""
    return object.__new__(cls)


def test_a_keras3_optimizer_gives_its_learning_rate_and_counter():
    optimizer = tf.keras.optimizers.Adam(learning_rate=0.25)
    assert float(_keras.optimizer_learning_rate(optimizer).numpy()) == 0.25
    assert _keras.optimizer_counter(optimizer) is not None
    variables = _keras.optimizer_variables(optimizer)
    assert variables and all(isinstance(v, tf.Variable) for v in variables)


@pytest.mark.parametrize("read", [_keras.optimizer_learning_rate,
                                  _keras.optimizer_counter])
def test_a_missing_optimizer_attribute_names_the_keras_release(read):
    optimizer = _bare(type(tf.keras.optimizers.SGD()))
    with pytest.raises(RuntimeError, match=r"SGD has no _\w+, which estimator_lite "
                                           r"reads .*Keras \d") as info:
        read(optimizer)
    assert "is not supported here" in str(info.value)


def test_a_legacy_hyperparameter_needs_the_hyper_dict():
    optimizer = _bare(type(tf.keras.optimizers.SGD()))
    with pytest.raises(RuntimeError, match="SGD has no _hyper"):
        _keras.legacy_hyperparameter(optimizer, "learning_rate")


def test_keras3_models_keep_their_metrics_in_the_compile_config():
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    assert _keras.compiled_user_metrics(model) is None  # Not compiled.
    model.compile("sgd", "mse", metrics=["mae"])
    assert _keras.compiled_user_metrics(model) is None  # Keras 3: none to read.
    assert model.get_compile_config()["metrics"] == ["mae"]


@pytest.mark.skipif(not legacy_keras_available(), reason=LEGACY_KERAS_REASON)
def test_tf_keras_models_give_their_compiled_metrics():
    import tf_keras  # noqa: PLC0415 (optional)

    model = tf_keras.Sequential([tf_keras.layers.Dense(1)])
    assert _keras.compiled_user_metrics(model) is None
    model.compile("sgd", "mse", metrics=["mae"])
    assert _keras.compiled_user_metrics(model) == ["mae"]
    legacy = tf_keras.optimizers.legacy.SGD(learning_rate=0.5)
    assert _keras.legacy_hyperparameter(legacy, "learning_rate") == 0.5
    assert _keras.legacy_hyperparameter(legacy, "no_such_name") is None
    assert _keras.optimizer_counter(legacy) is None  # Not created until read.


def test_slice_info_of_partitions_and_plain_variables():
    with tf.Graph().as_default():
        plain = tf.compat.v1.get_variable("plain", [4])
        parts = tf.compat.v1.get_variable(
            "parts", [4, 2], partitioner=tf.compat.v1.fixed_size_partitioner(2))
        assert _keras.save_slice_info(plain) is None
        info = _keras.save_slice_info(list(parts)[1])
        assert (info.full_name, list(info.full_shape)) == ("parts", [4, 2])
        assert _keras.save_slice_info("not a variable") is None


def test_feature_columns_give_their_shape():
    column = tf.feature_column.numeric_column("x", shape=(3,))
    assert list(_keras.feature_column_variable_shape(column)) == [3]
    with pytest.raises(RuntimeError, match="has no _variable_shape"):
        _keras.feature_column_variable_shape(object())


def test_keras_objects_are_known_by_their_bases():
    class MySGD(tf.keras.optimizers.SGD):
        pass

    assert _keras.is_keras_object(MySGD())
    assert _keras.is_keras_object(tf.keras.layers.Dense(1))
    assert not _keras.is_keras_object(tf.compat.v1.train.GradientDescentOptimizer(0.1))
    assert _keras.is_learning_rate_schedule(
        tf.keras.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5))
    assert not _keras.is_learning_rate_schedule(0.1)
    assert _keras.is_keras_metric(tf.keras.metrics.Mean())
    assert not _keras.is_keras_metric((1, 2))


# TensorFlow's own reading (its __init__ and Keras lazy loader): only these three.
@pytest.mark.parametrize("value,legacy", [("1", True), ("true", True), ("True", True),
                                          ("TRUE", False), ("yes", False), ("0", False),
                                          ("", False), (None, False)])
def test_tf_use_legacy_keras_is_read_as_tensorflow_reads_it(monkeypatch, value, legacy):
    if value is None:
        monkeypatch.delenv("TF_USE_LEGACY_KERAS", raising=False)
    else:
        monkeypatch.setenv("TF_USE_LEGACY_KERAS", value)
    assert _keras.uses_legacy_keras() is legacy
