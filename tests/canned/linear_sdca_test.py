"""LinearSDCA trains linear estimators as tf.estimator 2.15 does, checkpoints included.

tests/oracle/linear_sdca_driver.py builds the same three models for both libraries:
a LinearClassifier (numeric, vocabulary and multi-valued hashed columns, example
weights, L1 + L2, 2 loss partitions, the example table in 3 shards), a
LinearRegressor (numeric, bucketized and weighted-id columns) and compat.v1's
LinearClassifier. The TF 2.15 interpreter trains each to FIRST_STEPS and continues
a copy to MORE_STEPS. estimator_lite then
  * trains the same model from scratch to the same variables, unshrunk copies and
    example states (the table's occupied buckets), with the same metrics,
  * continues tf.estimator's model_dir (its table and unshrunk weights restored)
    to what tf.estimator reaches continuing it.
One example per batch: the SDCA kernel shuffles a batch from std::random_device.
"""

import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite.canned import linear_sdca
from tests.oracle import driver_path, load_driver, requires_oracle, run_oracle_driver

DRIVER_PATH = driver_path("linear_sdca_driver.py")
FIRST_STEPS = 25  # 2.5 passes over the 10 examples: states are read back
MORE_STEPS = 35
TOLERANCE = 1e-5

driver = load_driver(DRIVER_PATH, "linear_sdca_driver")


def _v1():
    from estimator_lite.compat import v1  # noqa: PLC0415

    return v1


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    """tf.estimator's model_dirs and results (one TF 2.15 subprocess)."""
    workdir = str(tmp_path_factory.mktemp("sdca_oracle"))
    return workdir, run_oracle_driver(DRIVER_PATH, "run", workdir, FIRST_STEPS,
                                      MORE_STEPS)


def _assert_same_state(actual, expected):
    assert sorted(actual["variables"]) == sorted(expected["variables"])
    for name, entry in expected["variables"].items():
        assert actual["variables"][name][:2] == entry[:2], name  # shape, dtype
        if len(entry) > 2:
            np.testing.assert_allclose(actual["variables"][name][2], entry[2],
                                       rtol=TOLERANCE, atol=TOLERANCE, err_msg=name)
    # Same examples in the same shards, same states.
    assert [row[:2] for row in actual["table"]] == [row[:2] for row in expected["table"]]
    np.testing.assert_allclose([row[2] for row in actual["table"]],
                               [row[2] for row in expected["table"]], rtol=TOLERANCE,
                               atol=TOLERANCE)


@pytest.mark.slow
@requires_oracle
@pytest.mark.parametrize("kind", driver.KINDS)
def test_trains_as_tf_estimator(kind, oracle, tmp_path):
    _, report = oracle
    expected = report[kind]
    estimator = driver.build(el, _v1(), kind, str(tmp_path))
    estimator.train(driver.input_fn(kind), max_steps=FIRST_STEPS)
    state = driver.checkpoint_state(str(tmp_path))
    assert len(state["table"]) == 10  # one state per example seen
    if kind == "classifier":  # num_table_shards=3: the examples spread over 3 tables
        assert len({row[0] for row in state["table"]}) == 3
    _assert_same_state(state, expected["state"])
    metrics = estimator.evaluate(driver.input_fn(kind, 1, 5))
    assert sorted(metrics) == sorted(expected["metrics"])
    for key, value in expected["metrics"].items():
        assert metrics[key] == pytest.approx(value, rel=TOLERANCE, abs=TOLERANCE), key


@requires_oracle
@pytest.mark.parametrize("kind", driver.KINDS)
def test_continues_a_tf_estimator_model_dir(kind, oracle, tmp_path):
    workdir, report = oracle
    model_dir = str(tmp_path / kind)
    shutil.copytree(os.path.join(workdir, kind, "tf"), model_dir)
    driver.build(el, _v1(), kind, model_dir).train(driver.input_fn(kind),
                                                   max_steps=MORE_STEPS)
    assert tf.train.load_variable(model_dir, "global_step") == MORE_STEPS
    _assert_same_state(driver.checkpoint_state(model_dir), report[kind]["more_state"])


def test_l1_shrinks_the_unshrunk_weights_into_the_model_weights(tmp_path):
    estimator = driver.build(el, _v1(), "classifier", str(tmp_path))
    estimator.train(driver.input_fn("classifier", batch_size=4), max_steps=12)
    shrinkage = 0.05 / 2.0  # l1 / l2 of the driver's classifier
    for column in ("x", "tag", "words"):
        name = f"linear/linear_model/{column}/weights"
        unshrunk = estimator.get_variable_value(name + "_unshrunk")
        np.testing.assert_allclose(
            estimator.get_variable_value(name),
            np.sign(unshrunk) * np.maximum(np.abs(unshrunk) - shrinkage, 0.0),
            rtol=1e-6, atol=1e-7, err_msg=name)
    assert estimator.evaluate(driver.input_fn("classifier", 1, 5))["accuracy"] >= 0.8


def test_larger_batches_fit_the_regression(tmp_path):
    estimator = driver.build(el, _v1(), "regressor", str(tmp_path))
    before = None
    for steps in (1, 40):
        estimator.train(driver.input_fn("regressor", batch_size=5), max_steps=steps)
        loss = estimator.evaluate(driver.input_fn("regressor", 1, 5))["average_loss"]
        before = loss if before is None else before
    assert loss < before / 2
    table = driver.checkpoint_state(str(tmp_path))["table"]
    assert len(table) == 10 and all(state[3] == 1.0 for _, _, state in table)  # weights


def test_label_vocabulary_trains_as_0_1_labels(tmp_path):
    features, labels = driver.data()
    names = np.array(["no", "yes"])[labels["class"]]
    weights = []
    for name, label_vocabulary, y in (("ids", None, labels["class"]),
                                      ("names", ["no", "yes"], names)):
        estimator = el.LinearClassifier(
            [tf.feature_column.numeric_column("x", shape=(2,))],
            model_dir=str(tmp_path / name), label_vocabulary=label_vocabulary,
            optimizer=el.experimental.LinearSDCA("id"))
        estimator.train(lambda y=y: tf.data.Dataset.from_tensor_slices(
            ({"x": features["x"], "id": features["id"]}, y)).repeat().batch(1), steps=15)
        weights.append(estimator.get_variable_value("linear/linear_model/x/weights"))
    np.testing.assert_array_equal(weights[0], weights[1])
    assert np.abs(weights[0]).sum() > 0.1


def test_hinge_loss_separates_the_classes():
    # Hinge and the other kernel losses are for a model_fn calling train_step.
    rng = np.random.RandomState(0)
    x = rng.randn(40, 2).astype(np.float32)
    labels = (x[:, 0] + x[:, 1] > 0).astype(np.float32)
    ids = np.array([str(i).encode() for i in range(40)])
    column = tf.feature_column.numeric_column("x", shape=(2,))
    with tf.Graph().as_default():
        tf.compat.v1.train.get_or_create_global_step()
        weights = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
        bias = tf.compat.v1.get_variable("b", [1], initializer=tf.zeros_initializer())
        sdca = el.experimental.LinearSDCA("id", symmetric_l2_regularization=0.1)
        train_op, update_weights = sdca.train_step(
            {"x": tf.constant(x), "id": tf.constant(ids)}, tf.constant(labels), [column],
            lambda c: bias if c is None else weights, "hinge_loss")
        step = tf.group(train_op, update_weights(train_op))
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            for _ in range(20):
                session.run(step)
            w, b = session.run([weights, bias])
    margins = (2 * labels - 1) * (x @ w[:, 0] + b[0])
    assert (margins > 0).mean() >= 0.95
    assert w[0, 0] > 0 and w[1, 0] > 0


def test_is_one_class_in_both_apis():
    assert _v1().experimental.LinearSDCA is el.experimental.LinearSDCA
    assert el.experimental.LinearSDCA is linear_sdca.LinearSDCA


def _numeric():
    return [tf.feature_column.numeric_column("x")]


@pytest.mark.parametrize("build,message", [
    (lambda sdca: el.LinearClassifier(_numeric(), n_classes=3, optimizer=sdca),
     "LinearSDCA cannot be used in a multi-class setting"),
    (lambda sdca: el.LinearRegressor(_numeric(), label_dimension=2, optimizer=sdca),
     "LinearSDCA can only be used with one-dimensional labels"),
    (lambda sdca: el.LinearClassifier(_numeric(), optimizer=sdca, sparse_combiner="mean"),
     'sparse_combiner must be "sum" when optimizer is a LinearSDCA'),
    (lambda sdca: el.LinearEstimator(el.MultiLabelHead(3), _numeric(), optimizer=sdca),
     "LinearSDCA needs a BinaryClassHead or a one-dimensional RegressionHead"),
    (lambda sdca: _v1().LinearClassifier(_numeric(), n_classes=4, optimizer=sdca),
     "LinearSDCA cannot be used in a multi-class setting"),
])
def test_unsupported_models_are_value_errors(build, message):
    with pytest.raises(ValueError, match=message):
        build(el.experimental.LinearSDCA("id"))


@pytest.mark.parametrize("kwargs,error,message", [
    ({"example_id_column": 3}, TypeError, "example_id_column must be a str"),
    ({"symmetric_l2_regularization": 0.0}, ValueError,
     "symmetric_l2_regularization must be > 0, got 0.0"),
    ({"symmetric_l1_regularization": -1.0}, ValueError,
     "symmetric_l1_regularization must be >= 0"),
    ({"symmetric_l1_regularization": "1"}, TypeError,
     "symmetric_l1_regularization must be a number"),
    ({"num_loss_partitions": 0}, ValueError, "num_loss_partitions must be >= 1"),
    ({"num_table_shards": 1.5}, TypeError, "num_table_shards must be an int or None"),
    ({"adaptive": 1}, TypeError, "adaptive must be a bool"),
])
def test_bad_arguments_are_named(kwargs, error, message):
    kwargs = {"example_id_column": "id", **kwargs}
    with pytest.raises(error, match=message):
        el.experimental.LinearSDCA(**kwargs)


def test_missing_example_ids_are_a_value_error(tmp_path):
    estimator = el.LinearRegressor(
        _numeric(), model_dir=str(tmp_path),
        optimizer=el.experimental.LinearSDCA("example_id"))
    with pytest.raises(ValueError, match="example_id_column 'example_id' is not in"):
        estimator.train(lambda: tf.data.Dataset.from_tensors(
            ({"x": [[1.0]]}, [[1.0]])), steps=1)
