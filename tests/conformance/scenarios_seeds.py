"""Conformance: with RunConfig(tf_random_seed=S), random ops draw what they draw on
tf.estimator (TF derives an op's seed from the graph seed and the op count, so the
graph must be built in tf.estimator's order)."""

import numpy as np

from tests.conformance import programs
from tests.conformance.registry import scenarios


def _random_model_fn(env, kind):
    tf = env.tf

    def model_fn(features, labels, mode):
        x = features["x"]
        if kind == "default_init":
            w = tf.compat.v1.get_variable("w", [2, 3])
        elif kind == "random_normal_op":
            w = tf.compat.v1.get_variable("w", [2, 3], initializer=tf.zeros_initializer())
            x = x + tf.random.normal(tf.shape(x), stddev=0.1)
        else:
            w = tf.compat.v1.get_variable("w", [2, 3], initializer=tf.ones_initializer())
        hidden = tf.matmul(x, w)
        if kind == "dropout" and mode == "train":
            hidden = tf.compat.v1.nn.dropout(hidden, rate=0.5)
        out = tf.reduce_sum(hidden, axis=1, keepdims=True)
        if mode == "infer":
            return env.est.EstimatorSpec(mode, predictions={"y": out})
        loss = tf.reduce_mean(tf.square(out - labels))
        train_op = programs.sgd_train_op(env, loss, 0.01) if mode == "train" else None
        return env.est.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                     predictions={"y": out})
    return model_fn


def _shuffled_input(env):
    tf = env.tf

    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(({"x": programs.X}, programs.Y))
        return data.shuffle(4).repeat().batch(2)
    return input_fn


# No Keras layer here: Keras 2 initializers without a seed draw their seed from
# Python's `random` module, so under tf.estimator 2.15 itself two runs with the same
# tf_random_seed give different Keras weights (unless keras.utils.set_random_seed).
_KINDS = {"default_init": "default_init", "random_normal_op": "random_normal_op",
          "dropout": "dropout", "shuffled_input": "shuffled_input"}


@scenarios("seeds/model_fn", _KINDS)
def seeded_model_fn(env, case):
    est = env.est.Estimator(_random_model_fn(env, case), model_dir=env.tmpdir(),
                            config=env.est.RunConfig(tf_random_seed=11))
    input_fn = (_shuffled_input(env) if case == "shuffled_input"
                else programs.input_fn(env))
    est.train(input_fn, steps=3)
    names = [n for n in est.get_variable_names()
             if not n.startswith(("global_step", "beta"))]
    observed = {name: est.get_variable_value(name) for name in names
                if "Momentum" not in name}
    observed["eval"] = est.evaluate(input_fn, steps=2)
    return observed


_CANNED = {
    "dnn_dropout": ("DNNClassifier", {"hidden_units": [4, 3], "dropout": 0.3}),
    "dnn_regressor": ("DNNRegressor", {"hidden_units": [3]}),
    "combined": ("DNNLinearCombinedRegressor", {"dnn_hidden_units": [3]}),
    "linear": ("LinearRegressor", {}),
}


@scenarios("seeds/canned", _CANNED)
def seeded_canned(env, case):
    tf = env.tf
    name, kwargs = case
    columns = [tf.feature_column.numeric_column("x", [2])]
    if name.startswith("DNNLinear"):
        kwargs = dict(kwargs, dnn_feature_columns=columns, linear_feature_columns=columns)
    else:
        kwargs = dict(kwargs, feature_columns=columns)
    est = getattr(env.est, name)(model_dir=env.tmpdir(),
                                 config=env.est.RunConfig(tf_random_seed=5), **kwargs)
    labels = programs.Y if name.endswith("Regressor") else programs.Y.astype(np.int64)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": programs.X}, labels)).repeat(
        ).batch(2)
    est.train(input_fn, steps=3)
    values = {n: est.get_variable_value(n) for n in est.get_variable_names()
              if "kernel" in n or "bias" in n or "weights" in n}
    values["predictions"] = [p.get("predictions", p.get("logits")) for p in est.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": programs.X}).batch(2))]
    return values


@scenarios("seeds/predict_and_export", {"predict": "predict", "evaluate": "evaluate"})
def seeded_random_outputs(env, case):
    """Random ops in evaluate/predict graphs (MC dropout, noise) draw tf.estimator's
    numbers under tf_random_seed: the graph is built in the same order."""
    tf = env.tf

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.ones_initializer())
        out = tf.matmul(tf.compat.v1.nn.dropout(features["x"], rate=0.5), w)
        out += tf.random.normal(tf.shape(out), stddev=0.1)
        if mode == "infer":
            return env.est.EstimatorSpec(mode, predictions={"y": out})
        loss = tf.reduce_mean(tf.square(out - labels))
        train_op = programs.sgd_train_op(env, loss, 0.0) if mode == "train" else None
        return env.est.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = env.est.Estimator(model_fn, model_dir=env.tmpdir(),
                            config=env.est.RunConfig(tf_random_seed=23))
    est.train(programs.input_fn(env), steps=1)
    if case == "evaluate":
        return est.evaluate(programs.input_fn(env), steps=3)
    return [p["y"] for p in est.predict(programs.input_fn(env, epochs=1, labels=False))]
