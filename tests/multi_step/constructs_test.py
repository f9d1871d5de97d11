"""Model_fn constructs users write, trained in multi-step loops (issue 39, items 4-11).

Each trains to K=1's variables bit for bit, either inside the loop or after one
warning that falls back to one step per session call; none differs silently.
"""

import logging

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite._tf import onednn_rewrites_on

tf1 = tf.compat.v1
FALLBACK = "experimental_steps_per_loop=4 ignored"


def _input_fn():
    rng = np.random.RandomState(0)
    x = rng.randn(96, 3).astype(np.float32)
    y = (x.sum(1, keepdims=True) > 0).astype(np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(8).repeat()


def _head(hidden, labels, extra_ops=(), double=False):
    """A logistic output on `hidden`; the train op (optionally a GAN-style pair of
    minimize calls, each moving the global step)."""
    v = tf1.get_variable("v", [hidden.shape[-1], 1],
                         initializer=tf1.glorot_uniform_initializer())
    loss = tf1.losses.sigmoid_cross_entropy(labels, tf.matmul(hidden, v))
    step = tf1.train.get_global_step()
    train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    if double:
        train_op = tf.group(train_op, tf1.train.GradientDescentOptimizer(0.05).minimize(
            loss, global_step=step))
    return loss, tf.group(train_op, *extra_ops)


def _dense(features):
    w = tf1.get_variable("w", [3, 4], initializer=tf1.glorot_uniform_initializer())
    return tf.matmul(features["x"], w)


def _model_fn(construct):
    def model_fn(features, labels, mode):
        scaffold, extra, double = None, (), False
        hidden = _dense(features)
        if construct == "seeded_dropout":
            hidden = tf1.nn.dropout(hidden, rate=0.5)
        elif construct == "keras_batch_norm":
            hidden = tf.keras.layers.BatchNormalization()(hidden, training=True)
        elif construct == "keras_dropout":
            hidden = tf.keras.layers.Dropout(0.5, seed=4)(hidden, training=True)
        elif construct == "scaffold_saver":
            scaffold = tf1.train.Scaffold(saver=tf1.train.Saver(max_to_keep=2))
        elif construct == "init_from_checkpoint":
            tf1.train.init_from_checkpoint(model_fn.checkpoint, {"w": "w"})
        elif construct == "placeholder":
            hidden = hidden * tf1.placeholder_with_default(1.0, [], name="scale")
        elif construct == "double_minimize":
            double = True
        elif construct == "ref_variable":
            counter = tf1.get_variable("counter", [], use_resource=False,
                                       initializer=tf1.zeros_initializer())
            extra = (tf1.assign_add(counter, 1.0),)
        loss, train_op = _head(hidden, labels, extra, double)
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op, scaffold=scaffold)
    return model_fn


def _checkpoint(tmp_path):
    with tf.Graph().as_default():
        tf1.get_variable("w", [3, 4], initializer=tf1.ones_initializer())
        saver = tf1.train.Saver()
        with tf1.Session() as session:
            session.run(tf1.global_variables_initializer())
            return saver.save(session, str(tmp_path / "warm" / "model"))


def _train(model_dir, construct, steps_per_loop, tmp_path):
    tf.keras.utils.set_random_seed(1)  # Keras 3 seed generators start alike
    model_fn = _model_fn(construct)
    model_fn.checkpoint = _checkpoint(tmp_path)
    estimator = el.Estimator(model_fn, config=el.RunConfig(
        model_dir=str(model_dir), tf_random_seed=3,
        experimental_steps_per_loop=steps_per_loop))
    estimator.train(_input_fn, max_steps=10)
    return {n: estimator.get_variable_value(n) for n in estimator.get_variable_names()}


# construct -> whether a K=4 loop falls back (with its warning) or loops.
CONSTRUCTS = {
    "seeded_dropout": "tf_random_seed is set and the model_fn draws random numbers",
    "keras_batch_norm": None,   # the moving statistics update inside the loop
    "keras_dropout": None,      # its seed counter advances inside the loop
    "scaffold_saver": "Scaffold sets saver",
    "init_from_checkpoint": "replaces initializers inside the loop",
    "placeholder": "creates placeholders ('scale')",
    "double_minimize": None,    # stops at max_steps as single steps do
    "ref_variable": "cannot run inside a loop (TypeError",
}


@pytest.mark.tf2
@pytest.mark.parametrize("construct", sorted(CONSTRUCTS))
def test_a_loop_trains_what_single_steps_train_or_says_why_not(tmp_path, caplog,
                                                               construct):
    one = _train(tmp_path / "k1", construct, 1, tmp_path)
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        looped = _train(tmp_path / "k4", construct, 4, tmp_path)
    warnings = [r.getMessage() for r in caplog.records if FALLBACK in r.getMessage()]
    reason = CONSTRUCTS[construct]
    if reason is None:
        assert warnings == []
    else:
        assert len(warnings) == 1 and reason in warnings[0], warnings
    assert sorted(looped) == sorted(one)
    assert one["global_step"] == 10  # two minimize calls: 2 a step, 10 reached exactly
    for name in one:
        np.testing.assert_array_equal(looped[name], one[name], err_msg=name)
    if construct == "keras_batch_norm":  # the statistics moved
        assert not np.allclose(one["batch_normalization/moving_mean"], 0.0)


@pytest.mark.tf2
def test_a_product_and_bias_fused_by_onednn_falls_back(tmp_path, caplog):
    """A canned DNN: oneDNN fuses MatMul+BiasAdd in single steps' graph, not in a
    loop's body, so the loop falls back (where the rewrites are on)."""
    def train(steps_per_loop):
        estimator = el.DNNClassifier(
            [16, 8], [tf.feature_column.numeric_column("x", shape=[3])],
            config=el.RunConfig(model_dir=str(tmp_path / str(steps_per_loop)),
                                tf_random_seed=3,
                                experimental_steps_per_loop=steps_per_loop))
        estimator.train(_input_fn, max_steps=8)
        return {n: estimator.get_variable_value(n) for n in estimator.get_variable_names()}

    one = train(1)
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        looped = train(4)
    fell_back = any("oneDNN rewrites fuse" in r.getMessage() for r in caplog.records)
    assert fell_back == onednn_rewrites_on()
    for name in one:
        np.testing.assert_array_equal(looped[name], one[name], err_msg=name)


@pytest.mark.tf2
def test_a_hook_that_feeds_is_refused_before_the_first_step(tmp_path):
    """A feed holds for a whole loop: a hook feeding any tensor is a clear error."""
    scale = {}

    def model_fn(features, labels, mode):
        loss, train_op = _head(_dense(features) * scale["tensor"], labels)
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def input_fn():
        scale["tensor"] = tf1.placeholder_with_default(1.0, [], name="scale")
        return _input_fn()

    class Feed(tf1.train.SessionRunHook):
        def before_run(self, run_context):
            return tf1.train.SessionRunArgs(None, feed_dict={scale["tensor"]: 0.5})

    estimator = el.Estimator(model_fn, config=el.RunConfig(
        model_dir=str(tmp_path), experimental_steps_per_loop=4))
    refused = "Feed feeds 1 tensor.*experimental_steps_per_loop=1"
    with pytest.raises(ValueError, match=refused):
        estimator.train(input_fn, max_steps=8, hooks=[Feed()])
    assert estimator.latest_checkpoint() is None or estimator.get_variable_value(
        "global_step") == 0
