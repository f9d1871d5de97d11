"""model_to_estimator on what users compile, run on both libraries.

Each case builds a small compiled Keras model (weights set from a fixed seed),
converts it, trains TRAIN_STEPS steps of SGD and evaluates; or, for the cases
tf.estimator refuses, records the error:

  * string losses ('mse', 'binary_crossentropy', 'sparse_categorical_crossentropy'),
    which Keras reduces over the batch, with `metrics=[tf.keras.metrics.AUC()]` and
    `metrics=['accuracy']`;
  * a `tf.keras.Sequential` subclass and a functional `tf.keras.Model` subclass
    defined in the user's program (this module, `__main__` when run as a script);
  * a subclassed `tf.keras.Model` (refused);
  * a feature dict whose key is not the model's input name (refused).

    python keras_estimator_cases_driver.py {lite|oracle} WORK_DIR   # one JSON line

A result is {"weights": [[...] per weight, in the model's order], "metrics": {...}}
or {"error": {"type": name, "key_error": bool, "message": text}}.
"""

import json
import os
import re
import sys

import numpy as np
import tensorflow as tf

TRAIN_STEPS = 3
BATCH_SIZE = 8
_N = 16


class UserSequential(tf.keras.Sequential):
    """A user's own Sequential class (no behaviour of its own)."""


class UserFunctional(tf.keras.Model):
    """A user's own class of functional model: its constructor takes no config."""

    def __init__(self):
        inputs = tf.keras.Input((4,), name="x")
        super().__init__(inputs, tf.keras.layers.Dense(1)(inputs))


class UserModel(tf.keras.Model):
    """A subclassed model: its structure is in call(), not in a config."""

    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(1)

    def call(self, inputs):
        return self.dense(inputs)


def _data():
    rng = np.random.RandomState(0)
    x = rng.randn(_N, 4).astype(np.float32)
    score = x[:, 0] - 0.5 * x[:, 1]
    return x, score


def _set_weights(model):
    rng = np.random.RandomState(7)
    model.set_weights([(0.3 * rng.randn(*w.shape)).astype(np.float32)
                       for w in model.get_weights()])
    return model


def _dense(units, activation=None, cls=None):
    cls = cls or tf.keras.Sequential
    return cls([tf.keras.layers.Dense(units, activation=activation, input_shape=(4,))])


def _mse():
    model = _dense(1)
    model.compile(optimizer="sgd", loss="mse")
    return model, (_data()[1] > 0).astype(np.float32)[:, None]


def _binary_auc():
    model = _dense(1, "sigmoid")
    model.compile(optimizer="sgd", loss="binary_crossentropy",
                  metrics=[tf.keras.metrics.AUC()])
    return model, (_data()[1] > 0).astype(np.float32)  # labels (batch,)


def _sparse_accuracy():
    model = _dense(3, "softmax")
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model, np.digitize(_data()[1], [-0.5, 0.5]).astype(np.int64)


def _user_sequential():
    model = _dense(1, cls=UserSequential)
    model.compile(optimizer="sgd", loss="mse")
    return model, _data()[1][:, None]


def _user_functional():
    model = UserFunctional()
    model.compile(optimizer="sgd", loss="mse")
    return model, _data()[1][:, None]


def _subclassed():
    model = UserModel()
    model.compile(optimizer="sgd", loss="mse")
    return model, _data()[1][:, None]


# name -> (model and labels builder, feature key: None for the model's input name)
CASES = {
    "mse_string_loss": (_mse, None),
    "binary_crossentropy_string_loss_auc": (_binary_auc, None),
    "sparse_categorical_crossentropy_string_loss_accuracy": (_sparse_accuracy, None),
    "user_sequential_subclass": (_user_sequential, None),
    "user_functional_subclass": (_user_functional, "x"),
    "subclassed_model": (_subclassed, None),
    "feature_key_not_the_input_name": (_mse, "features"),
}


def _weight_names(model, variable_names):
    """The checkpoint names of the model's weights, in the model's order."""
    object_based = sorted(
        (int(m.group(1)), m.group(2), name) for name in variable_names
        for m in [re.match(r"layer_with_weights-(\d+)/(kernel|bias)/\.ATTRIBUTES", name)]
        if m)
    if object_based:  # tf.estimator's object-based checkpoint: kernel before bias.
        return [name for _, _, name in sorted(object_based, key=lambda t: (
            t[0], t[1] != "kernel"))]
    return [f"{layer.name}/{w}" for layer in model.layers if layer.weights
            for w in ("kernel", "bias")]


def run_case(to_estimator, name, model_dir):
    build, key = CASES[name]
    tf.keras.backend.clear_session()
    x = _data()[0]
    try:
        model, labels = build()
        if model.built:
            _set_weights(model)
        estimator = to_estimator(keras_model=model, model_dir=model_dir)
        key = key or "dense_input"  # Keras 2's name of the Sequential's input.

        def input_fn():
            return tf.data.Dataset.from_tensor_slices(({key: x}, labels)).batch(
                BATCH_SIZE)

        estimator.train(lambda: input_fn().repeat(), steps=TRAIN_STEPS)
        metrics = estimator.evaluate(input_fn)
    except Exception as error:  # noqa: BLE001 (compared with the oracle's)
        return {"error": {"type": type(error).__name__,
                          "key_error": isinstance(error, KeyError),
                          "message": str(error)}}
    names = _weight_names(model, estimator.get_variable_names())
    return {"weights": [np.ravel(estimator.get_variable_value(n)).tolist()
                        for n in names],
            "metrics": {k: float(v) for k, v in metrics.items()}}


def run(which, work_dir):
    """{case: result} for every case."""
    if which == "oracle":
        to_estimator = tf.keras.estimator.model_to_estimator
    else:
        import estimator_lite  # noqa: PLC0415 (not on the oracle)
        to_estimator = estimator_lite.model_to_estimator
    return {name: run_case(to_estimator, name, os.path.join(work_dir, name))
            for name in CASES}


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1], sys.argv[2])))
