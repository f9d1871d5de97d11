"""Conformance: the canned estimators (Baseline, Linear, DNN, DNNLinearCombined;
classifiers and regressors; TF2 and tf.compat.v1) over their arguments.

Every `canned/<estimator>/<case>` scenario builds one estimator with feature
columns over a four-example tf.data input, trains it three steps with a fixed
`tf_random_seed`, and observes what a user sees: evaluate()'s metrics, the first
predictions, get_variable_names() and every variable's value, and the
SignatureDefs exported for a tf.Example-parsing receiver. Errors are observed by
type, at the step where they are raised.
"""

import numpy as np

from tests.conformance import programs
from tests.conformance.registry import outcome, scenarios

FEATURES = {
    "x": np.array([[1.0], [2.0], [0.5], [-1.0]], np.float32),
    "x2": np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 2.0]], np.float32),
    "cat": np.array([b"a", b"b", b"c", b"a"]),
    "tag": np.array([b"p", b"q", b"p", b"r"]),
    "id": np.array([0, 2, 1, 3], np.int64),
    "w": np.array([[1.0], [2.0], [0.5], [1.0]], np.float32),
}

LABELS = {
    "binary": np.array([[1], [0], [0], [1]], np.int64),
    "three": np.array([[0], [2], [1], [2]], np.int64),
    "words": np.array([[b"yes"], [b"no"], [b"no"], [b"yes"]]),
    "three_words": np.array([[b"lo"], [b"hi"], [b"mid"], [b"hi"]]),
    "real": np.array([[1.5], [-0.5], [0.0], [2.0]], np.float32),
    "real2": np.array([[1.5, 0.0], [-0.5, 1.0], [0.0, 0.5], [2.0, -1.0]], np.float32),
    "out_of_range": np.array([[1], [0], [2], [1]], np.int64),
}


def columns(tf):
    """The feature columns the scenarios name, by name."""
    fc = tf.feature_column
    x = fc.numeric_column("x")
    bucketized = fc.bucketized_column(x, [0.0, 1.5])
    vocab = fc.categorical_column_with_vocabulary_list("cat", ["a", "b", "c"])
    identity = fc.categorical_column_with_identity("id", 4)
    hashed = fc.categorical_column_with_hash_bucket("tag", 5)
    crossed = fc.crossed_column([vocab, bucketized], 7)
    return {
        "x": x, "x2": fc.numeric_column("x2", shape=2), "bucketized": bucketized,
        "vocab": vocab, "identity": identity, "hash": hashed, "crossed": crossed,
        "vocab_embedding": fc.embedding_column(vocab, 2),
        "vocab_indicator": fc.indicator_column(vocab),
        "identity_indicator": fc.indicator_column(identity),
        "hash_embedding": fc.embedding_column(hashed, 2, combiner="sqrtn"),
        "crossed_embedding": fc.embedding_column(crossed, 2),
        "bucketized_indicator": fc.indicator_column(bucketized),
    }


class Make:
    """A constructor argument built in the scenario: fn(tf, columns) -> value."""

    def __init__(self, fn):
        self.fn = fn


def cols(*names):
    return Make(lambda tf, c: [c[n] for n in names])


class KerasOptimizer:
    """A Keras optimizer instance (or, `factory`: a callable returning one).

    The same user program names a different class on each side: tf.estimator
    2.15's canned estimators train only Keras 2's `tf.keras.optimizers.legacy`
    optimizers, which Keras 3 (TF >= 2.16) no longer has; estimator_lite trains
    Keras 3's `tf.keras.optimizers` ones. A user migrating writes the latter.
    """

    def __init__(self, name, factory=False, **kwargs):
        self.name = name
        self.factory = factory
        self.kwargs = kwargs

    def make(self, env):
        keras = env.tf.keras.optimizers
        module = keras.legacy if env.flavor == "oracle" else keras

        def build():
            return getattr(module, self.name)(**self.kwargs)
        return build if self.factory else build()


def _input_fn(env, labels, keys, epochs=None, with_labels=True):
    tf = env.tf
    features = {k: FEATURES[k] for k in keys}

    def fn():
        data = (features, LABELS[labels]) if with_labels else features
        return tf.data.Dataset.from_tensor_slices(data).repeat(epochs).batch(2)
    return fn


_COLUMN_ARGS = ("feature_columns", "linear_feature_columns", "dnn_feature_columns")


def _build(env, case):
    """The estimator of `case` and the feature columns it was given."""
    tf = env.tf
    c = columns(tf)
    kwargs = {k: _argument(env, c, v) for k, v in case.get("kwargs", {}).items()}
    used = [col for key in _COLUMN_ARGS for col in (kwargs.get(key) or [])
            if hasattr(col, "parse_example_spec")]
    api = env.v1 if case.get("v1") else env.est
    config = case.get("config", env.est.RunConfig(tf_random_seed=11))
    estimator = getattr(api, case["cls"])(model_dir=env.tmpdir(), config=config, **kwargs)
    return estimator, used


def _argument(env, columns_by_name, value):
    if isinstance(value, Make):
        return value.fn(env.tf, columns_by_name)
    if isinstance(value, KerasOptimizer):
        return value.make(env)
    return value


def _variables(estimator):
    return {name: estimator.get_variable_value(name)
            for name in estimator.get_variable_names()}


def _export(env, estimator, used):
    tf = env.tf
    spec = tf.feature_column.make_parse_example_spec(
        used or [tf.feature_column.numeric_column("x")])
    receiver = env.est.export.build_parsing_serving_input_receiver_fn(spec)
    return programs.signature_summary(env, estimator.export_saved_model(
        env.tmpdir(), receiver))


def observe(env, case):
    """Builds and trains; then predicts and reads the variables; unless the case
    is `light` (argument sweeps, to keep the family cheap), also evaluates and
    exports. Each step's outcome."""
    built = []
    labels = case.get("labels", "binary")
    keys = case.get("features", sorted(FEATURES))

    def construct_and_train():
        # tf.estimator checks some arguments in the constructor and others in
        # train(); both stop the same user program with the same error.
        built.append(_build(env, case))
        built[0][0].train(_input_fn(env, labels, keys), steps=case.get("steps", 3))
    observed = {"train": outcome(construct_and_train)}
    if "error" in observed["train"]:
        return observed
    estimator, used = built[0]
    full = not case.get("light")
    if full:
        observed["evaluate"] = outcome(lambda: estimator.evaluate(
            _input_fn(env, labels, keys, epochs=1)))
    observed["predict"] = outcome(lambda: list(estimator.predict(
        _input_fn(env, labels, keys, epochs=1, with_labels=False)))[:2])
    observed["variables"] = _variables(estimator)
    if full:
        observed["export"] = outcome(lambda: _export(env, estimator, used))
    return observed


_BASELINE_CLASSIFIER = {
    "default": {},
    "n_classes_3": {"kwargs": {"n_classes": 3}, "labels": "three"},
    "label_vocabulary": {"kwargs": {"label_vocabulary": ["no", "yes"]}, "labels": "words"},
    "weight_column": {"kwargs": {"weight_column": "w"}, "features": ["x", "w"]},
    "two_features": {"features": ["x", "x2"], "light": True},
    "optimizer_adam": {"kwargs": {"optimizer": "Adam"}, "light": True},
    "optimizer_instance": {"kwargs": {"optimizer": KerasOptimizer(
        "Adagrad", learning_rate=0.5)}, "light": True},
    "loss_reduction_sum": {"kwargs": {"loss_reduction": "sum"}, "light": True},
    "n_classes_1": {"kwargs": {"n_classes": 1}},
    "label_out_of_range": {"labels": "out_of_range"},
    "v1": {"v1": True, "kwargs": {"n_classes": 3}, "labels": "three"},
}


@scenarios("canned/baseline_classifier", _BASELINE_CLASSIFIER)
def baseline_classifier(env, case):
    return observe(env, {"cls": "BaselineClassifier", "features": ["x"], **case})


_BASELINE_REGRESSOR = {
    "default": {},
    "label_dimension_2": {"kwargs": {"label_dimension": 2}, "labels": "real2"},
    "optimizer_ftrl_instance": {"kwargs": {"optimizer": KerasOptimizer(
        "Ftrl", learning_rate=0.3)}, "light": True},
    "v1_weight_column": {"v1": True, "kwargs": {"weight_column": "w"},
                         "features": ["x", "w"]},
}


@scenarios("canned/baseline_regressor", _BASELINE_REGRESSOR)
def baseline_regressor(env, case):
    return observe(env, {"cls": "BaselineRegressor", "labels": "real", "features": ["x"],
                         **case})


_LINEAR_CLASSIFIER = {
    "numeric": {"kwargs": {"feature_columns": cols("x")}},
    "bucketized": {"kwargs": {"feature_columns": cols("bucketized")}, "light": True},
    "vocabulary_list": {"kwargs": {"feature_columns": cols("vocab")}, "light": True},
    "crossed": {"kwargs": {"feature_columns": cols("crossed")}, "light": True},
    "all_columns": {"kwargs": {"feature_columns": cols(
        "x", "x2", "bucketized", "vocab", "identity", "hash", "crossed")}},
    "sparse_combiner_mean": {"kwargs": {"feature_columns": cols("x", "vocab", "hash"),
                                        "sparse_combiner": "mean"}, "light": True},
    "sparse_combiner_sqrtn": {"kwargs": {"feature_columns": cols("x", "vocab", "hash"),
                                         "sparse_combiner": "sqrtn"}, "light": True},
    "sparse_combiner_bad": {"kwargs": {"feature_columns": cols("vocab"),
                                       "sparse_combiner": "max"}},
    "n_classes_3": {"kwargs": {"feature_columns": cols("x", "vocab"), "n_classes": 3},
                    "labels": "three"},
    "label_vocabulary": {"kwargs": {"feature_columns": cols("x", "vocab"),
                                    "label_vocabulary": ["no", "yes"]}, "labels": "words"},
    "label_vocabulary_3": {"kwargs": {"feature_columns": cols("x"), "n_classes": 3,
                                      "label_vocabulary": ["lo", "mid", "hi"]},
                           "labels": "three_words", "light": True},
    "label_vocabulary_not_list": {"kwargs": {"feature_columns": cols("x"),
                                             "label_vocabulary": "no,yes"}},
    "label_not_in_vocabulary": {"kwargs": {"feature_columns": cols("x"),
                                           "label_vocabulary": ["no", "maybe"]},
                                "labels": "words"},
    "weight_column": {"kwargs": {"feature_columns": cols("x", "vocab"),
                                 "weight_column": "w"}},
    "weight_numeric_column": {"kwargs": {"feature_columns": cols("x"),
                                         "weight_column": Make(
                                             lambda tf, c: tf.feature_column.numeric_column(
                                                 "w"))}, "light": True},
    "optimizer_adam": {"kwargs": {"feature_columns": cols("x", "vocab"),
                                  "optimizer": "Adam"}, "light": True},
    "optimizer_sgd": {"kwargs": {"feature_columns": cols("x", "vocab"),
                                 "optimizer": "SGD"}, "light": True},
    "optimizer_ftrl_l1": {"kwargs": {"feature_columns": cols("x", "vocab"),
                                     "optimizer": KerasOptimizer(
                                         "Ftrl", learning_rate=0.5,
                                         l1_regularization_strength=0.01)},
                          "light": True},
    "optimizer_unknown_name": {"kwargs": {"feature_columns": cols("x"),
                                          "optimizer": "Nadam2"}},
    "loss_reduction_sum": {"kwargs": {"feature_columns": cols("x"),
                                      "loss_reduction": "sum"}, "light": True},
    "loss_reduction_none": {"kwargs": {"feature_columns": cols("x"),
                                       "loss_reduction": "none"}},
    "no_feature_columns": {"kwargs": {"feature_columns": []}},
    "n_classes_1": {"kwargs": {"feature_columns": cols("x"), "n_classes": 1}},
    "label_out_of_range": {"kwargs": {"feature_columns": cols("x")},
                           "labels": "out_of_range"},
    "v1": {"v1": True, "kwargs": {"feature_columns": cols("x", "vocab", "crossed")}},
    "v1_n_classes_3": {"v1": True, "kwargs": {"feature_columns": cols("x", "hash"),
                                              "n_classes": 3}, "labels": "three",
                       "light": True},
}


@scenarios("canned/linear_classifier", _LINEAR_CLASSIFIER)
def linear_classifier(env, case):
    return observe(env, {"cls": "LinearClassifier", **case})


_LINEAR_REGRESSOR = {
    "numeric_and_vocabulary": {"kwargs": {"feature_columns": cols("x", "vocab")}},
    "label_dimension_2": {"kwargs": {"feature_columns": cols("x", "identity"),
                                     "label_dimension": 2}, "labels": "real2"},
    "weight_column_sqrtn": {"kwargs": {"feature_columns": cols("bucketized", "hash"),
                                       "weight_column": "w", "sparse_combiner": "sqrtn"},
                            "light": True},
    "optimizer_sgd": {"kwargs": {"feature_columns": cols("x", "crossed"),
                                 "optimizer": "SGD"}, "light": True},
    "v1": {"v1": True, "kwargs": {"feature_columns": cols("x", "vocab")}},
}


@scenarios("canned/linear_regressor", _LINEAR_REGRESSOR)
def linear_regressor(env, case):
    return observe(env, {"cls": "LinearRegressor", "labels": "real", **case})


def _dnn(names=("x", "vocab_embedding"), units=(3,), **kwargs):
    return {"hidden_units": list(units), "feature_columns": cols(*names), **kwargs}


_DNN_CLASSIFIER = {
    "default": {"kwargs": _dnn()},
    "two_layers": {"kwargs": _dnn(units=(3, 2)), "light": True},
    "indicator_columns": {"kwargs": _dnn(names=("x2", "vocab_indicator",
                                                "identity_indicator",
                                                "bucketized_indicator"))},
    "hash_embedding": {"kwargs": _dnn(names=("x", "hash_embedding")), "light": True},
    "categorical_column_not_dense": {"kwargs": _dnn(names=("x", "vocab"))},
    "activation_tanh": {"kwargs": _dnn(activation_fn=Make(lambda tf, c: tf.nn.tanh)),
                        "light": True},
    "dropout": {"kwargs": _dnn(dropout=0.5), "light": True},
    "batch_norm": {"kwargs": _dnn(batch_norm=True)},
    "n_classes_3": {"kwargs": _dnn(n_classes=3), "labels": "three"},
    "label_vocabulary": {"kwargs": _dnn(label_vocabulary=["no", "yes"]),
                         "labels": "words", "light": True},
    "weight_column": {"kwargs": _dnn(weight_column="w"), "light": True},
    "optimizer_adam": {"kwargs": _dnn(optimizer="Adam"), "light": True},
    "optimizer_sgd": {"kwargs": _dnn(optimizer="SGD"), "light": True},
    "optimizer_ftrl": {"kwargs": _dnn(optimizer="Ftrl"), "light": True},
    "optimizer_keras_instance": {"kwargs": _dnn(optimizer=KerasOptimizer(
        "Adam", learning_rate=0.05)), "light": True},
    "optimizer_keras_2_15_instance": {"kwargs": _dnn(optimizer=Make(
        lambda tf, c: tf.keras.optimizers.Adam(0.05))), "light": True},
    "optimizer_v1_instance": {"kwargs": _dnn(optimizer=Make(
        lambda tf, c: tf.compat.v1.train.GradientDescentOptimizer(0.1))),
        "light": True},
    "optimizer_callable": {"kwargs": _dnn(optimizer=KerasOptimizer(
        "SGD", factory=True, learning_rate=0.2)), "light": True},
    "loss_reduction_sum": {"kwargs": _dnn(loss_reduction="sum"), "light": True},
    "hidden_units_empty": {"kwargs": _dnn(units=())},
    "hidden_units_none": {"kwargs": _dnn(units=(3,), hidden_units=None)},
    "hidden_units_not_ints": {"kwargs": _dnn(units=("3", 2.0)), "light": True},
    "dropout_out_of_range": {"kwargs": _dnn(dropout=1.5)},
    "optimizer_unknown_name": {"kwargs": _dnn(optimizer="Nope")},
    "v1": {"v1": True, "kwargs": _dnn()},
    "v1_dropout_n_classes_3": {"v1": True, "kwargs": _dnn(dropout=0.3, n_classes=3),
                               "labels": "three", "light": True},
}


@scenarios("canned/dnn_classifier", _DNN_CLASSIFIER)
def dnn_classifier(env, case):
    return observe(env, {"cls": "DNNClassifier", **case})


_DNN_REGRESSOR = {
    "default": {"kwargs": _dnn()},
    "label_dimension_2_batch_norm": {"kwargs": _dnn(label_dimension=2, batch_norm=True),
                                     "labels": "real2"},
    "weight_column_adam": {"kwargs": _dnn(weight_column="w", optimizer="Adam"),
                           "light": True},
    "v1": {"v1": True, "kwargs": _dnn(optimizer="SGD"), "light": True},
}


@scenarios("canned/dnn_regressor", _DNN_REGRESSOR)
def dnn_regressor(env, case):
    return observe(env, {"cls": "DNNRegressor", "labels": "real", **case})


def _combined(linear=("x", "crossed"), dnn=("x", "vocab_embedding"), units=(3,),
              **kwargs):
    out = {"dnn_hidden_units": list(units), **kwargs}
    if linear is not None:
        out["linear_feature_columns"] = cols(*linear)
    if dnn is not None:
        out["dnn_feature_columns"] = cols(*dnn)
    return out


_COMBINED_CLASSIFIER = {
    "default": {"kwargs": _combined()},
    "linear_only": {"kwargs": _combined(dnn=None, units=()), "light": True},
    "dnn_only": {"kwargs": _combined(linear=None), "light": True},
    "no_columns": {"kwargs": _combined(linear=None, dnn=None)},
    "same_column_both_parts": {"kwargs": _combined(linear=("x",), dnn=("x",)),
                               "light": True},
    "optimizers": {"kwargs": _combined(linear_optimizer="SGD", dnn_optimizer="Adam"),
                   "light": True},
    "optimizer_instances": {"kwargs": _combined(
        linear_optimizer=KerasOptimizer("Ftrl", learning_rate=0.2),
        dnn_optimizer=KerasOptimizer("Adagrad", learning_rate=0.2)),
        "light": True},
    "n_classes_3": {"kwargs": _combined(n_classes=3), "labels": "three"},
    "label_vocabulary": {"kwargs": _combined(label_vocabulary=["no", "yes"]),
                         "labels": "words", "light": True},
    "weight_column": {"kwargs": _combined(weight_column="w"), "light": True},
    "batch_norm_dropout": {"kwargs": _combined(batch_norm=True, dnn_dropout=0.4),
                           "light": True},
    "activation_and_sparse_combiner": {"kwargs": _combined(
        dnn_activation_fn=Make(lambda tf, c: tf.nn.sigmoid),
        linear_sparse_combiner="mean", linear=("vocab", "hash")), "light": True},
    "loss_reduction_sum": {"kwargs": _combined(loss_reduction="sum"), "light": True},
    "dnn_columns_without_hidden_units": {"kwargs": _combined(units=())},
    "v1": {"v1": True, "kwargs": _combined()},
}


@scenarios("canned/dnn_linear_combined_classifier", _COMBINED_CLASSIFIER)
def combined_classifier(env, case):
    return observe(env, {"cls": "DNNLinearCombinedClassifier", **case})


_COMBINED_REGRESSOR = {
    "default": {"kwargs": _combined()},
    "label_dimension_2": {"kwargs": _combined(label_dimension=2, weight_column="w"),
                          "labels": "real2", "light": True},
    "v1": {"v1": True, "kwargs": _combined(dnn_optimizer="SGD"), "light": True},
}


@scenarios("canned/dnn_linear_combined_regressor", _COMBINED_REGRESSOR)
def combined_regressor(env, case):
    return observe(env, {"cls": "DNNLinearCombinedRegressor", "labels": "real", **case})


def _dnn_case(**kwargs):
    return {"cls": "DNNClassifier", "kwargs": _dnn(**kwargs), "light": True}


def _linear_case(cls="LinearClassifier", **kwargs):
    return {"cls": cls, "kwargs": {"feature_columns": cols("x"), **kwargs},
            "light": True, "labels": "real" if "Regressor" in cls else "binary"}


# Arguments a user gets wrong (or writes loosely): what each estimator does with them.
_ARGUMENTS = {
    "dnn_activation_fn_name": _dnn_case(activation_fn="relu"),
    "dnn_activation_fn_keras_2_name": _dnn_case(activation_fn="hard_sigmoid"),
    "dnn_activation_fn_unknown_name": _dnn_case(activation_fn="nope"),
    "dnn_activation_fn_none": _dnn_case(activation_fn=None),
    "dnn_activation_fn_not_callable": _dnn_case(activation_fn=3),
    "dnn_batch_norm_not_bool": _dnn_case(batch_norm="yes"),
    "combined_batch_norm_truthy": {"cls": "DNNLinearCombinedClassifier", "light": True,
                                   "kwargs": _combined(batch_norm=1)},
    "combined_activation_fn_name": {"cls": "DNNLinearCombinedRegressor", "light": True,
                                    "labels": "real",
                                    "kwargs": _combined(dnn_activation_fn="gelu")},
    "v1_dnn_activation_fn_name": {"cls": "DNNClassifier", "v1": True, "light": True,
                                  "kwargs": _dnn(activation_fn="mish")},
    "dnn_dropout_one": _dnn_case(dropout=1.0),
    "dnn_dropout_zero": _dnn_case(dropout=0.0),
    "dnn_optimizer_object": _dnn_case(optimizer=Make(lambda tf, c: object())),
    "dnn_single_feature_column": _dnn_case(feature_columns=Make(lambda tf, c: c["x"])),
    "dnn_feature_column_names": _dnn_case(feature_columns=["x"]),
    "linear_feature_columns_dict": _linear_case(feature_columns=Make(
        lambda tf, c: {"x": c["x"]})),
    "vocabulary_shorter_than_n_classes": _linear_case(n_classes=3,
                                                      label_vocabulary=["no", "yes"]),
    "weight_column_not_a_feature": _linear_case(weight_column="missing"),
    "weight_column_not_numeric": _linear_case(weight_column=Make(
        lambda tf, c: c["vocab"])),
    "label_dimension_0": _linear_case("LinearRegressor", label_dimension=0),
    "loss_reduction_v1_name": _linear_case(loss_reduction="weighted_sum_over_batch_size"),
    "config_not_run_config": {"cls": "LinearClassifier", "light": True,
                              "kwargs": {"feature_columns": cols("x")},
                              "config": "not a RunConfig"},
    "v1_linear_partitioner": {"cls": "LinearClassifier", "v1": True, "light": True,
                              "kwargs": {"feature_columns": cols("x", "hash"),
                                         "partitioner": Make(
                                             lambda tf, c: tf.compat.v1
                                             .fixed_size_partitioner(2))}},
    "v1_dnn_input_layer_partitioner": {"cls": "DNNRegressor", "v1": True, "light": True,
                                       "labels": "real", "kwargs": _dnn(
                                           names=("x", "hash_embedding"),
                                           input_layer_partitioner=Make(
                                               lambda tf, c: tf.compat.v1
                                               .min_max_variable_partitioner(2, 4)))},
}


@scenarios("canned/arguments", _ARGUMENTS)
def arguments(env, case):
    return observe(env, case)
