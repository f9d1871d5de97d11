"""The training program every role of a fault-injection cluster runs.

Written the way a user writes an estimator job: `import tensorflow as tf`,
`tf.data.Dataset` input_fns, `tf.compat.v1` ops in the model_fn, and one
`el.train_and_evaluate` call whose role comes from TF_CONFIG. The flags only set
the pace and the pressure a scenario needs:

- ``--step-sleep-ms``: every training step sleeps this long after it ran, so a
  test can SIGKILL mid-training deterministically by polling for a checkpoint
  step (steps stay fast, training takes a controllable number of seconds).
- ``--status-dir``: each trainer writes the global step it last saw to
  ``<status-dir>/<task>-<index>.step`` after every step (what a SIGTERM test
  compares the newest checkpoint with), and logs ``ROLLBACK_TAG`` when the
  global step went back (steps lost to a restore).
- ``--ballast-mb``: an untrained variable of that size, so checkpoint saves take
  long enough to be hit by a SIGKILL of the ps (train graph only: evaluation and
  export never read it).
- ``--eval-build-sleep-ms``: the eval input_fn sleeps while the graph is built, a
  wide window between the evaluator choosing a checkpoint and restoring it.
- ``--eval-step-sleep-ms``: every evaluation batch sleeps this long.
- ``--operation-timeout-ms``: a ``session_config`` whose
  ``operation_timeout_in_ms`` bounds every session call (a partitioned peer
  ends a blocked step with DeadlineExceededError instead of a hang); it keeps
  the device filters a ps-style task needs (each trainer sees only the ps and
  itself), as a user who sets a session_config must.
- ``--strategy ps``: opt-in; the job runs under
  ``tf.compat.v1.distribute.experimental.ParameterServerStrategy()`` given as
  ``RunConfig(train_distribute=...)``, as tf.estimator 2.15 ran it (the
  strategy reads the cluster from TF_CONFIG). Default ``none``: no strategy.
  The task then comes from TF_CONFIG: tf.estimator's RunConfig says
  ``worker 0`` on every role when a strategy runs the cluster.

Prints ``FAULTS_JOB_DONE <json>`` on success and exits 0.
"""

import argparse
import json
import os
import sys
import time

import tensorflow as tf

import estimator_lite as el
from tests.faults import job_parts
from tests.faults.job_parts import (
    BATCH_SIZE,
    NUM_EXAMPLES,
    NUM_FEATURES,
    SleepHook,
    StepFileHook,
)

EXPORTER_NAME = "latest"
_HIDDEN_UNITS = 8
_EVAL_EXAMPLES = 64


def make_train_input_fn(epochs):
    """Shuffled, batched training data; repeats forever when epochs is None."""
    x, y = job_parts.data()

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        return dataset.shuffle(NUM_EXAMPLES, seed=1).repeat(epochs).batch(BATCH_SIZE)

    return input_fn


def make_eval_input_fn(build_sleep_secs):
    """One pass over the first examples; sleeps while the graph is built."""
    x, y = job_parts.data()

    def input_fn():
        time.sleep(build_sleep_secs)
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x[:_EVAL_EXAMPLES]},
                                                      y[:_EVAL_EXAMPLES]))
        return dataset.batch(BATCH_SIZE)

    return input_fn


def serving_input_receiver_fn():
    """Raw float features, as TF Serving feeds them."""
    x = tf.compat.v1.placeholder(tf.float32, [None, NUM_FEATURES], name="x")
    return el.export.ServingInputReceiver({"x": x}, {"x": x})


def model_fn(features, labels, mode, params):
    """A one-hidden-layer regressor built from tf.compat.v1 variables."""
    x = features["x"]
    w1 = tf.compat.v1.get_variable("w1", [NUM_FEATURES, _HIDDEN_UNITS])
    b1 = tf.compat.v1.get_variable("b1", [_HIDDEN_UNITS],
                                   initializer=tf.compat.v1.zeros_initializer())
    w2 = tf.compat.v1.get_variable("w2", [_HIDDEN_UNITS, 1])
    b2 = tf.compat.v1.get_variable("b2", [1], initializer=tf.compat.v1.zeros_initializer())
    predictions = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
    if mode == el.ModeKeys.PREDICT:
        return el.EstimatorSpec(mode, predictions={"y": predictions}, export_outputs={
            "serving_default": el.export.PredictOutput({"outputs": predictions})})
    loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
    if mode == el.ModeKeys.EVAL:
        return el.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "mae": tf.compat.v1.metrics.mean_absolute_error(labels, predictions)})
    if params["ballast_mb"]:
        # Saved with every checkpoint (by the ps), never trained.
        tf.compat.v1.get_variable(
            "ballast", [params["ballast_mb"] * 2**18], trainable=False,
            initializer=tf.compat.v1.zeros_initializer())
    return el.EstimatorSpec(mode, loss=loss, train_op=job_parts.minimize(loss))


def _parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--max-steps", type=int, default=0, help="0 means None")
    parser.add_argument("--train-epochs", type=int, default=0,
                        help="passes over the training data per trainer; 0 = forever")
    parser.add_argument("--save-steps", type=int, default=20)
    parser.add_argument("--keep-checkpoint-max", type=int, default=5)
    parser.add_argument("--step-sleep-ms", type=float, default=0)
    parser.add_argument("--status-dir", default=None)
    parser.add_argument("--ballast-mb", type=int, default=0)
    parser.add_argument("--eval-build-sleep-ms", type=float, default=0)
    parser.add_argument("--eval-step-sleep-ms", type=float, default=0)
    parser.add_argument("--throttle-secs", type=float, default=0)
    parser.add_argument("--operation-timeout-ms", type=int, default=0)
    parser.add_argument("--strategy", choices=("none", "ps"), default="none")
    return parser.parse_args(argv)


def _session_config(operation_timeout_ms):
    """A session_config bounding every session call, or None (the default)."""
    if not operation_timeout_ms:
        return None
    task = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {})
    filters = ["/job:ps"]
    if task.get("type") in ("chief", "worker"):
        filters.append(f"/job:{task['type']}/task:{task.get('index', 0)}")
    return tf.compat.v1.ConfigProto(allow_soft_placement=True, device_filters=filters,
                                    operation_timeout_in_ms=operation_timeout_ms)


def _task(config, strategy):
    """(task type, index) of this process: TF_CONFIG's under a strategy, else the
    RunConfig's."""
    if strategy is None:
        return config.task_type, config.task_id
    task = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {})
    return task.get("type"), int(task.get("index", 0))


def main(argv=None):
    """Runs this process's role of the job; returns the exit code."""
    args = _parse(argv)
    job_parts.configure_logging()
    strategy = (tf.compat.v1.distribute.experimental.ParameterServerStrategy()
                if args.strategy == "ps" else None)
    config = el.RunConfig(
        train_distribute=strategy, model_dir=args.model_dir, tf_random_seed=7,
        save_checkpoints_steps=args.save_steps,
        keep_checkpoint_max=args.keep_checkpoint_max, log_step_count_steps=50,
        save_summary_steps=50, experimental_max_worker_delay_secs=0,
        session_config=_session_config(args.operation_timeout_ms))
    task_type, task_id = _task(config, strategy)
    tf.compat.v1.logging.info("faults job: %s %s starts", task_type, task_id)
    estimator = el.Estimator(model_fn, config=config,
                             params={"ballast_mb": args.ballast_mb})
    train_hooks = []
    if args.step_sleep_ms:
        train_hooks.append(SleepHook(args.step_sleep_ms / 1000))
    if args.status_dir and task_type in ("chief", "worker"):
        train_hooks.append(StepFileHook(os.path.join(
            args.status_dir, f"{task_type}-{task_id}.step")))
    eval_hooks = [SleepHook(args.eval_step_sleep_ms / 1000)] if (
        args.eval_step_sleep_ms) else []
    train_spec = el.TrainSpec(make_train_input_fn(args.train_epochs or None),
                              max_steps=args.max_steps or None, hooks=train_hooks)
    eval_spec = el.EvalSpec(
        make_eval_input_fn(args.eval_build_sleep_ms / 1000), steps=None,
        hooks=eval_hooks, start_delay_secs=0, throttle_secs=args.throttle_secs,
        exporters=[el.LatestExporter(EXPORTER_NAME, serving_input_receiver_fn,
                                     exports_to_keep=2)])
    metrics, exports = el.train_and_evaluate(estimator, train_spec, eval_spec)
    print("FAULTS_JOB_DONE " + json.dumps({
        "task_type": task_type, "task_id": task_id,
        # A numpy.int64, as tf.estimator returns it: JSON needs a Python int.
        "global_step": None if metrics is None else int(metrics["global_step"]),
        "exports": [os.fsdecode(e) for e in exports or () if e]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
