"""The state updates Keras layers leave dangling run once per training step.

Written as users write model_fns (`import tensorflow as tf`, `tf.keras.layers`,
`tf.data`); here `tf.keras` is Keras 3. tests/_engine/state_updates_compat_test.py
compares the same layers with tf-keras and tf.estimator 2.15.
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite._engine import state_updates

v1 = tf.compat.v1
MOMENTUM = 0.99  # Keras' BatchNormalization default
STEPS = 4


def _global(name_part):
    """The one global variable whose name contains `name_part`."""
    found = [v for v in v1.global_variables() if name_part in v.name]
    assert len(found) == 1, [v.name for v in v1.global_variables()]
    return found[0]


def _train_graph(build):
    """Builds `build()` -> (loss, extra) with a GradientDescent train op, recording
    the ops it creates; returns (graph, train_op, loss, extra, recorded ops)."""
    graph = tf.Graph()
    with graph.as_default():
        step = v1.train.get_or_create_global_step()
        with state_updates.recording() as created:
            loss, extra = build()
            train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
                loss, global_step=step)
    return graph, train_op, loss, extra, created.ops


def _dropout_model():
    mask = tf.keras.layers.Dropout(0.5)(tf.ones([1, 64]), training=True)
    weight = v1.get_variable("w", initializer=1.0)
    return tf.reduce_sum(mask) * weight, mask


def test_dropout_draws_a_new_mask_every_step_and_its_seed_advances_once():
    graph, train_op, loss, mask, created = _train_graph(_dropout_model)
    with graph.as_default():
        step_op = state_updates.with_state_updates(train_op, loss, created)
        seed = _global("seed_generator_state")
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            plain = {session.run(mask).tobytes() for _ in range(STEPS)}
            start = session.run(seed)[1]
            masks = [session.run([mask, step_op])[0].tobytes() for _ in range(STEPS)]
            advanced = session.run(seed)[1] - start
    assert len(plain) == 1  # Keras 3 alone: the same mask on every run
    assert len(set(masks)) == STEPS
    assert advanced == STEPS


def test_batch_norm_moving_statistics_move_once_per_step():
    inputs = np.array([[1.0, -2.0], [3.0, 4.0], [5.0, 0.0]], np.float32)

    def model():
        outputs = tf.keras.layers.BatchNormalization()(tf.constant(inputs), training=True)
        scale = v1.get_variable("scale", initializer=1.0)
        return tf.reduce_sum(tf.square(outputs * scale)), None

    graph, train_op, loss, _, created = _train_graph(model)
    with graph.as_default():
        step_op = state_updates.with_state_updates(train_op, loss, created)
        mean, variance = _global("moving_mean"), _global("moving_variance")
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            for _ in range(STEPS):
                session.run(step_op)
            got_mean, got_variance = session.run([mean, variance])
    kept = MOMENTUM ** STEPS
    np.testing.assert_allclose(got_mean, (1 - kept) * inputs.mean(0), atol=1e-6)
    np.testing.assert_allclose(got_variance, kept + (1 - kept) * inputs.var(0),
                               atol=1e-5)


def test_updates_the_train_op_already_runs_are_left_alone():
    def model():
        counter = v1.get_variable("counter", initializer=0.0, trainable=False)
        weight = v1.get_variable("w", initializer=1.0)
        with tf.control_dependencies([counter.assign_add(1.0)]):
            return tf.square(weight), counter

    graph, train_op, loss, counter, created = _train_graph(model)
    with graph.as_default():
        assert state_updates.pending_updates(created, [train_op, loss]) == []
        assert state_updates.with_state_updates(train_op, loss, created) is train_op
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            for _ in range(STEPS):
                session.run(train_op)
            assert session.run(counter) == STEPS


def test_only_dangling_writes_to_non_trainable_global_state_are_picked():
    def model():
        state = v1.get_variable("state", initializer=0.0, trainable=False)
        weight = v1.get_variable("w", initializer=1.0)
        local = v1.get_variable("local", initializer=0.0, trainable=False,
                                collections=[v1.GraphKeys.LOCAL_VARIABLES])
        picked = state.assign_add(1.0, name="picked")
        weight.assign(2.0, name="trainable_target")
        local.assign(1.0, name="local_target")
        tf.group(state.assign(5.0, name="grouped"))
        v1.train.get_global_step().assign(7, name="global_step_target")
        return tf.square(weight), picked

    _, train_op, loss, _, created = _train_graph(model)
    # The structural rule alone (a plain list of ops: any variable may be the
    # target); from a recording only Keras layer state is (next test).
    picked = state_updates.pending_updates(list(created), [train_op, loss])
    assert [op.name for op in picked] == ["picked"]
    assert state_updates.pending_updates(created, [train_op, loss]) == []


def test_state_read_in_evaluation_and_prediction_is_the_trained_one(tmp_path):
    """BatchNorm in training mode in every mode: only training (here under a
    OneDeviceStrategy) moves it."""
    x = np.arange(24, dtype=np.float32).reshape(8, 3) / 8.0

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, x[:, :1])).batch(4)

    def model_fn(features, labels, mode):
        layer = tf.keras.layers.BatchNormalization()
        outputs = layer(features["x"], training=True)
        moving = tf.reduce_sum(layer.moving_mean)
        if mode == el.ModeKeys.PREDICT:
            return el.EstimatorSpec(mode, predictions={
                "moving": moving + tf.zeros_like(outputs[:, 0])})
        loss = tf.reduce_mean(tf.square(outputs[:, :1] - labels))
        if mode == el.ModeKeys.EVAL:
            return el.EstimatorSpec(mode, loss=loss, eval_metric_ops={
                "moving": (moving, tf.no_op())})
        return el.EstimatorSpec(mode, loss=loss, train_op=v1.train.AdamOptimizer(
            0.1).minimize(loss, global_step=v1.train.get_global_step()))

    config = el.RunConfig(train_distribute=tf.distribute.OneDeviceStrategy("/cpu:0"))
    estimator = el.Estimator(model_fn, str(tmp_path), config=config)
    estimator.train(lambda: input_fn().repeat(), steps=STEPS)
    trained = estimator.get_variable_value("batch_normalization/moving_mean").sum()
    assert trained != 0.0
    assert estimator.evaluate(input_fn)["moving"] == pytest.approx(trained, abs=1e-6)
    predicted = [p["moving"] for p in estimator.predict(input_fn)]
    np.testing.assert_allclose(predicted, [trained] * len(x), atol=1e-6)


def test_each_tower_runs_its_updates_once(tmp_path):
    """replicate_model_fn: every tower's BatchNorm and Dropout state moves once a step."""
    x = np.array([[1.0, 2.0], [3.0, 6.0], [-1.0, 0.0], [5.0, 2.0]], np.float32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, x[:, :1])).repeat().batch(4)

    def model_fn(features, labels, mode):
        # Towers share tf.compat.v1.get_variable weights; a Keras 3 layer is
        # created per tower, with its own state (so no trainable Keras weights).
        net = tf.keras.layers.BatchNormalization(center=False, scale=False)(
            features["x"], training=True)
        net = tf.keras.layers.Dropout(0.5)(net, training=True)
        logits = tf.matmul(net, v1.get_variable("w", initializer=[[1.0], [1.0]]))
        loss = v1.losses.mean_squared_error(labels, logits)
        optimizer = el.TowerOptimizer(v1.train.GradientDescentOptimizer(0.01))
        return el.EstimatorSpec(mode, loss=loss, train_op=optimizer.minimize(
            loss, global_step=v1.train.get_global_step()))

    config = el.RunConfig(session_config=v1.ConfigProto(device_count={"CPU": 2}))
    estimator = el.Estimator(
        el.replicate_model_fn(model_fn, devices=["/device:CPU:0", "/device:CPU:1"]),
        str(tmp_path), config=config)
    estimator.train(input_fn, steps=STEPS)
    names = estimator.get_variable_names()
    means = sorted(n for n in names if n.endswith("moving_mean"))
    seeds = sorted(n for n in names if n.endswith("seed_generator_state"))
    assert len(means) == 2 and len(seeds) == 2  # Keras 3 makes one layer per tower
    kept = MOMENTUM ** STEPS
    expected = sorted(tuple((1 - kept) * shard.mean(0)) for shard in (x[:2], x[2:]))
    got = sorted(tuple(estimator.get_variable_value(n)) for n in means)
    np.testing.assert_allclose(got, expected, atol=1e-6)
    assert [estimator.get_variable_value(n)[1] for n in seeds] == [STEPS, STEPS]


def test_assignments_to_the_model_fns_own_variables_are_not_run():
    # A counter a hook would reset, and a Keras metric updated in TRAIN mode: neither
    # is Keras layer state, and tf.estimator never ran them with the step.
    def model():
        counter = v1.get_variable("counter", initializer=5.0, trainable=False)
        counter.assign(0.0)  # for a hook to run; nothing here uses it
        weight = v1.get_variable("w", initializer=1.0)
        loss = tf.square(weight)
        tf.keras.metrics.Mean().update_state(loss)
        return loss, counter

    graph, train_op, loss, counter, created = _train_graph(model)
    with graph.as_default():
        assert state_updates.pending_updates(created, [train_op, loss]) == []
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            session.run(state_updates.with_state_updates(train_op, loss, created))
            assert session.run(counter) == 5.0


def test_a_replaced_initializer_is_never_run_as_an_update():
    # init_from_checkpoint swaps a variable's initializer for a restore; the original
    # assignment stays in the graph, dangling, and must not run with every step (it
    # would reset BatchNorm's statistics). TF's init_from_checkpoint does not reach
    # Keras 3 variables, so the swap is done here as it does it.
    def model():
        layer = tf.keras.layers.BatchNormalization()
        outputs = layer(tf.constant([[1.0, 2.0], [3.0, 5.0]]), training=True)
        mean = layer.moving_mean.value
        original = mean.initializer
        mean._initializer_op = tf.group(mean.assign([7.0, 7.0]))  # noqa: SLF001
        scale = v1.get_variable("scale", initializer=1.0)
        return tf.reduce_sum(outputs * scale), original

    _, train_op, loss, original, created = _train_graph(model)
    updates = state_updates.pending_updates(created, [train_op, loss])
    assert original.name in created.creation_initializers
    assert original not in updates
    assert len(updates) == 2  # moving mean and moving variance, once each
