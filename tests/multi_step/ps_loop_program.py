"""A ps + chief + worker (+ evaluator) job training in multi-step loops.

Every role runs this file with its own TF_CONFIG (tests/distribute/jobs.py starts
them); variables live on the ps, the chief and the worker both run loops of
--steps-per-loop steps, the evaluator evaluates the checkpoints. Each role prints
one `MIGRATION_RESULT {json}` line: the global step of the newest checkpoint.

    TF_CONFIG='{...}' python ps_loop_program.py --model-dir DIR [--strategy]
"""

import argparse

import numpy as np
import tensorflow as tf
from migration_report import print_result

import estimator_lite as tf_estimator  # migration: import swap


def input_fn():
    rng = np.random.RandomState(1)
    x = rng.randn(256, 4).astype(np.float32)
    y = x.sum(axis=1, keepdims=True)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(16)


def eval_input_fn():
    return input_fn().take(4)


def model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [4, 1], initializer=tf.compat.v1.zeros_initializer())
    predictions = tf.matmul(features["x"], w)
    loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
    if mode == tf_estimator.ModeKeys.EVAL:
        return tf_estimator.EstimatorSpec(mode, loss=loss)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.05).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tf_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--max-steps", type=int, default=60)
    parser.add_argument("--steps-per-loop", type=int, default=10)
    parser.add_argument("--strategy", action="store_true",
                        help="train under ParameterServerStrategy")
    args = parser.parse_args()
    strategy = (tf.compat.v1.distribute.experimental.ParameterServerStrategy()
                if args.strategy else None)
    config = tf_estimator.RunConfig(
        train_distribute=strategy, save_checkpoints_steps=20,
        experimental_steps_per_loop=args.steps_per_loop)
    estimator = tf_estimator.Estimator(model_fn, model_dir=args.model_dir, config=config)
    tf_estimator.train_and_evaluate(
        estimator, tf_estimator.TrainSpec(input_fn, max_steps=args.max_steps),
        tf_estimator.EvalSpec(eval_input_fn, steps=None, start_delay_secs=0,
                              throttle_secs=0))
    checkpoint = tf.train.latest_checkpoint(args.model_dir)
    step = (int(tf.compat.v1.train.load_variable(checkpoint, "global_step"))
            if checkpoint else None)
    print_result({}, global_step=step)


if __name__ == "__main__":
    main()
