"""What the fault jobs (job.py, collective_job.py) are made of besides their model:
the data, the pacing and step-file hooks, the logging. Not a test file.

Both jobs also run on tf.estimator (the oracle's interpreter), so nothing here
imports estimator_lite. The harness reads what they write: the step files
(`Cluster.step_seen`) and the logs (`Cluster.log_text`, `ROLLBACK_TAG` lines).
"""

import logging
import os
import sys
import time

import numpy as np
import tensorflow as tf

# Logged as "<tag> <step before> <step after>" when the global step goes back
# (trained steps thrown away: `Cluster.steps_lost` counts them).
ROLLBACK_TAG = "faults job: global step went back"
NUM_FEATURES = 4
NUM_EXAMPLES = 256
BATCH_SIZE = 16


def data():
    """(x [NUM_EXAMPLES, NUM_FEATURES], y [NUM_EXAMPLES, 1]) of a fixed linear model."""
    rng = np.random.RandomState(0)
    x = rng.normal(size=(NUM_EXAMPLES, NUM_FEATURES)).astype(np.float32)
    y = (x @ np.arange(1, NUM_FEATURES + 1, dtype=np.float32) + 1.0).reshape(-1, 1)
    return x, y


def minimize(loss):
    """The jobs' train op: plain SGD (learning rate 0.01) on the global step."""
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.01)
    return optimizer.minimize(loss, tf.compat.v1.train.get_global_step())


class SleepHook(tf.compat.v1.train.SessionRunHook):
    """Sleeps after every step, to pace a run without making steps fewer."""

    def __init__(self, sleep_secs):
        self._sleep_secs = sleep_secs

    def after_run(self, run_context, run_values):
        del run_context, run_values
        time.sleep(self._sleep_secs)


class StepFileHook(tf.compat.v1.train.SessionRunHook):
    """Logs ROLLBACK_TAG when the global step goes back, and writes the step this
    task last saw to a file after every step."""

    def __init__(self, path):
        """Args:
          path: the step file, or None (rollbacks are logged, nothing is written).
        """
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
        if self._path:
            temp = f"{self._path}.tmp"
            with open(temp, "w", encoding="utf-8") as f:
                f.write(str(step))
            os.replace(temp, self._path)  # the test never reads half a number


def configure_logging():
    """Sends the `tensorflow` and `absl` loggers' INFO lines to stdout, timestamped,
    each line once, whichever logger the library uses.

    TensorFlow's logger is set up first (`set_verbosity` creates it with its own
    handler), then every handler is replaced.
    """
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter(
        "%(asctime)s.%(msecs)03d %(levelname)s:%(name)s: %(message)s", "%H:%M:%S"))
    for name in ("tensorflow", "absl"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.propagate = False
        logger.setLevel(logging.INFO)
