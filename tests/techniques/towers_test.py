"""replicate_model_fn / TowerOptimizer on 2 and 4 logical CPU devices vs one device."""

import numpy as np
import pytest

import estimator_lite as el
from estimator_lite._tf import tf
from estimator_lite.techniques.towers import _sum_gradients
from tests.support.tf_versions import TF1, serve

ATOL = 1e-5
BATCH = 16
VOCAB = 10
REDUCTION = tf.losses.Reduction
# Towers per comparison. TF 1.15 (.ci/tf115, run in a few minutes on 2 cores) checks
# the design card's two CPU devices; TF 2 checks four as well.
TOWER_COUNTS = [2] if TF1 else [2, 4]


def _config(model_dir):
    return el.RunConfig(model_dir=str(model_dir), tf_random_seed=1,
                        session_config=tf.ConfigProto(device_count={"CPU": 4}))


def _devices(k):
    return [f"/device:CPU:{i}" for i in range(k)]


def _data(n=BATCH, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 4).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32) > 0).astype(np.float32)
    ids = rng.randint(0, VOCAB, size=(n, 3)).astype(np.int64)
    return x, y, ids


def _input_fn(n=BATCH, batch=BATCH, epochs=None):
    def fn():
        x, y, ids = _data(n)
        return tf.data.Dataset.from_tensor_slices(({"x": x, "ids": ids}, y)).repeat(
            epochs).batch(batch)
    return fn


def make_model_fn(optimizer_fn=lambda: tf.train.GradientDescentOptimizer(0.5),
                  reduction=REDUCTION.SUM_BY_NONZERO_WEIGHTS, embedding=False,
                  wrap=True):
    """Logistic regression on x (plus a bag of embedded ids when `embedding`)."""
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [4, 1], initializer=tf.constant_initializer(0.1))
        logits = tf.matmul(features["x"], w)
        if embedding:
            table = tf.get_variable("table", [VOCAB, 1],
                                    initializer=tf.constant_initializer(0.2))
            logits += tf.reduce_sum(tf.nn.embedding_lookup(table, features["ids"]), 1)
        probabilities = tf.sigmoid(logits)
        predictions = {"p": probabilities, "logits": logits}
        if mode == el.ModeKeys.PREDICT:
            return el.EstimatorSpec(mode, predictions=predictions, export_outputs={
                "serving_default": el.export.PredictOutput({"p": probabilities}),
                "regress": el.export.PredictOutput({"outputs": probabilities})})
        loss = tf.losses.sigmoid_cross_entropy(labels, logits, reduction=reduction)
        optimizer = optimizer_fn()
        if wrap:
            optimizer = el.TowerOptimizer(optimizer)
        train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
        metrics = {"accuracy": tf.metrics.accuracy(labels, tf.round(probabilities)),
                   "mean_p": tf.metrics.mean(probabilities),
                   "auc": tf.metrics.auc(labels, probabilities)}
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                eval_metric_ops=metrics, predictions=predictions)
    return model_fn


def _estimator(tmp_path, name, model_fn, k, **kwargs):
    if k is not None:
        model_fn = el.replicate_model_fn(model_fn, devices=_devices(k), **kwargs)
    return el.Estimator(model_fn, config=_config(tmp_path / name))


def _trained_variables(tmp_path, name, model_fn, k, steps=1, **kwargs):
    est = _estimator(tmp_path, name, model_fn, k, **kwargs)
    est.train(_input_fn(), max_steps=steps)
    return {n: est.get_variable_value(n) for n in est.get_variable_names()}, est


def _assert_same_variables(a, b):
    assert sorted(a) == sorted(b)  # the same names as the unreplicated model
    for name in a:
        np.testing.assert_allclose(a[name], b[name], atol=ATOL, err_msg=name)


@pytest.mark.parametrize("k", TOWER_COUNTS)
@pytest.mark.parametrize("reduction", [REDUCTION.SUM, REDUCTION.SUM_BY_NONZERO_WEIGHTS,
                                       REDUCTION.MEAN])
def test_one_step_equals_one_device(tmp_path, k, reduction):
    model_fn = make_model_fn(reduction=reduction)
    single, _ = _trained_variables(tmp_path, "one", model_fn, None)
    towers, _ = _trained_variables(tmp_path, "k", model_fn, k, loss_reduction=reduction)
    _assert_same_variables(single, towers)
    assert not np.allclose(single["w"], 0.1)  # the step really moved the weights


@pytest.mark.parametrize("k", TOWER_COUNTS)
def test_embedding_gradients_indexed_slices(tmp_path, k):
    model_fn = make_model_fn(embedding=True)
    single, _ = _trained_variables(tmp_path, "one", model_fn, None)
    towers, _ = _trained_variables(tmp_path, "k", model_fn, k)
    _assert_same_variables(single, towers)
    assert len(np.unique(single["table"])) > 1  # only the looked-up rows changed


def test_sum_gradients_concatenates_indexed_slices():
    with tf.Graph().as_default():
        a = tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0]), tf.constant([3, 1]))
        b = tf.IndexedSlices(tf.constant([[2.0]]), tf.constant([2]), tf.constant([3, 1]))
        summed = _sum_gradients([a, None, b])
        assert isinstance(summed, tf.IndexedSlices)
        dense = _sum_gradients([tf.constant([1.0]), tf.constant([2.0])])
        with tf.Session() as session:
            values, indices = session.run([summed.values, summed.indices])
            assert values.ravel().tolist() == [1.0, 2.0] and indices.tolist() == [0, 2]
            assert session.run(dense).tolist() == [3.0]
        assert _sum_gradients([None, None]) is None


@pytest.mark.parametrize("k", TOWER_COUNTS)
def test_several_adam_steps_match(tmp_path, k):
    model_fn = make_model_fn(optimizer_fn=lambda: tf.train.AdamOptimizer(0.1))
    single, _ = _trained_variables(tmp_path, "one", model_fn, None, steps=5)
    towers, _ = _trained_variables(tmp_path, "k", model_fn, k, steps=5)
    _assert_same_variables(single, towers)
    assert {"w/Adam", "w/Adam_1", "beta1_power"} <= set(towers)


@pytest.mark.parametrize("k", TOWER_COUNTS)
def test_eval_metrics_equal_one_device(tmp_path, k):
    model_fn = make_model_fn()
    _, single = _trained_variables(tmp_path, "one", model_fn, None, steps=3)
    _, towers = _trained_variables(tmp_path, "k", model_fn, k, steps=3)
    eval_input = _input_fn(n=70, batch=BATCH, epochs=1)  # last batch of 6: uneven
    expected = single.evaluate(eval_input)
    got = towers.evaluate(eval_input)
    assert set(got) == {"accuracy", "mean_p", "auc", "loss", "global_step"}
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, abs=ATOL), name
    assert 0.0 < got["accuracy"] < 1.0 and 0.0 < got["auc"] < 1.0


@pytest.mark.parametrize("k", TOWER_COUNTS)
def test_predictions_equal_and_in_order(tmp_path, k):
    model_fn = make_model_fn()
    _, single = _trained_variables(tmp_path, "one", model_fn, None, steps=2)
    _, towers = _trained_variables(tmp_path, "k", model_fn, k, steps=2)
    x, _, ids = _data(22)

    def predict_input():  # 22 = 16 + 6: the last batch does not divide by k
        return tf.data.Dataset.from_tensor_slices({"x": x, "ids": ids}).batch(16)

    expected = [p["p"] for p in single.predict(predict_input)]
    got = [p["p"] for p in towers.predict(predict_input)]
    assert len(got) == 22
    np.testing.assert_allclose(got, expected, atol=ATOL)


def test_exported_replicated_model_serves(tmp_path):
    model_fn = make_model_fn()
    _, towers = _trained_variables(tmp_path, "k", model_fn, 4, steps=2)
    receiver_fn = el.export.build_raw_serving_input_receiver_fn({
        "x": tf.TensorSpec([None, 4], tf.float32),
        "ids": tf.TensorSpec([None, 3], tf.int64)})
    export_dir = towers.export_saved_model(str(tmp_path / "export"), receiver_fn)
    x, _, ids = _data(3)  # fewer examples than towers
    expected = [p["p"] for p in towers.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": x, "ids": ids}).batch(3))]
    served = serve(export_dir, x=x, ids=ids)
    np.testing.assert_allclose(served["p"], expected, atol=ATOL)
    regress = serve(export_dir, "regress", x=x, ids=ids)
    np.testing.assert_allclose(regress["outputs"], expected, atol=ATOL)


def _sparse_model_fn(learning_rate, initializer=None):
    """A model_fn of one embedding of the sparse "ids", trained by a TowerOptimizer
    (SGD at `learning_rate`)."""
    def model_fn(features, labels, mode):
        table = tf.get_variable("table", [VOCAB, 1], initializer=initializer)
        logits = tf.nn.embedding_lookup_sparse(table, features["ids"], None,
                                               combiner="sum")
        loss = tf.losses.sigmoid_cross_entropy(labels, logits)
        optimizer = el.TowerOptimizer(tf.train.GradientDescentOptimizer(learning_rate))
        train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op)
    return model_fn


def test_sparse_features_are_split(tmp_path):
    model_fn = _sparse_model_fn(1.0, tf.constant_initializer(0.3))
    _, y, ids = _data()

    def input_fn():
        sparse = tf.SparseTensor(
            indices=[[i, j] for i in range(BATCH) for j in range(i % 3 + 1)],
            values=[int(ids[i, j]) for i in range(BATCH) for j in range(i % 3 + 1)],
            dense_shape=[BATCH, 3])
        return {"ids": tf.cast(sparse, tf.int64)}, tf.constant(y)

    results = {}
    for k in (None, 2, 4):
        fn = model_fn if k is None else el.replicate_model_fn(model_fn,
                                                              devices=_devices(k))
        est = el.Estimator(fn, config=_config(tmp_path / f"s{k}"))
        est.train(input_fn, steps=1)
        results[k] = est.get_variable_value("table")
    np.testing.assert_allclose(results[2], results[None], atol=ATOL)
    np.testing.assert_allclose(results[4], results[None], atol=ATOL)


def test_one_device_adds_no_ops():
    def build(model_fn):
        graph = tf.Graph()
        with graph.as_default():
            tf.train.create_global_step()
            x, y, ids = _data()
            model_fn({"x": tf.constant(x), "ids": tf.constant(ids)}, tf.constant(y),
                     el.ModeKeys.TRAIN)
        return sorted(op.type for op in graph.get_operations())

    model_fn = make_model_fn()
    assert build(el.replicate_model_fn(model_fn, devices=["/device:CPU:0"])) == build(
        model_fn)


@pytest.mark.parametrize("placement, expected_devices", [
    ("consolidate", {"/device:CPU:0"}),
    ("round_robin", {"/device:CPU:0", "/device:CPU:1"}),
])
def test_variable_placement(placement, expected_devices):
    model_fn = el.replicate_model_fn(make_model_fn(embedding=True), devices=_devices(2),
                                     variable_placement=placement)
    with tf.Graph().as_default():
        tf.train.create_global_step()
        x, y, ids = _data()
        model_fn({"x": tf.constant(x), "ids": tf.constant(ids)}, tf.constant(y),
                 el.ModeKeys.TRAIN)
        devices = {v.op.name: v.device for v in tf.trainable_variables()}
    assert set(devices) == {"w", "table"}  # one copy each, unreplicated names
    assert {d.replace("/device:CPU:", "/device:CPU:") for d in devices.values()} == (
        expected_devices)


def test_tower_optimizer_passes_through_without_replication(tmp_path):
    plain, _ = _trained_variables(tmp_path, "plain", make_model_fn(wrap=False), None)
    wrapped, _ = _trained_variables(tmp_path, "wrapped", make_model_fn(), None)
    _assert_same_variables(plain, wrapped)


def test_tower_optimizer_wraps_sync_replicas(tmp_path):
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [4, 1], initializer=tf.constant_initializer(0.1))
        logits = tf.matmul(features["x"], w)
        loss = tf.losses.sigmoid_cross_entropy(labels, logits)
        optimizer = el.TowerOptimizer(tf.train.SyncReplicasOptimizer(
            tf.train.GradientDescentOptimizer(0.5), replicas_to_aggregate=1,
            total_num_replicas=1))
        train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op, training_chief_hooks=[
            optimizer.make_session_run_hook(is_chief=True)])

    towers, est = _trained_variables(tmp_path, "sync", model_fn, 2, steps=3)
    single, _ = _trained_variables(tmp_path, "one", make_model_fn(), None, steps=3)
    np.testing.assert_allclose(towers["w"], single["w"], atol=ATOL)
    assert est.get_variable_value("global_step") == 3


def test_train_and_evaluate_with_towers(tmp_path):
    est = _estimator(tmp_path, "tae", make_model_fn(), 2)
    metrics, _ = el.train_and_evaluate(
        est, el.TrainSpec(_input_fn(), max_steps=4),
        el.EvalSpec(_input_fn(n=32, epochs=1), steps=None, throttle_secs=0))
    assert metrics["global_step"] == 4 and 0.0 <= metrics["accuracy"] <= 1.0


# Errors ---------------------------------------------------------------------------


def test_loss_reduction_none_is_an_error():
    with pytest.raises(ValueError, match="loss_reduction NONE cannot be replicated"):
        el.replicate_model_fn(make_model_fn(), loss_reduction=REDUCTION.NONE)
    with pytest.raises(ValueError, match="loss_reduction must be one of"):
        el.replicate_model_fn(make_model_fn(), loss_reduction="median")
    with pytest.raises(ValueError, match="devices must be a non-empty list"):
        el.replicate_model_fn(make_model_fn(), devices=[])
    with pytest.raises(ValueError, match="variable_placement must be one of"):
        el.replicate_model_fn(make_model_fn(), devices=["/cpu:0"],
                              variable_placement="random")
    with pytest.raises(TypeError, match="TowerOptimizer needs an Optimizer"):
        el.TowerOptimizer(3)


def test_unwrapped_optimizer_with_several_devices_is_an_error(tmp_path):
    est = _estimator(tmp_path, "plain", make_model_fn(wrap=False), 2)
    with pytest.raises(ValueError, match="needs the optimizer wrapped in TowerOptimizer"):
        est.train(_input_fn(), steps=1)


def test_towers_with_different_optimizer_calls_are_an_error(tmp_path):
    calls = []

    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [4, 1])
        b = tf.get_variable("b", [1])
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) + b - labels))
        calls.append(1)
        var_list = [w] if len(calls) == 1 else [w, b]
        train_op = el.TowerOptimizer(tf.train.GradientDescentOptimizer(0.1)).minimize(
            loss, global_step=tf.train.get_global_step(), var_list=var_list)
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = _estimator(tmp_path, "diff", model_fn, 2)
    with pytest.raises(ValueError, match="towers made different optimizer calls"):
        est.train(_input_fn(), steps=1)


@pytest.mark.parametrize("reduction", [REDUCTION.SUM, REDUCTION.SUM_BY_NONZERO_WEIGHTS])
def test_uneven_and_short_last_batches_train_like_one_device(tmp_path, reduction):
    # 10 examples, batches of 4 on 4 towers: 4, 4, then 2 (two towers get none),
    # and a static batch of 6 (shards 2, 2, 1, 1). Each step equals the
    # one-device step; training ends cleanly at the end of the input.
    model_fn = make_model_fn(reduction=reduction)
    one = _estimator(tmp_path, "one", model_fn, None)
    towers = _estimator(tmp_path, "k", model_fn, 4, loss_reduction=reduction)
    for est in (one, towers):
        est.train(_input_fn(n=10, batch=4, epochs=1))
    assert towers.get_variable_value("global_step") == 3
    _assert_same_variables(
        {n: one.get_variable_value(n) for n in one.get_variable_names()},
        {n: towers.get_variable_value(n) for n in towers.get_variable_names()})

    def static_input_fn():  # static batch size 6
        x, y, ids = _data(6)
        return {"x": tf.constant(x), "ids": tf.constant(ids)}, tf.constant(y)

    for est in (one, towers):
        est.train(static_input_fn, steps=1)
    _assert_same_variables(
        {n: one.get_variable_value(n) for n in one.get_variable_names()},
        {n: towers.get_variable_value(n) for n in towers.get_variable_names()})


def test_sparse_only_training_batch_not_divisible_is_a_value_error(tmp_path):
    # Without a dense feature the shard sizes are unknown: training needs equal
    # shards, and a static batch that cannot give them is an early ValueError.
    est = _estimator(tmp_path, "odd", _sparse_model_fn(0.1), 4)

    def input_fn():
        _, y, ids = _data(6)
        return {"ids": tf.sparse.from_dense(tf.constant(ids))}, tf.constant(y)

    with pytest.raises(ValueError, match="batch size 6 is not divisible by the number "
                                         "of devices 4"):
        est.train(input_fn, steps=1)
