"""Canned estimators share checkpoints and serving signatures with tf.estimator 2.15.

tests/oracle/canned_driver.py builds the same DNNClassifier (3 classes, label
vocabulary, weights, batch norm, RMSProp), LinearClassifier (sparse_combiner
'mean'), DNNLinearCombinedClassifier (Adam + Adagrad) and DNNRegressor (Adam) for
both libraries. estimator_lite trains them to step 20, then the TF 2.15 interpreter
(ESTIMATOR_LITE_TF215_PYTHON) trains its own to step 20, continues a copy to 30,
and evaluates the estimator_lite model_dirs. estimator_lite then
  * writes checkpoints with the same variable names, shapes and dtypes,
  * evaluates the tf.estimator model_dir to the same metrics,
  * continues training it to step 30, landing on the same variable values as
    tf.estimator continuing the same model_dir (same update rules, slots included),
  * exports SavedModels with the same signatures;
and tf.estimator evaluates the model_dir estimator_lite trained to its metrics.
"""

import os
import shutil

import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite import canned
from tests.oracle import driver_path, load_driver, requires_oracle, run_oracle_driver
from tests.support import compare

DRIVER_PATH = driver_path("canned_driver.py")
FIRST_STEPS = 20
MORE_STEPS = 30
METRIC_TOLERANCE = 1e-5


driver = load_driver(DRIVER_PATH, "canned_driver")


def _train_lite(kind, model_dir, max_steps):
    estimator, label_key = driver.build(canned, kind, model_dir)
    estimator.train(driver.input_fn(label_key), max_steps=max_steps)
    return estimator, label_key


@pytest.mark.slow
@requires_oracle
def test_checkpoints_and_signatures_match_tf_estimator(tmp_path):
    work = str(tmp_path)
    lite = {}
    for kind in driver.KINDS:  # estimator_lite from scratch, read by tf.estimator.
        lite[kind] = _train_lite(kind, os.path.join(work, kind, "lite"), FIRST_STEPS)
    oracle = run_oracle_driver(DRIVER_PATH, "run", work, FIRST_STEPS, MORE_STEPS, "lite")
    for kind in driver.KINDS:
        expected = oracle[kind]
        estimator, label_key = lite[kind]
        # The same checkpoint layout, and each library reads the other's metrics.
        assert driver.checkpoint_variables(estimator.model_dir) == expected["variables"]
        compare.assert_metrics_close(expected["lite_metrics"],
                                     estimator.evaluate(driver.input_fn(label_key, 1)),
                                     METRIC_TOLERANCE)
        # The same serving signatures.
        export_dir = estimator.export_saved_model(
            os.path.join(work, kind, "export_lite"),
            driver.serving_input_receiver_fn(el.export))
        assert compare.signatures(export_dir) == compare.signatures(
            expected["export_dir"]), kind
        # A tf.estimator model_dir: the same metrics, then it keeps training exactly
        # as tf.estimator continues it (same update rules, optimizer slots included).
        copy_dir = os.path.join(work, kind, "from_tf")
        shutil.copytree(os.path.join(work, kind, "tf"), copy_dir)
        continued, _ = driver.build(canned, kind, copy_dir)
        compare.assert_metrics_close(continued.evaluate(driver.input_fn(label_key, 1)),
                                     expected["metrics"], METRIC_TOLERANCE)
        continued.train(driver.input_fn(label_key), max_steps=MORE_STEPS)
        more_dir = os.path.join(work, kind, "tf_more")
        assert driver.checkpoint_variables(copy_dir) == driver.checkpoint_variables(
            more_dir)
        assert tf.train.load_variable(copy_dir, "global_step") == MORE_STEPS
        compare.assert_same_variables(copy_dir, more_dir, expected["variables"], kind)
