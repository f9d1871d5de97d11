"""The distributed-training guide's Estimator example: a canned `LinearRegressor`
with `RunConfig(train_distribute=..., eval_distribute=...)` set to a
`MirroredStrategy`, `train(steps=10)` and `evaluate(steps=10)`.

The guide ran it on the GPUs of one machine; here the strategy mirrors the model
on two logical CPUs the program configures first, so it runs anywhere. Each step
feeds one batch of 10 to each replica. Besides the guide's calls, the program
splits `train(steps=10)` into 1 + 9 steps to report the weights after the first
(one step on both replicas' batches: 0.4 with their gradients averaged, as
tf.estimator does), exports the model (a tf.Example parsing serving input) and
reports the trained weights, the replica count and the signatures.

`session_config=ConfigProto(device_count={"CPU": 2})` is what tf.estimator 2.15
needs to see both logical CPUs (without it its first training step never
returns).

    python mirrored_linear_regressor.py --model-dir /tmp/mirrored_linear
"""

import argparse
import os

import tensorflow as tf
from migration_report import print_result

import estimator_lite as tf_estimator  # migration: import swap

NUM_CPUS = 2


def use_logical_cpus(count):
    """Splits the machine's CPU into `count` logical devices (before TF starts)."""
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration()] * count)
    return [f"/cpu:{index}" for index in range(count)]


def input_fn():
    dataset = tf.data.Dataset.from_tensors(({"feats": [1.]}, [1.]))
    return dataset.repeat(1000).batch(10)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-dir", required=True)
    args = parser.parse_args()
    devices = use_logical_cpus(NUM_CPUS)
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)

    mirrored_strategy = tf.distribute.MirroredStrategy(devices)
    config = tf_estimator.RunConfig(
        train_distribute=mirrored_strategy, eval_distribute=mirrored_strategy,
        session_config=tf.compat.v1.ConfigProto(device_count={"CPU": NUM_CPUS}),
        model_dir=args.model_dir)
    columns = [tf.feature_column.numeric_column("feats")]
    regressor = tf_estimator.LinearRegressor(
        feature_columns=columns, optimizer="SGD", config=config)
    # The guide's train(steps=10) in two calls: the weights after the first step
    # tell a mean of the replicas' gradients from a sum.
    regressor.train(input_fn=input_fn, steps=1)
    first_step_weights = weights(regressor)
    regressor.train(input_fn=input_fn, steps=9)
    metrics = regressor.evaluate(input_fn=input_fn, steps=10)

    serving_fn = tf_estimator.export.build_parsing_serving_input_receiver_fn(
        tf.feature_column.make_parse_example_spec(columns))
    export_dir = regressor.export_saved_model(os.path.join(args.model_dir, "export"),
                                              serving_fn)
    print_result(metrics, export_dir=os.fsdecode(export_dir),
                 num_replicas_in_sync=mirrored_strategy.num_replicas_in_sync,
                 first_step_weights=first_step_weights, weights=weights(regressor))


def weights(regressor):
    """The linear model's weight and bias, as lists."""
    return [regressor.get_variable_value(name).ravel().tolist()
            for name in ("linear/linear_model/feats/weights",
                         "linear/linear_model/bias_weights")]


if __name__ == "__main__":
    main()
