"""Runs the same heads on the same fixed logits/labels/weights and dumps what they do.

Written once for both libraries: run as a script by the oracle interpreter
(tensorflow 2.15 + tensorflow-estimator 2.15) it uses `tf.estimator`'s heads and
Estimator and prints one JSON line; tests/head/head_compat_test.py imports it and
calls `run_cases` with estimator_lite, then compares the two dumps.

Per case: eval metrics (Estimator.evaluate over 3 batches), the training loss of
create_estimator_spec(TRAIN) and of head.loss(), the predictions of one batch
(keys, dtypes, values) and the SignatureDefs of SavedModels exported with a
parsing receiver and with a raw-tensor receiver.

Usage: head_driver.py WORK_DIR
"""

import json
import os
import sys
import types

import numpy as np
import tensorflow as tf

N_EXAMPLES = 10
BATCH_SIZE = 4
REGULARIZATION = 0.25


def _data(seed, logits_dimension):
    rng = np.random.RandomState(seed)
    logits = rng.randn(N_EXAMPLES, logits_dimension).astype(np.float32)
    weights = (rng.rand(N_EXAMPLES, 1) + 0.5).astype(np.float32)
    return rng, {"logits": logits, "w": weights}


def _case_data(case):
    """Returns (features, labels) as numpy for a case description."""
    rng, features = _data(case["seed"], case["logits_dimension"])
    kind = case["labels"]
    if kind == "binary":
        labels = rng.randint(0, 2, size=(N_EXAMPLES, 1)).astype(np.int64)
    elif kind == "binary_vocab":
        labels = np.array([["neg"], ["pos"]])[rng.randint(0, 2, size=N_EXAMPLES)]
    elif kind == "class3":
        labels = rng.randint(0, 3, size=(N_EXAMPLES, 1)).astype(np.int64)
    elif kind == "class3_vocab":
        labels = np.array([["a"], ["b"], ["c"]])[rng.randint(0, 3, size=N_EXAMPLES)]
    elif kind == "multi_hot3":
        labels = rng.randint(0, 2, size=(N_EXAMPLES, 3)).astype(np.int64)
    elif kind == "real2":
        labels = rng.randn(N_EXAMPLES, 2).astype(np.float32)
    elif kind == "real1":
        labels = rng.randn(N_EXAMPLES, 1).astype(np.float32)
    elif kind == "counts":
        labels = rng.poisson(2.0, size=(N_EXAMPLES, 1)).astype(np.float32)
    elif kind == "unit":
        labels = rng.rand(N_EXAMPLES, 1).astype(np.float32)
    elif kind == "multi":
        labels = {"a": rng.randint(0, 2, size=(N_EXAMPLES, 1)).astype(np.int64),
                  "b": rng.randn(N_EXAMPLES, 2).astype(np.float32)}
    else:
        raise ValueError(f"unknown labels kind {kind!r}")
    return features, labels


# Each case: a head built by `make(heads)` from a heads namespace (tf.estimator or
# estimator_lite.head), the logits dimension, labels kind and seed.
CASES = {
    "binary": {"make": lambda h: h.BinaryClassHead(), "logits_dimension": 1,
                   "labels": "binary", "seed": 0},
    "binary_full": {
        "make": lambda h: h.BinaryClassHead(weight_column="w", thresholds=[0.3, 0.7],
                                         label_vocabulary=["neg", "pos"], name="bin"),
        "logits_dimension": 1, "labels": "binary_vocab", "seed": 1, "regularized": True},
    "binary_sum_feature_column": {
        "make": lambda h: h.BinaryClassHead(
            weight_column=tf.compat.v1.feature_column.numeric_column("w"),
            loss_reduction="sum", thresholds=[1.0 / 3.0]),
        "logits_dimension": 1, "labels": "binary", "seed": 2},
    # Float labels in [0, 1]: probabilities of class 1, not truncated to ids.
    "binary_soft_labels": {
        "make": lambda h: h.BinaryClassHead(weight_column="w", thresholds=[0.3, 0.7]),
        "logits_dimension": 1, "labels": "unit", "seed": 14},
    "multi_class": {"make": lambda h: h.MultiClassHead(3), "logits_dimension": 3,
                        "labels": "class3", "seed": 3},
    "multi_class_full": {
        "make": lambda h: h.MultiClassHead(3, weight_column="w",
                                        label_vocabulary=["a", "b", "c"], name="mc"),
        "logits_dimension": 3, "labels": "class3_vocab", "seed": 4, "regularized": True},
    "multi_label": {"make": lambda h: h.MultiLabelHead(3), "logits_dimension": 3,
                        "labels": "multi_hot3", "seed": 5},
    "multi_label_full": {
        "make": lambda h: h.MultiLabelHead(3, weight_column="w", thresholds=[0.3],
                                        label_vocabulary=["a", "b", "c"],
                                        classes_for_class_based_metrics=["a", "c"],
                                        name="ml"),
        "logits_dimension": 3, "labels": "multi_hot3", "seed": 6, "regularized": True},
    "multi_label_class_ids": {
        "make": lambda h: h.MultiLabelHead(3, classes_for_class_based_metrics=[1],
                                        loss_reduction="sum"),
        "logits_dimension": 3, "labels": "multi_hot3", "seed": 7},
    "regression": {"make": lambda h: h.RegressionHead(2), "logits_dimension": 2,
                       "labels": "real2", "seed": 8},
    "regression_full": {
        "make": lambda h: h.RegressionHead(1, weight_column="w", loss_reduction="sum",
                                        name="r"),
        "logits_dimension": 1, "labels": "real1", "seed": 9, "regularized": True},
    "regression_inverse_link": {
        "make": lambda h: h.RegressionHead(inverse_link_fn=tf.exp), "logits_dimension": 1,
        "labels": "real1", "seed": 10},
    "poisson": {"make": lambda h: h.PoissonRegressionHead(weight_column="w"),
                    "logits_dimension": 1, "labels": "counts", "seed": 11},
    "logistic_regression": {"make": lambda h: h.LogisticRegressionHead(),
                                "logits_dimension": 1, "labels": "unit", "seed": 12},
    "multi_head": {
        "make": lambda h: h.MultiHead(
            [h.BinaryClassHead(name="a"),
             h.RegressionHead(label_dimension=2, weight_column="w", name="b")],
            head_weights=[1.0, 0.5]),
        "logits_dimension": 3, "labels": "multi", "seed": 13, "regularized": True},
}


# Cases also run through a real Estimator (train, export SavedModels; evaluate too for
# ESTIMATOR_EVAL_CASES); every case is checked in plain graphs, which is much faster.
ESTIMATOR_CASES = ("binary_full", "multi_class_full", "multi_label_full",
                   "regression_full", "multi_head")
ESTIMATOR_EVAL_CASES = ("multi_class_full", "regression_full")


def _regularization(case):
    return [tf.constant(REGULARIZATION)] if case.get("regularized") else None


def _model_fn(head, case):
    def model_fn(features, labels, mode):
        bias = tf.compat.v1.get_variable(
            "bias", [case["logits_dimension"]],
            initializer=tf.compat.v1.zeros_initializer())
        logits = features["logits"] + bias
        global_step = tf.compat.v1.train.get_global_step()
        return head.create_estimator_spec(
            features, mode, logits, labels=labels,
            train_op_fn=lambda loss: tf.compat.v1.assign_add(global_step, 1),
            regularization_losses=_regularization(case))
    return model_fn


def _jsonable(value):
    value = np.asarray(value)
    if value.dtype.kind in "SO":
        return [[v.decode() if isinstance(v, bytes) else v for v in row]
                for row in value.tolist()]
    return value.tolist()


def _prediction_dump(predictions):
    dump = {}
    for key, value in predictions.items():
        name = "/".join(key) if isinstance(key, tuple) else key
        array = np.asarray(value)
        dump[name] = {"dtype": "string" if array.dtype.kind in "SO" else array.dtype.name,
                      "tuple_key": isinstance(key, tuple), "value": _jsonable(array)}
    return dump


def _signature_dump(export_dir):
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        meta_graph = tf.compat.v1.saved_model.load(session, ["serve"], export_dir)
        dump = {}
        for key, signature in meta_graph.signature_def.items():
            dump[key] = {
                "method": signature.method_name,
                "inputs": sorted(signature.inputs),
                "outputs": {name: [tf.as_dtype(info.dtype).name,
                                   [d.size for d in info.tensor_shape.dim]]
                            for name, info in signature.outputs.items()}}
        return dump


def _receiver_fns(lib, case):
    dimension = case["logits_dimension"]

    def raw():
        tensors = {"logits": tf.compat.v1.placeholder(tf.float32, [None, dimension],
                                                      name="logits"),
                   "w": tf.compat.v1.placeholder(tf.float32, [None, 1], name="w")}
        return lib.export.ServingInputReceiver(tensors, tensors)

    spec = {"logits": tf.io.FixedLenFeature([dimension], tf.float32),
            "w": tf.io.FixedLenFeature([1], tf.float32)}
    return {"raw": raw, "parsing": lib.export.build_parsing_serving_input_receiver_fn(spec)}


def _initialize(session):
    session.run([tf.compat.v1.global_variables_initializer(),
                 tf.compat.v1.local_variables_initializer(),
                 tf.compat.v1.tables_initializer()])


def _graph_eval(head, case, features, labels):
    """EVAL spec streamed over all batches, 'loss' averaged as an Estimator does."""
    with tf.Graph().as_default():
        tf.compat.v1.train.get_or_create_global_step()
        dataset = tf.data.Dataset.from_tensor_slices((features, labels)).batch(BATCH_SIZE)
        batch_features, batch_labels = tf.compat.v1.data.make_one_shot_iterator(
            dataset).get_next()
        spec = head.create_estimator_spec(batch_features, "eval", batch_features["logits"],
                                          labels=batch_labels,
                                          regularization_losses=_regularization(case))
        metric_ops = dict(spec.eval_metric_ops)
        metric_ops["loss"] = tf.compat.v1.metrics.mean(spec.loss)
        update = tf.group(*[op for _, op in metric_ops.values()])
        with tf.compat.v1.Session() as session:
            _initialize(session)
            while True:
                try:
                    session.run(update)
                except tf.errors.OutOfRangeError:
                    break
            values = session.run({k: value for k, (value, _) in metric_ops.items()})
    return {k: float(v) for k, v in values.items()}


def _output_tensors(output):
    """The named tensors of an ExportOutput (by its public attributes)."""
    kind = type(output).__name__
    if kind == "ClassificationOutput":
        named = {"scores": output.scores, "classes": output.classes}
        return {k: v for k, v in named.items() if v is not None}
    if kind == "RegressionOutput":
        return {"outputs": output.value}
    return dict(output.outputs)


def _graph_predict(head, features):
    """PREDICT spec on the first batch: predictions and export outputs."""
    with tf.Graph().as_default():
        tf.compat.v1.train.get_or_create_global_step()
        batch = {k: tf.constant(v[:BATCH_SIZE]) for k, v in features.items()}
        spec = head.create_estimator_spec(batch, "infer", batch["logits"])
        outputs = {key: {"type": type(output).__name__,
                         "outputs": {name: tensor.dtype.name
                                     for name, tensor in _output_tensors(output).items()}}
                   for key, output in spec.export_outputs.items()}
        with tf.compat.v1.Session() as session:
            _initialize(session)
            predictions = session.run(spec.predictions)
    return _prediction_dump(predictions), outputs


def _graph_losses(head, case, features, labels):
    """The TRAIN-mode spec loss and head.loss() on all examples in one graph run."""
    with tf.Graph().as_default():
        tf.compat.v1.train.get_or_create_global_step()
        feature_tensors = {k: tf.constant(v) for k, v in features.items()}
        label_tensors = tf.nest.map_structure(tf.constant, labels)
        logits = feature_tensors["logits"]
        if isinstance(label_tensors, dict):  # MultiHead: logits as a dict, too
            logits = {"a": logits[:, :1], "b": logits[:, 1:]}
        spec = head.create_estimator_spec(
            feature_tensors, "train", logits, labels=label_tensors,
            train_op_fn=lambda loss: tf.no_op(),
            regularization_losses=_regularization(case))
        loss = head.loss(label_tensors, logits, feature_tensors, "train",
                         _regularization(case))
        with tf.compat.v1.Session() as session:
            _initialize(session)
            spec_loss, head_loss = session.run([spec.loss, loss])
    return float(spec_loss), float(head_loss)


def _estimator_dump(lib, head, case, features, labels, model_dir, evaluate):
    """Trains one no-op step with an Estimator, evaluates, exports two SavedModels."""
    def input_fn():
        return tf.data.Dataset.from_tensor_slices((features, labels)).batch(BATCH_SIZE)

    estimator = lib.Estimator(_model_fn(head, case), model_dir=model_dir)
    estimator.train(input_fn, steps=1)
    metrics = estimator.evaluate(input_fn) if evaluate else {}
    signatures = {}
    for kind, receiver_fn in _receiver_fns(lib, case).items():
        export_dir = estimator.export_saved_model(
            os.path.join(model_dir, f"export_{kind}"), receiver_fn)
        signatures[kind] = _signature_dump(os.fsdecode(export_dir))
    return {k: float(v) for k, v in metrics.items()}, signatures


def run_case(lib, name, case, work_dir):
    """Runs one case with `lib`; returns its JSON-able dump."""
    head = case["make"](lib.heads)
    features, labels = _case_data(case)
    predictions, export_outputs = _graph_predict(head, features)
    train_loss, head_loss = _graph_losses(head, case, features, labels)
    dump = {
        "metrics": _graph_eval(head, case, features, labels),
        "predictions": predictions,
        "export_outputs": export_outputs,
        "train_loss": train_loss,
        "head_loss": head_loss,
        "logits_dimension": head.logits_dimension,
        "name": head.name,
    }
    if name in ESTIMATOR_CASES:
        dump["estimator_metrics"], dump["signatures"] = _estimator_dump(
            lib, head, case, features, labels, os.path.join(work_dir, name),
            evaluate=name in ESTIMATOR_EVAL_CASES)
    return dump


def run_cases(lib, work_dir, names=None):
    """Runs the cases named (all by default); returns {case name: dump}."""
    return {name: run_case(lib, name, CASES[name], work_dir)
            for name in (names or sorted(CASES))}


def tf_estimator_lib():
    """tf.estimator 2.15 as the `lib` namespace run_cases expects."""
    return types.SimpleNamespace(Estimator=tf.estimator.Estimator,
                                 export=tf.estimator.export, heads=tf.estimator)


def main(work_dir):
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    dump = run_cases(tf_estimator_lib(), work_dir)
    print(json.dumps({"tf_version": tf.__version__, "cases": dump}))


if __name__ == "__main__":
    main(sys.argv[1])
