"""Trains a small Adam regression with summaries; run by both interpreters.

`python multi_step_adam_driver.py oracle MODEL_DIR` trains with
tf.compat.v1.estimator (TF 2.15) one step per session call and prints a JSON report
(last line): the final variables, global step and the step of every checkpoint.
tests/multi_step/multi_step_test.py imports `model_fn`/`input_fn` and trains the same
with estimator_lite's multi-step loops.
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1
MAX_STEPS = 30
SAVE_STEPS = 20


def input_fn(epochs=None):
    """Batches of 8 from 64 examples, repeated `epochs` times (None: forever)."""
    def fn():
        rng = np.random.RandomState(0)
        x = rng.randn(64, 4).astype(np.float32)
        y = x.dot(rng.randn(4, 1)).astype(np.float32)
        return tf.data.Dataset.from_tensor_slices((x, y)).repeat(epochs).batch(8)
    return fn


def model_fn(features, labels, mode):
    w = tf1.get_variable("w", [4, 1], initializer=tf1.zeros_initializer())
    b = tf1.get_variable("b", [1], initializer=tf1.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(features, w) + b - labels))
    tf1.summary.scalar("w_sum", tf.reduce_sum(w))
    train_op = tf1.train.AdamOptimizer(0.1).minimize(
        loss, global_step=tf1.train.get_global_step())
    return _estimators().EstimatorSpec(mode, loss=loss, train_op=train_op)


def _estimators():
    """tf.estimator on the oracle, estimator_lite here."""
    if tf.__version__.startswith("2.15"):
        return tf1.estimator
    import estimator_lite  # noqa: PLC0415 - not installed beside TF 2.15
    return estimator_lite


def report(get_value, model_dir):
    """What both sides compare: variables, global step, checkpoint steps."""
    steps = sorted(int(name.split("-")[1].split(".")[0])
                   for name in os.listdir(model_dir)
                   if name.startswith("model.ckpt-") and name.endswith(".index"))
    return {"w": get_value("w").tolist(), "b": get_value("b").tolist(),
            "global_step": int(get_value("global_step")), "checkpoints": steps}


def main(model_dir):
    estimator = tf1.estimator.Estimator(model_fn, config=tf1.estimator.RunConfig(
        model_dir=model_dir, save_checkpoints_steps=SAVE_STEPS))
    estimator.train(input_fn(), max_steps=MAX_STEPS)
    first = report(estimator.get_variable_value, model_dir)
    estimator.train(input_fn(epochs=3), steps=100)  # the input ends first: 24 steps
    out = {"first": first, "input_end": report(estimator.get_variable_value, model_dir),
           "tf_version": tf.__version__}
    print(json.dumps(out))


if __name__ == "__main__":
    assert sys.argv[1] == "oracle"
    main(sys.argv[2])
