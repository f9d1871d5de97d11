"""RNNClassifier / RNNEstimator share checkpoints and results with tf.estimator 2.15.

tests/oracle/rnn_driver.py builds the same three models for both libraries: an
LSTM classifier (int units, context column, weights, label vocabulary, optimizer
by name, so learning rate 0.05 and clipnorm 5 with a SUM loss), a stacked-GRU
RNNEstimator with a regression head (Adam), and a simple-RNN classifier with
``return_sequences`` (per-step labels, RMSProp). Each is trained to step
FIRST_STEPS on the TF 2.15 interpreter (one subprocess for the module), which
also continues a copy to MORE_STEPS. estimator_lite then, on a copy of each
tf.estimator model_dir:
  * evaluates (and predicts, with return_sequences) as tf.estimator does, and
    exports the same serving signatures,
  * continues it to the variables tf.estimator reaches continuing it (same update
    rules, optimizer slots included),
  * writes a checkpoint with exactly tf.estimator's names, shapes and dtypes (so
    tf.estimator restores estimator_lite's model_dirs too).
"""

import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from tests.oracle import driver_path, load_driver, requires_oracle, run_oracle_driver
from tests.support import compare

DRIVER_PATH = driver_path("rnn_driver.py")
FIRST_STEPS = 6
MORE_STEPS = 10
TOLERANCE = 1e-5

driver = load_driver(DRIVER_PATH, "rnn_driver")


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    """tf.estimator's model_dirs and results (one TF 2.15 subprocess)."""
    workdir = str(tmp_path_factory.mktemp("rnn_oracle"))
    return workdir, run_oracle_driver(DRIVER_PATH, "run", workdir, FIRST_STEPS,
                                      MORE_STEPS)


@pytest.mark.slow
@requires_oracle
@pytest.mark.parametrize("kind", driver.KINDS)
def test_tf_estimator_model_dir_evaluates_and_trains_on(kind, oracle, tmp_path):
    workdir, report = oracle
    expected = report[kind]
    model_dir = str(tmp_path / kind)
    shutil.copytree(os.path.join(workdir, kind, "tf"), model_dir)
    estimator, label_key = driver.build(el.experimental, el, kind, model_dir)
    compare.assert_metrics_close(estimator.evaluate(driver.input_fn(label_key, 1)),
                                 expected["metrics"], TOLERANCE)
    if kind in driver.PREDICTED_KINDS:
        predictions = next(estimator.predict(driver.input_fn(label_key, 1),
                                             yield_single_examples=False))
        assert sorted(expected["predictions"]) == sorted(
            k for k, v in predictions.items() if np.asarray(v).dtype.kind in "fiub")
        for key, value in expected["predictions"].items():
            np.testing.assert_allclose(predictions[key], value, rtol=TOLERANCE,
                                       atol=TOLERANCE, err_msg=key)
    if kind in driver.EXPORTED_KINDS:
        export_dir = estimator.export_saved_model(
            str(tmp_path / "export"), driver.serving_input_receiver_fn(el.export))
        assert compare.signatures(export_dir) == compare.signatures(expected["export_dir"])
    estimator.train(driver.input_fn(label_key), max_steps=MORE_STEPS)
    assert tf.train.load_variable(model_dir, "global_step") == MORE_STEPS
    # estimator_lite's own checkpoint: tf.estimator's names, shapes and dtypes.
    assert driver.checkpoint_variables(model_dir) == expected["variables"]
    more_dir = os.path.join(workdir, kind, "tf_more")
    compare.assert_same_variables(model_dir, more_dir, expected["variables"])


def _sequence_column():
    return tf.feature_column.sequence_numeric_column("x")


@pytest.mark.parametrize("kwargs,error,message", [
    ({"units": [4], "rnn_cell_fn": lambda: None}, ValueError,
     "units and cell_type must not be specified when using rnn_cell_fn"),
    ({"rnn_cell_fn": lambda: None}, ValueError, "rnn_cell_fn is not supported"),
    ({"units": 4}, ValueError, "units given as an int needs cell_type"),
    ({"units": [4], "cell_type": "rnn"}, ValueError, "cell_type must be one of"),
    ({"units": [4], "cell_type": tf.keras.layers.LSTMCell}, TypeError,
     "cell_type must be one of"),
    ({"units": [0]}, ValueError, "units sizes must be >= 1"),
    ({"units": None}, TypeError, "units must be an int or a list of ints"),
])
def test_bad_rnn_arguments_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        el.experimental.RNNClassifier([_sequence_column()], **kwargs)


def test_return_sequences_needs_a_sequential_head():
    with pytest.raises(ValueError, match="SequentialHeadWrapper"):
        el.experimental.RNNEstimator(el.BinaryClassHead(), [_sequence_column()],
                                     units=[2], return_sequences=True)
