"""GradientAccumulationOptimizer: N micro-batches of B equal one batch of N*B."""

import numpy as np
import pytest

import estimator_lite as el
from estimator_lite._tf import tf

ATOL = 1e-5


def _data():
    rng = np.random.RandomState(3)
    x = rng.randn(64, 4).astype(np.float32)
    return x, (x @ rng.randn(4, 1)).astype(np.float32)


def _model_fn(optimizer_fn, micro_batches, **clip):
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [4, 1], initializer=tf.constant_initializer(0.1))
        loss = tf.reduce_mean(tf.square(tf.matmul(features, w) - labels))
        optimizer = el.GradientAccumulationOptimizer(optimizer_fn(), micro_batches,
                                                     **clip)
        train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op)
    return model_fn


def _train(tmp_path, name, model_fn, batch, updates):
    x, y = _data()
    est = el.Estimator(model_fn, config=el.RunConfig(model_dir=str(tmp_path / name)))
    est.train(lambda: tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(batch),
              max_steps=updates)
    return est


@pytest.mark.parametrize("optimizer_fn", [
    lambda: tf.train.GradientDescentOptimizer(0.1), lambda: tf.train.AdamOptimizer(0.1)],
    ids=["sgd", "adam"])
@pytest.mark.parametrize("clip", [{}, {"clip_norm": 0.5}, {"clip_value": 0.05}],
                         ids=["no_clip", "clip_norm", "clip_value"])
def test_four_micro_batches_equal_one_big_batch(tmp_path, optimizer_fn, clip):
    big = _train(tmp_path, "big", _model_fn(optimizer_fn, 1, **clip), 32, updates=2)
    small = _train(tmp_path, "small", _model_fn(optimizer_fn, 4, **clip), 8, updates=2)
    np.testing.assert_allclose(small.get_variable_value("w"), big.get_variable_value("w"),
                               atol=ATOL)
    assert small.get_variable_value("global_step") == 2  # counts applied updates
    assert not np.allclose(big.get_variable_value("w"), 0.1)


def test_clipping_changes_the_update(tmp_path):
    sgd = lambda: tf.train.GradientDescentOptimizer(0.1)  # noqa: E731
    free = _train(tmp_path, "free", _model_fn(sgd, 2), 8, updates=1)
    clipped = _train(tmp_path, "clipped", _model_fn(sgd, 2, clip_norm=0.01), 8, updates=1)
    moved = clipped.get_variable_value("w") - 0.1
    assert np.linalg.norm(moved) == pytest.approx(0.1 * 0.01, rel=1e-4)
    assert np.linalg.norm(free.get_variable_value("w") - 0.1) > 0.01


def test_errors():
    sgd = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(TypeError, match="optimizer must be"):
        el.GradientAccumulationOptimizer("sgd", 2)
    with pytest.raises(ValueError, match="num_micro_batches must be >= 1"):
        el.GradientAccumulationOptimizer(sgd, 0)
    with pytest.raises(ValueError, match="clip_norm must be > 0"):
        el.GradientAccumulationOptimizer(sgd, 2, clip_norm=0)
    with tf.Graph().as_default():
        v = tf.get_variable("v", [1])
        with pytest.raises(ValueError, match="every gradient is None"):
            el.GradientAccumulationOptimizer(sgd, 2).apply_gradients([(None, v)])
