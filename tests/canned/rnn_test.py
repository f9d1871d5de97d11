"""RNNClassifier / RNNEstimator share checkpoints and results with tf.estimator 2.15.

tests/compat/rnn_driver.py builds the same three models for both libraries: an
LSTM classifier (int units, context column, weights, label vocabulary, optimizer
by name, so learning rate 0.05 and clipnorm 5 with a SUM loss), a stacked-GRU
RNNEstimator with a regression head (Adam), and a simple-RNN classifier with
``return_sequences`` (per-step labels, RMSProp). estimator_lite trains its own to
step FIRST_STEPS; the TF 2.15 interpreter trains its own, continues a copy to
MORE_STEPS and evaluates the estimator_lite model_dirs. Then estimator_lite:
  * writes the same checkpoint names, shapes and dtypes (optimizer slots included),
  * evaluates and predicts the tf.estimator model_dir as tf.estimator does,
  * continues it to the variables tf.estimator reaches continuing it;
and tf.estimator evaluates the model_dir estimator_lite trained to its metrics.
"""

import json
import os
import shutil
import subprocess

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from tests.oracle import TF215_PYTHON, load_driver, requires_oracle

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVER_PATH = os.path.join(ROOT, "tests", "compat", "rnn_driver.py")
FIRST_STEPS = 6
MORE_STEPS = 10
TOLERANCE = 1e-5

driver = load_driver(DRIVER_PATH, "rnn_driver")


def _run_oracle(workdir):
    env = dict(os.environ)
    env.pop("TF_CONFIG", None)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    result = subprocess.run(
        [TF215_PYTHON, DRIVER_PATH, "run", workdir, str(FIRST_STEPS), str(MORE_STEPS),
         "lite"], capture_output=True, text=True, env=env, timeout=900, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["tf_version"].startswith("2.15")
    return report


def _assert_metrics_close(actual, expected):
    assert sorted(actual) == sorted(expected)
    for key, value in expected.items():
        assert actual[key] == pytest.approx(value, rel=TOLERANCE, abs=TOLERANCE), key


def _build(kind, model_dir):
    return driver.build(el.experimental, el, kind, model_dir)


@requires_oracle
def test_rnn_checkpoints_metrics_and_training_match_tf_estimator(tmp_path):
    work = str(tmp_path)
    lite = {}
    for kind in driver.KINDS:  # estimator_lite from scratch, read by tf.estimator.
        estimator, label_key = _build(kind, os.path.join(work, kind, "lite"))
        estimator.train(driver.input_fn(label_key), max_steps=FIRST_STEPS)
        lite[kind] = estimator
    oracle = _run_oracle(work)
    for kind in driver.KINDS:
        expected = oracle[kind]
        estimator, label_key = lite[kind], _build(kind, None)[1]
        assert driver.checkpoint_variables(estimator.model_dir) == expected["variables"]
        _assert_metrics_close(expected["lite_metrics"],
                              estimator.evaluate(driver.input_fn(label_key, 1)))
        # The tf.estimator model_dir: same metrics and predictions here, then it
        # keeps training exactly as tf.estimator continues it.
        copy_dir = os.path.join(work, kind, "from_tf")
        shutil.copytree(os.path.join(work, kind, "tf"), copy_dir)
        continued, _ = _build(kind, copy_dir)
        _assert_metrics_close(continued.evaluate(driver.input_fn(label_key, 1)),
                              expected["metrics"])
        predictions = next(continued.predict(driver.input_fn(label_key, 1),
                                             yield_single_examples=False))
        for key, value in expected["predictions"].items():
            np.testing.assert_allclose(predictions[key], value, rtol=TOLERANCE,
                                       atol=TOLERANCE, err_msg=f"{kind}: {key}")
        continued.train(driver.input_fn(label_key), max_steps=MORE_STEPS)
        more_dir = os.path.join(work, kind, "tf_more")
        assert tf.train.load_variable(copy_dir, "global_step") == MORE_STEPS
        for name in expected["variables"]:
            np.testing.assert_allclose(
                tf.train.load_variable(copy_dir, name),
                tf.train.load_variable(more_dir, name), rtol=1e-4, atol=1e-6,
                err_msg=f"{kind}: {name}")
