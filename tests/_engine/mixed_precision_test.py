"""RunConfig(experimental_mixed_precision=...): half-precision compute, float32 state."""

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el

FEATURES = [tf.feature_column.numeric_column("x", [6])]


def _input_fn():
    x = np.random.RandomState(0).randn(256, 6).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(32)


def _dnn(model_dir, optimizer="Adagrad", **config):
    return el.DNNClassifier([32, 16], FEATURES, model_dir=str(model_dir),
                            optimizer=optimizer,
                            config=el.RunConfig(tf_random_seed=5, **config))


def test_bfloat16_trains_like_float32_and_checkpoints_stay_float32(tmp_path):
    plain = _dnn(tmp_path / "plain")
    plain.train(_input_fn, steps=40)
    half = _dnn(tmp_path / "bf16", experimental_mixed_precision="mixed_bfloat16")
    half.train(_input_fn, steps=40)
    rewrite = half.config.session_config.graph_options.rewrite_options
    assert rewrite.auto_mixed_precision_onednn_bfloat16 == rewrite.ON
    reader = tf.train.load_checkpoint(half.latest_checkpoint())
    dtypes = reader.get_variable_to_dtype_map()
    assert {dtypes[name] for name in dtypes} == {tf.float32, tf.int64}
    plain_loss = plain.evaluate(_input_fn, steps=4)["loss"]
    half_loss = half.evaluate(_input_fn, steps=4)["loss"]
    # bfloat16 keeps 8 bits of mantissa: close, not equal.
    assert half_loss == pytest.approx(plain_loss, rel=0.05)


def test_a_bfloat16_model_dir_continues_in_float32(tmp_path):
    half = _dnn(tmp_path, experimental_mixed_precision="mixed_bfloat16")
    half.train(_input_fn, steps=10)
    full = _dnn(tmp_path)
    full.train(_input_fn, steps=5)
    assert full.get_variable_value("global_step") == 15


class _ReadLossScale(tf.compat.v1.train.SessionRunHook):
    """Reads the (local, never checkpointed) loss scale when training ends."""

    def begin(self):
        self._scale = next(v for v in tf.compat.v1.local_variables()
                           if v.op.name == "loss_scale/current_loss_scale")

    def end(self, session):
        self.value = session.run(self._scale)


def test_float16_canned_training_is_loss_scaled_and_checkpoints_stay_plain(tmp_path):
    estimator = _dnn(tmp_path, optimizer=tf.compat.v1.train.AdamOptimizer(0.01),
                     experimental_mixed_precision="mixed_float16")
    scale = _ReadLossScale()
    estimator.train(_input_fn, steps=20, hooks=[scale])
    # Started at 2**15; halved on overflow only: still a power of 2.
    assert scale.value > 1 and np.log2(scale.value) == int(np.log2(scale.value))
    assert not [n for n in estimator.get_variable_names() if "loss_scale" in n]
    assert estimator.evaluate(_input_fn, steps=4)["accuracy"] > 0.8
    # The model_dir continues in float32, and back in float16.
    _dnn(tmp_path, optimizer=tf.compat.v1.train.AdamOptimizer(0.01)).train(
        _input_fn, steps=5)
    again = _dnn(tmp_path, optimizer=tf.compat.v1.train.AdamOptimizer(0.01),
                 experimental_mixed_precision="mixed_float16")
    again.train(_input_fn, steps=5)
    assert again.get_variable_value("global_step") == 30


def test_float32_graphs_have_no_loss_scale(tmp_path):
    estimator = _dnn(tmp_path, optimizer=tf.compat.v1.train.AdamOptimizer(0.01))
    with pytest.raises(StopIteration):
        estimator.train(_input_fn, steps=2, hooks=[_ReadLossScale()])


@pytest.mark.parametrize("value, error, pattern", [
    ("float16", ValueError,
     r"must be one of \('mixed_float16', 'mixed_bfloat16'\) or None, got 'float16'"),
    (16, TypeError, r"must be a str or None, got 16 of type int"),
])
def test_bad_policies_are_refused(value, error, pattern):
    with pytest.raises(error, match=r"experimental_mixed_precision " + pattern):
        el.RunConfig(experimental_mixed_precision=value)


@pytest.mark.parametrize("optimizer", [
    lambda: tf.keras.optimizers.SGD(1e-30),
    lambda: tf.compat.v1.train.GradientDescentOptimizer(1e-30),
], ids=["keras", "v1"])
def test_float16_skips_overflowing_steps_and_lowers_the_scale(tmp_path, optimizer):
    # Gradients of ~2e36 overflow float32 once multiplied by the initial 2**15:
    # those steps change nothing (global step included) and halve the scale
    # until the scaled gradients are finite; then the step is applied.
    def model_fn(features, labels, mode):
        weight = tf.compat.v1.get_variable("w", [1], initializer=tf.ones_initializer())
        logits = features["x"][:, :1] * weight * 1e18
        head = el.RegressionHead()
        # A Keras optimizer needs the variables, as in tf.estimator 2.15.
        return head.create_estimator_spec(features, mode, logits, labels,
                                          optimizer=optimizer(),
                                          trainable_variables=[weight])

    def input_fn():
        return tf.data.Dataset.from_tensors(({"x": np.ones([1, 6], np.float32)},
                                             np.zeros([1, 1], np.float32))).repeat()

    estimator = el.Estimator(model_fn, str(tmp_path), el.RunConfig(
        experimental_mixed_precision="mixed_float16"))
    scale = _ReadLossScale()
    estimator.train(input_fn, steps=1, hooks=[scale])
    assert 1 <= scale.value < 2.0 ** 15
    assert estimator.get_variable_value("global_step") == 1
    assert estimator.get_variable_value("w")[0] != 1.0
