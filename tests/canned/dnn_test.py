"""DNNClassifier / DNNRegressor: train, evaluate, predict, export; arguments."""

import importlib.util
import re

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite import canned
from estimator_lite.compat import v1
from tests.oracle import driver_path

DRIVER_PATH = driver_path("canned_driver.py")
BINARY_METRICS = {"accuracy", "accuracy_baseline", "auc", "auc_precision_recall",
                  "average_loss", "label/mean", "loss", "precision", "prediction/mean",
                  "recall", "global_step"}
BINARY_PREDICTIONS = {"logits", "logistic", "probabilities", "class_ids", "classes",
                      "all_class_ids", "all_classes"}
HIDDEN_UNITS_TYPE = "hidden_units must be a list of ints"
HIDDEN_UNITS_NOT_SIZE = "hidden_units must contain only layer sizes"
HIDDEN_UNITS_SIZE = "hidden_units sizes must be >= 1"
DROPOUT_RANGE = "dropout must be in [0.0, 1.0)"
COLUMNS_EMPTY = "feature_columns must contain at least one feature column"
COLUMNS_TYPE = "feature_columns must contain only feature columns"
N_CLASSES = "n_classes must be > 1"
ACTIVATION = "activation_fn must be callable, an activation name or None"
ACTIVATION_NAME = "activation_fn names no activation"
LOSS_REDUCTION = "loss_reduction must be one of"
OPTIMIZER_NAME = "optimizer must be one of"


def _load_driver():
    spec = importlib.util.spec_from_file_location("canned_driver", DRIVER_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


driver = _load_driver()


def _examples(features, count):
    """Serialized tf.train.Examples of the first `count` rows of the driver's table."""
    out = []
    for i in range(count):
        feature = {
            "x": tf.train.Feature(float_list=tf.train.FloatList(value=features["x"][i])),
            "color": tf.train.Feature(bytes_list=tf.train.BytesList(
                value=[features["color"][i].encode()])),
            "city": tf.train.Feature(bytes_list=tf.train.BytesList(
                value=[features["city"][i].encode()])),
            "z": tf.train.Feature(float_list=tf.train.FloatList(value=[features["z"][i]])),
        }
        out.append(tf.train.Example(features=tf.train.Features(feature=feature))
                   .SerializeToString())
    return out


def test_dnn_classifier_trains_evaluates_predicts_and_exports(tmp_path):
    c = driver.columns()
    estimator = canned.DNNClassifier([8], [c["x"], c["color_emb"], c["city_ind"], c["z"]],
                                     model_dir=str(tmp_path / "model"),
                                     optimizer=tf.keras.optimizers.Adagrad(0.3),
                                     config=el.RunConfig(tf_random_seed=42))
    estimator.train(driver.input_fn("binary"), steps=40)
    metrics = estimator.evaluate(driver.input_fn("binary", 1))
    assert set(metrics) == BINARY_METRICS
    assert metrics["global_step"] == 40
    assert metrics["accuracy"] > 0.7  # The labels are a simple function of x and color.
    features, _ = driver.data()
    predictions = list(estimator.predict(
        lambda: tf.data.Dataset.from_tensor_slices(features).batch(8)))
    assert len(predictions) == len(features["x"])
    assert set(predictions[0]) == BINARY_PREDICTIONS
    export_dir = estimator.export_saved_model(
        str(tmp_path / "export"), driver.serving_input_receiver_fn(el.export))
    loaded = tf.saved_model.load(export_dir)
    assert set(loaded.signatures) == {"serving_default", "classification", "regression",
                                      "predict"}
    served = loaded.signatures["predict"](examples=tf.constant(_examples(features, 5)))
    np.testing.assert_allclose(served["probabilities"].numpy(),
                               [p["probabilities"] for p in predictions[:5]], rtol=1e-5)


def test_dnn_regressor_with_dropout_and_batch_norm_learns(tmp_path):
    c = driver.columns()
    estimator = canned.DNNRegressor(
        [16], [c["x"], c["z"]], model_dir=str(tmp_path), dropout=0.1, batch_norm=True,
        optimizer=tf.keras.optimizers.Adam(0.05), activation_fn=tf.nn.tanh,
        # Seeded: an unseeded start once made the "before" loss low enough to fail.
        config=el.RunConfig(tf_random_seed=0))
    before = estimator.evaluate(driver.input_fn("real", 1))["average_loss"]
    estimator.train(driver.input_fn("real"), steps=150)
    after = estimator.evaluate(driver.input_fn("real", 1))
    assert after["average_loss"] < 0.5 * before
    assert estimator.get_variable_value("training/Adam/learning_rate") == pytest.approx(
        0.05)
    names = estimator.get_variable_names()
    assert "dnn/hiddenlayer_0/batchnorm_0/moving_mean" in names
    # Batch norm's moving statistics were updated by training.
    assert np.any(estimator.get_variable_value(
        "dnn/hiddenlayer_0/batchnorm_0/moving_mean") != 0.0)


def test_v1_optimizer_instance_and_warm_start(tmp_path):
    c = driver.columns()
    first = canned.DNNClassifier(
        [4], [c["x"]], model_dir=str(tmp_path / "first"),
        optimizer=lambda: tf.compat.v1.train.MomentumOptimizer(0.1, 0.9))
    first.train(driver.input_fn("binary"), steps=3)
    assert first.get_variable_value("global_step") == 3
    assert "dnn/logits/kernel/Momentum" in first.get_variable_names()
    # Warm-starting copies the trainable variables (not the optimizer's state).
    second = canned.DNNClassifier([4], [c["x"]], model_dir=str(tmp_path / "second"),
                                  optimizer=tf.keras.optimizers.SGD(0.0),
                                  warm_start_from=first.model_dir)
    second.train(driver.input_fn("binary"), steps=1)
    for name in ("dnn/hiddenlayer_0/kernel", "dnn/logits/bias"):
        np.testing.assert_array_equal(second.get_variable_value(name),
                                      first.get_variable_value(name))


@pytest.mark.parametrize("kwargs, error, message", [
    ({"hidden_units": 8}, TypeError, HIDDEN_UNITS_TYPE),
    ({"hidden_units": [None]}, TypeError, HIDDEN_UNITS_NOT_SIZE),
    ({"hidden_units": ["wide"]}, ValueError, HIDDEN_UNITS_NOT_SIZE),
    ({"hidden_units": [4, 0]}, ValueError, HIDDEN_UNITS_SIZE),
    ({"dropout": 1.0}, ValueError, DROPOUT_RANGE),
    ({"feature_columns": []}, ValueError, COLUMNS_EMPTY),
    ({"feature_columns": ["x"]}, TypeError, COLUMNS_TYPE),
    ({"n_classes": 1}, ValueError, N_CLASSES),
    ({"activation_fn": 3}, TypeError, ACTIVATION),
    ({"activation_fn": "nope"}, ValueError, ACTIVATION_NAME),
    ({"loss_reduction": "none"}, ValueError, LOSS_REDUCTION),
    ({"optimizer": "adagrad"}, ValueError, OPTIMIZER_NAME),
])
def test_bad_arguments_are_rejected_at_construction(kwargs, error, message):
    arguments = {"hidden_units": [4], "feature_columns": [driver.columns()["x"]]}
    arguments.update(kwargs)
    with pytest.raises(error, match=re.escape(message)):
        canned.DNNClassifier(**arguments)


@pytest.mark.parametrize("make", [canned.DNNClassifier, v1.DNNClassifier])
def test_no_hidden_layer_puts_the_logits_on_the_input_layer(tmp_path, make):
    # tf.estimator 2.15 (v1 and v2) trains hidden_units=[] as a linear model
    # (conformance scenario canned/dnn_classifier/hidden_units_empty).
    estimator = make([], [driver.columns()["x"]], model_dir=str(tmp_path))
    estimator.train(driver.input_fn("binary"), steps=2)
    names = [n for n in estimator.get_variable_names() if n.startswith("dnn/")]
    assert sorted(n for n in names if "/t_0/" not in n) == [
        "dnn/logits/bias", "dnn/logits/kernel"]
    assert estimator.get_variable_value("dnn/logits/kernel").shape == (2, 1)


def test_layer_sizes_are_what_int_makes_of_them(tmp_path):
    # As tf.estimator 2.15's Dense layers: '3', 2.0 and True name sizes 3, 2, 1.
    estimator = canned.DNNRegressor(["3", 2.0, True], [driver.columns()["x"]],
                                    model_dir=str(tmp_path))
    estimator.train(driver.input_fn("real"), steps=1)
    shapes = [estimator.get_variable_value(f"dnn/hiddenlayer_{i}/bias").shape
              for i in range(3)]
    assert shapes == [(3,), (2,), (1,)]


def test_combined_estimator_still_needs_hidden_units_for_dnn_columns():
    with pytest.raises(ValueError, match="dnn_hidden_units must be defined"):
        canned.DNNLinearCombinedClassifier(dnn_feature_columns=[driver.columns()["x"]],
                                           dnn_hidden_units=[])


def _trained_kernels(tmp_path, name, **kwargs):
    estimator = canned.DNNClassifier([3, 2], [driver.columns()["x"]],
                                     model_dir=str(tmp_path / name),
                                     config=el.RunConfig(tf_random_seed=5), **kwargs)
    estimator.train(driver.input_fn("binary"), steps=2)
    return [estimator.get_variable_value(f"dnn/hiddenlayer_{i}/kernel") for i in (0, 1)]


@pytest.mark.parametrize("name, same_as", [
    ("tanh", tf.nn.tanh),
    ("linear", None),
    # Keras 2's hard sigmoid, which tf.estimator 2.15 used (not Keras 3's).
    ("hard_sigmoid", lambda x: tf.clip_by_value(0.2 * x + 0.5, 0.0, 1.0)),
])
def test_activation_fn_may_be_a_keras_activation_name(tmp_path, name, same_as):
    by_name = _trained_kernels(tmp_path, "by_name", activation_fn=name)
    by_function = _trained_kernels(tmp_path, "by_function", activation_fn=same_as)
    for a, b in zip(by_name, by_function, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_batch_norm_is_any_truth_value(tmp_path):
    estimator = canned.DNNClassifier([2], [driver.columns()["x"]], batch_norm=1,
                                     model_dir=str(tmp_path))
    estimator.train(driver.input_fn("binary"), steps=1)
    assert "dnn/hiddenlayer_0/batchnorm_0/gamma" in estimator.get_variable_names()


@pytest.mark.parametrize("columns", [
    driver.columns()["x"],       # a single column, not in a list
    ["x"],                       # names, not columns
    {"x": driver.columns()["x"]},
])
def test_feature_columns_not_a_list_of_columns_raise_what_tf_estimator_raises(columns):
    # tf.estimator 2.15 raises ValueError; a TypeError handler catches it too.
    for error in (ValueError, TypeError):
        with pytest.raises(error, match="feature_columns must"):
            canned.DNNClassifier([2], columns)
