"""Conformance: serving inputs (receivers and their placeholders), export outputs,
and the SignatureDefs an export writes."""

import numpy as np

from tests.conformance import programs
from tests.conformance.registry import outcome, scenarios


def _placeholders(tensors):
    """{key: [op type, dtype, shape, name]} of a dict of receiver tensors."""
    if tensors is None:
        return None
    if not isinstance(tensors, dict):
        return {"<tensor>": _describe(tensors)}
    return {str(k): _describe(t) for k, t in tensors.items()}


def _describe(tensor):
    if type(tensor).__name__ == "SparseTensor":
        return ["SparseTensor", tensor.dtype.name]
    return [tensor.op.type, tensor.dtype.name, tensor.shape, tensor.name]


def _receiver(receiver):
    alternatives = receiver.receiver_tensors_alternatives
    return {"class": type(receiver).__name__,
            "features": _placeholders(receiver.features),
            "receiver_tensors": _placeholders(receiver.receiver_tensors),
            "alternatives": None if alternatives is None else {
                k: _placeholders(v) for k, v in alternatives.items()}}


# Templates for build_raw_serving_input_receiver_fn, built in the graph the
# receiver fn runs in (graph tensors) or eagerly (what TF2 users write).
_RAW_TEMPLATES = {
    "rank0_eager": lambda tf: {"input": tf.constant(3.0)},
    "rank1_eager": lambda tf: {"x": tf.constant([1.0, 2.0])},
    "rank2_eager": lambda tf: {"x": tf.zeros([4, 3])},
    "rank3_int64": lambda tf: {"x": tf.zeros([1, 2, 3], tf.int64)},
    "string_eager": lambda tf: {"s": tf.constant(["a"])},
    "two_features": lambda tf: {"a": tf.zeros([1, 2]), "b": tf.ones([1], tf.int32)},
    "graph_placeholder": "graph:placeholder",
    "graph_named_constant": "graph:constant",
    "numpy_value": lambda tf: {"x": np.zeros([2, 3], np.float32)},
    "empty_dict": lambda tf: {},
}


@scenarios("export/raw_receiver", _RAW_TEMPLATES)
def raw_receiver(env, case):
    tf = env.tf
    observed = {}
    for batch in (None, 5):
        with tf.Graph().as_default():
            if case == "graph:placeholder":
                features = {"x": tf.compat.v1.placeholder(tf.float32, [7, 2],
                                                          name="feed_me")}
            elif case == "graph:constant":
                features = {"x": tf.constant([[1.0]], name="named_const")}
            else:
                features = case(tf)
            fn = env.est.export.build_raw_serving_input_receiver_fn(
                features, default_batch_size=batch)
            observed[f"batch_{batch}"] = outcome(lambda fn=fn: _receiver(fn()))
    return observed


_SPECS = {
    "fixed_float": lambda tf: {"x": tf.io.FixedLenFeature([2], tf.float32)},
    "fixed_scalar_int": lambda tf: {"n": tf.io.FixedLenFeature([], tf.int64)},
    "varlen_string": lambda tf: {"s": tf.io.VarLenFeature(tf.string)},
    "with_default": lambda tf: {"x": tf.io.FixedLenFeature([1], tf.float32,
                                                           default_value=[0.5])},
    "mixed": lambda tf: {"x": tf.io.FixedLenFeature([2], tf.float32),
                         "s": tf.io.VarLenFeature(tf.string)},
}


@scenarios("export/parsing_receiver", _SPECS)
def parsing_receiver(env, case):
    tf = env.tf
    observed = {}
    for batch in (None, 3):
        with tf.Graph().as_default():
            fn = env.est.export.build_parsing_serving_input_receiver_fn(
                case(tf), default_batch_size=batch)
            observed[f"batch_{batch}"] = outcome(lambda fn=fn: _receiver(fn()))
    return observed


def _graph_tensors(tf):
    x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
    s = tf.compat.v1.placeholder(tf.string, [None], name="s")
    sparse = tf.SparseTensor([[0, 0]], [1.0], [1, 2])
    ragged = tf.RaggedTensor.from_row_lengths([1.0, 2.0], [1, 1])
    return x, s, sparse, ragged


# (features, receiver_tensors, alternatives) for ServingInputReceiver.
_SERVING = {
    "tensor_tensor": lambda x, s, sp, rg: (x, s, None),
    "dict_dict": lambda x, s, sp, rg: ({"x": x}, {"examples": s}, None),
    "int_feature_key": lambda x, s, sp, rg: ({1: x}, {"examples": s}, None),
    "int_receiver_key": lambda x, s, sp, rg: ({"x": x}, {1: s}, None),
    "sparse_feature": lambda x, s, sp, rg: ({"sp": sp}, s, None),
    "ragged_feature": lambda x, s, sp, rg: ({"rg": rg}, s, None),
    "numpy_feature": lambda x, s, sp, rg: ({"x": np.zeros([1])}, s, None),
    "list_feature": lambda x, s, sp, rg: ([x], s, None),
    "none_features": lambda x, s, sp, rg: (None, s, None),
    "none_receivers": lambda x, s, sp, rg: (x, None, None),
    "empty_dicts": lambda x, s, sp, rg: ({}, {}, None),
    "alternatives_dict": lambda x, s, sp, rg: ({"x": x}, s, {"raw": {"x": x}}),
    "alternatives_tensor": lambda x, s, sp, rg: ({"x": x}, s, {"raw": x}),
    "alternatives_not_dict": lambda x, s, sp, rg: ({"x": x}, s, [x]),
    "alternatives_empty": lambda x, s, sp, rg: ({"x": x}, s, {}),
    "variable_feature": lambda x, s, sp, rg: ({"v": _variable()}, s, None),
}


def _variable():
    import tensorflow as tf  # noqa: PLC0415 - the scenario's own TensorFlow

    return tf.compat.v1.get_variable("v", [1])


@scenarios("export/serving_input_receiver", _SERVING)
def serving_input_receiver(env, case):
    tf = env.tf
    with tf.Graph().as_default():
        features, receivers, alternatives = case(*_graph_tensors(tf))
        observed = {"serving": outcome(lambda: _receiver(
            env.est.export.ServingInputReceiver(features, receivers, alternatives)))}
        if not isinstance(features, dict):
            observed["tensor_serving"] = outcome(lambda: _receiver(
                env.est.export.TensorServingInputReceiver(features, receivers,
                                                          alternatives)))
        return observed


_OUTPUTS = {
    "classification_scores": lambda tf, est: est.export.ClassificationOutput(
        scores=tf.constant([[0.2, 0.8]])),
    "classification_classes": lambda tf, est: est.export.ClassificationOutput(
        classes=tf.constant([["a", "b"]])),
    "classification_both": lambda tf, est: est.export.ClassificationOutput(
        scores=tf.constant([[0.2, 0.8]]), classes=tf.constant([["a", "b"]])),
    "classification_none": lambda tf, est: est.export.ClassificationOutput(),
    "classification_int_scores": lambda tf, est: est.export.ClassificationOutput(
        scores=tf.constant([[1, 2]])),
    "classification_int_classes": lambda tf, est: est.export.ClassificationOutput(
        classes=tf.constant([[1, 2]])),
    "classification_float64_scores": lambda tf, est: est.export.ClassificationOutput(
        scores=tf.constant([[0.5]], tf.float64)),
    "regression_float": lambda tf, est: est.export.RegressionOutput(tf.constant([[1.5]])),
    "regression_int": lambda tf, est: est.export.RegressionOutput(tf.constant([[1]])),
    "regression_numpy": lambda tf, est: est.export.RegressionOutput(np.ones([1, 1])),
    "predict_tensor": lambda tf, est: est.export.PredictOutput(tf.constant([1.0])),
    "predict_dict": lambda tf, est: est.export.PredictOutput({"a": tf.constant([1.0]),
                                                              "b": tf.constant(["x"])}),
    "predict_tuple_key": lambda tf, est: est.export.PredictOutput(
        {("head", "a"): tf.constant([1.0])}),
    "predict_int_key": lambda tf, est: est.export.PredictOutput({1: tf.constant([1.0])}),
    "predict_variable": lambda tf, est: est.export.PredictOutput(
        {"v": tf.compat.v1.get_variable("v", [1])}),
    "predict_sparse": lambda tf, est: est.export.PredictOutput(
        {"sp": tf.SparseTensor([[0]], [1.0], [1])}),
    "predict_list": lambda tf, est: est.export.PredictOutput([tf.constant([1.0])]),
    "predict_empty": lambda tf, est: est.export.PredictOutput({}),
}

# Receiver tensors a signature is built for: one serialized string, raw tensors.
_RECEIVERS = {
    "examples": lambda tf: {"inputs": tf.compat.v1.placeholder(tf.string, [None])},
    "raw": lambda tf: {"x": tf.compat.v1.placeholder(tf.float32, [None, 2])},
    "two_strings": lambda tf: {"a": tf.compat.v1.placeholder(tf.string, [None]),
                               "b": tf.compat.v1.placeholder(tf.string, [None])},
}


def _signature(signature):
    return {"method": signature.method_name,
            "inputs": {k: v.dtype for k, v in sorted(signature.inputs.items())},
            "outputs": {k: v.dtype for k, v in sorted(signature.outputs.items())}}


@scenarios("export/output", _OUTPUTS)
def export_output(env, case):
    """The ExportOutput's construction, its outputs, and its signature for each kind
    of receiver (an error type where it cannot serve them)."""
    tf = env.tf
    with tf.Graph().as_default():
        built = outcome(lambda: case(tf, env.est))
        if "error" in built:
            return built
        output = case(tf, env.est)
        observed = {"outputs": sorted(output.outputs)
                    if type(output).__name__ == "PredictOutput" else None}
        for name, receiver in _RECEIVERS.items():
            observed[name] = outcome(lambda r=receiver: _signature(
                output.as_signature_def(r(tf))))
        return observed


_CANNED = {
    "dnn_classifier_2": ("DNNClassifier", {"hidden_units": [3]}),
    "dnn_classifier_3_vocab": ("DNNClassifier", {"hidden_units": [3], "n_classes": 3,
                                                 "label_vocabulary": ["a", "b", "c"]}),
    "linear_classifier_2": ("LinearClassifier", {}),
    "linear_classifier_3": ("LinearClassifier", {"n_classes": 3}),
    "dnn_regressor": ("DNNRegressor", {"hidden_units": [3]}),
    "linear_regressor_2d": ("LinearRegressor", {"label_dimension": 2}),
    "baseline_classifier": ("BaselineClassifier", {}),
    "combined_classifier": ("DNNLinearCombinedClassifier",
                            {"dnn_hidden_units": [3], "dnn_feature_columns": "fc",
                             "linear_feature_columns": "fc"}),
}


def _canned_input(env, name, kwargs):
    tf = env.tf
    if kwargs.get("label_vocabulary"):
        labels = [["a"], ["c"]]
    elif name.endswith("Regressor"):
        labels = ([[1.0, 2.0], [0.0, 1.0]] if kwargs.get("label_dimension") == 2
                  else [[1.0], [0.0]])
    else:
        labels = [[1], [0]]
    return lambda: tf.data.Dataset.from_tensors(
        ({"x": [[1.0, 2.0], [0.5, -1.0]]}, labels)).repeat(2)


@scenarios("export/canned_signatures", _CANNED)
def canned_signatures(env, case):
    """The SignatureDefs of a canned estimator's export, for a raw and a parsing
    receiver (classification/regression signatures need serialized examples)."""
    tf = env.tf
    name, kwargs = case
    columns = [tf.feature_column.numeric_column("x", [2])]
    kwargs = {k: (columns if v == "fc" else v) for k, v in kwargs.items()}
    if "dnn_feature_columns" not in kwargs and name != "BaselineClassifier":
        kwargs["feature_columns"] = columns
    est = getattr(env.est, name)(model_dir=env.tmpdir(),
                                 config=env.est.RunConfig(tf_random_seed=3), **kwargs)
    est.train(_canned_input(env, name, kwargs), steps=1)
    raw = env.est.export.build_raw_serving_input_receiver_fn({"x": tf.zeros([1, 2])})
    parsing = env.est.export.build_parsing_serving_input_receiver_fn(
        tf.feature_column.make_parse_example_spec(columns))
    return {kind: outcome(lambda fn=fn: programs.signature_summary(
        env, est.export_saved_model(env.tmpdir(), fn)))
        for kind, fn in (("raw", raw), ("parsing", parsing))}
