"""Keras 3 layers and metrics in a model_fn give tf-keras' and tf.estimator 2.15's numbers.

tests/oracle/keras_driver.py (a model_fn with Dense, BatchNormalization and Dropout
layers and Keras metrics, written as users write it) runs here with Keras 3, in a
subprocess with tf-keras (`TF_USE_LEGACY_KERAS=1`, grouping `layer.updates` as the
tf.estimator guides said), and with the oracle (tf.estimator 2.15, Keras 2). With
constant initial weights and fixed data, the BatchNorm moving statistics after
training, the evaluation metrics, the predictions and the exported SavedModel's
outputs must agree within 1e-5. Dropout masks come from each stack's own random
generator: only their number per run is compared.
"""

import sys

import numpy as np
import pytest

import estimator_lite as el
from tests.oracle import (
    TF215_PYTHON,
    driver_path,
    finish_driver,
    legacy_keras_available,
    load_driver,
    requires_legacy_keras,
    requires_oracle,
    start_driver,
)

DRIVER = driver_path("keras_driver.py")
DRIVER_MODULE = load_driver(DRIVER, "keras_driver")
TOLERANCE = 1e-5
METRIC_VARIABLE_PARTS = ("total", "count", "true_positives", "false_positives")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{stack: the driver's programs}; the subprocesses run while Keras 3 runs here."""
    work = tmp_path_factory.mktemp("keras")
    processes = {}
    if TF215_PYTHON:
        processes["oracle"] = start_driver(TF215_PYTHON, DRIVER, "oracle", work / "oracle")
    if legacy_keras_available():
        processes["tf_keras"] = start_driver(sys.executable, DRIVER, "lite",
                                             work / "tf_keras", TF_USE_LEGACY_KERAS="1")
    try:
        results = {"keras3": DRIVER_MODULE.run_all(el, str(work / "keras3"))}
    finally:
        reports = {name: finish_driver(p, timeout_secs=600)
                   for name, p in processes.items()}
    if "oracle" in reports:
        assert reports["oracle"]["tf_version"].startswith("2.15")
    for name, report in reports.items():
        assert report["layers_have_updates"], name  # Keras 2: grouped layer.updates
        results[name] = report["programs"]
    return results


def _max_delta(expected, actual, path=""):
    """Largest absolute difference between two equally shaped dumps of floats."""
    if isinstance(expected, dict):
        assert sorted(actual) == sorted(expected), path
        return max([_max_delta(expected[k], actual[k], f"{path}/{k}") for k in expected]
                   or [0.0])
    if isinstance(expected, list):
        assert len(actual) == len(expected), path
        return max([_max_delta(e, a, path) for e, a in zip(expected, actual,
                                                            strict=True)] or [0.0])
    return abs(float(expected) - float(actual))


def _assert_close(expected, actual, what):
    delta = _max_delta(expected, actual)
    assert delta <= TOLERANCE * max(1.0, _largest(expected)), (
        f"{what}: largest difference {delta}\nexpected {expected}\nactual {actual}")


def _largest(dump):
    if isinstance(dump, dict):
        return max([_largest(v) for v in dump.values()] or [0.0])
    if isinstance(dump, list):
        return max([_largest(v) for v in dump] or [0.0])
    return abs(float(dump))


def test_dropout_draws_a_new_mask_every_step(runs):
    program = runs["keras3"]["dropout"]
    assert program["steps_seen"] == DRIVER_MODULE.TRAIN_STEPS
    assert program["distinct_masks"] == DRIVER_MODULE.TRAIN_STEPS
    for name, reference in runs.items():  # the twins draw one per step too
        assert reference["dropout"]["distinct_masks"] == DRIVER_MODULE.TRAIN_STEPS, name


def test_keras3_metrics_are_those_of_its_predictions(runs):
    """Without a reference: metric values recomputed from the served outputs."""
    program = runs["keras3"]["no_dropout"]
    first, second = program["metrics"]
    assert first == second  # each evaluate starts the metrics from zero
    probabilities = np.array(program["serving"]["probabilities"])
    labels = DRIVER_MODULE.make_data()[1].ravel()
    positive = probabilities > 0.5
    assert first["accuracy"] == pytest.approx(np.mean(positive == labels), abs=1e-6)
    assert first["mean_probability"] == pytest.approx(probabilities.mean(), abs=1e-6)
    assert first["precision"] == pytest.approx(
        np.sum(positive & (labels == 1)) / np.sum(positive), abs=1e-6)
    np.testing.assert_allclose(program["predictions"], program["serving"]["logits"],
                               atol=1e-5)
    assert not [n for n in program["variable_names"]
                if any(part in n for part in METRIC_VARIABLE_PARTS)]


def _moved(statistics):
    return (not np.allclose(statistics["moving_mean"], 0.0)
            and not np.allclose(statistics["moving_variance"], 1.0))


@pytest.mark.parametrize("reference", [
    pytest.param("tf_keras", marks=requires_legacy_keras),
    pytest.param("oracle", marks=requires_oracle)])
def test_batch_norm_statistics_match(runs, reference):
    expected = runs[reference]["no_dropout"]["statistics"]
    actual = runs["keras3"]["no_dropout"]["statistics"]
    assert _moved(expected) and _moved(actual)
    _assert_close(expected, actual, f"moving statistics vs {reference}")


@pytest.mark.parametrize("reference", [
    pytest.param("tf_keras", marks=requires_legacy_keras),
    pytest.param("oracle", marks=requires_oracle)])
def test_evaluate_predict_and_export_use_those_statistics(runs, reference):
    expected, actual = runs[reference]["no_dropout"], runs["keras3"]["no_dropout"]
    for key in ("metrics", "predictions", "serving"):
        _assert_close(expected[key], actual[key], f"{key} vs {reference}")


@pytest.mark.parametrize("reference", [
    pytest.param("tf_keras", marks=requires_legacy_keras),
    pytest.param("oracle", marks=requires_oracle)])
def test_keras_metric_objects_match(runs, reference):
    """Keras Metric objects in eval_metric_ops and from add_metrics, evaluated twice."""
    expected = runs[reference]["no_dropout"]["metrics"]
    assert sorted(expected[0]) == ["accuracy", "auc", "global_step", "loss",
                                   "mean_probability", "precision"]
    _assert_close(expected, runs["keras3"]["no_dropout"]["metrics"],
                  f"metrics vs {reference}")
    assert not [n for n in runs[reference]["no_dropout"]["variable_names"]
                if any(part in n for part in METRIC_VARIABLE_PARTS)]


@requires_legacy_keras
@requires_oracle
def test_tf_keras_matches_the_oracle_with_dropout(runs):
    """tf-keras draws the oracle's dropout masks (same graph seed): same statistics."""
    expected, actual = runs["oracle"]["dropout"], runs["tf_keras"]["dropout"]
    _assert_close(expected["statistics"], actual["statistics"], "dropout statistics")
