"""Early stopping that reaches every worker.

The chief evaluates a stop rule (usually on the metrics the evaluations wrote) every
`run_every_secs` or `run_every_steps`; when it says stop, the chief sets a shared
boolean variable (on the ps in a cluster) and stops. Every other worker reads that
variable on the same schedule and stops too. The chief's run then ends normally, so
it writes the completion marker and the evaluator and ps tasks exit as well.

Checkpoints save the flag (`signal_early_stopping/STOP`, as tf.estimator's do), but
a restore leaves it cleared: a resumed run's workers do not stop at once on the
flag of the run that stopped (tf.estimator's do), and a checkpoint written without
the hook restores with it (tf.estimator's fails to restore). As in
tf.estimator, the first check comes after the session's first step, then one every
`run_every_secs` or `run_every_steps`. Steps are this worker's own (equal to global
steps when one worker trains), so checks add no fetch to the steps in between.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from estimator_lite._engine import validation
from estimator_lite._engine.event_files import read_eval_metrics
from estimator_lite._engine.timer import check_schedule, schedule_timer
from estimator_lite._engine.train_session import NOT_RESTORED
from estimator_lite._tf import logging, tf

if TYPE_CHECKING:
    from estimator_lite._training_specs import EstimatorLike

__all__ = ["stop_if_higher_hook", "stop_if_lower_hook", "stop_if_no_increase_hook",
           "stop_if_no_decrease_hook", "make_early_stopping_hook", "read_eval_metrics"]

_STOP_VARIABLE = "signal_early_stopping/STOP"


def _stop_variable():
    """The shared stop flag, created once per graph (outside any name scope)."""
    graph = tf.get_default_graph()
    for variable in graph.get_collection(NOT_RESTORED):
        if variable.op.name == _STOP_VARIABLE:
            return variable
    with tf.variable_scope("signal_early_stopping", reuse=tf.AUTO_REUSE):
        variable = tf.get_variable("STOP", shape=[], dtype=tf.bool, trainable=False,
                                   initializer=tf.constant_initializer(False),
                                   collections=[tf.GraphKeys.GLOBAL_VARIABLES,
                                                NOT_RESTORED])
    return variable


def _schedule(run_every_secs, run_every_steps, clock):
    """The check's timer; run_every_secs=0 checks after every step, as tf.estimator.

    Raises:
      ValueError / TypeError: both or neither period given, or a bad value.
    """
    check_schedule(run_every_secs, run_every_steps)
    if run_every_secs == 0:
        return schedule_timer(None, 1, clock)
    return schedule_timer(run_every_secs, run_every_steps, clock)


class _StopOnPredicateHook(tf.train.SessionRunHook):
    """Chief: checks `should_stop_fn` on a schedule; sets the flag and stops."""

    # tf.estimator's defaults (tests and libraries build these hooks directly).
    def __init__(self, should_stop_fn, run_every_secs=60, run_every_steps=None,
                 clock=time.time):
        self._should_stop_fn = should_stop_fn
        self._timer = _schedule(run_every_secs, run_every_steps, clock)
        self._stop_var = None
        self._set_stop = None

    def begin(self):
        self._stop_var = _stop_variable()
        self._set_stop = tf.assign(self._stop_var, True)

    def after_create_session(self, session, coord):
        self._timer.start(due_at_first_step=True)

    def after_run(self, run_context, run_values):
        if self._timer.tick() and self._should_stop_fn():
            logging.info("Early stopping: the stop rule is met; stopping all workers.")
            run_context.session.run(self._set_stop)
            run_context.request_stop()


class _CheckForStoppingHook(tf.train.SessionRunHook):
    """Non-chief: reads the shared flag on a schedule and stops when it is set."""

    # tf.estimator's takes no arguments and reads the flag after every step.
    def __init__(self, run_every_secs=None, run_every_steps=1, clock=time.time):
        self._timer = _schedule(run_every_secs, run_every_steps, clock)
        self._stop = None
        self._due = False

    def begin(self):
        self._stop = _stop_variable()

    def after_create_session(self, session, coord):
        self._timer.start(due_at_first_step=True)

    def before_run(self, run_context):
        self._due = self._timer.tick()
        return tf.train.SessionRunArgs(self._stop) if self._due else None

    def after_run(self, run_context, run_values):
        if self._due and run_values.results:
            logging.info("Early stopping: the chief asked every worker to stop.")
            run_context.request_stop()


def make_early_stopping_hook(estimator: EstimatorLike, should_stop_fn: Callable[[], bool],
                             run_every_secs: float | None = 60,
                             run_every_steps: int | None = None,
                             clock: Callable[[], float] = time.time,
                             ) -> tf.train.SessionRunHook:
    """Returns the early-stopping hook for this task (chief or not).

    Args:
      estimator: gives `config.is_chief`.
      should_stop_fn: no-argument function; True stops training (chief only).
      run_every_secs: check every this many seconds (None when steps are given).
      run_every_steps: check every this many local steps instead.
      clock: time source, for tests.

    Returns:
      A SessionRunHook to pass to `train` or `TrainSpec(hooks=...)`.

    Raises:
      TypeError: estimator is not an Estimator, or should_stop_fn is not callable.
      ValueError: both or neither of run_every_secs / run_every_steps.
    """
    _check_estimator(estimator)
    validation.check_callable("should_stop_fn", should_stop_fn)
    if estimator.config.is_chief:
        return _StopOnPredicateHook(should_stop_fn, run_every_secs, run_every_steps,
                                    clock)
    return _CheckForStoppingHook(run_every_secs, run_every_steps, clock)


def _check_estimator(estimator):
    """Raises TypeError unless `estimator` is Estimator-like (a config and an eval
    dir; tf.estimator's own Estimator qualifies too)."""
    eval_dir = getattr(estimator, "eval_dir", None)
    if not (hasattr(estimator, "config") and callable(eval_dir)):
        raise TypeError(f"estimator must be an Estimator (with config and eval_dir()), "
                        f"got {type(estimator).__name__}")


def _metric_history(estimator, eval_dir, metric_name, min_steps):
    """[(step, value)] of `metric_name` from the eval dir, steps >= min_steps."""
    history = read_eval_metrics(eval_dir or estimator.eval_dir())
    values = []
    for step, metrics in history.items():
        if step < min_steps:
            continue
        if metric_name not in metrics:
            # KeyError, as tf.estimator's rules raise for a metric not evaluated.
            raise KeyError(f"metric {metric_name!r} is not in the evaluation at step "
                           f"{step}; it has {sorted(metrics)}")
        values.append((step, metrics[metric_name]))
    return values


def _threshold_hook(estimator, metric_name, threshold, eval_dir, min_steps,
                    run_every_secs, run_every_steps, crossed):
    def should_stop():
        for step, value in _metric_history(estimator, eval_dir, metric_name, min_steps):
            if crossed(value, threshold):
                logging.info("Early stopping: %s = %s at step %d crossed %s",
                             metric_name, value, step, threshold)
                return True
        return False
    return make_early_stopping_hook(estimator, should_stop, run_every_secs,
                                    run_every_steps)


def _stall_hook(estimator, metric_name, max_steps_without_change, eval_dir, min_steps,
                run_every_secs, run_every_steps, better, arg_name):
    # 0 is allowed, as in tf.estimator: stop at the first check after any evaluation.
    validation.check_int(arg_name, max_steps_without_change, 0)

    def should_stop():
        best_step = best_value = None
        for step, value in _metric_history(estimator, eval_dir, metric_name, min_steps):
            if best_value is None or better(value, best_value):
                best_step, best_value = step, value
            elif step - best_step >= max_steps_without_change:
                logging.info("Early stopping: no improvement of %s since step %d (%s)",
                             metric_name, best_step, best_value)
                return True
        return False
    return make_early_stopping_hook(estimator, should_stop, run_every_secs,
                                    run_every_steps)


def stop_if_higher_hook(
        estimator: EstimatorLike, metric_name: str, threshold: float,
        eval_dir: str | None = None, min_steps: int = 0,
        run_every_secs: float | None = 60,
        run_every_steps: int | None = None) -> tf.train.SessionRunHook:
    """Stops once an evaluation at step >= min_steps has metric > threshold."""
    return _threshold_hook(estimator, metric_name, threshold, eval_dir, min_steps,
                           run_every_secs, run_every_steps, lambda v, t: v > t)


def stop_if_lower_hook(
        estimator: EstimatorLike, metric_name: str, threshold: float,
        eval_dir: str | None = None, min_steps: int = 0,
        run_every_secs: float | None = 60,
        run_every_steps: int | None = None) -> tf.train.SessionRunHook:
    """Stops once an evaluation at step >= min_steps has metric < threshold."""
    return _threshold_hook(estimator, metric_name, threshold, eval_dir, min_steps,
                           run_every_secs, run_every_steps, lambda v, t: v < t)


def stop_if_no_increase_hook(
        estimator: EstimatorLike, metric_name: str, max_steps_without_increase: int,
        eval_dir: str | None = None, min_steps: int = 0, run_every_secs: float | None = 60,
        run_every_steps: int | None = None) -> tf.train.SessionRunHook:
    """Stops when the metric has not increased for max_steps_without_increase steps."""
    return _stall_hook(estimator, metric_name, max_steps_without_increase, eval_dir,
                       min_steps, run_every_secs, run_every_steps, lambda v, b: v > b,
                       "max_steps_without_increase")


def stop_if_no_decrease_hook(
        estimator: EstimatorLike, metric_name: str, max_steps_without_decrease: int,
        eval_dir: str | None = None, min_steps: int = 0, run_every_secs: float | None = 60,
        run_every_steps: int | None = None) -> tf.train.SessionRunHook:
    """Stops when the metric has not decreased for max_steps_without_decrease steps."""
    return _stall_hook(estimator, metric_name, max_steps_without_decrease, eval_dir,
                       min_steps, run_every_secs, run_every_steps, lambda v, b: v < b,
                       "max_steps_without_decrease")
