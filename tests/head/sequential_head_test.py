"""SequentialHeadWrapper: loss, metrics and predictions over the unpadded steps.

(tests/canned/rnn_test.py checks it end to end against tf.estimator 2.15 through
RNNClassifier(return_sequences=True).)
"""

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite.head.sequential_head import SequentialHeadWrapper

LOGITS = np.array([[[0.5], [-1.0], [9.0]], [[2.0], [7.0], [-9.0]]], np.float32)
LABELS = np.array([[1, 0, 1], [0, 1, 1]], np.int64)
MASK = np.array([[True, True, False], [True, False, False]])


def _sigmoid_cross_entropy(logits, labels):
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


def _run(fetches):
    with tf.compat.v1.Session() as session:
        session.run(tf.compat.v1.local_variables_initializer())
        return session.run(fetches)


def test_loss_and_metrics_count_only_masked_steps():
    head = SequentialHeadWrapper(el.BinaryClassHead(), sequence_length_mask="mask")
    with tf.Graph().as_default():
        features = {"mask": tf.constant(MASK)}
        spec = head.create_estimator_spec(features, el.ModeKeys.EVAL,
                                          tf.constant(LOGITS), tf.constant(LABELS))
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.local_variables_initializer())
            session.run([update for _, update in spec.eval_metric_ops.values()])
            loss, accuracy = session.run(
                [spec.loss, spec.eval_metric_ops["accuracy"][0]])
    kept_logits, kept_labels = LOGITS[..., 0][MASK], LABELS[MASK]
    expected = _sigmoid_cross_entropy(kept_logits, kept_labels).mean()
    assert loss == pytest.approx(expected, rel=1e-6)
    assert accuracy == pytest.approx(np.mean((kept_logits > 0) == kept_labels))


def test_weights_are_flattened_with_the_mask():
    head = SequentialHeadWrapper(el.BinaryClassHead(weight_column="w"),
                                 sequence_length_mask="mask", feature_columns="w")
    weights = np.array([[1.0, 3.0, 100.0], [2.0, 100.0, 100.0]], np.float32)
    with tf.Graph().as_default():
        features = {"mask": tf.constant(MASK), "w": tf.constant(weights)}
        loss = _run(head.loss(logits=tf.constant(LOGITS), labels=tf.constant(LABELS),
                              features=features))
    kept = _sigmoid_cross_entropy(LOGITS[..., 0][MASK], LABELS[MASK])
    # SUM_OVER_BATCH_SIZE: weighted sum over the kept steps, divided by their count.
    assert loss == pytest.approx(np.sum(kept * weights[MASK]) / 3, rel=1e-6)


def test_predict_returns_every_step_and_the_mask():
    head = SequentialHeadWrapper(el.BinaryClassHead(), sequence_length_mask="mask")
    with tf.Graph().as_default():
        spec = head.create_estimator_spec({"mask": tf.constant(MASK)},
                                          el.ModeKeys.PREDICT, tf.constant(LOGITS))
        predictions = _run(spec.predictions)
    np.testing.assert_array_equal(predictions["mask"], MASK)
    np.testing.assert_allclose(predictions["logistic"], 1 / (1 + np.exp(-LOGITS)),
                               rtol=1e-6)


def test_missing_mask_is_a_clear_error():
    head = SequentialHeadWrapper(el.BinaryClassHead(), sequence_length_mask="mask")
    with tf.Graph().as_default(), pytest.raises(ValueError, match="The provided sequence_length_mask key `mask` should be included"):
        head.loss(logits=tf.constant(LOGITS), labels=tf.constant(LABELS), features={})


@pytest.mark.parametrize("kwargs,error,message", [
    ({"sequence_length_mask": 3}, TypeError, "`sequence_mask` column must be a string"),
    ({"feature_columns": [1]}, TypeError, "Column must a string"),
])
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        SequentialHeadWrapper(el.BinaryClassHead(), **kwargs)


def test_multi_head_is_rejected():
    multi = el.MultiHead([el.BinaryClassHead(name="a"), el.RegressionHead(name="b")])
    with pytest.raises(ValueError, match="`MultiHead` is not supported"):
        SequentialHeadWrapper(multi)
