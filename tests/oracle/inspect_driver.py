"""Writes a model_dir with the real tf.estimator 2.15 for tests/inspect_test.py.

Run with a Python that has tensorflow 2.15 and tensorflow-estimator 2.15 (the
oracle); estimator_lite is not imported. Trains a linear model to step 30 with
`tf.estimator.train_and_evaluate` (checkpoints every 10 steps, a named evaluation,
a LatestExporter and a BestExporter), then prints one JSON line: the TF version,
the evaluated steps and the export dirs.
"""

import json
import sys

import tensorflow as tf
from driver_tools import regression_input_fn as input_fn
from driver_tools import regression_serving_input_receiver_fn as serving_input_receiver_fn

MAX_STEPS = 30


def model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [4, 1], initializer=tf.compat.v1.zeros_initializer())
    predictions = tf.matmul(features["x"], w)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": predictions},
                                          export_outputs={"y": tf.estimator.export
                                                          .RegressionOutput(predictions)})
    loss = tf.reduce_mean(tf.square(predictions - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    metrics = {"mae": tf.compat.v1.metrics.mean_absolute_error(labels, predictions)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      eval_metric_ops=metrics)


def main(model_dir):
    estimator = tf.estimator.Estimator(model_fn, config=tf.estimator.RunConfig(
        model_dir=model_dir, save_checkpoints_steps=10))
    train_spec = tf.estimator.TrainSpec(input_fn, max_steps=MAX_STEPS)
    eval_spec = tf.estimator.EvalSpec(
        lambda: input_fn(1), steps=None, name="holdout", throttle_secs=0,
        exporters=[tf.estimator.LatestExporter("latest", serving_input_receiver_fn),
                   tf.estimator.BestExporter("best", serving_input_receiver_fn)])
    _, exports = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    exports = [e.decode() if isinstance(e, bytes) else e for e in exports]
    print(json.dumps({"tf_version": tf.__version__, "exports": exports}))


if __name__ == "__main__":
    main(sys.argv[1])
