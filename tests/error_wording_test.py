"""An Estimator's refusals start with tf.estimator 2.15's words.

tf.estimator's own unit tests (and programs written against it) match its error
messages with assertRaisesRegex; estimator_lite raises the same exception type
with those words first and its own detail after them. The patterns below are the
ones tf.estimator 2.15's estimator_test.py uses (the EstimatorSpec ones are in
model_fn_test.py).
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el


def _input_fn():
    return {"x": tf.constant([[1.0], [2.0]])}, tf.constant([[1.0], [0.0]])


def _model_fn(metrics=None, predictions=None):
    """A model_fn with one weight; EVAL adds `metrics` (name: value tensor)."""
    def model_fn(features, labels, mode):
        weight = tf.compat.v1.get_variable("w", [1, 1])
        output = tf.matmul(features["x"], weight)
        loss = tf.reduce_mean(tf.square(output - labels)) if labels is not None else None
        step = tf.compat.v1.train.get_global_step()
        ops = {name: tf.compat.v1.metrics.mean(value(output))
               for name, value in (metrics or {}).items()}
        preds = predictions(output) if predictions else output
        return el.EstimatorSpec(
            mode, predictions=preds, loss=loss, eval_metric_ops=ops,
            train_op=tf.compat.v1.assign_add(step, 1) if mode == "train" else None)
    return model_fn


@pytest.mark.parametrize("name, words", [
    ("global_step", "Metric with name `global_step` is not allowed"),
    ("loss", 'Metric with name "loss" is not allowed'),
])
def test_a_metric_named_as_the_estimators_own_is_refused(tmp_path, name, words):
    estimator = el.Estimator(_model_fn(metrics={name: tf.reduce_mean}), str(tmp_path))
    estimator.train(_input_fn, steps=1)
    with pytest.raises(ValueError, match=words) as raised:
        estimator.evaluate(_input_fn, steps=1)
    assert "because Estimator already defines a default metric" in str(raised.value)


def test_an_input_fn_returning_three_things_is_refused(tmp_path):
    estimator = el.Estimator(_model_fn(), str(tmp_path))
    with pytest.raises(ValueError, match="len 2 tuple") as raised:
        estimator.train(lambda: (*_input_fn(), tf.constant(1.0)), steps=1)
    assert "length 3" in str(raised.value)


def test_params_for_a_model_fn_without_params_are_refused(tmp_path):
    with pytest.raises(ValueError, match="does not include params argument"):
        el.Estimator(_model_fn(), str(tmp_path), params={"a": "b"})


def test_predict_keys_are_checked_in_tf_estimators_words(tmp_path):
    estimator = el.Estimator(_model_fn(), str(tmp_path))
    estimator.train(_input_fn, steps=1)
    with pytest.raises(ValueError, match="predict_keys argument is not valid in case "
                                         "of non-dict predictions"):
        next(estimator.predict(_input_fn, predict_keys=["y"]))
    keyed = el.Estimator(_model_fn(predictions=lambda y: {"y1": y, "y2": 2 * y}),
                         str(tmp_path))
    with pytest.raises(ValueError, match="Expected to run at least one output from"):
        next(keyed.predict(_input_fn, predict_keys=["y3"]))
    # Keys naming no prediction are left out while one does (as tf.estimator),
    # and the predictions keep their own order.
    assert list(next(keyed.predict(_input_fn, predict_keys=["y2", "y3", "y1"]))) == [
        "y1", "y2"]


def test_predictions_of_different_batch_sizes_name_the_one_that_differs(tmp_path):
    estimator = el.Estimator(
        _model_fn(predictions=lambda y: {"y1": y, "y2": y[:1]}), str(tmp_path))
    estimator.train(_input_fn, steps=1)
    with pytest.raises(ValueError, match="Batch length of predictions should be same. "
                                         "y2 has different batch length") as raised:
        next(estimator.predict(_input_fn))
    assert "{'y1': 2, 'y2': 1}" in str(raised.value)
    batch = next(estimator.predict(_input_fn, yield_single_examples=False))
    assert np.shape(batch["y2"]) == (1, 1)
