"""SessionRunHooks as tf.estimator exported them, plus its two estimator-aware hooks.

The generic hooks and the listener are TensorFlow's own `tf.compat.v1.train`
classes, re-exported under the names tf.estimator gave them, so code written
against `tf.estimator.LoggingTensorHook` & co. keeps working after the import
swap. `InMemoryEvaluatorHook` and `make_stop_at_checkpoint_step_hook` (tf.estimator's
`experimental` names) are implemented here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from estimator_lite import estimator as estimator_lib
from estimator_lite._engine import model_dir as model_dir_lib
from estimator_lite._engine import validation
from estimator_lite._engine.timer import Timer
from estimator_lite._tf import logging, tf

__all__ = [
    "CheckpointSaverHook", "CheckpointSaverListener", "FeedFnHook", "FinalOpsHook",
    "GlobalStepWaiterHook", "InMemoryEvaluatorHook", "LoggingTensorHook",
    "NanTensorHook", "ProfilerHook", "SecondOrStepTimer", "SessionRunArgs",
    "SessionRunContext", "SessionRunHook", "SessionRunValues", "StepCounterHook",
    "StopAtStepHook", "SummarySaverHook", "make_stop_at_checkpoint_step_hook",
]

CheckpointSaverHook = tf.train.CheckpointSaverHook
CheckpointSaverListener = tf.train.CheckpointSaverListener
FeedFnHook = tf.train.FeedFnHook
FinalOpsHook = tf.train.FinalOpsHook
GlobalStepWaiterHook = tf.train.GlobalStepWaiterHook
LoggingTensorHook = tf.train.LoggingTensorHook
NanTensorHook = tf.train.NanTensorHook
ProfilerHook = tf.train.ProfilerHook
SecondOrStepTimer = tf.train.SecondOrStepTimer
SessionRunArgs = tf.train.SessionRunArgs
SessionRunContext = tf.train.SessionRunContext
SessionRunHook = tf.train.SessionRunHook
SessionRunValues = tf.train.SessionRunValues
StepCounterHook = tf.train.StepCounterHook
StopAtStepHook = tf.train.StopAtStepHook
SummarySaverHook = tf.train.SummarySaverHook


class InMemoryEvaluatorHook(tf.train.SessionRunHook):
    """Evaluates the model's current (in-memory) variables during training.

    As tf.estimator's: once when the training session is created (the model
    before training), every `every_n_iter` local steps, and once at the end, the
    training session's variable values are copied into an evaluation graph of
    the same estimator and evaluated on `input_fn`, without writing a checkpoint.
    Results go to ``eval_dir(name)`` like `Estimator.evaluate`'s; the last one is
    in `last_metrics`. Only single-process training is supported.
    """

    def __init__(self, estimator: estimator_lib.Estimator, input_fn: Callable[..., Any],
                 steps: int | None = None,
                 hooks: Iterable[tf.train.SessionRunHook] | None = None,
                 name: str | None = None, every_n_iter: int = 100) -> None:
        """Validates the arguments.

        Raises:
          TypeError: input_fn not callable, hooks not SessionRunHooks, a wrong type.
          ValueError: every_n_iter is None or < 1, steps < 1, or the estimator
            trains on a cluster (ps tasks or several workers).
        """
        if every_n_iter is None:
            raise ValueError("every_n_iter must be an int >= 1, got None")
        self._estimator = estimator
        self._input_fn = validation.check_callable("input_fn", input_fn)
        self._steps = validation.check_int("steps", steps, 1, allow_none=True)
        self._hooks = validation.check_instances("hooks", hooks,
                                                 tf.train.SessionRunHook,
                                                 "SessionRunHook")
        self._name = name
        self._timer = Timer(every_steps=validation.check_int("every_n_iter",
                                                             every_n_iter, 1))
        config = estimator.config
        if config.num_ps_replicas > 0 or config.num_worker_replicas > 1:
            raise ValueError(
                "InMemoryEvaluator supports only single machine (aka Local) setting: "
                "InMemoryEvaluatorHook needs the variables in this process (single "
                f"machine training); got a config with {config.num_ps_replicas} ps "
                f"tasks and {config.num_worker_replicas} workers")
        self._variables: dict[str, tf.Variable] | None = None
        self.last_metrics = None

    def begin(self) -> None:
        """Checks the model's evaluation scaffold, then notes the variables to copy.

        Raises:
          ValueError: the model_fn's EVAL scaffold has a custom saver or init_fn
            (they would decide the variables' values instead of the copy).
        """
        if getattr(self._estimator.config, "eval_distribute", None) is None:
            scaffold = estimator_lib.eval_scaffold(self._estimator, self._input_fn)
            for field in ("saver", "init_fn"):
                if getattr(scaffold, field) is not None:
                    raise ValueError(
                        f"InMemoryEvaluator does not support custom {field}: it loads "
                        f"the training variables itself; the model_fn's scaffold has "
                        f"{field}={getattr(scaffold, field)!r}")
        self._variables = {v.op.name: v for v in tf.global_variables()}

    def after_create_session(self, session: tf.Session,
                             coord: tf.train.Coordinator) -> None:
        """Evaluates the model before training, as tf.estimator's hook does.

        Raises:
          ValueError: the training graph has saveables other than variables
            (their state cannot be copied into the evaluation graph).
        """
        if tf.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS):
            raise ValueError("InMemoryEvaluator does not support saveables other than "
                             "global variables: it copies variables only; the "
                             "training graph has other saveable objects: "
                             f"{tf.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS)}")
        self._timer.start()
        self._evaluate(session)

    def after_run(self, run_context: tf.train.SessionRunContext,
                  run_values: tf.train.SessionRunValues) -> None:
        if self._timer.tick():
            self._evaluate(run_context.session)

    def end(self, session: tf.Session) -> None:
        self._evaluate(session)

    def _evaluate(self, session):
        values = session.run(self._variables)
        # The evaluation graph is built by the estimator this hook belongs to (same
        # model_fn, params and config), through the estimator module's package interface.
        self.last_metrics = estimator_lib.evaluate_values(
            self._estimator, self._input_fn, self._steps, self._hooks, self._name, values)


class _StopAtCheckpointStepHook(tf.train.SessionRunHook):
    """Non-chief: stops once model_dir's newest checkpoint reaches `last_step`.

    As tf.estimator's: the checkpoint is read only once this worker's global step
    has reached `last_step`; while the chief's checkpoint is behind, each step
    waits `wait_after_file_check_secs` after the read (many workers reading the
    same file at once can overload the file system).
    """

    def __init__(self, model_dir, last_step, wait_after_file_check_secs=30):
        """Raises ValueError when `last_step` or `model_dir` is None."""
        if last_step is None:
            raise ValueError("last_step must be specified (the step to stop at), got "
                             "None")
        if model_dir is None:
            raise ValueError("model_dir must be specified (where the chief writes "
                             "checkpoints), got None")
        self._model_dir = model_dir
        self._last_step = last_step
        self._wait_after_file_check_secs = wait_after_file_check_secs
        self._global_step = None

    def begin(self):
        """Raises RuntimeError when the graph has no global step."""
        self._global_step = tf.train.get_global_step()
        if self._global_step is None:
            raise RuntimeError("Global step should be created to use "
                               "StopAtCheckpointStepHook: the graph has no global step")

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        if run_values.results + 1 < self._last_step:
            return
        latest = model_dir_lib.latest_checkpoint(self._model_dir)
        step = model_dir_lib.checkpoint_step(latest) if latest else 0
        if step >= self._last_step:
            logging.info("Checkpoint %s reached step %d; stopping.", latest,
                         self._last_step)
            run_context.request_stop()
        else:
            time.sleep(self._wait_after_file_check_secs)


def make_stop_at_checkpoint_step_hook(estimator: estimator_lib.Estimator, last_step: int,
                                      wait_after_file_check_secs: float = 30,
                                      ) -> tf.train.SessionRunHook:
    """A hook that stops training at `last_step` on every task.

    The chief stops at the global step (`StopAtStepHook`); other workers stop once
    the chief's newest checkpoint has reached `last_step`, checking the model_dir
    at most every `wait_after_file_check_secs`.

    Raises:
      TypeError / ValueError: last_step not an int >= 0, or a negative wait.
    """
    last_step = validation.check_int("last_step", last_step, 0)
    validation.check_number("wait_after_file_check_secs", wait_after_file_check_secs, 0)
    if estimator.config.is_chief:
        return tf.train.StopAtStepHook(last_step=last_step)
    return _StopAtCheckpointStepHook(estimator.model_dir, last_step,
                                     wait_after_file_check_secs)
