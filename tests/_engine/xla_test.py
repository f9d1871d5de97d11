"""RunConfig(experimental_jit_compile=True): the training step compiled with XLA."""

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite._engine import xla

FEATURES = [tf.feature_column.numeric_column("x", [6])]


def _input_fn():
    x = np.random.RandomState(0).randn(256, 6).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(32)


def _train_dnn(model_dir, **config):
    estimator = el.DNNClassifier(
        [16, 8], FEATURES, model_dir=str(model_dir),
        optimizer=lambda: tf.keras.optimizers.Adam(0.01),
        config=el.RunConfig(tf_random_seed=11, **config))
    estimator.train(_input_fn, steps=30)
    return estimator


def test_canned_dnn_with_xla_reaches_the_same_weights(tmp_path):
    plain = _train_dnn(tmp_path / "plain")
    compiled = _train_dnn(tmp_path / "xla", experimental_jit_compile=True)
    names = [n for n in plain.get_variable_names() if "/Adam" not in n]
    assert names == [n for n in compiled.get_variable_names() if "/Adam" not in n]
    for name in names:
        np.testing.assert_allclose(compiled.get_variable_value(name),
                                   plain.get_variable_value(name), rtol=1e-4, atol=1e-5)
    assert compiled.evaluate(_input_fn, steps=2)["global_step"] == 30


def test_only_the_training_graph_is_compiled(tmp_path):
    compiled_ops = {}

    def model_fn(features, labels, mode):
        hidden = tf.keras.layers.Dense(8, activation="relu")(features["x"])
        logits = tf.keras.layers.Dense(2)(hidden)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(
            loss, tf.compat.v1.train.get_global_step())
        graph = tf.compat.v1.get_default_graph()
        compiled_ops[mode] = sum("_XlaCompile" in op.node_def.attr
                                 for op in graph.get_operations())
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op)

    estimator = el.Estimator(model_fn, str(tmp_path),
                             el.RunConfig(experimental_jit_compile=True))
    estimator.train(_input_fn, steps=3)
    estimator.evaluate(_input_fn, steps=1)
    # The forward pass, the gradients and Adam's updates are in the jit scope.
    assert compiled_ops[el.ModeKeys.TRAIN] > 20
    assert compiled_ops[el.ModeKeys.EVAL] == 0


def test_this_tensorflow_compiles_jit_scoped_ops():
    # The probe looks for an XLA cluster in a traced run; TF 2.16+ CPU wheels have one.
    xla.check_available()
    assert xla._AVAILABLE[tf.compat.v1.VERSION] is None


@pytest.mark.parametrize("value", [1, "yes", None])
def test_experimental_jit_compile_must_be_a_bool(value):
    with pytest.raises(TypeError, match=r"experimental_jit_compile must be a bool, got"):
        el.RunConfig(experimental_jit_compile=value)


def test_replace_keeps_and_changes_the_switch():
    config = el.RunConfig(experimental_jit_compile=True)
    assert config.replace(save_summary_steps=5).experimental_jit_compile is True
    assert config.replace(experimental_jit_compile=False).experimental_jit_compile is False
    assert el.RunConfig().experimental_jit_compile is False
