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
    with tf.Graph().as_default(), pytest.raises(
            ValueError, match="sequence_length_mask key `mask` should be included"):
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


def test_mask_mismatch_fails_when_the_graph_runs():
    # Sparse labels hold 3 steps; the mask marks 6 (tf.estimator: InvalidArgumentError).
    head = SequentialHeadWrapper(el.BinaryClassHead(), sequence_length_mask="mask")
    with tf.Graph().as_default():
        labels = tf.sparse.SparseTensor([[0, 0], [0, 1], [1, 0]], [1, 0, 0], [2, 3])
        loss = head.loss(logits=tf.constant(LOGITS), labels=labels,
                         features={"mask": tf.ones([2, 3], tf.int64)})
        with tf.compat.v1.Session() as session, pytest.raises(
                tf.errors.InvalidArgumentError,
                # Two independent run-time checks catch it; which one's assertion
                # TensorFlow runs first is not fixed.
                match="incompatible with provided mask|labels shape must be"):
            session.run(loss)


def test_private_path_serves_the_wrapper_and_any_static_head():
    # Programs import it from tf.estimator's private module; the wrapped head is
    # duck-typed (only the methods called are needed), as there.
    el.install_as_tf_estimator()
    try:
        from tensorflow_estimator.python.estimator.head import sequential_head
    finally:
        el.uninstall_as_tf_estimator()
    assert sequential_head.SequentialHeadWrapper is SequentialHeadWrapper

    class Recorder:
        def loss(self, **kwargs):
            return kwargs

    head = sequential_head.SequentialHeadWrapper(Recorder(), "mask", "w")
    with tf.Graph().as_default():
        got = head.loss(logits=tf.constant([[1, 2], [3, 4]]),
                        labels=tf.constant([[0, 1], [0, 2]]),
                        features={"mask": tf.constant([[1, 1], [1, 0]]),
                                  "w": tf.constant([[0.5, 0.25], [2.0, 9.0]])},
                        mode="eval")
        values = _run({key: got[key] for key in ("logits", "labels")})
        weights = _run(got["features"]["w"])
    assert got["mode"] == "eval" and sorted(got["features"]) == ["w"]
    np.testing.assert_array_equal(values["logits"], [[1], [2], [3]])
    np.testing.assert_array_equal(values["labels"], [[0], [1], [0]])
    np.testing.assert_allclose(weights, [[0.5], [0.25], [2.0]])
