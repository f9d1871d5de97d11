"""The program every task of a MultiWorkerMirroredStrategy fault job runs.

Written the way a user writes a multi-worker estimator job: a worker-only
TF_CONFIG (worker 0 is the chief), the strategy built first, then
`RunConfig(train_distribute=strategy)` and one `train_and_evaluate` call. An
evaluator task is listed in the cluster, as in TF's multi-worker Estimator
tutorial.

The same file runs on estimator_lite and, with ``FAULTS_ESTIMATOR=tf_estimator``
(on TF 2.15's interpreter), on tf.estimator, so a test can record what
tf.estimator does under the same fault.

Flags: ``--max-steps``, ``--save-steps`` (100 by default), ``--step-sleep-ms``
(paces the steps so a fault lands mid-training), ``--status-dir`` (each trainer
writes the global step it last saw to ``<task>-<index>.step``), ``--strategy``
(which spelling of the strategy), ``--collective-timeout-secs`` (estimator_lite's
``RunConfig(experimental_collective_timeout_secs=...)``; unset: the default),
``--session-timeout-secs`` (``RunConfig(session_creation_timeout_secs=...)``).

Prints ``FAULTS_JOB_DONE <json>`` on success and exits 0.
"""

import argparse
import json
import os
import sys

import tensorflow as tf

from tests.faults import job_parts
from tests.faults.job_parts import BATCH_SIZE, NUM_EXAMPLES, NUM_FEATURES

if os.environ.get("FAULTS_ESTIMATOR") == "tf_estimator":
    import tensorflow_estimator as _tfe
    el = _tfe.estimator
else:
    import estimator_lite as el

_STRATEGIES = {
    "v2": tf.distribute.MultiWorkerMirroredStrategy,
    "v1": tf.compat.v1.distribute.experimental.MultiWorkerMirroredStrategy,
}


def train_input_fn():
    x, y = job_parts.data()
    dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
    return dataset.shuffle(NUM_EXAMPLES, seed=1).repeat().batch(BATCH_SIZE)


def eval_input_fn():
    x, y = job_parts.data()
    return tf.data.Dataset.from_tensor_slices(({"x": x[:64]}, y[:64])).batch(BATCH_SIZE)


def model_fn(features, labels, mode):
    """A linear regressor built from tf.compat.v1 variables."""
    w = tf.compat.v1.get_variable("w", [NUM_FEATURES, 1])
    b = tf.compat.v1.get_variable("b", [1], initializer=tf.compat.v1.zeros_initializer())
    predictions = tf.matmul(features["x"], w) + b
    loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
    if mode == el.ModeKeys.EVAL:
        return el.EstimatorSpec(mode, loss=loss)
    return el.EstimatorSpec(mode, loss=loss, train_op=job_parts.minimize(loss))


def _parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--status-dir", default=None)
    parser.add_argument("--max-steps", type=int, default=600)
    parser.add_argument("--save-steps", type=int, default=100)
    parser.add_argument("--step-sleep-ms", type=float, default=0)
    parser.add_argument("--strategy", choices=sorted(_STRATEGIES), default="v2")
    parser.add_argument("--collective-timeout-secs", type=float, default=None)
    parser.add_argument("--session-timeout-secs", type=float, default=None)
    return parser.parse_args(argv)


def main(argv=None):
    """Runs this process's task of the job; returns the exit code."""
    args = _parse(argv)
    job_parts.configure_logging()
    # As TF's multi-worker Estimator tutorial: graph mode first (tf.estimator's
    # evaluator cannot copy the strategy in eager mode), then the strategy, in
    # every task; an evaluator task is listed in the cluster (the strategy reads
    # cluster["evaluator"] there) and evaluates on its own.
    tf.compat.v1.disable_eager_execution()
    task = json.loads(os.environ["TF_CONFIG"])["task"]
    trains = task["type"] in ("chief", "worker")
    strategy = _STRATEGIES[args.strategy]()
    extra = {}
    if args.collective_timeout_secs is not None:
        extra["experimental_collective_timeout_secs"] = args.collective_timeout_secs
    if args.session_timeout_secs is not None:
        extra["session_creation_timeout_secs"] = args.session_timeout_secs
    config = el.RunConfig(model_dir=args.model_dir, tf_random_seed=7,
                          save_checkpoints_steps=args.save_steps, log_step_count_steps=50,
                          save_summary_steps=50, train_distribute=strategy, **extra)
    tf.compat.v1.logging.info("faults job: %s %s starts", task["type"], task["index"])
    estimator = el.Estimator(model_fn, config=config)
    status = (os.path.join(args.status_dir, f"{task['type']}-{task['index']}.step")
              if args.status_dir and trains else None)
    hooks = [job_parts.StepFileHook(status), job_parts.SleepHook(args.step_sleep_ms / 1000)]
    el.train_and_evaluate(
        estimator, el.TrainSpec(train_input_fn, max_steps=args.max_steps, hooks=hooks),
        el.EvalSpec(eval_input_fn, steps=None, start_delay_secs=0, throttle_secs=0))
    print("FAULTS_JOB_DONE " + json.dumps(
        {"task_type": task["type"], "task_id": task["index"],
         "latest_checkpoint": estimator.latest_checkpoint()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
