"""TF1-era model_dirs keep training, both ways: estimator_lite.compat.v1's canned
estimators against TF 2.15's tf.compat.v1.estimator.

tests/oracle/canned_v1_driver.py builds one estimator of every v1 canned class
(DNN/Linear/DNNLinearCombined/Baseline x Classifier/Regressor; default and named
optimizers, an Ftrl instance, batch norm, weights, label vocabularies) for both
libraries. estimator_lite trains each to step FIRST_STEPS (``lite``); the TF 2.15
interpreter trains its own (``tf``), evaluates and exports it, evaluates ``lite``
and continues copies of both to MORE_STEPS. Then, for each kind:
  * the checkpoints hold the same variable names, shapes and dtypes (v1 slots
    such as ``.../t_0/Adagrad``, ``.../part_0/Ftrl``, ``dnn/head/beta1_power``);
  * estimator_lite evaluates ``tf`` to tf.estimator's metrics, and tf.estimator
    evaluates ``lite`` to estimator_lite's (within METRIC_TOLERANCE);
  * estimator_lite continues copies of ``tf`` and ``lite`` to the same variables,
    slots included, as tf.estimator continuing them (``lite`` for the driver's
    REVERSE_CONTINUED kinds);
  * the exports have the same signatures (keys, inputs, outputs; the driver's
    EXPORTED kinds: one per head).
"""


import pytest
import tensorflow as tf

import estimator_lite.compat.v1 as tf_estimator_v1
from tests.oracle import driver_path, load_driver, requires_oracle, run_oracle_driver
from tests.support import compare

DRIVER_PATH = driver_path("canned_v1_driver.py")
FIRST_STEPS = 6
MORE_STEPS = 10
METRIC_TOLERANCE = 1e-5

driver = load_driver(DRIVER_PATH, "canned_v1_driver")
base = driver.base


def _assert_same_checkpoints(actual_dir, expected_dir, kind):
    expected = base.checkpoint_variables(expected_dir)
    assert base.checkpoint_variables(actual_dir) == expected, kind
    compare.assert_same_variables(actual_dir, expected_dir, expected, kind)


@pytest.mark.slow
@requires_oracle
def test_v1_model_dirs_keep_training_both_ways(tmp_path):
    work = str(tmp_path)
    for kind in driver.KINDS:
        estimator, label_key = driver.build(tf_estimator_v1, kind,
                                            driver.model_dir(work, kind, "lite"))
        estimator.train(base.input_fn(label_key), max_steps=FIRST_STEPS)
    oracle = run_oracle_driver(DRIVER_PATH, "run", work, FIRST_STEPS, MORE_STEPS)
    for kind in driver.KINDS:
        expected = oracle[kind]
        lite_dir = driver.model_dir(work, kind, "lite")
        assert base.checkpoint_variables(lite_dir) == expected["variables"], kind
        estimator, label_key = driver.build(tf_estimator_v1, kind, lite_dir)
        compare.assert_metrics_close(expected["lite_metrics"],
                                     estimator.evaluate(base.input_fn(label_key, 1)),
                                     METRIC_TOLERANCE, kind)
        if kind in driver.EXPORTED:
            export_dir = estimator.export_saved_model(
                driver.model_dir(work, kind, "export_lite"),
                base.serving_input_receiver_fn(tf_estimator_v1.export))
            assert compare.signatures(export_dir) == compare.signatures(
                expected["export_dir"]), kind
        from_tf, _ = driver.build(tf_estimator_v1, kind,
                                  driver.model_dir(work, kind, "tf"))
        compare.assert_metrics_close(from_tf.evaluate(base.input_fn(label_key, 1)),
                                     expected["metrics"], METRIC_TOLERANCE, kind)
        for source in ("tf", "lite") if kind in driver.REVERSE_CONTINUED else ("tf",):
            driver.continue_copy(tf_estimator_v1, work, kind, source, f"{source}_by_lite",
                                 MORE_STEPS)
            _assert_same_checkpoints(driver.model_dir(work, kind, f"{source}_by_lite"),
                                     driver.model_dir(work, kind, f"{source}_by_tf"), kind)
        assert tf.train.load_variable(driver.model_dir(work, kind, "tf_by_lite"),
                                      "global_step") == MORE_STEPS
