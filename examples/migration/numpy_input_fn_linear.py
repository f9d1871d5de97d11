"""`numpy_input_fn` feeding a linear model: the getting-started pattern of TF 1.x
(in-memory numpy arrays, `shuffle=True` to train, `shuffle=False` to evaluate and
predict), exported with the TF1 spelling `export_savedmodel`.

tf.estimator keeps numpy_input_fn at `tf.compat.v1.estimator.inputs`, so the program
was written against that namespace (`tf_estimator = tf.compat.v1.estimator`);
estimator_lite has it at `estimator_lite.inputs`. The data (a noisy linear function
of 8 features) is made here from a fixed seed.

    python numpy_input_fn_linear.py --model-dir /tmp/numpy_linear
"""

import argparse
import os

import numpy as np
import tensorflow as tf
from migration_report import find_export_dir, print_result

import estimator_lite as tf_estimator  # migration: import swap

NUM_FEATURES = 8
TRUE_WEIGHTS = np.linspace(-2.0, 2.0, NUM_FEATURES).astype(np.float32)


def make_data(num_rows, seed):
    rng = np.random.RandomState(seed)
    x = rng.normal(0.0, 1.0, (num_rows, NUM_FEATURES)).astype(np.float32)
    y = (x @ TRUE_WEIGHTS + 0.5 + rng.normal(0.0, 0.1, num_rows)).astype(np.float32)
    return x, y.reshape(-1, 1)


def model_fn(features, labels, mode):
    weights = tf.compat.v1.get_variable("weights", [NUM_FEATURES, 1],
                                        initializer=tf.compat.v1.zeros_initializer())
    bias = tf.compat.v1.get_variable("bias", [1],
                                     initializer=tf.compat.v1.zeros_initializer())
    predictions = tf.add(tf.matmul(features["x"], weights), bias, name="predictions")
    if mode == tf_estimator.ModeKeys.PREDICT:
        return tf_estimator.EstimatorSpec(
            mode, predictions={"y": predictions},
            export_outputs={"serving_default": tf_estimator.export.PredictOutput(
                {"y": predictions})})
    loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
    if mode == tf_estimator.ModeKeys.EVAL:
        return tf_estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "rmse": tf.compat.v1.metrics.root_mean_squared_error(labels, predictions),
            "mae": tf.compat.v1.metrics.mean_absolute_error(labels, predictions)})
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tf_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def serving_input_receiver_fn():
    x = tf.compat.v1.placeholder(tf.float32, [None, NUM_FEATURES], name="x")
    return tf_estimator.export.ServingInputReceiver({"x": x}, x)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-dir", required=True)
    args = parser.parse_args()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)

    train_x, train_y = make_data(1000, seed=0)
    test_x, test_y = make_data(200, seed=1)
    estimator = tf_estimator.Estimator(model_fn, model_dir=args.model_dir,
                                       config=tf_estimator.RunConfig(tf_random_seed=1))
    estimator.train(tf_estimator.inputs.numpy_input_fn(
        {"x": train_x}, train_y, batch_size=100, num_epochs=None, shuffle=True),
        steps=300)
    metrics = estimator.evaluate(tf_estimator.inputs.numpy_input_fn(
        {"x": test_x}, test_y, batch_size=64, num_epochs=1, shuffle=False))
    predictions = estimator.predict(tf_estimator.inputs.numpy_input_fn(
        {"x": test_x[:4]}, batch_size=3, num_epochs=1, shuffle=False))
    predicted = [round(float(p["y"][0]), 2) for p in predictions]
    export_dir = estimator.export_savedmodel(os.path.join(args.model_dir, "export"),
                                             serving_input_receiver_fn)
    print_result(metrics, export_dir=find_export_dir(os.fsdecode(export_dir)),
                 predicted=predicted, expected=[round(float(v), 2) for v in test_y[:4, 0]])


if __name__ == "__main__":
    main()
