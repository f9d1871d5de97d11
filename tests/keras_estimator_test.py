"""model_to_estimator on the TF docs' tutorial shape, against tf.estimator 2.15's.

tests/oracle/keras_estimator_driver.py runs three times at once: the oracle
(tf.keras.estimator.model_to_estimator, Keras 2) and estimator_lite with tf-keras
(TF_USE_LEGACY_KERAS=1, when installed) in subprocesses, estimator_lite with Keras 3
in this process. The driver clears the Keras session first, so layer names (and the
output name `dense_1`) agree. tests/oracle/keras_estimator_cases_driver.py runs the
same three ways: what users compile (string losses, AUC, their own Sequential or
functional classes) trains to the oracle's weights and metrics, and what
tf.estimator refuses (a subclassed model, a feature key that is not the model's
input) is refused with the same error type.
"""

import importlib.util
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from tests.oracle import (
    TF215_PYTHON,
    driver_path,
    finish_driver,
    load_driver,
    requires_oracle,
    start_driver,
)

DRIVER = driver_path("keras_estimator_driver.py")
CASES_DRIVER = driver_path("keras_estimator_cases_driver.py")
HAS_TF_KERAS = importlib.util.find_spec("tf_keras") is not None
# The weights start identical; Keras 3 draws its own dropout masks (seeded, so the
# run is deterministic), which moves the result a little. Measured at 300 steps:
# oracle loss 0.4347, accuracy 0.800; Keras 3 loss -0.0044, accuracy +0.033 (one
# example of 30); tf-keras identical to the oracle.
LOSS_TOLERANCE = 0.02
ACCURACY_TOLERANCE = 0.05


def _start(python, which, work_dir, legacy=False, driver=DRIVER):
    return start_driver(python, driver, which, work_dir,
                        **({"TF_USE_LEGACY_KERAS": "1"} if legacy else {}))


def _result(process):
    return finish_driver(process, timeout_secs=600)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Results by name: 'oracle', 'keras3' and (with tf-keras) 'tf_keras'."""
    base = tmp_path_factory.mktemp("model_to_estimator")
    processes = {"oracle": _start(TF215_PYTHON, "oracle", base / "oracle")}
    if HAS_TF_KERAS:
        processes["tf_keras"] = _start(sys.executable, "lite", base / "tf_keras",
                                       legacy=True)
    (base / "keras3").mkdir()
    keras3 = load_driver(DRIVER, "keras_estimator_driver").run("lite", str(base / "keras3"))
    results = {name: _result(process) for name, process in processes.items()}
    results["keras3"] = keras3
    return results


def _assert_matches_oracle(result, oracle):
    np.testing.assert_allclose(result["initial_outputs"], oracle["initial_outputs"],
                               atol=1e-5)
    assert sorted(result["metrics"]) == sorted(oracle["metrics"]) == [
        "accuracy", "global_step", "loss"]
    assert result["metrics"]["global_step"] == oracle["metrics"]["global_step"] == 300
    assert result["metrics"]["loss"] == pytest.approx(oracle["metrics"]["loss"],
                                                      abs=LOSS_TOLERANCE)
    assert result["metrics"]["accuracy"] == pytest.approx(
        oracle["metrics"]["accuracy"], abs=ACCURACY_TOLERANCE)
    assert result["prediction_keys"] == oracle["prediction_keys"] == ["dense_1"]
    assert result["signatures"] == oracle["signatures"]


@pytest.mark.slow
@requires_oracle
def test_keras3_tutorial_model_matches_tf_estimator(runs):
    _assert_matches_oracle(runs["keras3"], runs["oracle"])


@requires_oracle
@pytest.mark.skipif(not HAS_TF_KERAS, reason="needs tf-keras (the legacy-keras extra)")
def test_tf_keras_tutorial_model_matches_tf_estimator(runs):
    _assert_matches_oracle(runs["tf_keras"], runs["oracle"])


def _model(optimizer="adam", metrics=("accuracy",), compile_model=True):
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
    if compile_model:
        model.compile(optimizer=optimizer, metrics=list(metrics),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


@pytest.mark.parametrize("kwargs,message", [
    ({}, "Either keras_model or keras_model_path"),
    ({"keras_model": "m", "keras_model_path": "p"}, "not both"),
    ({"keras_model_path": "/nonexistent/model.keras"}, "saved .keras or .h5 file"),
    ({"keras_model": _model(compile_model=False)}, "has not been compiled"),
    ({"keras_model": _model(), "checkpoint_format": "h5"}, "checkpoint_format"),
    ({"keras_model": _model(optimizer=keras.optimizers.Lion())}, "Lion"),
    ({"keras_model": _model(metrics=["kl_divergence"])}, "no graph-mode equivalent"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        el.model_to_estimator(**kwargs)


def test_keras_model_path_starts_from_the_saved_weights(tmp_path):
    model = _model()
    model.save(str(tmp_path / "model.keras"))
    estimator = el.model_to_estimator(keras_model_path=str(tmp_path / "model.keras"),
                                      model_dir=str(tmp_path / "estimator"))
    assert isinstance(estimator, el.Estimator)
    # The warm-start checkpoint holds the saved model's weights.
    reader = tf.train.load_checkpoint(
        str(tmp_path / "estimator" / "keras" / "keras_model.ckpt"))
    kernel = model.layers[0].kernel.numpy()
    np.testing.assert_allclose(reader.get_tensor(model.layers[0].name + "/kernel"), kernel)


def test_functional_model_starts_from_its_weights_with_renamed_metrics(tmp_path):
    inputs = keras.Input((4,), name="feats")
    hidden = keras.layers.Dense(8, activation="relu", name="hidden")(inputs)
    model = keras.Model(inputs, keras.layers.Dense(3, name="scores")(hidden))
    # learning_rate=0: after a step the weights are still the Keras model's.
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=[keras.metrics.SparseCategoricalAccuracy(name="acc")])
    x = np.random.RandomState(0).randn(8, 4).astype(np.float32)
    y = np.arange(8) % 3
    estimator = el.model_to_estimator(keras_model=model, model_dir=str(tmp_path),
                                      metric_names_map={"acc": "accuracy_renamed"})

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"feats": x}, y)).batch(8)

    estimator.train(input_fn, steps=1)
    metrics = estimator.evaluate(input_fn)
    predictions = np.stack([p["scores"] for p in estimator.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"feats": x}).batch(8))])
    expected = model.predict(x, verbose=0)
    np.testing.assert_allclose(predictions, expected, atol=1e-5)
    assert sorted(metrics) == ["accuracy_renamed", "global_step", "loss"]
    assert metrics["accuracy_renamed"] == pytest.approx(
        np.mean(np.argmax(expected, axis=1) == y))


def test_batch_norm_moving_statistics_update_with_each_training_step(tmp_path):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, name="proj"),
                              keras.layers.BatchNormalization(name="bn"),
                              keras.layers.Dense(2, name="out")])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = np.random.RandomState(0).randn(16, 3).astype(np.float32) + 3.0
    estimator = el.model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices((x, np.arange(16) % 2))
                    .batch(16), steps=1)
    batch_mean = model.get_layer("proj")(x).numpy().mean(axis=0)
    np.testing.assert_allclose(estimator.get_variable_value("bn/moving_mean"),
                               0.01 * batch_mean, rtol=1e-4, atol=1e-6)


# Cases ---------------------------------------------------------------------------------

cases_driver = load_driver(CASES_DRIVER, "keras_estimator_cases_driver")
# Three SGD steps from the same weights: tf-keras and Keras 3 agree with the oracle
# to float noise (Keras 3's cross-entropies clip at 1e-7 where Keras 2 adds 1e-7).
CASE_RTOL, CASE_ATOL = 1e-4, 1e-5
TRAINED_CASES = ["binary_crossentropy_string_loss_auc", "mse_string_loss",
                 "sparse_categorical_crossentropy_string_loss_accuracy",
                 "user_functional_subclass", "user_sequential_subclass"]


@pytest.fixture(scope="module")
def case_runs(tmp_path_factory):
    """{run: {case: result}}: 'oracle', 'keras3' and (with tf-keras) 'tf_keras'."""
    base = tmp_path_factory.mktemp("model_to_estimator_cases")
    processes = {"oracle": _start(TF215_PYTHON, "oracle", base / "oracle",
                                  driver=CASES_DRIVER)}
    if HAS_TF_KERAS:
        processes["tf_keras"] = _start(sys.executable, "lite", base / "tf_keras",
                                       legacy=True, driver=CASES_DRIVER)
    # In this process the driver's classes live in module keras_estimator_cases_driver,
    # in the subprocesses in __main__: neither is a Keras package.
    results = {"keras3": cases_driver.run("lite", str(base / "keras3"))}
    results.update({name: _result(process) for name, process in processes.items()})
    return results


def _case(case_runs, run, case):
    if run == "tf_keras" and not HAS_TF_KERAS:
        pytest.skip("needs tf-keras (the legacy-keras extra)")
    return case_runs[run][case]


@requires_oracle
@pytest.mark.parametrize("run", ["keras3", "tf_keras"])
@pytest.mark.parametrize("case", TRAINED_CASES)
def test_compiled_model_trains_as_tf_estimator(case_runs, run, case):
    expected, actual = case_runs["oracle"][case], _case(case_runs, run, case)
    assert "error" not in expected, expected
    assert "error" not in actual, actual["error"]
    assert len(actual["weights"]) == len(expected["weights"]) == 2
    for got, want in zip(actual["weights"], expected["weights"], strict=True):
        np.testing.assert_allclose(got, want, rtol=CASE_RTOL, atol=CASE_ATOL)
    assert sorted(actual["metrics"]) == sorted(expected["metrics"])
    for key, value in expected["metrics"].items():
        assert actual["metrics"][key] == pytest.approx(value, rel=CASE_RTOL,
                                                       abs=CASE_ATOL), key
    assert expected["metrics"]["global_step"] == cases_driver.TRAIN_STEPS


@requires_oracle
@pytest.mark.parametrize("run", ["keras3", "tf_keras"])
@pytest.mark.parametrize("case,error_type,words", [
    ("subclassed_model", "ValueError", "subclassed"),
    ("feature_key_not_the_input_name", "KeyError", "features"),
])
def test_refused_as_tf_estimator_refuses(case_runs, run, case, error_type, words):
    expected, actual = case_runs["oracle"][case], _case(case_runs, run, case)
    assert expected["error"]["type"] in (error_type, "FormattedKeyError")
    assert actual["error"]["key_error"] == expected["error"]["key_error"]
    if error_type == "ValueError":
        assert actual["error"]["type"] == "ValueError"
    assert words in expected["error"]["message"]
    assert words in actual["error"]["message"]


def test_wrong_feature_key_names_the_expected_input(tmp_path):
    model = _model()
    estimator = el.model_to_estimator(keras_model=model, model_dir=str(tmp_path))
    x = np.zeros((4, 4), np.float32)
    with pytest.raises(KeyError, match=r"expected keys \['input_layer\w*'\].*got keys "
                                        r"\['x'\]"):
        estimator.train(lambda: tf.data.Dataset.from_tensor_slices(
            ({"x": x}, np.zeros(4, np.int64))).batch(4), steps=1)


def test_keras2_input_name_is_an_alias_only_for_an_unnamed_sequential_input(tmp_path):
    x, y = np.zeros((4, 4), np.float32), np.zeros(4, np.int64)
    unnamed = _model()  # Keras 3 names its input input_layer; Keras 2 dense_input.
    named = keras.Sequential([keras.Input((4,), name="x"), keras.layers.Dense(3)])
    named.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    for model, works in ((unnamed, True), (named, False)):
        key = f"{model.layers[0].name}_input"
        estimator = el.model_to_estimator(keras_model=model,
                                          model_dir=str(tmp_path / str(works)))

        def input_fn(key=key):
            return tf.data.Dataset.from_tensor_slices(({key: x}, y)).batch(4)
        if works:
            estimator.train(input_fn, steps=1)
            assert estimator.get_variable_value("global_step") == 1
        else:
            with pytest.raises(KeyError, match=r"expected keys \['x'\], got keys"):
                estimator.train(input_fn, steps=1)


@pytest.mark.parametrize("auc_kwargs", [
    {"from_logits": True},
    {"from_logits": True, "curve": "PR"},
    {"from_logits": True, "num_thresholds": 7, "summation_method": "minoring"},
])
def test_auc_metric_is_what_keras_computes(tmp_path, auc_kwargs):
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0),
                  loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[keras.metrics.AUC(name="auc", **auc_kwargs)])
    rng = np.random.RandomState(3)
    x = rng.randn(64, 4).astype(np.float32)
    y = (x[:, 0] + rng.randn(64) > 0).astype(np.float32)
    estimator = el.model_to_estimator(keras_model=model, model_dir=str(tmp_path))

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(16)

    estimator.train(input_fn, steps=1)  # learning_rate=0: the Keras model's weights
    metrics = estimator.evaluate(input_fn)
    keras_auc = keras.metrics.AUC(**auc_kwargs)
    keras_auc.update_state(y, model.predict(x, verbose=0)[:, 0])
    assert metrics["auc"] == pytest.approx(float(keras_auc.result()), abs=1e-5)


def test_auc_options_without_a_graph_equivalent_are_refused():
    model = _model(metrics=[keras.metrics.AUC(multi_label=True)])
    with pytest.raises(ValueError, match="multi_label"):
        el.model_to_estimator(keras_model=model)
