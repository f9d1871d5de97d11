"""MultiClassHead: keys, values against numpy, vocabulary, export, errors."""

import re

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite.head import MultiClassHead

LOGITS = np.array([[2.0, 0.1, -1.0], [0.0, 1.0, 0.5], [-1.0, -2.0, 3.0],
                   [0.3, 0.2, 0.1]], np.float32)
LABELS = np.array([[0], [2], [2], [1]], np.int64)
WEIGHTS = np.array([[1.0], [2.0], [0.5], [1.5]], np.float32)
N_CLASSES_ERROR = "n_classes must be > 2"
VOCABULARY_ERROR = "label_vocabulary must have n_classes=3 items"
RANGE_ERROR = "Labels must be <= n_classes - 1"


def _softmax_xent(labels, logits):
    logits = logits.astype(np.float64)
    log_z = np.log(np.exp(logits).sum(axis=1))
    return log_z - logits[np.arange(len(labels)), labels[:, 0]]


def test_metrics_match_numpy(eval_in_graph):
    head = MultiClassHead(3, weight_column="w")
    loss, metrics = eval_in_graph(head, LOGITS, LABELS, {"w": WEIGHTS},
                                  regularization_losses=[0.5])
    w = WEIGHTS[:, 0]
    per_example = _softmax_xent(LABELS, LOGITS)
    correct = LOGITS.argmax(axis=1) == LABELS[:, 0]
    assert set(metrics) == {"average_loss", "accuracy", "regularization_loss"}
    np.testing.assert_allclose(loss, np.sum(w * per_example) / 4 + 0.5, rtol=1e-5)
    np.testing.assert_allclose(metrics["average_loss"], np.sum(w * per_example) / w.sum(),
                               rtol=1e-5)
    np.testing.assert_allclose(metrics["accuracy"], np.sum(w * correct) / w.sum(),
                               rtol=1e-5)


def test_vocabulary_labels_give_the_same_loss_as_ids(run_in_graph):
    vocabulary = ["a", "b", "c"]
    by_name = MultiClassHead(3, label_vocabulary=vocabulary)
    names = np.array(vocabulary)[LABELS]
    loss_by_name, loss_by_id = run_in_graph(lambda: [
        by_name.loss(tf.constant(names), tf.constant(LOGITS)),
        MultiClassHead(3).loss(tf.constant(LABELS), tf.constant(LOGITS))])
    assert loss_by_name == pytest.approx(loss_by_id)


def test_predictions(run_in_graph):
    head = MultiClassHead(3, label_vocabulary=["a", "b", "c"])
    predictions = run_in_graph(lambda: head.predictions(tf.constant(LOGITS)))
    assert sorted(predictions) == sorted(["logits", "probabilities", "class_ids",
                                          "classes", "all_class_ids", "all_classes"])
    np.testing.assert_array_equal(predictions["class_ids"][:, 0], LOGITS.argmax(axis=1))
    assert predictions["class_ids"].dtype == np.int64
    assert predictions["all_class_ids"].dtype == np.int32
    assert list(predictions["classes"][:, 0]) == [b"a", b"b", b"c", b"a"]
    assert list(predictions["all_classes"][1]) == [b"a", b"b", b"c"]
    np.testing.assert_allclose(predictions["probabilities"].sum(axis=1), 1.0, rtol=1e-6)


def test_estimator_flow_and_signatures(tmp_path, linear_model_fn, signature_keys):
    x = np.eye(3, dtype=np.float32)
    labels = np.array([[0], [1], [2]], np.int64)
    estimator = el.Estimator(linear_model_fn(MultiClassHead(3), 3, learning_rate=1.0),
                             model_dir=str(tmp_path / "model"))

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, labels)).repeat().batch(3)

    estimator.train(input_fn, steps=10)
    metrics = estimator.evaluate(input_fn, steps=1)
    assert set(metrics) == {"loss", "average_loss", "accuracy", "global_step"}
    assert metrics["accuracy"] == 1.0
    export_dir = estimator.export_saved_model(
        str(tmp_path / "export"), el.export.build_parsing_serving_input_receiver_fn(
            {"x": tf.io.FixedLenFeature([3], tf.float32)}))
    signatures = signature_keys(export_dir)
    assert sorted(signatures) == ["classification", "predict", "serving_default"]
    assert signatures["serving_default"] == ("tensorflow/serving/classify",
                                             ["classes", "scores"])


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"n_classes": 2}, ValueError, N_CLASSES_ERROR),
    ({"n_classes": None}, ValueError, "n_classes cannot be None"),
    ({"n_classes": 3, "label_vocabulary": ["a", "b"]}, ValueError, VOCABULARY_ERROR),
    ({"n_classes": 3, "label_vocabulary": ["a", "a", "b"]}, ValueError,
     "label_vocabulary must not repeat"),
    ({"n_classes": 3, "label_vocabulary": ["a", "b", 3]}, TypeError,
     "label_vocabulary must contain only strings"),
])
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        MultiClassHead(**kwargs)


def test_label_out_of_range_fails_at_run_time(run_in_graph):
    with pytest.raises(tf.errors.InvalidArgumentError, match=re.escape(RANGE_ERROR)):
        run_in_graph(lambda: MultiClassHead(3).loss(tf.constant([[3]]),
                                                    tf.constant(LOGITS[:1])))
    with tf.Graph().as_default(), pytest.raises(ValueError, match="logits shape must be"):
        MultiClassHead(3).loss(tf.constant([[1]]), tf.constant([[0.1, 0.2]]))


def test_tensor_n_classes_is_kept_as_logits_dimension(run_in_graph):
    # tf.estimator 2.15 takes an int32 Tensor n_classes and returns it as
    # logits_dimension; its predictions and loss are those of n_classes=3. On the
    # oracle, these logits and labels [[0], [2]] gave loss 0.55144465.
    logits = [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]

    def build():
        n_classes = tf.constant(3)
        head = MultiClassHead(n_classes)
        assert head.logits_dimension is n_classes
        assert head.n_classes == 3
        return (head.predictions(tf.constant(logits)),
                head.loss(tf.constant([[0], [2]]), tf.constant(logits)))

    predictions, loss = run_in_graph(build)
    assert predictions["classes"].tolist() == [[b"0"], [b"2"]]
    assert predictions["all_class_ids"].tolist() == [[0, 1, 2]] * 2
    np.testing.assert_allclose(predictions["probabilities"][0],
                               [0.576117, 0.2119416, 0.2119416], rtol=1e-5)
    assert loss == pytest.approx(0.55144465, rel=1e-6)


@pytest.mark.parametrize(("make_n_classes", "error", "message"), [
    # Refused by tf.estimator 2.15 too, with these types.
    (lambda: tf.constant(3, tf.int64), TypeError, "int32 scalar Tensor"),
    (lambda: tf.constant(3.0), TypeError, "int32 scalar Tensor"),
    (lambda: tf.constant(2), tf.errors.InvalidArgumentError,
     "n_classes must be greater than 2"),
    # tf.estimator builds these and fails later (the placeholder when the graph
    # runs unfed, the vector in predictions); estimator_lite needs the value now.
    (lambda: tf.compat.v1.placeholder(tf.int32, []), ValueError,
     "has no value known before the graph runs"),
    (lambda: tf.constant([3]), ValueError, "n_classes must be a scalar Tensor"),
], ids=["int64", "float", "two", "placeholder", "vector"])
def test_tensor_n_classes_refused(make_n_classes, error, message):
    with tf.Graph().as_default(), pytest.raises(error, match=re.escape(message)):
        MultiClassHead(make_n_classes())
