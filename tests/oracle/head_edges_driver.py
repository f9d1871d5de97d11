"""Edge cases of the heads a user meets: label vocabularies of other lengths,
labels of the wrong dtype, weights that cannot broadcast in EVAL, prediction keys,
MultiHead's metrics.

Written once for both libraries: run as a script by the TF 2.15 interpreter
(ESTIMATOR_LITE_TF215_PYTHON) it uses tf.estimator's heads and prints one JSON
line; tests/head/head_edges_test.py imports it and calls `run` with
estimator_lite. An outcome is ["ok", value], ["build", ErrorType] (raised while
the graph is built) or ["run", ErrorType] (raised when it runs).

Usage: head_edges_driver.py
"""

import json
import sys

import numpy as np
import tensorflow as tf

LOGITS = np.array([[1.0], [-0.5], [2.0]], np.float32)
LABELS = np.array([[1], [0], [1]], np.int64)


def _value(value):
    """A JSON-able copy: arrays as lists (bytes decoded), floats rounded."""
    if isinstance(value, dict):
        return {str(k): _value(v) for k, v in sorted(value.items(), key=str)}
    value = np.asarray(value)
    if value.dtype.kind in "SO":
        return [[v.decode() if isinstance(v, bytes) else v for v in row]
                for row in value.tolist()]
    if value.dtype.kind == "f":
        return np.round(value.astype(np.float64), 5).tolist()
    return value.tolist()


def _outcome(build):
    """Builds in a new graph, runs what `build` returns; the outcome."""
    with tf.Graph().as_default():
        try:
            fetches = build()
        except Exception as error:  # noqa: BLE001 - the error's class is the outcome
            return ["build", type(error).__name__]
        if not isinstance(fetches, dict) or not fetches:
            return ["ok", fetches]  # Python values (or no tensor to run).
        try:
            with tf.compat.v1.Session() as session:
                session.run([tf.compat.v1.global_variables_initializer(),
                             tf.compat.v1.local_variables_initializer(),
                             tf.compat.v1.tables_initializer()])
                return ["ok", _value(session.run(fetches))]
        except Exception as error:  # noqa: BLE001 - the error's class is the outcome
            return ["run", type(error).__name__]


def _loss(head, labels, logits=LOGITS, features=None):
    def build():
        tensors = {k: tf.constant(v) for k, v in (features or {}).items()}
        return {"loss": head().loss(tf.constant(labels), tf.constant(logits),
                                    features=tensors)}
    return build


def _eval_spec(head, features, logits=LOGITS, labels=LABELS):
    def build():
        spec = head().create_estimator_spec(
            {k: tf.constant(v) for k, v in features.items()}, "eval",
            tf.constant(logits), tf.constant(labels))
        return {"loss": spec.loss}
    return build


def _predictions(head, keys):
    def build():
        logits = tf.constant(LOGITS)
        made = head()
        return made.predictions(logits) if keys is None else made.predictions(
            logits, keys=keys)
    return build


def _vocabulary_predictions(lib, vocabulary):
    def build():
        spec = lib.BinaryClassHead(label_vocabulary=vocabulary).create_estimator_spec(
            {}, "infer", tf.constant(LOGITS))
        return {"classes": spec.predictions["classes"],
                "all_classes": spec.predictions["all_classes"],
                "export_classes": spec.export_outputs["serving_default"].classes}
    return build


def _multi_head_metrics(lib, regularization):
    def build():
        head = lib.MultiHead([lib.BinaryClassHead(name="a"), lib.RegressionHead(name="b")])
        losses = [tf.constant(1.0)] if regularization else None
        metrics = head.metrics(regularization_losses=losses)
        keys = sorted(metrics)
        updated = head.update_metrics(
            metrics, {}, {"a": tf.constant(LOGITS), "b": tf.constant(LOGITS)},
            {"a": tf.constant([[1], [0], [1]]), "b": tf.constant([[1.0], [2.0], [0.0]])},
            regularization_losses=losses)
        return [keys, sorted(updated), updated is metrics]
    return build


def cases(lib):
    """{case name: zero-argument build function} for the library `lib`."""
    binary = lib.BinaryClassHead
    strings = np.array([[b"a"], [b"b"], [b"a"]])
    two_columns = {"w": np.ones((3, 2), np.float32)}
    return {
        "vocabulary_3/loss": _loss(lambda: binary(label_vocabulary=["a", "b", "c"]),
                                   strings),
        "vocabulary_3/third_word_label": _loss(
            lambda: binary(label_vocabulary=["a", "b", "c"]),
            np.array([[b"a"], [b"c"], [b"a"]])),
        "vocabulary_3/predictions": _vocabulary_predictions(lib, ["a", "b", "c"]),
        "vocabulary_1/loss": _loss(lambda: binary(label_vocabulary=["a"]),
                                   np.array([[b"a"], [b"a"], [b"a"]])),
        "vocabulary_1/predictions": _vocabulary_predictions(lib, ["a"]),
        "vocabulary_empty/loss": _loss(lambda: binary(label_vocabulary=[]), strings),
        "binary/int_labels_with_vocabulary": _loss(
            lambda: binary(label_vocabulary=["a", "b"]), np.array([[1], [0], [1]])),
        "multi_class/int_labels_with_vocabulary": _loss(
            lambda: lib.MultiClassHead(3, label_vocabulary=["a", "b", "c"]),
            np.array([[1], [0], [2]]), logits=np.ones((3, 3), np.float32)),
        "regression/string_labels": _loss(lib.RegressionHead,
                                          np.array([[b"1"], [b"2"], [b"0"]])),
        "poisson/string_labels": _loss(lib.PoissonRegressionHead,
                                       np.array([[b"1"], [b"2"], [b"0"]])),
        "binary/eval_weights_two_columns": _eval_spec(
            lambda: binary(weight_column="w"), two_columns),
        "binary/train_weights_two_columns": _loss(
            lambda: binary(weight_column="w"), np.array([[1], [0], [1]]),
            features=two_columns),
        "binary/eval_weights_rank3": _eval_spec(
            lambda: binary(weight_column="w"), {"w": np.ones((3, 1, 1), np.float32)}),
        "binary/eval_weights_rank1": _eval_spec(
            lambda: binary(weight_column="w"), {"w": np.ones(3, np.float32)}),
        "regression/eval_weights_two_columns": _eval_spec(
            lambda: lib.RegressionHead(weight_column="w"), two_columns,
            labels=np.array([[1.0], [0.0], [1.0]], np.float32)),
        "multi_label/eval_weights_two_columns": _eval_spec(
            lambda: lib.MultiLabelHead(3, weight_column="w"), two_columns,
            logits=np.ones((3, 3), np.float32), labels=np.ones((3, 3), np.int64)),
        "multi_class/eval_weights_two_columns": _eval_spec(
            lambda: lib.MultiClassHead(3, weight_column="w"), two_columns,
            logits=np.ones((3, 3), np.float32)),
        "binary/predictions_keys_empty": _predictions(binary, []),
        "regression/predictions": _predictions(lib.RegressionHead, None),
        "regression/predictions_with_keys": _predictions(lib.RegressionHead,
                                                         ["predictions"]),
        "multi_head/metrics": _multi_head_metrics(lib, regularization=False),
        "multi_head/metrics_regularized": _multi_head_metrics(lib, regularization=True),
    }


def run(lib):
    """{case name: outcome} for the library `lib` (estimator_lite, tf.estimator)."""
    return {name: _outcome(build) for name, build in cases(lib).items()}


def main():
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    print(json.dumps({"tf_version": tf.__version__, "result": run(tf.estimator)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
