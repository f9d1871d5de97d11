"""Conformance: the public heads (tf.estimator.BinaryClassHead and friends) used
directly in graph mode, as a custom model_fn uses them.

Every `heads/<head>/<case>` scenario builds one head and, each in its own graph,
observes what a user sees: `loss()` (TRAIN mode), the EVAL EstimatorSpec's loss
and metric values, the PREDICT EstimatorSpec's predictions and export outputs,
and the TRAIN EstimatorSpec's loss over two steps of a train_op_fn. The logits are
fixed numbers plus a zero-initialised bias variable (what the train op moves), so
every number is deterministic.
"""

import numpy as np

from tests.conformance.registry import outcome, scenario, scenarios

# Three examples; fixed logits per logits dimension.
_BIN_LOGITS = [[1.0], [-0.5], [2.0]]
_MC_LOGITS = [[1.0, 0.0, -1.0], [0.2, 0.4, 0.1], [-1.0, 2.0, 0.5]]
_REG_LOGITS = [[0.5], [1.5], [-1.0]]
_REG2_LOGITS = [[0.5, -0.5], [1.5, 0.0], [-1.0, 2.0]]
_WEIGHTS = np.array([[1.0], [2.0], [0.5]], np.float32)


def _int(values):
    return np.array(values, np.int64)


def _float(values):
    return np.array(values, np.float32)


def _str(values):
    return np.array(values, object)


def _tensor(tf, value):
    """A Tensor (or dict of them) from a numpy value, a callable(tf) or a dict."""
    if callable(value):
        return value(tf)
    if isinstance(value, dict):
        return {k: _tensor(tf, v) for k, v in value.items()}
    if isinstance(value, np.ndarray) and value.dtype == object:
        return tf.constant(value.astype(bytes))
    return tf.constant(value)


def _logits(tf, value):
    """Fixed logits plus a trainable zero bias per logits tensor."""
    if isinstance(value, dict):
        return {k: _logits_tensor(tf, v, f"bias_{k}") for k, v in sorted(value.items())}
    return _logits_tensor(tf, value, "bias")


def _logits_tensor(tf, value, name):
    fixed = tf.constant(np.array(value, np.float32))
    bias = tf.compat.v1.get_variable(name, fixed.shape[-1:],
                                     initializer=tf.compat.v1.zeros_initializer())
    return fixed + bias


def _session_run(tf, fetches, before=None):
    """Initialises every variable and table, runs `before` (if any), then `fetches`."""
    with tf.compat.v1.Session() as sess:
        sess.run([tf.compat.v1.global_variables_initializer(),
                  tf.compat.v1.local_variables_initializer(),
                  tf.compat.v1.tables_initializer()])
        if before is not None:
            sess.run(before)
        return sess.run(fetches)


def _in_graph(env, build):
    """outcome(build) in a new graph."""
    with env.tf.Graph().as_default():
        return outcome(build)


def _inputs(env, case):
    tf = env.tf
    features = _tensor(tf, case.get("features", {}))
    labels = case.get("labels")
    labels = None if labels is None else _tensor(tf, labels)
    return features, _logits(tf, case["logits"]), labels


def _observe_loss(env, case):
    tf = env.tf
    head = case["head"](env)
    features, logits, labels = _inputs(env, case)
    regularization = case.get("regularization")
    if regularization is not None:
        regularization = [tf.constant(r) for r in regularization]
    loss = head.loss(labels, logits, features=features, mode=env.est.ModeKeys.TRAIN,
                     regularization_losses=regularization)
    return {"shape": loss.shape, "value": _session_run(tf, loss)}


def _observe_eval(env, case):
    tf = env.tf
    head = case["head"](env)
    features, logits, labels = _inputs(env, case)
    spec = head.create_estimator_spec(features, env.est.ModeKeys.EVAL, logits, labels)
    metrics = spec.eval_metric_ops
    values = _session_run(tf, {"loss": spec.loss,
                               "metrics": {k: v[0] for k, v in metrics.items()}},
                          before=[v[1] for v in metrics.values()])
    return values


def _export_output(tf, output):
    kind = type(output).__name__
    if kind == "ClassificationOutput":
        return [kind, {"scores": output.scores, "classes": output.classes}]
    if kind == "RegressionOutput":
        return [kind, {"value": output.value}]
    return [kind, {}, sorted(map(str, output.outputs))]


def _observe_predict(env, case):
    tf = env.tf
    head = case["head"](env)
    features, logits, _ = _inputs(env, case)
    spec = head.create_estimator_spec(features, env.est.ModeKeys.PREDICT, logits)
    exports = {k: _export_output(tf, v) for k, v in spec.export_outputs.items()}
    tensors = {k: v[1] for k, v in exports.items()}
    values = _session_run(tf, {"predictions": spec.predictions, "exports": tensors})
    return {"predictions": values["predictions"],
            "export_outputs": {k: [exports[k][0], v, *exports[k][2:]]
                               for k, v in values["exports"].items()}}


def _observe_train(env, case):
    tf = env.tf
    head = case["head"](env)
    features, logits, labels = _inputs(env, case)
    step = tf.compat.v1.train.get_or_create_global_step()

    def train_op_fn(loss):
        return tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(
            loss, global_step=step)
    spec = head.create_estimator_spec(features, env.est.ModeKeys.TRAIN, logits, labels,
                                      train_op_fn=train_op_fn)
    with tf.compat.v1.Session() as sess:
        sess.run([tf.compat.v1.global_variables_initializer(),
                  tf.compat.v1.local_variables_initializer(),
                  tf.compat.v1.tables_initializer()])
        losses = [sess.run([spec.train_op, spec.loss])[1] for _ in range(2)]
        variables = {v.op.name: v for v in tf.compat.v1.trainable_variables()}
        return {"losses": losses, "step": sess.run(step), "trained": sess.run(variables),
                "prediction_keys": sorted(map(str, spec.predictions))}


def _observe(env, case):
    return {"loss": _in_graph(env, lambda: _observe_loss(env, case)),
            "eval": _in_graph(env, lambda: _observe_eval(env, case)),
            "predict": _in_graph(env, lambda: _observe_predict(env, case)),
            "train": _in_graph(env, lambda: _observe_train(env, case))}


def _weights(tf):
    return {"w": tf.constant(_WEIGHTS)}


_BIN_LABELS = _int([[1], [0], [1]])

_BINARY = {
    "int64_labels": {},
    "float_labels": {"labels": _float([[1.0], [0.0], [1.0]])},
    "soft_labels": {"labels": _float([[0.8], [0.4], [0.0]])},
    "bool_labels": {"labels": np.array([[True], [False], [True]])},
    "rank1_labels": {"labels": _int([1, 0, 1])},
    "labels_two_columns": {"labels": _int([[1, 0], [0, 1], [1, 1]])},
    "labels_batch_mismatch": {"labels": _int([[1], [0]])},
    "label_out_of_range": {"labels": _int([[2], [0], [1]])},
    "label_negative": {"labels": _int([[-1], [0], [1]])},
    "float_label_above_one": {"labels": _float([[1.5], [0.0], [1.0]])},
    "string_labels_vocabulary": {"kwargs": {"label_vocabulary": ["neg", "pos"]},
                                 "labels": _str([["pos"], ["neg"], ["pos"]])},
    "string_label_not_in_vocabulary": {"kwargs": {"label_vocabulary": ["neg", "pos"]},
                                       "labels": _str([["pos"], ["maybe"], ["pos"]])},
    "string_labels_without_vocabulary": {"labels": _str([["pos"], ["neg"], ["pos"]])},
    "int_labels_with_vocabulary": {"kwargs": {"label_vocabulary": ["neg", "pos"]}},
    "vocabulary_string": {"kwargs": {"label_vocabulary": "neg,pos"},
                          "labels": _str([["pos"], ["neg"], ["pos"]])},
    "vocabulary_three_words": {"kwargs": {"label_vocabulary": ["a", "b", "c"]},
                               "labels": _str([["a"], ["b"], ["a"]])},
    "logits_rank1": {"logits": [1.0, -0.5, 2.0]},
    "logits_two_columns": {"logits": [[1.0, 0.0], [-0.5, 0.0], [2.0, 0.0]]},
    "weight_column": {"kwargs": {"weight_column": "w"}, "features": _weights},
    "weight_column_rank1": {"kwargs": {"weight_column": "w"},
                            "features": {"w": _float([1.0, 2.0, 0.5])}},
    "weight_column_two_columns": {"kwargs": {"weight_column": "w"},
                                  "features": {"w": _float([[1.0, 1.0], [2.0, 2.0],
                                                            [0.5, 0.5]])}},
    "weight_column_missing_feature": {"kwargs": {"weight_column": "w"}},
    "weight_numeric_column": {"kwargs": {"weight_column": "numeric_w"},
                              "features": _weights},
    "soft_labels_weighted": {"kwargs": {"weight_column": "w"}, "features": _weights,
                             "labels": _float([[0.8], [0.4], [0.0]])},
    "reduction_sum": {"kwargs": {"loss_reduction": "sum"}},
    "reduction_sum_weighted": {"kwargs": {"loss_reduction": "sum", "weight_column": "w"},
                               "features": _weights},
    "reduction_none": {"kwargs": {"loss_reduction": "none"}},
    "reduction_auto": {"kwargs": {"loss_reduction": "auto"}},
    "reduction_v1_weighted_mean": {"kwargs": {"loss_reduction": "weighted_mean"}},
    "thresholds": {"kwargs": {"thresholds": [0.3, 0.7]}},
    "thresholds_out_of_range": {"kwargs": {"thresholds": [1.5]}},
    "loss_fn": {"kwargs": {"loss_fn": "squared"}},
    "regularization": {"regularization": [0.25, 0.5]},
}


def _kwargs(env, kwargs):
    """The head's kwargs, named stand-ins replaced by their objects."""
    if kwargs.get("loss_fn") == "squared":
        tf = env.tf
        kwargs = dict(kwargs, loss_fn=lambda labels, logits: tf.square(
            tf.cast(labels, tf.float32) - logits))
    if kwargs.get("inverse_link_fn") == "exp":
        kwargs = dict(kwargs, inverse_link_fn=env.tf.exp)
    if kwargs.get("weight_column") == "numeric_w":
        kwargs = dict(kwargs, weight_column=env.tf.feature_column.numeric_column("w"))
    return kwargs


def _head_case(head_class, defaults, case):
    kwargs = case.get("kwargs", {})
    full = {"logits": defaults["logits"], "labels": defaults["labels"], **case}
    full["head"] = lambda env: getattr(env.est, head_class)(
        **defaults.get("args", {}), **_kwargs(env, kwargs))
    return full


@scenarios("heads/binary", _BINARY)
def binary_head(env, case):
    return _observe(env, _head_case("BinaryClassHead",
                                    {"logits": _BIN_LOGITS, "labels": _BIN_LABELS}, case))


_MULTI_CLASS = {
    "int64_labels": {},
    "float_labels": {"labels": _float([[0.0], [1.0], [2.0]])},
    "rank1_labels": {"labels": _int([0, 1, 2])},
    "one_hot_labels": {"labels": _int([[1, 0, 0], [0, 1, 0], [0, 0, 1]])},
    "label_out_of_range": {"labels": _int([[3], [1], [2]])},
    "label_negative": {"labels": _int([[-1], [1], [2]])},
    "string_labels_vocabulary": {"kwargs": {"label_vocabulary": ["a", "b", "c"]},
                                 "labels": _str([["c"], ["a"], ["b"]])},
    "string_label_not_in_vocabulary": {"kwargs": {"label_vocabulary": ["a", "b", "c"]},
                                       "labels": _str([["c"], ["z"], ["b"]])},
    "vocabulary_wrong_length": {"kwargs": {"label_vocabulary": ["a", "b"]},
                                "labels": _str([["a"], ["a"], ["b"]])},
    "string_labels_without_vocabulary": {"labels": _str([["c"], ["a"], ["b"]])},
    "logits_wrong_dimension": {"logits": _BIN_LOGITS},
    "weight_column": {"kwargs": {"weight_column": "w"}, "features": _weights},
    "weight_column_two_columns": {"kwargs": {"weight_column": "w"},
                                  "features": {"w": _float([[1.0, 1.0], [2.0, 2.0],
                                                            [0.5, 0.5]])}},
    "reduction_sum": {"kwargs": {"loss_reduction": "sum", "weight_column": "w"},
                      "features": _weights},
    "reduction_none": {"kwargs": {"loss_reduction": "none"}},
    "loss_fn": {"kwargs": {"loss_fn": "squared"}},
    "n_classes_2": {"args_override": {"n_classes": 2}, "logits": [[1.0, 0.0], [0.0, 0.5],
                                                                   [2.0, -1.0]],
                    "labels": _int([[0], [1], [0]])},
    "n_classes_1": {"args_override": {"n_classes": 1}, "logits": _BIN_LOGITS,
                    "labels": _int([[0], [0], [0]])},
}


def _with_args(defaults, case):
    if "args_override" in case:
        defaults = dict(defaults, args=case["args_override"])
    return defaults


@scenarios("heads/multi_class", _MULTI_CLASS)
def multi_class_head(env, case):
    defaults = _with_args({"logits": _MC_LOGITS, "labels": _int([[0], [1], [2]]),
                           "args": {"n_classes": 3}}, case)
    return _observe(env, _head_case("MultiClassHead", defaults, case))


def _sparse_ids(tf):
    return tf.SparseTensor(indices=[[0, 0], [1, 0], [1, 1], [2, 0]],
                           values=np.array([2, 0, 1, 1], np.int64), dense_shape=[3, 2])


def _sparse_strings(tf):
    return tf.SparseTensor(indices=[[0, 0], [1, 0], [1, 1], [2, 0]],
                           values=[b"c", b"a", b"b", b"b"], dense_shape=[3, 2])


_MULTI_HOT = _int([[1, 0, 1], [0, 1, 0], [1, 1, 0]])

_MULTI_LABEL = {
    "multi_hot_int64": {},
    "multi_hot_float": {"labels": _float([[1, 0, 1], [0, 1, 0], [1, 1, 0]])},
    "soft_labels": {"labels": _float([[0.5, 0.0, 1.0], [0.2, 0.9, 0.0], [1.0, 1.0, 0.0]])},
    "sparse_class_ids": {"labels": _sparse_ids},
    "sparse_strings_vocabulary": {"kwargs": {"label_vocabulary": ["a", "b", "c"]},
                                  "labels": _sparse_strings},
    "multi_hot_out_of_range": {"labels": _int([[2, 0, 1], [0, 1, 0], [1, 1, 0]])},
    "labels_wrong_width": {"labels": _int([[1, 0], [0, 1], [1, 1]])},
    "class_ids_dense": {"labels": _int([[2], [0], [1]])},
    "weight_column": {"kwargs": {"weight_column": "w"}, "features": _weights},
    "weight_column_per_class": {"kwargs": {"weight_column": "w"},
                                "features": {"w": _float([[1.0, 0.5, 2.0], [1.0, 1.0, 1.0],
                                                          [0.0, 1.0, 1.0]])}},
    "thresholds": {"kwargs": {"thresholds": [0.4, 0.8]}},
    "classes_for_class_based_metrics": {"kwargs": {
        "classes_for_class_based_metrics": [0, 2]}},
    "class_metrics_by_name": {"kwargs": {"label_vocabulary": ["a", "b", "c"],
                                         "classes_for_class_based_metrics": ["c"]},
                              "labels": _sparse_strings},
    "class_metrics_out_of_range": {"kwargs": {"classes_for_class_based_metrics": [5]}},
    "reduction_sum": {"kwargs": {"loss_reduction": "sum"}},
    "loss_fn": {"kwargs": {"loss_fn": "squared"}},
    "n_classes_1": {"args_override": {"n_classes": 1}, "logits": _BIN_LOGITS,
                    "labels": _int([[1], [0], [1]])},
}


@scenarios("heads/multi_label", _MULTI_LABEL)
def multi_label_head(env, case):
    defaults = _with_args({"logits": _MC_LOGITS, "labels": _MULTI_HOT,
                           "args": {"n_classes": 3}}, case)
    return _observe(env, _head_case("MultiLabelHead", defaults, case))


_REGRESSION = {
    "float_labels": {},
    "int_labels": {"labels": _int([[1], [2], [0]])},
    "rank1_labels": {"labels": _float([1.0, 2.0, 0.0])},
    "labels_wrong_width": {"labels": _float([[1.0, 0.0], [2.0, 0.0], [0.0, 0.0]])},
    "string_labels": {"labels": _str([["1"], ["2"], ["0"]])},
    "label_dimension_2": {"args_override": {"label_dimension": 2}, "logits": _REG2_LOGITS,
                          "labels": _float([[1.0, 0.0], [2.0, 1.0], [0.0, 1.5]])},
    "label_dimension_2_weights_per_dimension": {
        "args_override": {"label_dimension": 2}, "logits": _REG2_LOGITS,
        "labels": _float([[1.0, 0.0], [2.0, 1.0], [0.0, 1.5]]),
        "kwargs": {"weight_column": "w"},
        "features": {"w": _float([[1.0, 0.0], [2.0, 1.0], [0.5, 0.5]])}},
    "label_dimension_0": {"args_override": {"label_dimension": 0}},
    "weight_column": {"kwargs": {"weight_column": "w"}, "features": _weights},
    "weight_numeric_column": {"kwargs": {"weight_column": "numeric_w"},
                              "features": _weights},
    "reduction_sum": {"kwargs": {"loss_reduction": "sum", "weight_column": "w"},
                      "features": _weights},
    "reduction_none": {"kwargs": {"loss_reduction": "none"}},
    "loss_fn": {"kwargs": {"loss_fn": "squared"}},
    "inverse_link_fn": {"kwargs": {"inverse_link_fn": "exp"}},
    "name": {"kwargs": {"name": "reg"}},
    "regularization": {"regularization": [0.25]},
}


@scenarios("heads/regression", _REGRESSION)
def regression_head(env, case):
    defaults = _with_args({"logits": _REG_LOGITS, "labels": _float([[1.0], [2.0], [0.0]])},
                          case)
    return _observe(env, _head_case("RegressionHead", defaults, case))


_POISSON = {
    "counts": {},
    "int_counts": {"labels": _int([[1], [3], [0]])},
    "weight_column": {"kwargs": {"weight_column": "w"}, "features": _weights},
    "no_full_loss": {"kwargs": {"compute_full_loss": False}},
    "negative_label": {"labels": _float([[-1.0], [3.0], [0.0]])},
    "reduction_sum": {"kwargs": {"loss_reduction": "sum"}},
}


@scenarios("heads/poisson", _POISSON)
def poisson_head(env, case):
    defaults = {"logits": _REG_LOGITS, "labels": _float([[1.0], [3.0], [0.0]])}
    return _observe(env, _head_case("PoissonRegressionHead", defaults, case))


_LOGISTIC = {
    "probabilities": {},
    "label_above_one": {"labels": _float([[1.5], [0.5], [0.0]])},
    "weight_column": {"kwargs": {"weight_column": "w"}, "features": _weights},
    "reduction_sum": {"kwargs": {"loss_reduction": "sum"}},
}


@scenarios("heads/logistic", _LOGISTIC)
def logistic_head(env, case):
    defaults = {"logits": _REG_LOGITS, "labels": _float([[1.0], [0.25], [0.0]])}
    return _observe(env, _head_case("LogisticRegressionHead", defaults, case))


def _two_heads(env, head_weights=None, names=("a", "b"), weight_column=None):
    est = env.est
    return est.MultiHead([est.BinaryClassHead(name=names[0], weight_column=weight_column),
                          est.RegressionHead(name=names[1])], head_weights=head_weights)


_MH_LOGITS = {"a": _BIN_LOGITS, "b": _REG_LOGITS}
_MH_LABELS = {"a": _BIN_LABELS, "b": _float([[1.0], [2.0], [0.0]])}

_MULTI_HEAD = {
    "dict_logits": {},
    "head_weights": {"head": lambda env: _two_heads(env, head_weights=[1.0, 0.5])},
    "weight_column_in_one_head": {"head": lambda env: _two_heads(env, weight_column="w"),
                                  "features": _weights},
    "concatenated_logits": {"logits": [[1.0, 0.5], [-0.5, 1.5], [2.0, -1.0]]},
    "missing_label": {"labels": {"a": _BIN_LABELS}},
    "labels_not_dict": {"labels": _BIN_LABELS},
    "missing_logits": {"logits": {"a": _BIN_LOGITS}},
    "with_multi_class": {"head": lambda env: env.est.MultiHead(
        [env.est.MultiClassHead(3, name="m"), env.est.RegressionHead(name="b")]),
        "logits": {"m": _MC_LOGITS, "b": _REG_LOGITS},
        "labels": {"m": _int([[0], [1], [2]]), "b": _float([[1.0], [2.0], [0.0]])}},
    "head_without_name": {"head": lambda env: env.est.MultiHead(
        [env.est.BinaryClassHead(), env.est.RegressionHead(name="b")])},
    "head_weights_wrong_length": {"head": lambda env: _two_heads(env, head_weights=[1.0])},
    "one_head": {"head": lambda env: env.est.MultiHead([env.est.BinaryClassHead(name="a")]),
                 "logits": {"a": _BIN_LOGITS}, "labels": {"a": _BIN_LABELS}},
}


@scenarios("heads/multi_head", _MULTI_HEAD)
def multi_head(env, case):
    full = {"head": _two_heads, "logits": _MH_LOGITS, "labels": _MH_LABELS, **case}
    return _observe(env, full)


_HEADS = {
    "binary": lambda est: est.BinaryClassHead(),
    "multi_class": lambda est: est.MultiClassHead(3),
    "multi_label": lambda est: est.MultiLabelHead(3),
    "regression": lambda est: est.RegressionHead(label_dimension=2),
    "poisson": lambda est: est.PoissonRegressionHead(),
    "logistic": lambda est: est.LogisticRegressionHead(),
    "multi_head": lambda est: est.MultiHead([est.BinaryClassHead(name="a"),
                                             est.RegressionHead(name="b")]),
}


@scenarios("heads/attributes", _HEADS)
def head_attributes(env, case):
    """What a head says about itself, and its metrics() keys (with a
    regularization loss)."""
    head = case(env.est)
    with env.tf.Graph().as_default():
        return {"name": head.name, "logits_dimension": head.logits_dimension,
                "loss_reduction": head.loss_reduction,
                "metric_keys": outcome(lambda: sorted(map(str, head.metrics(
                    regularization_losses=[env.tf.constant(1.0)])))),
                "metric_keys_plain": outcome(lambda: sorted(map(str, head.metrics())))}


_PREDICTION_KEYS = {
    "binary_probabilities": ("BinaryClassHead", ["probabilities"]),
    "binary_classes_and_logits": ("BinaryClassHead", ["classes", "logits"]),
    "binary_unknown_key": ("BinaryClassHead", ["scores"]),
    "binary_empty": ("BinaryClassHead", []),
    "regression_predictions": ("RegressionHead", ["predictions"]),
    "regression_unknown_key": ("RegressionHead", ["probabilities"]),
}


@scenarios("heads/predictions_keys", _PREDICTION_KEYS)
def prediction_keys(env, case):
    """head.predictions(logits, keys) in a session."""
    tf = env.tf
    head_class, keys = case

    def build():
        head = getattr(env.est, head_class)()
        return _session_run(tf, head.predictions(tf.constant(_BIN_LOGITS), keys=keys))
    return _in_graph(env, build)


_TRAIN_WITH = {
    "train_op_fn": "train_op_fn",
    "v1_optimizer": "v1",
    "keras_sgd": "keras",
    "keras_sgd_without_variables": "keras_no_variables",
    "optimizer_and_train_op_fn": "both",
    "neither": "neither",
    "string_optimizer": "string",
}


def _optimizer(env, kind):
    tf = env.tf
    if kind == "v1":
        return tf.compat.v1.train.GradientDescentOptimizer(0.5)
    if kind == "keras":
        return tf.keras.optimizers.SGD(0.5)
    if kind == "string":
        return "SGD"
    return None


@scenarios("heads/train_with", _TRAIN_WITH)
def train_with(env, case):
    """TRAIN specs from each way of passing an optimizer: losses over two steps.

    (tf.keras.optimizers.legacy is left out: under TF 2.16+'s Keras 3 it needs
    tf-keras, a property of the installation rather than of the library.)
    """
    tf = env.tf

    def build():
        head = env.est.RegressionHead()
        logits = _logits(tf, _REG_LOGITS)
        step = tf.compat.v1.train.get_or_create_global_step()
        kwargs = {}
        if case in ("train_op_fn", "both"):
            sgd = tf.compat.v1.train.GradientDescentOptimizer(0.5)
            kwargs["train_op_fn"] = lambda loss: sgd.minimize(loss, global_step=step)
        if case not in ("train_op_fn", "neither"):
            kwargs["optimizer"] = _optimizer(env, "keras" if case in (
                "both", "keras_no_variables") else case)
            if case != "keras_no_variables":
                kwargs["trainable_variables"] = tf.compat.v1.trainable_variables()
        spec = head.create_estimator_spec({}, "train", logits,
                                          tf.constant(_float([[1.0], [2.0], [0.0]])),
                                          **kwargs)
        with tf.compat.v1.Session() as sess:
            sess.run([tf.compat.v1.global_variables_initializer(),
                      tf.compat.v1.local_variables_initializer()])
            losses = [sess.run([spec.train_op, spec.loss])[1] for _ in range(2)]
            return {"losses": losses, "global_step": sess.run(step)}
    return _in_graph(env, build)


@scenarios("heads/mode", {"unknown": "serve", "predict_without_labels": "infer",
                          "eval_without_labels": "eval", "train_without_labels": "train"})
def head_modes(env, case):
    """create_estimator_spec with a bad mode or without labels."""
    tf = env.tf

    def build():
        head = env.est.BinaryClassHead()
        spec = head.create_estimator_spec(
            {}, case, _logits(tf, _BIN_LOGITS), None,
            train_op_fn=lambda loss: tf.no_op())
        return sorted(k for k, v in spec._asdict().items() if v)
    return _in_graph(env, build)


@scenario("heads/update_metrics/into_estimator_spec")
def update_metrics_into_spec(env):
    """A custom model_fn's EVAL spec: head.metrics() updated by update_metrics() and
    given to EstimatorSpec as eval_metric_ops, plus a metric of its own."""
    tf = env.tf

    def build():
        head = env.est.BinaryClassHead()
        logits = _logits(tf, _BIN_LOGITS)
        labels = tf.constant(_BIN_LABELS)
        metrics = head.update_metrics(head.metrics(), {}, logits, labels)
        metrics["mine"] = tf.compat.v1.metrics.mean(logits)
        spec = env.est.EstimatorSpec("eval", loss=head.loss(labels, logits, features={}),
                                     eval_metric_ops=metrics)
        ops = spec.eval_metric_ops
        return _session_run(tf, {k: v[0] for k, v in ops.items()},
                            before=[v[1] for v in ops.values()])
    return _in_graph(env, build)


@scenario("heads/update_metrics/returns")
def update_metrics_returns(env):
    """What update_metrics returns: the same dict, its keys."""
    tf = env.tf

    def build():
        head = env.est.MultiClassHead(3)
        metrics = head.metrics(regularization_losses=[tf.constant(0.5)])
        updated = head.update_metrics(metrics, {}, _logits(tf, _MC_LOGITS),
                                      tf.constant(_int([[0], [1], [2]])),
                                      regularization_losses=[tf.constant(0.5)])
        return {"same_dict": updated is metrics, "keys": sorted(updated)}
    return _in_graph(env, build)
