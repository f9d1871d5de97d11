"""Evaluation during train_and_evaluate: results, the evaluator, the checkpoint listener.

`training` (the executor) uses these; tf.estimator kept them in its training module,
so its path serves them too (docs/compatibility.md). Test seam: this module reads
the clock only through its attribute `time` (``time.time()``), like `training`.

| what one evaluation attempt did       | `_EvalStatus`, `_EvalResult`               |
| listening to evaluations (stop early) | `_ContinuousEvalListener`                  |
| evaluate the latest checkpoint, then  | `_Evaluator`                               |
| run the exporters                     |                                            |
| evaluation after checkpoint saves     | `_NewCheckpointListenerForEvaluate`        |
"""

import os
import sys
import time

from estimator_lite._engine import model_dir as model_dir_lib
from estimator_lite._engine.timer import Timer
from estimator_lite._tf import logging, tf
from estimator_lite.export import saved_model as saved_model_lib

_WARNING_INTERVAL_SECS = 60
# What restoring a vanished (GC'd), truncated or corrupt checkpoint raises; such an
# error is skipped only once the checkpoint is shown to be unreadable.
_RESTORE_ERRORS = (tf.errors.OpError, ValueError)


def _now():
    return time.time()


# The estimator's model_dir ------------------------------------------------------------


def _model_dir(estimator):
    """The estimator's model_dir as a str, or None when it is not a path.

    An Estimator-like object may hold bytes; a test double may hold anything (then
    the completion markers are skipped: tf.estimator never reads model_dir there).
    """
    model_dir = getattr(estimator, "model_dir", None)
    if isinstance(model_dir, (str, bytes, os.PathLike)):
        return os.fsdecode(model_dir)
    return None


def _model_dir_str(estimator):
    """model_dir as a str for export paths and messages, whatever it holds."""
    model_dir = _model_dir(estimator)
    return model_dir if model_dir is not None else str(estimator.model_dir)


def _checkpoint_step(checkpoint_path):
    """The global step of a checkpoint path, or None when it cannot be told."""
    if not isinstance(checkpoint_path, (str, bytes)) or not checkpoint_path:
        return None
    try:
        return model_dir_lib.checkpoint_step(os.fsdecode(checkpoint_path))
    except (ValueError, tf.errors.OpError):
        return None


# Evaluation results -------------------------------------------------------------


_NOT_A_DICT = ("`Estimator.evaluate` should return dict: it must return a dict of "
               "metrics, got {!r} of type {}")


class _EvalStatus:
    """What one evaluation attempt did."""

    EVALUATED = "evaluated"
    MISSING_CHECKPOINT = "missing checkpoint"
    NO_NEW_CHECKPOINT = "no new checkpoint"

    ALL = (EVALUATED, MISSING_CHECKPOINT, NO_NEW_CHECKPOINT)


class _EvalResult:
    """The outcome of one evaluation attempt: status, metrics, checkpoint path."""

    def __init__(self, status, metrics=None, checkpoint_path=None):
        """Validates that the fields fit the status.

        Raises:
          TypeError: EVALUATED metrics that are not a dict.
          ValueError: unknown status; EVALUATED without metrics (with global_step)
            or checkpoint_path; another status with metrics or a checkpoint_path.
        """
        if status not in _EvalStatus.ALL:
            raise ValueError(f"status must be one of {_EvalStatus.ALL}, got {status!r}")
        if status == _EvalStatus.EVALUATED:
            if metrics is not None and not isinstance(metrics, dict):
                raise TypeError(_NOT_A_DICT.format(metrics, type(metrics).__name__))
            if not metrics:
                raise ValueError("Internal error: `Estimator.evaluate` should never "
                                 "return empty metrics; an EVALUATED result needs "
                                 f"metrics, got {metrics!r}")
            if "global_step" not in metrics:
                raise ValueError("Internal error: `Estimator.evaluate` result should "
                                 "have `global_step`: the metrics of an EVALUATED "
                                 f"result must contain 'global_step', got keys "
                                 f"{sorted(metrics)}")
            if not checkpoint_path:
                raise ValueError("an EVALUATED result needs a checkpoint_path, got "
                                 f"{checkpoint_path!r}")
        elif metrics is not None or checkpoint_path is not None:
            raise ValueError(f"a {status!r} result takes no metrics or checkpoint_path; "
                             f"got metrics={metrics!r}, checkpoint_path="
                             f"{checkpoint_path!r}")
        self.status = status
        self.metrics = metrics
        self.checkpoint_path = checkpoint_path

    def __repr__(self):
        return f"_EvalResult({self.status!r}, {self.metrics!r}, {self.checkpoint_path!r})"


class _ContinuousEvalListener:
    """Hears about each evaluation; returning False from a method stops the loop."""

    def before_eval(self):
        """Called before each evaluation; False stops evaluation (and training)."""
        return True

    def after_eval(self, eval_result):
        """Called with each _EvalResult; False stops evaluation (and training)."""
        del eval_result
        return True


class _Evaluator:
    """Evaluates the latest new checkpoint and runs the exporters."""

    def __init__(self, estimator, eval_spec, max_training_steps):
        self._estimator = estimator
        self._eval_spec = eval_spec
        self._max_training_steps = max_training_steps
        self._previous_ckpt_path = None
        self._warning_timers = {}
        self._final_export_done = False
        eval_dir_name = model_dir_lib.eval_dir_name(eval_spec.name)
        model_dir = _model_dir(estimator)
        # An EvalSpec holds a tuple; a test double's exporters are only used on export.
        exporters = eval_spec.exporters if isinstance(eval_spec.exporters, tuple) else ()
        for exporter in exporters:
            exporter.bind_eval_dir(eval_dir_name)
            if model_dir is not None:
                saved_model_lib.remove_stale_temp_dirs(
                    model_dir_lib.export_dir(model_dir, exporter.name))
        self.last_result = None
        # The newest checkpoint path it was told about (None before the first look).
        self.latest_seen = None
        self.last_export_results = []

    @property
    def final_export_done(self):
        """Whether the exporters already ran with is_the_final_export=True."""
        return self._final_export_done

    def warn(self, message, *args):
        """Logs a warning at most once per _WARNING_INTERVAL_SECS per message."""
        timer = self._warning_timers.setdefault(
            message, Timer(every_secs=_WARNING_INTERVAL_SECS, clock=_now))
        if timer.due():
            timer.mark()
            logging.warning(message, *args)

    def evaluate_and_export(self, is_final=False, final_step=None):
        """Evaluates the latest checkpoint if it is new, then exports.

        Args:
          is_final: this is the last evaluation of the run.
          final_step: the final global step if known; a checkpoint at or past it
            (or past max_steps) makes this the final export.

        Returns:
          (an _EvalResult, the list of export results).
        """
        latest = self._estimator.latest_checkpoint()
        self.latest_seen = latest or self.latest_seen
        if not latest:
            self.warn("No checkpoint in %s yet; skipping evaluation.",
                       _model_dir_str(self._estimator))
            return _EvalResult(_EvalStatus.MISSING_CHECKPOINT), []
        if latest == self._previous_ckpt_path:
            self.warn("No new checkpoint since %s; skipping evaluation.", latest)
            return _EvalResult(_EvalStatus.NO_NEW_CHECKPOINT), []
        self._previous_ckpt_path = latest  # Never retry a checkpoint that failed.
        spec = self._eval_spec
        try:
            # Keywords, as tf.estimator calls it.
            metrics = self._estimator.evaluate(input_fn=spec.input_fn, steps=spec.steps,
                                               checkpoint_path=latest, name=spec.name,
                                               hooks=spec.hooks)
        except _RESTORE_ERRORS as e:
            _skip_or_raise(latest, e, "evaluating")
            return _EvalResult(_EvalStatus.MISSING_CHECKPOINT), []
        if not isinstance(metrics, dict):
            raise TypeError(_NOT_A_DICT.format(metrics, type(metrics).__name__))
        result = _EvalResult(_EvalStatus.EVALUATED, metrics, latest)
        step = metrics["global_step"]
        final = (is_final or (final_step is not None and step >= final_step) or
                 (self._max_training_steps is not None
                  and step >= self._max_training_steps))
        self.last_result = result
        self.last_export_results = self._export(result, final)
        return result, self.last_export_results

    def export_final_if_needed(self):
        """Runs the final export on the last result if it has not run yet."""
        if self._final_export_done or self.last_result is None:
            return self.last_export_results
        self.last_export_results = self._export(self.last_result, True)
        return self.last_export_results

    def _export(self, result, is_final):
        # Not `is_final and not done`: that would turn the numpy.bool_ of
        # `global_step >= max_steps`, which tf.estimator passes, into a bool.
        if self._final_export_done:
            is_final = False
        export_results = []
        for exporter in self._eval_spec.exporters:
            export_path = model_dir_lib.export_dir(_model_dir_str(self._estimator),
                                                   exporter.name)
            try:
                # Keywords, as tf.estimator calls a custom Exporter.
                export_results.append(exporter.export(
                    estimator=self._estimator, export_path=export_path,
                    checkpoint_path=result.checkpoint_path,
                    eval_result=result.metrics, is_the_final_export=is_final))
            except _RESTORE_ERRORS as e:
                _skip_or_raise(result.checkpoint_path, e, f"exporting ({exporter.name})")
                export_results.append(None)
        if is_final:
            self._final_export_done = True
        return export_results


def _skip_or_raise(checkpoint_path, error, doing):
    """Skips a checkpoint that became unreadable; re-raises any other failure.

    The chief garbage-collects old checkpoints and a crash can leave a truncated
    one: neither is the evaluator's fault, so it logs and moves on. An error on a
    checkpoint that still reads back is a real failure and propagates.
    """
    if model_dir_lib.checkpoint_is_readable(checkpoint_path):
        raise error
    logging.warning("Skipping checkpoint %s while %s: it vanished or cannot be read "
                    "(%s: %s). The next checkpoint will be used.", checkpoint_path,
                    doing, type(error).__name__, str(error).splitlines()[0])


class _ThrottleTimer:
    """SecondOrStepTimer's interface for the eval throttle, on this module's clock.

    A zero (or None) throttle is always due: evaluate after every save.
    """

    def __init__(self, every_secs):
        self._timer = Timer(every_secs=every_secs, clock=_now)

    def should_trigger_for_step(self, step):
        """Whether to evaluate after the save at `step` (never twice at one step)."""
        return not self._timer.enabled or self._timer.due(step)

    def update_last_triggered_step(self, step):
        """Records an evaluation after the save at `step`, now."""
        self._timer.mark(step)


def _throttle_timer(every_secs):
    """The eval listener's throttle timer.

    TensorFlow's SecondOrStepTimer drives tf.estimator's throttle; code that
    replaces that class in TensorFlow's module (as tf.estimator's own tests do, to
    decide which saves get evaluated) gets its replacement used here too, as the
    executor's servers are (`training._server_class`). Otherwise a timer on this
    module's clock, so tests replacing `time` control the throttle.
    """
    module = sys.modules.get(getattr(tf.train.SecondOrStepTimer, "__module__", ""))
    timer_class = getattr(module, "SecondOrStepTimer", tf.train.SecondOrStepTimer)
    if timer_class is not tf.train.SecondOrStepTimer:
        return timer_class(every_secs=every_secs)
    return _ThrottleTimer(every_secs)


class _NewCheckpointListenerForEvaluate(tf.train.CheckpointSaverListener):
    """Evaluates after checkpoint saves during training, throttled by time.

    The save at session creation is skipped (nothing new was trained); the final
    checkpoint is always evaluated in `end()`. A continuous-eval listener returning
    False stops training.
    """

    def __init__(self, evaluator, eval_throttle_secs, continuous_eval_listener):
        self._evaluator = evaluator
        self._throttle_secs = eval_throttle_secs
        self._throttle = _throttle_timer(eval_throttle_secs)
        self._listener = continuous_eval_listener
        self._is_first_save = True
        self._stopped = False
        self._evaluated_step = None
        self.eval_result = None
        self.export_results = None

    def begin(self):
        self._throttle = _throttle_timer(self._throttle_secs)  # a new run, a new clock
        self._is_first_save = True
        self._stopped = False
        self._evaluated_step = None

    def after_save(self, session, global_step_value):
        del session
        if self._is_first_save:
            self._is_first_save = False
            return False
        if not self._throttle.should_trigger_for_step(global_step_value):
            logging.info("Not evaluating the checkpoint of step %s: the last evaluation "
                         "was less than throttle_secs=%s ago.", global_step_value,
                         self._throttle_secs)
            return False
        self._throttle.update_last_triggered_step(global_step_value)
        logging.info("Evaluating the checkpoint of step %s.", global_step_value)
        self._evaluated_step = global_step_value
        return not self._evaluate(is_final=False)

    def end(self, session, global_step_value):
        del session
        if self._stopped:
            return
        # The final step was evaluated by after_save: only the final export is left.
        # Otherwise evaluate; the evaluator compares checkpoint paths (with
        # asynchronous workers a file name's step can lag the step stored in it),
        # so a checkpoint already evaluated only gets its final export.
        evaluated_at_end = (global_step_value is not None
                            and global_step_value == self._evaluated_step
                            and self._evaluator.last_result is not None)
        if evaluated_at_end or (self._evaluate(is_final=True)
                                and self.eval_result is not None):
            self.export_results = self._evaluator.export_final_if_needed()

    @property
    def stopped(self):
        """Whether the continuous-eval listener stopped training."""
        return self._stopped

    def _evaluate(self, is_final):
        """Evaluates and exports; returns False when the listener stops training."""
        if not self._listener.before_eval():
            logging.info("Continuous-eval listener stopped training before evaluation.")
            self._stopped = True
            return False
        result, exports = self._evaluator.evaluate_and_export(is_final=is_final)
        if result.status == _EvalStatus.EVALUATED:
            self.eval_result, self.export_results = result, exports
        if not self._listener.after_eval(result):
            logging.info("Continuous-eval listener stopped training after evaluation.")
            self._stopped = True
            return False
        return True
