"""RegressionHead, PoissonRegressionHead, LogisticRegressionHead: values, keys, errors."""

import math
import re

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite.head import (
    LogisticRegressionHead,
    PoissonRegressionHead,
    RegressionHead,
)

LOGITS = np.array([[0.5, -1.0], [1.5, 0.0], [-0.5, 2.0]], np.float32)
LABELS = np.array([[1.0, -1.5], [1.0, 0.5], [0.0, 1.0]], np.float32)
WEIGHTS = np.array([[1.0], [2.0], [0.5]], np.float32)
LABEL_DIMENSION_ERROR = "Invalid label_dimension"
LOGISTIC_LABELS_ERROR = re.escape("Labels must be in range [0, 1]")


def test_regression_metrics_match_numpy(eval_in_graph):
    head = RegressionHead(label_dimension=2, weight_column="w")
    loss, metrics = eval_in_graph(head, LOGITS, LABELS, {"w": WEIGHTS})
    squared = (LOGITS - LABELS) ** 2
    w2 = np.repeat(WEIGHTS, 2, axis=1)
    assert set(metrics) == {"average_loss", "prediction/mean", "label/mean"}
    np.testing.assert_allclose(loss, np.sum(w2 * squared) / squared.size, rtol=1e-5)
    np.testing.assert_allclose(metrics["average_loss"], np.sum(w2 * squared) / w2.sum(),
                               rtol=1e-5)
    np.testing.assert_allclose(metrics["prediction/mean"], np.sum(w2 * LOGITS) / w2.sum(),
                               rtol=1e-5)
    np.testing.assert_allclose(metrics["label/mean"], np.sum(w2 * LABELS) / w2.sum(),
                               rtol=1e-5)


def test_sum_reduction_and_rank_one_labels(run_in_graph):
    head = RegressionHead(loss_reduction="sum")
    loss = run_in_graph(lambda: head.loss(tf.constant(LABELS[:, 0]),
                                          tf.constant(LOGITS[:, :1])))
    np.testing.assert_allclose(loss, np.sum((LOGITS[:, 0] - LABELS[:, 0]) ** 2), rtol=1e-5)


def _loss_and_predictions(run_in_graph, head, labels, logits):
    """[head.loss, head.predictions] of `labels` and `logits`, run in a graph."""
    return run_in_graph(lambda: [head.loss(tf.constant(labels), tf.constant(logits)),
                                 head.predictions(tf.constant(logits))])


def test_poisson_loss_and_predictions(run_in_graph):
    counts = np.array([[0.0], [2.0], [5.0]], np.float32)
    logits = LOGITS[:, :1]
    loss, predictions = _loss_and_predictions(run_in_graph, PoissonRegressionHead(),
                                               counts, logits)
    c, z = counts[:, 0].astype(np.float64), logits[:, 0].astype(np.float64)
    stirling = np.where(c > 1, c * np.log(np.maximum(c, 1)) - c + 0.5 * np.log(
        2 * math.pi * np.maximum(c, 1)), 0.0)
    expected = np.mean(np.exp(z) - c * z + stirling)
    np.testing.assert_allclose(loss, expected, rtol=1e-5)
    np.testing.assert_allclose(predictions["predictions"], np.exp(logits), rtol=1e-5)
    assert sorted(predictions) == ["logits", "predictions"]


def test_logistic_regression(run_in_graph):
    targets = np.array([[0.2], [0.9], [0.5]], np.float32)
    logits = LOGITS[:, :1]
    head = LogisticRegressionHead()
    loss, predictions = _loss_and_predictions(run_in_graph, head, targets, logits)
    p = 1 / (1 + np.exp(-logits.astype(np.float64)))
    expected = np.mean(-(targets * np.log(p) + (1 - targets) * np.log(1 - p)))
    np.testing.assert_allclose(loss, expected, rtol=1e-5)
    np.testing.assert_allclose(predictions["predictions"], p, rtol=1e-5)
    with pytest.raises(tf.errors.InvalidArgumentError, match=LOGISTIC_LABELS_ERROR):
        run_in_graph(lambda: head.loss(tf.constant([[1.5]]), tf.constant([[0.0]])))


def test_estimator_flow_and_signatures(tmp_path, linear_model_fn, signature_keys):
    x = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)
    y = 2.0 * x
    estimator = el.Estimator(linear_model_fn(RegressionHead(name="price"), 1, 0.02),
                             model_dir=str(tmp_path / "model"))

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(4)

    estimator.train(input_fn, steps=50)
    metrics = estimator.evaluate(input_fn, steps=1)
    assert set(metrics) == {"loss", "average_loss/price", "prediction/mean/price",
                            "label/mean/price", "global_step"}
    assert metrics["average_loss/price"] < 0.1
    prediction = next(estimator.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(4)))
    assert sorted(prediction) == ["predictions"]
    export_dir = estimator.export_saved_model(
        str(tmp_path / "export"), el.export.build_parsing_serving_input_receiver_fn(
            {"x": tf.io.FixedLenFeature([1], tf.float32)}))
    signatures = signature_keys(export_dir)
    assert signatures == {
        "serving_default": ("tensorflow/serving/regress", ["outputs"]),
        "regression": ("tensorflow/serving/regress", ["outputs"]),
        "predict": ("tensorflow/serving/predict", ["predictions"])}


@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda: RegressionHead(label_dimension=0), ValueError, LABEL_DIMENSION_ERROR),
    (lambda: RegressionHead(label_dimension="2"), TypeError, "label_dimension must be"),
    (lambda: RegressionHead(inverse_link_fn=3), TypeError, "inverse_link_fn must be"),
    (lambda: PoissonRegressionHead(compute_full_loss=1), TypeError,
     "compute_full_loss must be a bool"),
    (lambda: LogisticRegressionHead(loss_reduction="mean"), ValueError,
     "Invalid loss_reduction"),
])
def test_bad_arguments(make, error, message):
    with pytest.raises(error, match=re.escape(message)):
        make()


def test_string_labels_are_rejected():
    # tf.estimator's error class (its cast fails when run), raised when built.
    with tf.Graph().as_default(), pytest.raises(tf.errors.UnimplementedError,
                                                match="must be numbers"):
        RegressionHead().loss(tf.constant([["1.0"]]), tf.constant([[1.0]]))


def test_weighted_metrics_stream_over_numpy_input_batches(tmp_path):
    # tf.estimator 2.15's test_weighted_multi_batch_eval, as a user writes it: three
    # batches of one example from numpy_input_fn, weighted 1, .1 and 1.5. The metrics
    # are tf.estimator's (that test passes on the oracle; its one other assertion,
    # scaffold.summary_op, rests on numpy_input_fn's queue summary, see
    # docs/differences.md): average_loss = (100 + .1 + 1.5) / 2.6 = 39.076923.
    def model_fn(features, labels, mode):
        tf.compat.v1.get_variable("unused", [1])  # A checkpoint needs a variable.
        logits = features.pop("logits")
        return RegressionHead(weight_column="label_weights").create_estimator_spec(
            features, mode, logits, labels, train_op_fn=lambda loss: tf.no_op())

    input_fn = el.inputs.numpy_input_fn(
        x={"x": np.array([[42.0], [43.0], [44.0]]),
           "label_weights": np.array([[1.0], [0.1], [1.5]]),
           "logits": np.array([[45.0], [41.0], [44.0]])},
        y=np.array([[35.0], [42.0], [45.0]]), batch_size=1, num_epochs=1, shuffle=False)
    estimator = el.Estimator(model_fn, str(tmp_path))
    estimator.train(input_fn, steps=1)
    metrics = estimator.evaluate(input_fn)
    assert metrics["average_loss"] == pytest.approx(39.076923, rel=1e-6)
    assert metrics["prediction/mean"] == pytest.approx((45 + 41 * 0.1 + 44 * 1.5) / 2.6,
                                                       rel=1e-6)
    assert metrics["label/mean"] == pytest.approx((35 + 42 * 0.1 + 45 * 1.5) / 2.6,
                                                  rel=1e-6)
