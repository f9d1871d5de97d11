"""Prediction input that has no labels: input_fns returning `(features, None)`, as
batch-scoring jobs wrote them to reuse one parsing function for training and
serving, plus the plain features-only dataset.

Trains a small regressor on `tf.data` input, evaluates it, then predicts three
ways: a dataset of `(features, None)`, a `(features, None)` tuple of tensors, and a
dataset of features alone, with `predict_keys` and `yield_single_examples=False`.
The data (a smooth function of two features) is made here from a fixed seed.

    python predict_features_only.py --model-dir /tmp/predict_features
"""

import argparse

import numpy as np
import tensorflow as tf
from migration_report import print_result

import estimator_lite as tf_estimator  # migration: import swap


def make_data(num_rows, seed):
    rng = np.random.RandomState(seed)
    features = {"a": rng.uniform(-1.0, 1.0, num_rows).astype(np.float32),
                "b": rng.uniform(-1.0, 1.0, num_rows).astype(np.float32)}
    target = 2.0 * features["a"] - features["b"] + 0.5 * features["a"] * features["b"]
    return features, target.astype(np.float32)


def parse(features, labels=None):
    """One parsing function for every mode: labels may be absent."""
    dense = tf.stack([features["a"], features["b"], features["a"] * features["b"]],
                     axis=1)
    return {"dense": dense}, labels


def model_fn(features, labels, mode):
    weights = tf.compat.v1.get_variable("weights", [3, 1],
                                        initializer=tf.compat.v1.zeros_initializer())
    bias = tf.compat.v1.get_variable("bias", [1],
                                     initializer=tf.compat.v1.zeros_initializer())
    output = tf.squeeze(tf.matmul(features["dense"], weights) + bias, axis=1)
    if mode == tf_estimator.ModeKeys.PREDICT:
        return tf_estimator.EstimatorSpec(mode, predictions={
            "value": output, "is_positive": tf.greater(output, 0.0)})
    loss = tf.compat.v1.losses.mean_squared_error(labels, output)
    if mode == tf_estimator.ModeKeys.EVAL:
        return tf_estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "mae": tf.compat.v1.metrics.mean_absolute_error(labels, output)})
    train_op = tf.compat.v1.train.AdamOptimizer(0.05).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tf_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-dir", required=True)
    args = parser.parse_args()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)

    train_features, train_target = make_data(1000, seed=0)
    test_features, test_target = make_data(8, seed=1)
    estimator = tf_estimator.Estimator(model_fn, model_dir=args.model_dir)

    def train_input_fn():
        dataset = tf.data.Dataset.from_tensor_slices((train_features, train_target))
        return dataset.repeat().batch(50).map(parse)

    def eval_input_fn():
        dataset = tf.data.Dataset.from_tensor_slices((test_features, test_target))
        return dataset.batch(4).map(parse)

    def dataset_with_none_labels():
        dataset = tf.data.Dataset.from_tensor_slices(test_features).batch(3)
        return dataset.map(lambda features: parse(features, None))

    def tensors_with_none_labels():
        dataset = tf.data.Dataset.from_tensor_slices(test_features).batch(8)
        features = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
        return parse(features)

    def features_only():
        dataset = tf.data.Dataset.from_tensor_slices(test_features).batch(5)
        return dataset.map(lambda features: parse(features)[0])

    estimator.train(train_input_fn, max_steps=250)
    metrics = estimator.evaluate(eval_input_fn)
    from_dataset = [float(p["value"]) for p in estimator.predict(dataset_with_none_labels)]
    from_tensors = [float(p["value"]) for p in estimator.predict(tensors_with_none_labels,
                                                        predict_keys="value")]
    batches = list(estimator.predict(features_only, yield_single_examples=False))
    print_result(
        metrics,
        predictions=[round(v, 2) for v in from_dataset],
        same_from_tensors=bool(np.allclose(from_dataset, from_tensors)),
        batch_sizes=[len(batch["value"]) for batch in batches],
        targets=[round(float(v), 2) for v in test_target])


if __name__ == "__main__":
    main()
