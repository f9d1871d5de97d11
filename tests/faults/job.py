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
import logging
import os
import sys
import time

import numpy as np
import tensorflow as tf

import estimator_lite as el

EXPORTER_NAME = "latest"
# Logged as "<tag> <step before> <step after>" when the global step goes back.
ROLLBACK_TAG = "faults job: global step went back"
_NUM_FEATURES = 4
_HIDDEN_UNITS = 8
_NUM_EXAMPLES = 256
_BATCH_SIZE = 16
_EVAL_EXAMPLES = 64


class SleepHook(tf.compat.v1.train.SessionRunHook):
    """Sleeps after every step, to pace a run without making steps fewer."""

    def __init__(self, sleep_secs):
        self._sleep_secs = sleep_secs

    def after_run(self, run_context, run_values):
        del run_context, run_values
        time.sleep(self._sleep_secs)


class StepFileHook(tf.compat.v1.train.SessionRunHook):
    """Writes the global step this task last saw to a file after every step."""

    def __init__(self, path):
        self._path = path
        self._global_step = None
        self._last_step = None

    def begin(self):
        self._global_step = tf.compat.v1.train.get_global_step()

    def before_run(self, run_context):
        del run_context
        return tf.compat.v1.train.SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        del run_context
        step = int(run_values.results)
        if self._last_step is not None and step < self._last_step:
            # Trained steps thrown away (e.g. a restarted chief restored an older
            # checkpoint over the live variables): the test reports how many.
            tf.compat.v1.logging.warning("%s %d %d", ROLLBACK_TAG, self._last_step, step)
        self._last_step = step
        temp = f"{self._path}.tmp"
        with open(temp, "w", encoding="utf-8") as f:
            f.write(str(step))
        os.replace(temp, self._path)  # the test never reads half a number


def _data():
    rng = np.random.RandomState(0)
    x = rng.normal(size=(_NUM_EXAMPLES, _NUM_FEATURES)).astype(np.float32)
    y = (x @ np.arange(1, _NUM_FEATURES + 1, dtype=np.float32) + 1.0).reshape(-1, 1)
    return x, y


def make_train_input_fn(epochs):
    """Shuffled, batched training data; repeats forever when epochs is None."""
    x, y = _data()

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
        return dataset.shuffle(_NUM_EXAMPLES, seed=1).repeat(epochs).batch(_BATCH_SIZE)

    return input_fn


def make_eval_input_fn(build_sleep_secs):
    """One pass over the first examples; sleeps while the graph is built."""
    x, y = _data()

    def input_fn():
        time.sleep(build_sleep_secs)
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x[:_EVAL_EXAMPLES]},
                                                      y[:_EVAL_EXAMPLES]))
        return dataset.batch(_BATCH_SIZE)

    return input_fn


def serving_input_receiver_fn():
    """Raw float features, as TF Serving feeds them."""
    x = tf.compat.v1.placeholder(tf.float32, [None, _NUM_FEATURES], name="x")
    return el.export.ServingInputReceiver({"x": x}, {"x": x})


def model_fn(features, labels, mode, params):
    """A one-hidden-layer regressor built from tf.compat.v1 variables."""
    x = features["x"]
    w1 = tf.compat.v1.get_variable("w1", [_NUM_FEATURES, _HIDDEN_UNITS])
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
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.01)
    train_op = optimizer.minimize(loss, tf.compat.v1.train.get_global_step())
    return el.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _configure_logging():
    """INFO logs with timestamps, each line once, whichever logger the library uses."""
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter(
        "%(asctime)s.%(msecs)03d %(levelname)s:%(name)s: %(message)s", "%H:%M:%S"))
    for name in ("tensorflow", "absl"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.propagate = False
        logger.setLevel(logging.INFO)


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
    _configure_logging()
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
