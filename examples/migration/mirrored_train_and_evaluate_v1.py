"""The "migrate single-worker multiple-GPU training" guide's TF1 program: a custom
model_fn with a `tf.compat.v1` optimizer, `tf.compat.v1.estimator.RunConfig(
train_distribute=strategy, eval_distribute=strategy)` with a `MirroredStrategy`,
and `train_and_evaluate`.

The guide ran it on the GPUs of one machine; here the strategy mirrors the model
on two logical CPUs the program configures first. Kept from the guide: its data
(three training examples, batch 1, no repeat), its loss
(`tf.compat.v1.losses.mean_squared_error`), `AdagradOptimizer(0.05)`, TrainSpec and
EvalSpec with their defaults. Changed:
- `tf.compat.v1.layers.Dense(1)` (absent under Keras 3) is written with
  `tf.compat.v1.get_variable`, starting from zeros so both backends train the same
  numbers;
- a fourth evaluation example: the guide's three make a last step that only one of
  two replicas gets a batch for, where tf.estimator's metrics race (the lone
  replica's batch is counted in some runs and not in others);
- a PREDICT branch and an export, to report the signatures.
Training ends when the input does: the first step gives each replica one example;
the second has a batch for one replica only, so (as in tf.estimator) it does not
run, and training stops at global_step 1.

`session_config=ConfigProto(device_count={"CPU": 2})` is what tf.estimator 2.15
needs to see both logical CPUs (without it its first training step never
returns).

    python mirrored_train_and_evaluate_v1.py --model-dir /tmp/mirrored_tae
"""

import argparse
import os

import tensorflow as tf
from migration_report import print_result

import estimator_lite.compat.v1 as tf_estimator  # migration: import swap

tf1 = tf.compat.v1
NUM_CPUS = 2

features = [[1., 1.5], [2., 2.5], [3., 3.5]]
labels = [[0.3], [0.5], [0.7]]
eval_features = [[4., 4.5], [5., 5.5], [6., 6.5], [7., 7.5]]
eval_labels = [[0.8], [0.9], [1.], [1.1]]


def use_logical_cpus(count):
    """Splits the machine's CPU into `count` logical devices (before TF starts)."""
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration()] * count)
    return [f"/cpu:{index}" for index in range(count)]


def _input_fn():
    return tf1.data.Dataset.from_tensor_slices((features, labels)).batch(1)


def _eval_input_fn():
    return tf1.data.Dataset.from_tensor_slices(
        (eval_features, eval_labels)).batch(1)


def _dense(inputs, units):
    """What `tf1.layers.Dense(units)(inputs)` computes, from zeros."""
    with tf1.variable_scope("dense"):
        kernel = tf1.get_variable("kernel", [inputs.shape[-1], units],
                                  initializer=tf1.zeros_initializer())
        bias = tf1.get_variable("bias", [units], initializer=tf1.zeros_initializer())
    return tf.matmul(inputs, kernel) + bias


def _model_fn(features, labels, mode):
    logits = _dense(features, 1)
    if mode == tf_estimator.ModeKeys.PREDICT:
        return tf_estimator.EstimatorSpec(
            mode, predictions={"logits": tf.identity(logits, name="logits")})
    loss = tf1.losses.mean_squared_error(labels=labels, predictions=logits)
    optimizer = tf1.train.AdagradOptimizer(0.05)
    train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
    return tf_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _serving_input_fn():
    inputs = tf1.placeholder(tf.float32, [None, 2], name="features")
    return tf_estimator.export.TensorServingInputReceiver(inputs, {"features": inputs})


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-dir", required=True)
    args = parser.parse_args()
    devices = use_logical_cpus(NUM_CPUS)
    tf1.logging.set_verbosity(tf1.logging.INFO)

    strategy = tf1.distribute.MirroredStrategy(devices)
    config = tf_estimator.RunConfig(
        train_distribute=strategy, eval_distribute=strategy,
        session_config=tf1.ConfigProto(device_count={"CPU": NUM_CPUS}))
    estimator = tf_estimator.Estimator(model_fn=_model_fn, model_dir=args.model_dir,
                                       config=config)

    train_spec = tf_estimator.TrainSpec(input_fn=_input_fn)
    eval_spec = tf_estimator.EvalSpec(input_fn=_eval_input_fn)
    metrics, _ = tf_estimator.train_and_evaluate(estimator, train_spec, eval_spec)

    export_dir = estimator.export_saved_model(os.path.join(args.model_dir, "export"),
                                              _serving_input_fn)
    print_result(metrics, export_dir=os.fsdecode(export_dir),
                 num_replicas_in_sync=strategy.num_replicas_in_sync,
                 weights=[estimator.get_variable_value(name).ravel().tolist()
                          for name in ("dense/kernel", "dense/bias")])


if __name__ == "__main__":
    main()
