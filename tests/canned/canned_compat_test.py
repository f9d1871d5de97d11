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

import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite import canned
from tests.oracle import TF215_PYTHON, load_driver, requires_oracle
from tests.support import zygote

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVER_PATH = os.path.join(ROOT, "tests", "oracle", "canned_driver.py")
FIRST_STEPS = 20
MORE_STEPS = 30
METRIC_TOLERANCE = 1e-5


driver = load_driver(DRIVER_PATH, "canned_driver")


def _run_oracle(workdir):
    env = dict(os.environ)
    env.pop("TF_CONFIG", None)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    result = zygote.run(
        [TF215_PYTHON, DRIVER_PATH, "run", workdir, str(FIRST_STEPS), str(MORE_STEPS),
         "lite"], capture_output=True, text=True, env=env, timeout=900, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["tf_version"].startswith("2.15")
    return report


def _signatures(export_dir):
    """{signature key: (method, {input: dtype}, {output: dtype})} of a SavedModel."""
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        meta_graph = tf.compat.v1.saved_model.loader.load(session, ["serve"], export_dir)
    return {key: (sig.method_name,
                  {name: info.dtype for name, info in sig.inputs.items()},
                  {name: info.dtype for name, info in sig.outputs.items()})
            for key, sig in meta_graph.signature_def.items()}


def _assert_metrics_close(actual, expected):
    assert sorted(actual) == sorted(expected)
    for key, value in expected.items():
        assert actual[key] == pytest.approx(value, rel=METRIC_TOLERANCE,
                                            abs=METRIC_TOLERANCE), key


def _train_lite(kind, model_dir, max_steps):
    estimator, label_key = driver.build(canned, kind, model_dir)
    estimator.train(driver.input_fn(label_key), max_steps=max_steps)
    return estimator, label_key


@requires_oracle
def test_checkpoints_and_signatures_match_tf_estimator(tmp_path):
    work = str(tmp_path)
    lite = {}
    for kind in driver.KINDS:  # estimator_lite from scratch, read by tf.estimator.
        lite[kind] = _train_lite(kind, os.path.join(work, kind, "lite"), FIRST_STEPS)
    oracle = _run_oracle(work)
    for kind in driver.KINDS:
        expected = oracle[kind]
        estimator, label_key = lite[kind]
        # The same checkpoint layout, and each library reads the other's metrics.
        assert driver.checkpoint_variables(estimator.model_dir) == expected["variables"]
        _assert_metrics_close(expected["lite_metrics"],
                              estimator.evaluate(driver.input_fn(label_key, 1)))
        # The same serving signatures.
        export_dir = estimator.export_saved_model(
            os.path.join(work, kind, "export_lite"),
            driver.serving_input_receiver_fn(el.export))
        assert _signatures(export_dir) == _signatures(expected["export_dir"]), kind
        # A tf.estimator model_dir: the same metrics, then it keeps training exactly
        # as tf.estimator continues it (same update rules, optimizer slots included).
        copy_dir = os.path.join(work, kind, "from_tf")
        shutil.copytree(os.path.join(work, kind, "tf"), copy_dir)
        continued, _ = driver.build(canned, kind, copy_dir)
        _assert_metrics_close(continued.evaluate(driver.input_fn(label_key, 1)),
                              expected["metrics"])
        continued.train(driver.input_fn(label_key), max_steps=MORE_STEPS)
        more_dir = os.path.join(work, kind, "tf_more")
        assert driver.checkpoint_variables(copy_dir) == driver.checkpoint_variables(
            more_dir)
        assert tf.train.load_variable(copy_dir, "global_step") == MORE_STEPS
        for name in expected["variables"]:
            np.testing.assert_allclose(
                tf.train.load_variable(copy_dir, name),
                tf.train.load_variable(more_dir, name), rtol=1e-4, atol=1e-6,
                err_msg=f"{kind}: {name}")
