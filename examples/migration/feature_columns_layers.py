"""Feature columns + a `tf.compat.v1.layers` custom model_fn, trained with
`train`/`evaluate`/`export_saved_model`: the "premade-style custom estimator" of the
tf.estimator tutorials (the iris and housing walkthroughs).

Runs on TF >= 2.16 only with Keras 2's layers: `pip install estimator_lite[legacy-keras]`
and `TF_USE_LEGACY_KERAS=1` set before TensorFlow is imported (tf.compat.v1.layers is
not part of Keras 3). The data, a 3-class problem over numeric, bucketized and
categorical features, is made here from a fixed seed.

    TF_USE_LEGACY_KERAS=1 python feature_columns_layers.py --model-dir /tmp/fc_layers
"""

import argparse
import os

import numpy as np
import tensorflow as tf
from migration_report import find_export_dir, print_result

import estimator_lite as tf_estimator  # migration: import swap

COLORS = ["red", "green", "blue", "yellow"]
NUM_CLASSES = 3


def make_data(num_rows, seed):
    """Features and labels: the class depends on every feature."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(NUM_CLASSES, size=num_rows)
    features = {
        "length": (labels * 1.5 + rng.normal(0.0, 0.6, num_rows)).astype(np.float32),
        "width": (rng.normal(0.0, 1.0, num_rows) - labels).astype(np.float32),
        "weight": (labels * 10.0 + rng.uniform(0.0, 12.0, num_rows)).astype(np.float32),
        "color": np.array([COLORS[(label + rng.randint(2)) % len(COLORS)]
                           for label in labels]),
    }
    return features, labels.astype(np.int64)


def feature_columns():
    fc = tf.compat.v1.feature_column
    color = fc.categorical_column_with_vocabulary_list("color", COLORS)
    return [
        fc.numeric_column("length"),
        fc.numeric_column("width"),
        fc.bucketized_column(fc.numeric_column("weight"), boundaries=[10.0, 20.0, 30.0]),
        fc.embedding_column(color, dimension=3, initializer=(
            tf.compat.v1.truncated_normal_initializer(stddev=0.3, seed=3))),
        fc.indicator_column(color),
    ]


def input_fn(features, labels, batch_size, repeat):
    dataset = tf.data.Dataset.from_tensor_slices((features, labels))
    if repeat:
        dataset = dataset.shuffle(256, seed=11).repeat()
    return dataset.batch(batch_size)


def model_fn(features, labels, mode, params):
    training = mode == tf_estimator.ModeKeys.TRAIN
    net = tf.compat.v1.feature_column.input_layer(features, params["feature_columns"])
    for index, units in enumerate(params["hidden_units"]):
        net = tf.compat.v1.layers.dense(
            net, units, activation=tf.nn.relu, name=f"hidden_{index}",
            kernel_initializer=tf.compat.v1.glorot_uniform_initializer(seed=index + 1))
        net = tf.compat.v1.layers.dropout(net, rate=0.1, seed=index + 5, training=training)
    logits = tf.compat.v1.layers.dense(
        net, NUM_CLASSES, name="logits",
        kernel_initializer=tf.compat.v1.glorot_uniform_initializer(seed=9))
    probabilities = tf.nn.softmax(logits, name="probabilities")
    class_ids = tf.argmax(logits, axis=1, name="class_ids")
    if mode == tf_estimator.ModeKeys.PREDICT:
        predictions = {"class_ids": class_ids, "probabilities": probabilities}
        return tf_estimator.EstimatorSpec(mode, predictions=predictions, export_outputs={
            "serving_default": tf_estimator.export.PredictOutput(predictions)})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == tf_estimator.ModeKeys.EVAL:
        return tf_estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "accuracy": tf.compat.v1.metrics.accuracy(labels, class_ids),
            "mean_per_class_accuracy": tf.compat.v1.metrics.mean_per_class_accuracy(
                labels, class_ids, NUM_CLASSES)})
    optimizer = tf.compat.v1.train.AdamOptimizer(params["learning_rate"])
    update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_op = optimizer.minimize(loss,
                                      global_step=tf.compat.v1.train.get_global_step())
    return tf_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def serving_input_receiver_fn():
    receivers = {
        "length": tf.compat.v1.placeholder(tf.float32, [None], name="length"),
        "width": tf.compat.v1.placeholder(tf.float32, [None], name="width"),
        "weight": tf.compat.v1.placeholder(tf.float32, [None], name="weight"),
        "color": tf.compat.v1.placeholder(tf.string, [None], name="color"),
    }
    return tf_estimator.export.ServingInputReceiver(receivers, receivers)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-dir", required=True)
    args = parser.parse_args()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)

    train_x, train_y = make_data(1200, seed=0)
    test_x, test_y = make_data(300, seed=1)
    estimator = tf_estimator.Estimator(
        model_fn, model_dir=args.model_dir,
        config=tf_estimator.RunConfig(tf_random_seed=42, save_checkpoints_steps=100),
        params={"feature_columns": feature_columns(), "hidden_units": [16, 8],
                "learning_rate": 0.02})
    estimator.train(lambda: input_fn(train_x, train_y, 32, repeat=True), max_steps=150)
    metrics = estimator.evaluate(lambda: input_fn(test_x, test_y, 100, repeat=False))
    export_dir = estimator.export_saved_model(os.path.join(args.model_dir, "export"),
                                              serving_input_receiver_fn)
    print_result(metrics, export_dir=find_export_dir(os.fsdecode(export_dir)))


if __name__ == "__main__":
    main()
