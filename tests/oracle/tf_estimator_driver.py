"""Drives a real tf.estimator.Estimator (TF <= 2.15) with estimator_lite's executor.

Run by tests/parity/tf_estimator_compat_test.py with a Python that has tensorflow 2.15 and
tensorflow-estimator 2.15 installed. Prints one JSON line with what happened.
"""

import json
import os
import sys

import tensorflow as tf
from driver_tools import regression_input_fn as input_fn
from driver_tools import regression_serving_input_receiver_fn as serving_input_receiver_fn

import estimator_lite as el


def model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [4, 1], initializer=tf.compat.v1.zeros_initializer())
    predictions = tf.matmul(features["x"], w)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": predictions})
    loss = tf.reduce_mean(tf.square(predictions - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main(model_dir):
    estimator = tf.estimator.Estimator(model_fn, config=tf.estimator.RunConfig(
        model_dir=model_dir, save_checkpoints_steps=10))
    train_spec = el.TrainSpec(input_fn, max_steps=25)
    eval_spec = el.EvalSpec(lambda: input_fn(1), steps=None, throttle_secs=0,
                            exporters=[el.LatestExporter("latest",
                                                         serving_input_receiver_fn)])
    metrics, exports = el.train_and_evaluate(estimator, train_spec, eval_spec)
    again, _ = el.train_and_evaluate(estimator, train_spec, eval_spec)
    print(json.dumps({
        "tf_version": tf.__version__, "global_step": int(metrics["global_step"]),
        "loss": float(metrics["loss"]), "rerun_step": int(again["global_step"]),
        "evaluated_steps": sorted(el.read_eval_metrics(estimator.eval_dir())),
        "export_ok": os.path.exists(os.path.join(os.fsdecode(exports[0]),
                                                  "saved_model.pb"))}))


if __name__ == "__main__":
    main(sys.argv[1])
