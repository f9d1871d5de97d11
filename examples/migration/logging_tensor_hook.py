"""`LoggingTensorHook` and `tf.compat.v1.logging`: the progress output of the
MNIST-era tutorials (`tensors_to_log = {"probabilities": "softmax_tensor"}`), here
on a logistic-regression model with named tensors.

Sets the `tensorflow` logger to INFO as those programs did; the training loop's
step/loss lines and the hooks' lines then appear on stderr. The data (a noisy
linearly separable 2-class problem) is made here from a fixed seed.

    python logging_tensor_hook.py --model-dir /tmp/logging_hook
"""

import argparse

import numpy as np
import tensorflow as tf
from migration_report import print_result

import estimator_lite as tf_estimator  # migration: import swap

NUM_FEATURES = 6


def make_data(num_rows, seed):
    rng = np.random.RandomState(seed)
    x = rng.normal(0.0, 1.0, (num_rows, NUM_FEATURES)).astype(np.float32)
    logits = x @ np.arange(1.0, NUM_FEATURES + 1.0) / 3.0
    y = (logits + rng.normal(0.0, 0.5, num_rows) > 0).astype(np.int64)
    return x, y


def input_fn(x, y, repeat):
    dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
    return dataset.repeat().batch(40) if repeat else dataset.batch(100)


def model_fn(features, labels, mode):
    weights = tf.compat.v1.get_variable("weights", [NUM_FEATURES, 2],
                                        initializer=tf.compat.v1.zeros_initializer())
    logits = tf.matmul(features["x"], weights, name="logits")
    probabilities = tf.nn.softmax(logits, name="softmax_tensor")
    classes = tf.argmax(logits, axis=1, name="classes")
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    tf.identity(loss, name="cross_entropy")
    if mode == tf_estimator.ModeKeys.EVAL:
        return tf_estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "accuracy": tf.compat.v1.metrics.accuracy(labels, classes)})
    batch_accuracy = tf.reduce_mean(tf.cast(tf.equal(classes, labels), tf.float32),
                                    name="batch_accuracy")
    # Hooks built inside the model_fn see its tensors directly.
    accuracy_hook = tf.compat.v1.train.LoggingTensorHook(
        {"batch_accuracy": batch_accuracy}, every_n_iter=50)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    del probabilities  # logged by name from main()
    return tf_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      training_hooks=[accuracy_hook])


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-dir", required=True)
    args = parser.parse_args()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)

    train_x, train_y = make_data(800, seed=0)
    test_x, test_y = make_data(200, seed=1)
    estimator = tf_estimator.Estimator(
        model_fn, model_dir=args.model_dir,
        config=tf_estimator.RunConfig(tf_random_seed=7, log_step_count_steps=50))
    tensors_to_log = {"cross_entropy": "cross_entropy", "first_probability":
                      "softmax_tensor"}
    logging_hook = tf_estimator.LoggingTensorHook(
        tensors=tensors_to_log, every_n_iter=50,
        formatter=lambda values: "hook: cross_entropy={:.4f} first_probabilities={}".format(
            values["cross_entropy"], np.round(values["first_probability"][0], 3)))
    estimator.train(lambda: input_fn(train_x, train_y, repeat=True), steps=200,
                    hooks=[logging_hook])
    metrics = estimator.evaluate(lambda: input_fn(test_x, test_y, repeat=False))
    tf.compat.v1.logging.info("migration: final accuracy %.4f", metrics["accuracy"])
    print_result(metrics)


if __name__ == "__main__":
    main()
