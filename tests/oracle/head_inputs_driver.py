"""What the heads do with unusual inputs: logits, labels and weights of odd dtypes,
ranks and shapes; out-of-range labels; the summaries of a TRAIN spec.

Written once for both libraries: run as a script by the TF 2.15 interpreter
(ESTIMATOR_LITE_TF215_PYTHON) it uses tf.estimator's heads and prints one JSON
line; tests/head/base_head_test.py imports it and calls `run` with
estimator_lite. Each case's outcome is "ok <loss>", "build <ErrorType>" (raised
while building the spec) or "run <ErrorType>" (raised when the graph runs).

Usage: head_inputs_driver.py
"""

import json
import sys

import numpy as np
import tensorflow as tf

DIMENSIONS = {"binary": 1, "multi_class": 3, "regression": 1, "regression2": 2,
              "multi_label": 3}


def _heads(lib):
    return {"binary": lib.BinaryClassHead,
            "multi_class": lambda **kw: lib.MultiClassHead(3, **kw),
            "regression": lib.RegressionHead,
            "regression2": lambda **kw: lib.RegressionHead(label_dimension=2, **kw),
            "multi_label": lambda **kw: lib.MultiLabelHead(3, **kw)}


def _labels(name, batch=2):
    rows = {"binary": [[1], [0]], "multi_class": [[2], [0]],
            "regression": [[1.0], [0.5]], "regression2": [[1.0, 2.0], [0.5, 1.0]],
            "multi_label": [[1, 0, 1], [0, 1, 0]]}[name][:batch]
    dtype = np.float32 if name.startswith("regression") else np.int64
    return np.array(rows, dtype)


def _initialize(session):
    session.run([tf.compat.v1.global_variables_initializer(),
                 tf.compat.v1.local_variables_initializer(),
                 tf.compat.v1.tables_initializer()])


def _outcome(make_head, mode="eval", logits=None, labels=None, weights=None,
             dimension=1, default_labels=None):
    logits = np.zeros([2, dimension], np.float32) if logits is None else logits
    labels = default_labels if labels is None else labels
    with tf.Graph().as_default():
        tf.compat.v1.train.get_or_create_global_step()
        features = {} if weights is None else {"w": tf.constant(weights)}
        try:
            head = make_head(**({} if weights is None else {"weight_column": "w"}))
            spec = head.create_estimator_spec(
                features, mode, tf.constant(logits), labels=tf.constant(labels),
                train_op_fn=lambda loss: tf.no_op())
        except Exception as error:  # noqa: BLE001 (the outcome is the point)
            return f"build {type(error).__name__}"
        try:
            with tf.compat.v1.Session() as session:
                _initialize(session)
                if mode == "eval":
                    session.run([op for _, op in spec.eval_metric_ops.values()])
                return f"ok {session.run(spec.loss):.5f}"
        except Exception as error:  # noqa: BLE001
            return f"run {type(error).__name__}"


def input_cases(lib):
    """{case: outcome} for each head and odd input."""
    out = {}
    for name, make in _heads(lib).items():
        d = DIMENSIONS[name]
        labels = _labels(name)

        def case(key, name=name, make=make, d=d, labels=labels, **kwargs):
            out[f"{name}:{key}"] = _outcome(make, dimension=d, default_labels=labels,
                                            **kwargs)

        case("weights_3d", weights=np.ones([2, 1, 1], np.float32))
        case("weights_1d", weights=np.ones([2], np.float32))
        case("weights_per_logit", weights=np.ones([2, d], np.float32))
        case("weights_int", weights=np.ones([2, 1], np.int64))
        case("logits_int", logits=np.zeros([2, d], np.int32))
        case("logits_float64", logits=np.zeros([2, d], np.float64))
        case("logits_rank3", logits=np.zeros([2, 1, d], np.float32),
             labels=labels[:, None, :])
        case("logits_rank3_labels_rank2", logits=np.zeros([2, 1, d], np.float32))
        case("logits_rank1", logits=np.zeros([2], np.float32))
        case("logits_wrong_dimension", logits=np.zeros([2, d + 1], np.float32))
        case("labels_float", labels=labels.astype(np.float32))
        case("labels_rank1", labels=labels[:, 0])
        case("labels_batch_mismatch", labels=_labels(name, 1))
    heads = _heads(lib)
    for key, name, labels in (
            ("binary:label_2", "binary", [[2], [0]]),
            ("binary:label_negative", "binary", [[-1], [0]]),
            ("binary:label_soft", "binary", [[0.3], [0.9]]),
            ("binary:label_soft_above_1", "binary", [[1.5], [0.9]]),
            ("multi_class:label_3", "multi_class", [[3], [0]]),
            ("multi_class:label_negative", "multi_class", [[-1], [0]]),
            ("multi_class:label_float", "multi_class", [[1.5], [0.0]]),
            ("multi_label:label_2", "multi_label", [[2, 0, 1], [0, 1, 0]]),
            ("multi_label:label_negative", "multi_label", [[-1, 0, 1], [0, 1, 0]])):
        array = np.array(labels, np.float32 if "soft" in key or "float" in key
                         else np.int64)
        out[key] = _outcome(heads[name], dimension=DIMENSIONS[name],
                            default_labels=array)
    return out


def train_summaries(lib):
    """{head: sorted (tag, value)} of the summaries a TRAIN spec adds."""
    cases = {
        "binary": (lib.BinaryClassHead, [[0.5]], [[1]]),
        "named": (lambda: lib.BinaryClassHead(name="h"), [[0.5]], [[1]]),
        "regression_sum": (lambda: lib.RegressionHead(loss_reduction="sum"),
                           [[0.5], [1.0]], [[1.0], [3.0]]),
        "multi_head": (lambda: lib.MultiHead([lib.BinaryClassHead(name="a"),
                                              lib.RegressionHead(name="b")],
                                             head_weights=[1.0, 2.0]),
                       {"a": [[0.5]], "b": [[1.0]]}, {"a": [[1]], "b": [[2.0]]}),
    }
    out = {}
    for name, (make, logits, labels) in cases.items():
        with tf.Graph().as_default():
            tf.compat.v1.train.get_or_create_global_step()
            logits_t = tf.nest.map_structure(lambda v: tf.constant(v, tf.float32), logits)
            labels_t = tf.nest.map_structure(tf.constant, labels)
            make().create_estimator_spec(
                {}, "train", logits_t, labels=labels_t,
                train_op_fn=lambda loss: tf.no_op(),
                regularization_losses=[tf.constant(0.25)])
            summaries = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.SUMMARIES)
            with tf.compat.v1.Session() as session:
                _initialize(session)
                values = session.run(summaries)
        tags = []
        for value in values:
            summary = tf.compat.v1.Summary.FromString(value)
            tags += [[v.tag, round(float(v.simple_value), 5)] for v in summary.value]
        out[name] = sorted(tags)
    return out


def run(lib):
    """Everything this driver compares."""
    return {"inputs": input_cases(lib), "train_summaries": train_summaries(lib)}


def main():
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    print(json.dumps({"tf_version": tf.__version__, "result": run(tf.estimator)}))


if __name__ == "__main__":
    sys.exit(main())
