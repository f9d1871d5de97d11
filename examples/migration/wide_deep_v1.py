"""A TF 1.x wide & deep program: `tf.estimator.DNNLinearCombinedClassifier` over
bucketized, crossed, hashed and embedded columns, in TF1 spelling
(`import tensorflow.compat.v1 as tf`).

Written for TF 1.x's `tf.estimator` (TF 2.x: `tf.compat.v1.estimator`), whose canned
estimators sum the loss over the batch and train with tf.compat.v1.train optimizers
(Ftrl for the wide part, Adagrad for the deep part). Migrated with one import:
`import estimator_lite.compat.v1 as tf_estimator`, the v1 flavor, so the model
trains as it did (and a TF1-era model_dir keeps training). The data (a census-like
table) is made here from a fixed seed.

    python wide_deep_v1.py --model-dir /tmp/wide_deep_v1
"""

import argparse
import os

import numpy as np
import tensorflow.compat.v1 as tf
from migration_report import find_export_dir, print_result

import estimator_lite.compat.v1 as tf_estimator  # migration: import swap

EDUCATION = ["Bachelors", "HS-grad", "Masters", "Doctorate", "Some-college"]
OCCUPATION = ["Tech", "Sales", "Exec", "Craft", "Clerical", "Service"]
BATCH_SIZE = 32


def make_data(num_rows, seed):
    """A census-like table and its 0/1 label ("income > 50K")."""
    rng = np.random.RandomState(seed)
    age = rng.randint(18, 70, num_rows).astype(np.float32)
    hours = rng.randint(10, 70, num_rows).astype(np.float32)
    education = np.array(EDUCATION)[rng.randint(0, len(EDUCATION), num_rows)]
    occupation = np.array(OCCUPATION)[rng.randint(0, len(OCCUPATION), num_rows)]
    score = (0.04 * (age - 40) + 0.03 * (hours - 40)
             + np.isin(education, ["Masters", "Doctorate"]) * 1.2
             + np.isin(occupation, ["Exec", "Tech"]) * 0.8
             - 0.6 + rng.normal(0.0, 0.5, num_rows))
    features = {"age": age, "hours": hours, "education": education,
                "occupation": occupation}
    return features, (score > 0).astype(np.int64)


def input_fn(features, labels, epochs, shuffle):
    def fn():
        dataset = tf.data.Dataset.from_tensor_slices((features, labels))
        if shuffle:
            dataset = dataset.shuffle(1000, seed=1)
        return dataset.repeat(epochs).batch(BATCH_SIZE)
    return fn


def columns():
    """The wide columns and the deep columns."""
    age = tf.feature_column.numeric_column("age")
    hours = tf.feature_column.numeric_column("hours")
    age_buckets = tf.feature_column.bucketized_column(age, [25, 30, 35, 45, 55, 65])
    education = tf.feature_column.categorical_column_with_vocabulary_list(
        "education", EDUCATION)
    occupation = tf.feature_column.categorical_column_with_hash_bucket("occupation", 20)
    wide = [education, occupation, age_buckets,
            tf.feature_column.crossed_column([age_buckets, "education"], 50),
            tf.feature_column.crossed_column(["education", "occupation"], 40)]
    deep = [age, hours, tf.feature_column.embedding_column(education, 4),
            tf.feature_column.indicator_column(occupation)]
    return wide, deep


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-dir", required=True)
    args = parser.parse_args()
    tf.logging.set_verbosity(tf.logging.INFO)

    wide, deep = columns()
    estimator = tf_estimator.DNNLinearCombinedClassifier(
        model_dir=args.model_dir, linear_feature_columns=wide,
        dnn_feature_columns=deep, dnn_hidden_units=[8, 4],
        config=tf_estimator.RunConfig(tf_random_seed=1))
    train_x, train_y = make_data(2000, seed=0)
    test_x, test_y = make_data(500, seed=1)
    estimator.train(input_fn(train_x, train_y, None, True), steps=300)
    metrics = estimator.evaluate(input_fn(test_x, test_y, 1, False))
    spec = tf.feature_column.make_parse_example_spec(wide + deep)
    export_dir = estimator.export_savedmodel(
        os.path.join(args.model_dir, "export"),
        tf_estimator.export.build_parsing_serving_input_receiver_fn(spec))
    print_result(metrics, export_dir=find_export_dir(os.fsdecode(export_dir)))


if __name__ == "__main__":
    main()
