"""Heads called eagerly (no graph): losses, streaming metrics, predictions, and
the errors of misfitting inputs; and a SequentialHeadWrapper's masked loss and
metrics.

Written once for both libraries: run as a script by the TF 2.15 interpreter
(ESTIMATOR_LITE_TF215_PYTHON) it uses tf.estimator's heads and prints one JSON
line; tests/head/eager_head_test.py imports it and calls `run` with
estimator_lite and its sequential_head module.

Usage: head_eager_driver.py
"""

import json
import sys

import numpy as np
import tensorflow as tf

LOGITS_1 = np.array([[-1.0], [2.0], [0.5], [3.0]], np.float32)
LOGITS_3 = np.array([[1.0, -1.0, 0.5], [0.2, 2.0, -0.3], [3.0, 0.0, 1.0],
                     [-1.0, 0.5, 2.5]], np.float32)
WEIGHTS = np.array([[1.0], [2.0], [0.5], [1.5]], np.float32)


def _cases(lib):
    """{name: (head, logits, labels, features)}, with a weight column 'w'."""
    features = {"w": WEIGHTS}
    return {
        "binary": (lib.BinaryClassHead(weight_column="w", thresholds=[0.3]), LOGITS_1,
                   np.array([[0], [1], [1], [0]], np.int64), features),
        "binary_soft": (lib.BinaryClassHead(), LOGITS_1,
                        np.array([[0.1], [0.9], [0.6], [0.0]], np.float32), {}),
        "multi_class": (lib.MultiClassHead(3, weight_column="w"), LOGITS_3,
                        np.array([[0], [1], [2], [2]], np.int64), features),
        "multi_label": (lib.MultiLabelHead(3, weight_column="w"), LOGITS_3,
                        np.array([[1, 0, 1], [0, 1, 0], [1, 0, 0], [0, 1, 1]], np.int64),
                        features),
        "regression": (lib.RegressionHead(label_dimension=3, weight_column="w"), LOGITS_3,
                       np.arange(12, dtype=np.float32).reshape([4, 3]) / 4.0, features),
        "poisson": (lib.PoissonRegressionHead(), LOGITS_1,
                    np.array([[1.0], [3.0], [0.0], [2.0]], np.float32), {}),
    }


def _rounded(value):
    return np.round(np.asarray(value, np.float64), 5).tolist()


def _error(fn):
    """The type name of what fn raises, or 'ok'."""
    try:
        fn()
    except Exception as error:  # noqa: BLE001 (the outcome is the point)
        return type(error).__name__
    return "ok"


def eager_heads(lib):
    """{head: {loss, metrics after two batches, predictions}} computed eagerly."""
    out = {}
    for name, (head, logits, labels, features) in _cases(lib).items():
        metrics = head.metrics(regularization_losses=[tf.constant(0.5)])
        for batch in (slice(0, 2), slice(2, 4)):
            head.update_metrics(metrics, {k: v[batch] for k, v in features.items()},
                                logits[batch], labels[batch],
                                regularization_losses=[tf.constant(0.5)])
        predictions = head.predictions(logits)
        out[name] = {
            "loss": _rounded(head.loss(labels, logits, features)),
            "metrics": {key: _rounded(metric.result()) for key, metric in metrics.items()},
            "predictions": {key: _rounded(value) for key, value in predictions.items()
                            if np.asarray(value).dtype.kind in "fiu"},
        }
    return out


def eager_errors(lib):
    """{case: error type name} of misfitting inputs, eagerly."""
    binary, multi_class = lib.BinaryClassHead(weight_column="w"), lib.MultiClassHead(3)
    labels = np.array([[0], [1], [1], [0]], np.int64)
    return {
        "weights_wrong_shape": _error(lambda: binary.loss(
            labels, LOGITS_1, {"w": np.ones([4, 2], np.float32)})),
        "labels_wrong_batch": _error(lambda: binary.loss(
            labels[:3], LOGITS_1, {"w": WEIGHTS})),
        "labels_above_range": _error(lambda: multi_class.loss(
            np.array([[0], [3], [1], [0]], np.int64), LOGITS_3)),
        "labels_negative": _error(lambda: multi_class.loss(
            np.array([[0], [-1], [1], [0]], np.int64), LOGITS_3)),
        "logits_wrong_dimension": _error(lambda: multi_class.loss(labels, LOGITS_1)),
    }


def graph_errors(lib):
    """{case: 'build <type>' / 'run <type>' / 'ok'} of misfitting inputs in a graph."""
    cases = {
        "multi_dim_weights_wrong": (
            lambda: lib.BinaryClassHead(weight_column="w"),
            np.zeros([2, 2, 1], np.float32), np.zeros([2, 2, 1], np.int64),
            np.ones([2, 1], np.float32)),
        "multi_dim_weights": (
            lambda: lib.MultiClassHead(3, weight_column="w"),
            np.zeros([2, 2, 3], np.float32), np.zeros([2, 2], np.int64),
            np.array([[1.0, 2.0], [0.5, 1.0]], np.float32)),
        "loss_fn_wrong_shape": (
            lambda: lib.BinaryClassHead(
                loss_fn=lambda labels, logits: tf.reduce_sum(logits, -1)),
            np.zeros([2, 1], np.float32), np.zeros([2, 1], np.int64), None),
    }
    out = {}
    for name, (make, logits, labels, weights) in cases.items():
        with tf.Graph().as_default():
            try:
                loss = make().loss(labels, logits,
                                   {} if weights is None else {"w": weights})
            except Exception as error:  # noqa: BLE001
                out[name] = f"build {type(error).__name__}"
                continue
            try:
                with tf.compat.v1.Session() as session:
                    out[name] = f"ok {session.run(loss):.5f}"
            except Exception as error:  # noqa: BLE001
                out[name] = f"run {type(error).__name__}"
    return out


def sequential(lib, sequential_head):
    """A SequentialHeadWrapper's loss and metrics (eagerly) over masked steps."""
    head = sequential_head.SequentialHeadWrapper(
        lib.BinaryClassHead(weight_column="w"), "mask", feature_columns="w")
    # Tensors: tf.estimator's wrapper takes no arrays.
    features = {"mask": tf.constant([[1, 1, 0], [1, 0, 0]], tf.int64),
                "w": tf.constant([[1.0, 2.0, 9.0], [0.5, 9.0, 9.0]])}
    logits = tf.constant([[[0.5], [-1.0], [7.0]], [[2.0], [7.0], [-7.0]]])
    labels = tf.constant([[1, 0, 1], [0, 1, 1]], tf.int64)
    metrics = head.metrics()
    head.update_metrics(metrics, features, logits, labels)
    return {"loss": _rounded(head.loss(logits=logits, labels=labels, features=features)),
            "metrics": {key: _rounded(metric.result()) for key, metric in metrics.items()},
            "name": head.name, "logits_dimension": head.logits_dimension,
            # Sparse labels hold 3 steps where the mask marks 6.
            "mask_mismatch": _error(lambda: head.loss(
                logits=logits, features=dict(features, mask=tf.ones([2, 3], tf.int64)),
                labels=tf.sparse.SparseTensor([[0, 0], [0, 1], [1, 0]], [1, 0, 0],
                                              [2, 3])))}


def run(lib, sequential_head):
    """Everything this driver compares."""
    return {"eager_heads": eager_heads(lib), "eager_errors": eager_errors(lib),
            "graph_errors": graph_errors(lib),
            "sequential": sequential(lib, sequential_head)}


def main():
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    from tensorflow_estimator.python.estimator.head import (  # noqa: PLC0415
        sequential_head,
    )
    print(json.dumps({"tf_version": tf.__version__,
                      "result": run(tf.estimator, sequential_head)}))


if __name__ == "__main__":
    sys.exit(main())
