"""tf.estimator 2.15 parity cases give the oracle's outcome on estimator_lite.

tests/oracle/parity_driver.py runs each case on one library; EXPECTED is what
tf.estimator 2.15 gives (the oracle test re-checks it when the oracle is there).
"""


import pytest

from tests.oracle import BOTH_SIDES, driver_path, run_driver_on

DRIVER = driver_path("parity_driver.py")

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


@pytest.mark.parametrize("library", BOTH_SIDES)
def test_parity_cases_give_tf_estimators_outcome(library):
    assert run_driver_on(library, DRIVER, library, timeout_secs=300) == EXPECTED
