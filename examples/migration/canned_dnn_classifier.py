"""A canned `DNNClassifier` over feature columns, the premade-estimator tutorial
(iris) shape: `train`, `evaluate`, `predict` and an export with a tf.Example
parsing serving input.

The data (3 classes over four numeric measurements) is made here from a fixed
seed. The canned estimator draws its own initial weights, so the two backends
agree on the metrics only within a tolerance (see tests/migration/runner.py).

    python canned_dnn_classifier.py --model-dir /tmp/canned_dnn
"""

import argparse
import os

import numpy as np
import tensorflow as tf
from migration_report import find_export_dir, print_result

import estimator_lite as tf_estimator  # migration: import swap

FEATURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
CENTERS = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.6, 2.0]])


def make_data(num_rows, seed):
    rng = np.random.RandomState(seed)
    labels = rng.randint(3, size=num_rows)
    values = CENTERS[labels] + rng.normal(0.0, 0.25, (num_rows, 4))
    return ({name: values[:, i].astype(np.float32) for i, name in enumerate(FEATURES)},
            labels.astype(np.int64))


def train_input_fn(features, labels, batch_size=32):
    dataset = tf.data.Dataset.from_tensor_slices((features, labels))
    return dataset.shuffle(1000, seed=5).repeat().batch(batch_size)


def eval_input_fn(features, labels=None, batch_size=50):
    inputs = features if labels is None else (features, labels)
    return tf.data.Dataset.from_tensor_slices(inputs).batch(batch_size)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-dir", required=True)
    args = parser.parse_args()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)

    train_x, train_y = make_data(600, seed=0)
    test_x, test_y = make_data(150, seed=1)
    means, stds = CENTERS.mean(axis=0), CENTERS.std(axis=0) + 0.25
    columns = [tf.feature_column.numeric_column(
        name, normalizer_fn=lambda x, m=means[i], s=stds[i]: (x - m) / s)
        for i, name in enumerate(FEATURES)]
    classifier = tf_estimator.DNNClassifier(
        hidden_units=[16, 8], feature_columns=columns, n_classes=3, optimizer="Adagrad",
        model_dir=args.model_dir, config=tf_estimator.RunConfig(tf_random_seed=42))
    classifier.train(lambda: train_input_fn(train_x, train_y), steps=1000)
    metrics = classifier.evaluate(lambda: eval_input_fn(test_x, test_y))
    predictions = classifier.predict(lambda: eval_input_fn(
        {name: values[:6] for name, values in test_x.items()}))
    serving_fn = tf_estimator.export.build_parsing_serving_input_receiver_fn(
        tf.feature_column.make_parse_example_spec(columns))
    export_dir = classifier.export_saved_model(os.path.join(args.model_dir, "export"),
                                               serving_fn)
    print_result(metrics, export_dir=find_export_dir(os.fsdecode(export_dir)),
                 predicted_classes=[int(p["class_ids"][0]) for p in predictions],
                 labels=test_y[:6].tolist())


if __name__ == "__main__":
    main()
