"""MultiLabelHead: dense and sparse labels, per-class metrics, values, errors."""

import re

import numpy as np
import pytest
import tensorflow as tf

from estimator_lite.head import MultiLabelHead

LOGITS = np.array([[2.0, -1.0, 0.5], [-0.5, 1.5, -2.0], [0.1, 0.2, 3.0],
                   [-1.0, -1.0, 1.0]], np.float32)
MULTI_HOT = np.array([[1, 0, 1], [0, 1, 0], [0, 0, 1], [1, 0, 0]], np.int64)
WEIGHTS = np.array([[1.0], [2.0], [0.5], [1.5]], np.float32)
CLASS_METRICS_ERROR = "All classes_for_class_based_metrics must be in range [0, 2]"
CLASS_NAME_ERROR = "classes_for_class_based_metrics names must be in label_vocabulary"


def _per_example_loss():
    p = 1.0 / (1.0 + np.exp(-LOGITS.astype(np.float64)))
    xent = -(MULTI_HOT * np.log(p) + (1 - MULTI_HOT) * np.log(1 - p))
    return xent.mean(axis=1)


def _sparse_ids():
    rows, cols = np.nonzero(MULTI_HOT)
    return tf.SparseTensor(np.stack([rows, np.zeros_like(rows)], 1).astype(np.int64),
                           cols.astype(np.int64), [4, 3])


def test_metrics_match_numpy(eval_in_graph):
    head = MultiLabelHead(3, weight_column="w", thresholds=[0.5],
                          classes_for_class_based_metrics=[2])
    loss, metrics = eval_in_graph(head, LOGITS, MULTI_HOT, {"w": WEIGHTS})
    w = WEIGHTS[:, 0]
    p = 1.0 / (1.0 + np.exp(-LOGITS.astype(np.float64)))
    np.testing.assert_allclose(loss, np.sum(w * _per_example_loss()) / 4, rtol=1e-5)
    np.testing.assert_allclose(metrics["average_loss"],
                               np.sum(w * _per_example_loss()) / w.sum(), rtol=1e-5)
    predicted = p > 0.5
    w3 = np.repeat(WEIGHTS, 3, axis=1)
    np.testing.assert_allclose(metrics["accuracy/positive_threshold_0.5"],
                               np.sum(w3 * (predicted == MULTI_HOT)) / w3.sum(), rtol=1e-5)
    np.testing.assert_allclose(metrics["probability_mean/class2"],
                               np.sum(w * p[:, 2]) / w.sum(), rtol=1e-5)
    assert set(metrics) == {
        "average_loss", "auc", "auc_precision_recall", "accuracy/positive_threshold_0.5",
        "precision/positive_threshold_0.5", "recall/positive_threshold_0.5",
        "probability_mean/class2", "auc/class2", "auc_precision_recall/class2"}
    # The scores fall in distinct threshold buckets, so the bucketed AUC is the exact
    # weighted share of correctly ranked (positive, negative) pairs.
    positive, negative = MULTI_HOT[:, 2] == 1, MULTI_HOT[:, 2] == 0
    pair_weights = np.outer(w[positive], w[negative])
    ranked = p[positive, 2][:, None] > p[negative, 2][None, :]
    np.testing.assert_allclose(metrics["auc/class2"],
                               np.sum(pair_weights * ranked) / pair_weights.sum(),
                               rtol=1e-5)


def test_sparse_ids_and_names_give_the_dense_loss(run_in_graph):
    vocabulary = ["a", "b", "c"]

    def build():
        ids = _sparse_ids()
        names = tf.SparseTensor(ids.indices, tf.gather(tf.constant(vocabulary),
                                                       ids.values), ids.dense_shape)
        logits = tf.constant(LOGITS)
        return [MultiLabelHead(3).loss(tf.constant(MULTI_HOT), logits),
                MultiLabelHead(3).loss(ids, logits),
                MultiLabelHead(3, label_vocabulary=vocabulary).loss(names, logits)]

    dense, sparse_ids, sparse_names = run_in_graph(build)
    np.testing.assert_allclose(dense, _per_example_loss().mean(), rtol=1e-5)
    assert sparse_ids == pytest.approx(dense) and sparse_names == pytest.approx(dense)


def test_predictions_and_export_outputs():
    head = MultiLabelHead(3, label_vocabulary=["a", "b", "c"])
    with tf.Graph().as_default():
        spec = head.create_estimator_spec({}, "infer", tf.constant(LOGITS))
        assert sorted(spec.predictions) == ["classes", "logits", "probabilities"]
        assert sorted(spec.export_outputs) == ["classification", "predict",
                                               "serving_default"]
        with tf.compat.v1.Session() as session:
            classes = session.run(spec.predictions["classes"])
    assert list(classes[0]) == [b"a", b"b", b"c"]


def test_class_names_name_per_class_metrics(eval_in_graph):
    head = MultiLabelHead(3, label_vocabulary=["a", "b", "c"],
                          classes_for_class_based_metrics=["b"], name="tags")
    _, metrics = eval_in_graph(head, LOGITS, MULTI_HOT)
    assert {"auc/b/tags", "auc_precision_recall/b/tags",
            "probability_mean/b/tags"} <= set(metrics)


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"n_classes": 1}, ValueError, "n_classes must be > 1 for multi-label classification"),
    ({"n_classes": 3, "classes_for_class_based_metrics": [5]}, ValueError,
     CLASS_METRICS_ERROR),
    ({"n_classes": 3, "classes_for_class_based_metrics": ["x"]}, ValueError,
     CLASS_NAME_ERROR),
    ({"n_classes": 3, "classes_for_class_based_metrics": [1.5]}, TypeError,
     "must contain class ids (int) or names (str)"),
])
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        MultiLabelHead(**kwargs)


def test_labels_must_be_multi_hot(run_in_graph):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="labels must be an integer indicator Tensor"):
        run_in_graph(lambda: MultiLabelHead(3).loss(tf.constant([[2, 0, 1]]),
                                                    tf.constant(LOGITS[:1])))
