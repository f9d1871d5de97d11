"""Keras layers inside a model_fn: `tf.keras.layers.Dense` and `Dropout` as the
MNIST-style custom-estimator tutorials used them, with TF2 `tf.data` input.

On TF >= 2.16 `tf.keras` is Keras 3; the program is unchanged. The data (4 classes
of 2-D points in 16 noisy dimensions) is made here from a fixed seed. Keras draws
its own initial weights and dropout masks, so the two backends agree on the
metrics only within a tolerance (see tests/migration/runner.py).

    python keras_layers_model_fn.py --model-dir /tmp/keras_layers
"""

import argparse
import os

import numpy as np
import tensorflow as tf
from migration_report import find_export_dir, print_result

import estimator_lite as tf_estimator  # migration: import swap

NUM_CLASSES = 4
NUM_FEATURES = 16


def make_data(num_rows, seed):
    """Four well separated clusters; the rest of the dimensions are noise."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(NUM_CLASSES, size=num_rows)
    centers = np.array([[2.0, 2.0], [-2.0, 2.0], [-2.0, -2.0], [2.0, -2.0]])
    x = rng.normal(0.0, 1.0, (num_rows, NUM_FEATURES))
    x[:, :2] = centers[labels] + rng.normal(0.0, 0.5, (num_rows, 2))
    return x.astype(np.float32), labels.astype(np.int32)


def train_input_fn(x, y):
    dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
    return dataset.shuffle(512, seed=3).repeat().batch(32)


def eval_input_fn(x, y):
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(100)


def model_fn(features, labels, mode, params):
    training = mode == tf_estimator.ModeKeys.TRAIN
    net = features["x"]
    for units in params["hidden_units"]:
        net = tf.keras.layers.Dense(units, activation="relu")(net)
        net = tf.keras.layers.Dropout(params["dropout"])(net, training=training)
    logits = tf.keras.layers.Dense(NUM_CLASSES)(net)
    probabilities = tf.nn.softmax(logits, name="softmax_tensor")
    classes = tf.argmax(logits, axis=1, name="classes")
    if mode == tf_estimator.ModeKeys.PREDICT:
        predictions = {"classes": classes, "probabilities": probabilities}
        return tf_estimator.EstimatorSpec(mode, predictions=predictions, export_outputs={
            "serving_default": tf_estimator.export.PredictOutput(predictions)})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf_estimator.ModeKeys.EVAL:
        return tf_estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "accuracy": tf.compat.v1.metrics.accuracy(labels, classes)})
    optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate=params["learning_rate"])
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tf_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def serving_input_receiver_fn():
    x = tf.compat.v1.placeholder(tf.float32, [None, NUM_FEATURES], name="x")
    return tf_estimator.export.ServingInputReceiver({"x": x}, {"x": x})


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-dir", required=True)
    args = parser.parse_args()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)

    train_x, train_y = make_data(2000, seed=0)
    test_x, test_y = make_data(400, seed=1)
    estimator = tf_estimator.Estimator(
        model_fn, model_dir=args.model_dir,
        config=tf_estimator.RunConfig(tf_random_seed=42),
        params={"hidden_units": [32, 16], "dropout": 0.2, "learning_rate": 0.01})
    estimator.train(lambda: train_input_fn(train_x, train_y), steps=200)
    metrics = estimator.evaluate(lambda: eval_input_fn(test_x, test_y))
    predictions = list(estimator.predict(lambda: eval_input_fn(test_x[:5], test_y[:5])))
    export_dir = estimator.export_saved_model(os.path.join(args.model_dir, "export"),
                                              serving_input_receiver_fn)
    print_result(metrics, export_dir=find_export_dir(os.fsdecode(export_dir)),
                 predicted_classes=[int(p["classes"]) for p in predictions])


if __name__ == "__main__":
    main()
