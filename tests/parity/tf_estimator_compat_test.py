"""train_and_evaluate drives a real tf.estimator.Estimator (tensorflow-estimator 2.15).

TF >= 2.16 has no tf.estimator, so this runs tests/oracle/tf_estimator_driver.py
with a second interpreter that has tensorflow 2.15 + tensorflow-estimator 2.15,
named by ESTIMATOR_LITE_TF215_PYTHON. .ci/run builds that interpreter and sets the
variable, so CI always runs this test; a plain local run without it skips it.
"""


from tests.oracle import driver_path, requires_oracle, run_oracle_driver


@requires_oracle
def test_real_tf_estimator_is_driven_by_train_and_evaluate(tmp_path):
    report = run_oracle_driver(
        driver_path("tf_estimator_driver.py"),
        tmp_path / "model", timeout_secs=600)
    assert report["global_step"] == 25
    assert report["evaluated_steps"] == [10, 20, 25]  # each checkpoint, final included
    assert report["rerun_step"] == 25  # a re-run returns the final metrics
    assert report["loss"] < 0.1
    assert report["export_ok"]
