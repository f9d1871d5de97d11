"""A TF 1.x linear regression: `tf.estimator.LinearRegressor` trained by a
`tf.train.FtrlOptimizer` instance with L1 regularization, in TF1 spelling
(`import tensorflow.compat.v1 as tf`).

Written for TF 1.x's `tf.estimator` (TF 2.x: `tf.compat.v1.estimator`), which takes
tf.compat.v1.train optimizer instances and sums the loss over the batch. Migrated
with one import: `import estimator_lite.compat.v1 as tf_estimator`. The weights
start at zero and the data (a noisy linear function of numeric, bucketized and
categorical features) is made here from a fixed seed, so both libraries train the
same model.

    python linear_regressor_ftrl_v1.py --model-dir /tmp/linear_ftrl_v1
"""

import argparse
import os

import numpy as np
import tensorflow.compat.v1 as tf
from migration_report import find_export_dir, print_result

import estimator_lite.compat.v1 as tf_estimator  # migration: import swap

ROOMS = ["1", "2", "3", "4+"]
BATCH_SIZE = 25


def make_data(num_rows, seed):
    """House prices (in 100k) from size, age and number of rooms, with noise."""
    rng = np.random.RandomState(seed)
    size = rng.uniform(0.5, 3.0, num_rows).astype(np.float32)
    age = rng.uniform(0.0, 50.0, num_rows).astype(np.float32)
    rooms = np.array(ROOMS)[rng.randint(0, len(ROOMS), num_rows)]
    price = (1.5 * size - 0.01 * age + 0.3 * (rooms == "4+") + 0.5
             + rng.normal(0.0, 0.05, num_rows)).astype(np.float32)
    return {"size": size, "age": age, "rooms": rooms}, price.reshape(-1, 1)


def input_fn(features, labels, epochs):
    def fn():
        return tf.data.Dataset.from_tensor_slices((features, labels)).repeat(
            epochs).batch(BATCH_SIZE)
    return fn


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-dir", required=True)
    args = parser.parse_args()
    tf.logging.set_verbosity(tf.logging.INFO)

    columns = [
        tf.feature_column.numeric_column("size"),
        tf.feature_column.bucketized_column(tf.feature_column.numeric_column("age"),
                                            [10.0, 20.0, 30.0, 40.0]),
        tf.feature_column.categorical_column_with_vocabulary_list("rooms", ROOMS)]
    estimator = tf_estimator.LinearRegressor(
        columns, model_dir=args.model_dir,
        optimizer=tf.train.FtrlOptimizer(learning_rate=0.1,
                                         l1_regularization_strength=0.001))
    train_x, train_y = make_data(1000, seed=0)
    test_x, test_y = make_data(200, seed=1)
    estimator.train(input_fn(train_x, train_y, None), steps=200)
    metrics = estimator.evaluate(input_fn(test_x, test_y, 1))
    spec = tf.feature_column.make_parse_example_spec(columns)
    export_dir = estimator.export_savedmodel(
        os.path.join(args.model_dir, "export"),
        tf_estimator.export.build_parsing_serving_input_receiver_fn(spec))
    print_result(metrics, export_dir=find_export_dir(os.fsdecode(export_dir)))


if __name__ == "__main__":
    main()
