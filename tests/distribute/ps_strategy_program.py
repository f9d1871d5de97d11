"""A TF1-era parameter-server job: a custom model_fn, `train_and_evaluate`, and
`tf.compat.v1.distribute.experimental.ParameterServerStrategy` as
`RunConfig(train_distribute=...)`.

Every role of the cluster (ps, chief, workers, an evaluator) runs this same file with
its own TF_CONFIG; tests/distribute/jobs.py starts them. The model is a linear
regressor from zeros on data made here from a fixed seed; the input_fn shards by
`input_context` when it gets one. The chief exports after training; every role
prints one `MIGRATION_RESULT {json}` line (global_step of the newest checkpoint,
the newest evaluation, the replica count, its task).

    TF_CONFIG='{...}' python ps_strategy_program.py --model-dir /tmp/ps_job
"""

import argparse
import json
import os

import numpy as np
import tensorflow as tf
from migration_report import print_result

import estimator_lite as tf_estimator  # migration: import swap

NUM_FEATURES = 4
TRUE_WEIGHTS = np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)


def make_data(num_rows, seed):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1.0, 1.0, (num_rows, NUM_FEATURES)).astype(np.float32)
    y = x @ TRUE_WEIGHTS + 0.5 + rng.normal(0.0, 0.05, (num_rows, 1)).astype(np.float32)
    return x, y


def input_fn(mode, input_context=None):
    x, y = make_data(512, seed=1) if mode == tf_estimator.ModeKeys.TRAIN \
        else make_data(128, seed=2)
    dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
    if input_context:
        dataset = dataset.shard(input_context.num_input_pipelines,
                                input_context.input_pipeline_id)
    if mode == tf_estimator.ModeKeys.TRAIN:
        return dataset.repeat().batch(32)
    return dataset.batch(32)


def model_fn(features, labels, mode):
    weights = tf.compat.v1.get_variable("weights", [NUM_FEATURES, 1],
                                        initializer=tf.compat.v1.zeros_initializer())
    bias = tf.compat.v1.get_variable("bias", [1],
                                     initializer=tf.compat.v1.zeros_initializer())
    predictions = tf.identity(tf.matmul(features["x"], weights) + bias, name="predictions")
    if mode == tf_estimator.ModeKeys.PREDICT:
        return tf_estimator.EstimatorSpec(mode, predictions={"y": predictions})
    loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
    if mode == tf_estimator.ModeKeys.EVAL:
        return tf_estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "mae": tf.compat.v1.metrics.mean_absolute_error(labels, predictions)})
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tf_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def serving_input_fn():
    x = tf.compat.v1.placeholder(tf.float32, [None, NUM_FEATURES], name="x")
    return tf_estimator.export.ServingInputReceiver({"x": x}, {"x": x})


def task():
    """(task type, index) from TF_CONFIG, or None when it is not set."""
    tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    if not tf_config.get("task"):
        return None
    return tf_config["task"]["type"], int(tf_config["task"].get("index", 0))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--max-steps", type=int, default=200)
    args = parser.parse_args()
    tf.compat.v1.disable_eager_execution()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)

    strategy = tf.compat.v1.distribute.experimental.ParameterServerStrategy()
    config = tf_estimator.RunConfig(train_distribute=strategy, save_checkpoints_steps=50)
    estimator = tf_estimator.Estimator(model_fn=model_fn, model_dir=args.model_dir,
                                       config=config)
    tf_estimator.train_and_evaluate(
        estimator,
        tf_estimator.TrainSpec(lambda input_context=None: input_fn(
            tf_estimator.ModeKeys.TRAIN, input_context), max_steps=args.max_steps),
        tf_estimator.EvalSpec(lambda: input_fn(tf_estimator.ModeKeys.EVAL), steps=None,
                              start_delay_secs=0, throttle_secs=0))
    report(estimator, strategy, args.model_dir)


def report(estimator, strategy, model_dir):
    """Prints the result line; the chief (or a local run) exports the model first."""
    role = task()
    export_dir = None
    if role in (None, ("chief", 0)):
        export_dir = os.fsdecode(estimator.export_saved_model(
            os.path.join(model_dir, "export"), serving_input_fn))
    metrics = {}
    checkpoint = tf.train.latest_checkpoint(model_dir)
    if checkpoint:
        reader = tf.compat.v1.train.NewCheckpointReader(checkpoint)
        metrics["global_step"] = int(reader.get_tensor("global_step"))
    metrics.update(last_eval_metrics(os.path.join(model_dir, "eval")))
    print_result(metrics, export_dir=export_dir,
                 num_replicas_in_sync=strategy.num_replicas_in_sync,
                 task=list(role) if role else None)


def last_eval_metrics(eval_dir):
    """The scalar summaries of the newest evaluation in `eval_dir` ({} if none)."""
    by_step = {}
    for path in sorted(tf.io.gfile.glob(os.path.join(eval_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    by_step.setdefault(event.step, {})[value.tag] = value.simple_value
    return {f"eval_{key}": value for key, value in by_step[max(by_step)].items()} \
        if by_step else {}


if __name__ == "__main__":
    main()
