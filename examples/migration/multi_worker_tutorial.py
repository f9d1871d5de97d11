"""The TF docs tutorial "Multi-worker training with Estimator": its model_fn and
input_fn under `MultiWorkerMirroredStrategy`, driven by `train_and_evaluate`.

Run as it is, with no TF_CONFIG, the strategy is local (one worker, one replica
on CPU). Run with a TF_CONFIG (a worker-only cluster, or chief + worker with an
evaluator task), each process is one task of the cluster, as in the tutorial;
tests/distribute/ starts it that way. An evaluator task must find itself in
TF_CONFIG's cluster: the strategy, built here before anything else, reads
cluster["evaluator"] there (TensorFlow's KeyError otherwise).

Kept from the tutorial: `input_fn(mode, input_context=None)` shards the dataset by
`input_context`, scales, caches, shuffles and batches by 64 (no repeat: training
ends when the input does); the model_fn's Keras Sequential conv net, its summed
cross-entropy times 1/BATCH_SIZE, `tf.compat.v1.train.GradientDescentOptimizer`;
`RunConfig(train_distribute=strategy)`; `TrainSpec(input_fn)` and
`EvalSpec(input_fn)` with their defaults; `tf.compat.v1.disable_eager_execution()`
first (on tf.estimator an evaluator task fails without it: "MultiWorkerMirroredStrategy
cannot be deep copied in eager mode"). Changed, so that it runs on both
TensorFlow 2.15 (Keras 2) and TF >= 2.16 (Keras 3) without a download:
- the data: 10 digit-like 28x28 classes made here from fixed seeds instead of
  `tfds.load("mnist")`;
- `reduction=tf.keras.losses.Reduction.NONE` is spelled `reduction="none"` (Keras 3
  has no `Reduction` enum; both accept the string);
- the layers' initial weights are constants drawn here (Keras 2 and 3 draw
  different random weights from the same seed), so both backends train the same
  network;
- LEARNING_RATE is 0.2 instead of 1e-4, so that 16 steps show learning;
- the tutorial's PREDICT branch builds `EstimatorSpec(labels=..., predictions=...)`
  without a mode (a TypeError once anything predicts); it passes `mode` here and
  names the logits tensor (Keras 2 and 3 name it differently), and the chief
  exports the model after training to report its signatures;
- `--max-steps`, `--start-delay-secs` and `--throttle-secs` (the tutorial's
  defaults: None, 120, 600) let a job with an evaluator task end: an evaluator
  stops only after evaluating a checkpoint at max_steps.

    python multi_worker_tutorial.py --model-dir /tmp/multiworker
"""

import argparse
import json
import os

import numpy as np
import tensorflow as tf
from migration_report import print_result

import estimator_lite as tf_estimator  # migration: import swap

BUFFER_SIZE = 10000
BATCH_SIZE = 64
LEARNING_RATE = 0.2
NUM_TRAIN = 1024
NUM_TEST = 256


def make_digits(num_rows, seed):
    """Digit-like images: one fixed 28x28 pattern per class plus noise, as uint8."""
    patterns = np.random.RandomState(0).uniform(0.0, 1.0, (10, 28, 28, 1))
    rng = np.random.RandomState(seed)
    labels = rng.randint(10, size=num_rows)
    images = patterns[labels] * 160.0 + rng.uniform(0.0, 95.0, (num_rows, 28, 28, 1))
    return images.astype(np.uint8), labels.astype(np.int64)


def input_fn(mode, input_context=None):
    images, labels = make_digits(NUM_TRAIN, seed=1) if mode == tf_estimator.ModeKeys.TRAIN \
        else make_digits(NUM_TEST, seed=2)
    mnist_dataset = tf.data.Dataset.from_tensor_slices((images, labels))

    def scale(image, label):
        image = tf.cast(image, tf.float32)
        image /= 255
        return image, label

    if input_context:
        mnist_dataset = mnist_dataset.shard(input_context.num_input_pipelines,
                                            input_context.input_pipeline_id)
    return (mnist_dataset.map(scale).cache().shuffle(BUFFER_SIZE, seed=3)
            .batch(BATCH_SIZE))


def _constant(shape, seed, scale):
    values = np.random.RandomState(seed).uniform(-scale, scale, shape).astype(np.float32)
    return tf.keras.initializers.Constant(values)


def model_fn(features, labels, mode):
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(32, 3, activation="relu", input_shape=(28, 28, 1),
                               kernel_initializer=_constant((3, 3, 1, 32), 10, 0.3)),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(64, activation="relu",
                              kernel_initializer=_constant((5408, 64), 11, 0.03)),
        tf.keras.layers.Dense(10, kernel_initializer=_constant((64, 10), 12, 0.3)),
    ])
    logits = model(features, training=False)

    if mode == tf_estimator.ModeKeys.PREDICT:
        # Named, so that the export signature reads the same under Keras 2 and 3
        # (their Dense layers name the BiasAdd op differently).
        predictions = {"logits": tf.identity(logits, name="logits")}
        return tf_estimator.EstimatorSpec(mode, predictions=predictions)

    optimizer = tf.compat.v1.train.GradientDescentOptimizer(learning_rate=LEARNING_RATE)
    loss = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction="none")(labels, logits)
    loss = tf.reduce_sum(loss) * (1. / BATCH_SIZE)
    if mode == tf_estimator.ModeKeys.EVAL:
        return tf_estimator.EstimatorSpec(mode, loss=loss)

    return tf_estimator.EstimatorSpec(
        mode=mode,
        loss=loss,
        train_op=optimizer.minimize(
            loss, tf.compat.v1.train.get_or_create_global_step()))


def serving_input_fn():
    image = tf.compat.v1.placeholder(tf.float32, [None, 28, 28, 1], name="image")
    return tf_estimator.export.TensorServingInputReceiver(image, {"image": image})


def task():
    """(task type, index) from TF_CONFIG, or None when it is not set."""
    tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    if not tf_config.get("task"):
        return None
    return tf_config["task"]["type"], int(tf_config["task"].get("index", 0))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-dir", required=True)
    # The tutorial's TrainSpec/EvalSpec defaults. An evaluator task stops only once
    # it has evaluated a checkpoint at max_steps: give one to run with an evaluator.
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--start-delay-secs", type=int, default=120)
    parser.add_argument("--throttle-secs", type=int, default=600)
    args = parser.parse_args()
    tf.compat.v1.disable_eager_execution()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)

    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
    config = tf_estimator.RunConfig(train_distribute=strategy)
    classifier = tf_estimator.Estimator(model_fn=model_fn, model_dir=args.model_dir,
                                        config=config)
    tf_estimator.train_and_evaluate(
        classifier,
        train_spec=tf_estimator.TrainSpec(input_fn=input_fn, max_steps=args.max_steps),
        eval_spec=tf_estimator.EvalSpec(input_fn=input_fn,
                                        start_delay_secs=args.start_delay_secs,
                                        throttle_secs=args.throttle_secs))
    report(classifier, strategy, args.model_dir)


def report(classifier, strategy, model_dir):
    """Prints the result line; the chief (or the local run) exports the model first.

    Every task reports the newest checkpoint's global_step, the newest evaluation
    (if any) and the replica count; only the exporting task reads the signatures
    (the others could see the export half written).
    """
    role = task()
    export_dir = None
    if role in (None, ("chief", 0)) or role == ("worker", 0) and not has_chief():
        export_dir = os.fsdecode(classifier.export_saved_model(
            os.path.join(model_dir, "export"), serving_input_fn))
    reader = tf.compat.v1.train.NewCheckpointReader(tf.train.latest_checkpoint(model_dir))
    metrics = last_eval_metrics(os.path.join(model_dir, "eval"))
    metrics["global_step"] = int(reader.get_tensor("global_step"))
    print_result(metrics, export_dir=export_dir,
                 num_replicas_in_sync=strategy.num_replicas_in_sync,
                 task=list(role) if role else None)


def has_chief():
    """Whether TF_CONFIG's cluster has a chief task."""
    tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    return bool(tf_config.get("cluster", {}).get("chief"))


def last_eval_metrics(eval_dir):
    """The scalar summaries of the newest evaluation in `eval_dir` ({} if none)."""
    by_step = {}
    for path in sorted(tf.io.gfile.glob(os.path.join(eval_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    by_step.setdefault(event.step, {})[value.tag] = value.simple_value
    return dict(by_step[max(by_step)]) if by_step else {}


if __name__ == "__main__":
    main()
