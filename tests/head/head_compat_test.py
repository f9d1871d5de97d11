"""estimator_lite's heads against tf.estimator 2.15's on the same logits and labels.

tests/oracle/head_driver.py runs every case with the oracle interpreter
(ESTIMATOR_LITE_TF215_PYTHON: tensorflow 2.15 + tensorflow-estimator 2.15) and, in
this process, with estimator_lite; eval metrics, losses, predictions, export outputs
and SavedModel signatures must agree (values within 1e-5, AUCs included: both use
200 thresholds).
"""

import math
import types

import pytest

import estimator_lite as el
import estimator_lite.head as heads
from tests.oracle import driver_path, load_driver, requires_oracle, run_oracle_beside

DRIVER = driver_path("head_driver.py")
TOLERANCE = 1e-5
PREDICT_METHOD = "tensorflow/serving/predict"

pytestmark = [requires_oracle, pytest.mark.slow]


DRIVER_MODULE = load_driver(DRIVER, "head_driver")


@pytest.fixture(scope="module")
def dumps(tmp_path_factory):
    """(oracle dump, estimator_lite dump); the oracle runs while this process works."""
    work = tmp_path_factory.mktemp("heads")
    lib = types.SimpleNamespace(Estimator=el.Estimator, export=el.export, heads=heads)

    def run_lite():
        lite = {}
        for name, case in DRIVER_MODULE.CASES.items():
            try:
                lite[name] = DRIVER_MODULE.run_case(lib, name, case, str(work / "lite"))
            except Exception as error:  # noqa: BLE001 (reported by that case's test)
                lite[name] = {"error": f"{type(error).__name__}: {error}"}
        return lite

    report, lite = run_oracle_beside(run_lite, DRIVER, work / "oracle", timeout_secs=600)
    assert report["tf_version"].startswith("2.15")
    return report["cases"], lite


def _assert_same(path, expected, actual):
    """Equal structure; floats within TOLERANCE (absolute or relative)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: {actual!r} is not a dict"
        assert sorted(actual) == sorted(expected), (
            f"{path}: keys differ; tf.estimator only {sorted(set(expected) - set(actual))},"
            f" estimator_lite only {sorted(set(actual) - set(expected))}")
        for key in expected:
            _assert_same(f"{path}/{key}", expected[key], actual[key])
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), (
            f"{path}: {actual!r} != {expected!r}")
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            _assert_same(f"{path}[{i}]", e, a)
    elif isinstance(expected, float) or isinstance(actual, float):
        assert math.isclose(expected, actual, rel_tol=TOLERANCE, abs_tol=TOLERANCE), (
            f"{path}: estimator_lite {actual!r} != tf.estimator {expected!r}")
    else:
        assert actual == expected, f"{path}: estimator_lite {actual!r} != {expected!r}"


@pytest.mark.parametrize("name", sorted(DRIVER_MODULE.CASES))
def test_head_matches_tf_estimator(dumps, name):
    oracle, lite = dumps
    expected, actual = oracle[name], lite[name]
    assert "error" not in actual, actual.get("error")
    for part in ("metrics", "predictions", "export_outputs", "train_loss", "head_loss",
                 "logits_dimension", "name", "estimator_metrics"):
        if part in expected:
            _assert_same(f"{name}/{part}", expected[part], actual[part])
    if "signatures" not in expected:
        return
    # A parsing receiver (one serialized-example input) gives identical signatures.
    _assert_same(f"{name}/signatures/parsing", expected["signatures"]["parsing"],
                 actual["signatures"]["parsing"])
    # With raw tensor inputs tf.estimator drops the classify/regress signatures (they
    # need one string input); estimator_lite.export keeps them as predict-method
    # signatures. Every tf.estimator signature is there, identical.
    raw_expected, raw_actual = expected["signatures"]["raw"], actual["signatures"]["raw"]
    for key, signature in raw_expected.items():
        _assert_same(f"{name}/signatures/raw/{key}", signature, raw_actual.get(key))
    for key in set(raw_actual) - set(raw_expected):
        assert raw_actual[key]["method"] == PREDICT_METHOD, (name, key)
