"""tf.estimator 2.15 parity cases give the oracle's outcome on estimator_lite.

tests/oracle/parity_driver.py runs each case on one library; EXPECTED is what
tf.estimator 2.15 gives (the oracle test re-checks it when the oracle is there).
"""

import os
import sys

import pytest

from tests.oracle import TF215_PYTHON, requires_oracle, run_driver

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVER = os.path.join(ROOT, "tests", "oracle", "parity_driver.py")

EXPECTED = {
    "chief_without_cluster": "ValueError",
    "ps_without_cluster": "ValueError",
    "worker1_without_cluster": "ValueError",
    "worker0_without_cluster": "ok:RunConfig",
    "compare_fn_positional_names": "ValueError",
    "compare_fn_named": "ok:BestExporter",
    "eval_metrics_not_a_dict": "TypeError",
    "export_returns": "ok:bytes",
    # Checks after steps 1, 11, 21, 31, 41: the fifth stops at 41.
    "early_stop_step": "ok:41",
}


def _run_driver(python, library):
    return run_driver(python, DRIVER, library, timeout_secs=300)


@pytest.mark.parametrize("library", [
    "lite", pytest.param("oracle", marks=requires_oracle)])
def test_parity_cases_give_tf_estimators_outcome(library):
    python = sys.executable if library == "lite" else TF215_PYTHON
    outcome = _run_driver(python, library)
    assert outcome == EXPECTED
