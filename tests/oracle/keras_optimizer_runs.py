"""One run of tests/oracle/keras_optimizer_driver.py per interpreter, shared by tests.

tests/head/keras_optimizer_test.py and tests/canned/keras_learning_rate_test.py
compare the same runs: the oracle (tf.estimator 2.15, legacy Keras optimizers), a
tf-keras process (TF_USE_LEGACY_KERAS=1: tf-keras' optimizers and its legacy ones)
and this process (Keras 3). The three run at once, once per pytest session.
"""

import atexit
import functools
import os
import shutil
import sys
import tempfile

import numpy as np
import pytest

import estimator_lite
from tests.oracle import (
    LEGACY_KERAS_REASON,
    TF215_PYTHON,
    driver_path,
    finish_driver,
    legacy_keras_available,
    load_driver,
    start_driver,
)

DRIVER_PATH = driver_path("keras_optimizer_driver.py")
GROUPS = "heads,canned"
TIMEOUT_SECS = 900
# The runs: tf.estimator 2.15; estimator_lite with Keras 3, tf-keras, tf-keras legacy.
ORACLE, KERAS3 = "oracle", "keras3"
TF_KERAS, TF_KERAS_LEGACY = "tf_keras", "tf_keras_legacy"

driver = load_driver(DRIVER_PATH, "keras_optimizer_driver")


def _start(python, workdir, flavors, legacy_keras):
    return start_driver(python, DRIVER_PATH, workdir, GROUPS, flavors,
                        TF_USE_LEGACY_KERAS="1" if legacy_keras else None)


def _finish(process):
    return finish_driver(process, TIMEOUT_SECS)


@functools.cache
def runs():
    """{run key: {case: {"variables", "metrics"} or {"error"}}} for every case."""
    workdir = tempfile.mkdtemp(prefix="keras_optimizer_")
    atexit.register(shutil.rmtree, workdir, ignore_errors=True)
    oracle = _start(TF215_PYTHON, os.path.join(workdir, "oracle"), "oracle", False)
    tf_keras = None
    if legacy_keras_available():
        tf_keras = _start(sys.executable, os.path.join(workdir, "tf_keras"),
                          "keras,legacy", True)
    results = {}
    try:
        results[KERAS3] = driver.run(estimator_lite, GROUPS.split(","), ["keras"],
                                     os.path.join(workdir, "keras3"))["keras"]
    finally:
        report = _finish(oracle)
        assert report["tf_version"].startswith("2.15"), report["tf_version"]
        results[ORACLE] = report["results"]["oracle"]
        if tf_keras is not None:
            report = _finish(tf_keras)
            results[TF_KERAS] = report["results"]["keras"]
            results[TF_KERAS_LEGACY] = report["results"]["legacy"]
    return results


# Every run is deterministic (fixed initial weights, data in order); the oracle's
# own run-to-run spread is float noise, so variables and metrics agree closely.
RTOL, ATOL = 1e-4, 1e-5


def case_result(run_key, case):
    """The result of `case` in `run_key`, skipping the tf-keras runs without tf-keras."""
    if run_key in (TF_KERAS, TF_KERAS_LEGACY) and not legacy_keras_available():
        pytest.skip(LEGACY_KERAS_REASON)
    result = runs()[run_key][case]
    assert "error" not in result, f"{run_key}/{case}: {result['error']}"
    return result


def assert_trains_as_oracle(run_key, case):
    """The run's checkpoint (names and values) and metrics equal the oracle's."""
    expected, actual = case_result(ORACLE, case), case_result(run_key, case)
    assert sorted(actual["variables"]) == sorted(expected["variables"]), case
    for name, value in expected["variables"].items():
        np.testing.assert_allclose(actual["variables"][name], value, rtol=RTOL,
                                   atol=ATOL, err_msg=f"{run_key}/{case}: {name}")
    assert sorted(actual["metrics"]) == sorted(expected["metrics"]), case
    for key, value in expected["metrics"].items():
        np.testing.assert_allclose(actual["metrics"][key], value, rtol=RTOL, atol=ATOL,
                                   err_msg=f"{run_key}/{case}: {key}")
    return expected, actual
