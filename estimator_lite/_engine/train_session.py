"""A lean monitored training loop: sessions, hooks, checkpoints, summaries, recovery.

`TrainSession` does what MonitoredTrainingSession plus TF Estimator's default hooks
do, at a fraction of the per-step cost. Every step runs one precompiled callable
that fetches a single int64 computed after the train op: the new global step, or
-1 when the loss is not finite. That gives the exact step (correct on a cluster,
where other workers move it too) and a NaN check on every step for the price of a
bare ``session.run(train_op)``. Summaries, loss logging and SessionRunHook fetches
go through a full ``session.run`` only on the steps where one of them is due.

Who owns what:
| session create / restore / retry   | `session_creation`; `TrainSession._recover`    |
| the step: guard, hooks, fast path  | `TrainSession._step`, `train_step`, `hook_protocol` |
| one step or K steps per call       | `train_step` (`SingleStep`, `LoopStep`)        |
| a failed step: recreate or end job | `failure_handling` (`RecreateSession`,         |
|                                    | `EndCollectiveJob`)                            |
| checkpoint saves and listeners     | `periodic_actions.CheckpointSaver`             |
| training summaries, progress log   | `periodic_actions.StepActions`                 |
| SIGTERM / SIGINT                   | `shutdown.GracefulShutdown`                    |
| train() arguments, stop conditions | `check_train_args`, `step_limits` (here)       |
The Estimator builds the graph; `train_setup` chooses the parts once (from the
RunConfig and `topology`) and hands them here.
"""

import time

from estimator_lite._engine import session_creation, validation
from estimator_lite._engine.periodic_actions import (
    NOT_RESTORED,
    CheckpointPolicy,
    CheckpointSaver,
    StepActions,
    add_default_saver,
)
from estimator_lite._engine.queue_runners import QueueRunners
from estimator_lite._engine.shutdown import GracefulShutdown, grace_secs_from_env
from estimator_lite._engine.train_step import NAN_STEP, build_step_guard
from estimator_lite._tf import logging, tf

__all__ = ["TrainSession", "NanLossDuringTrainingError", "build_step_guard",
           "check_train_args", "step_limits",
           # Re-exported: they lived here before periodic_actions and train_step
           # existed.
           "NOT_RESTORED", "CheckpointPolicy", "add_default_saver"]

_RECOVERABLE_ERRORS = session_creation.RECOVERABLE_ERRORS
# What a session's close may raise without failing the task: a lost peer (as
# tf.estimator's session wrapper ignores at close), or a remote task slower than
# operation_timeout_in_ms to release the session's state (seen after a short
# network fault on a loaded machine: ~9 s). Close only frees that state; what the
# session saved is kept, and the task's result is already decided.
_CLOSE_ERRORS = _RECOVERABLE_ERRORS + (tf.errors.DeadlineExceededError,)
_READY_POLL_SECS = session_creation.READY_POLL_SECS


def check_train_args(steps, max_steps, hooks, saving_listeners, checkpoints_off):
    """Checks the arguments of a train() call.

    Args:
      steps / max_steps: at most one, each None or a number > 0.
      hooks: SessionRunHooks or None.
      saving_listeners: CheckpointSaverListeners or None.
      checkpoints_off: this task would save checkpoints but no period is set (a
        CheckpointSaverHook in `hooks` saves then).

    Returns:
      (hooks, listeners) as tuples.

    Raises:
      TypeError / ValueError: a wrong type or value; listeners given while
        checkpoints are off.
    """
    if steps is not None and max_steps is not None:
        raise ValueError(f"give steps or max_steps, not both; got steps={steps!r}, "
                         f"max_steps={max_steps!r}")
    validation.check_step_count("steps", steps)
    validation.check_step_count("max_steps", max_steps)
    hooks = validation.check_instances("hooks", hooks, tf.train.SessionRunHook,
                                        "SessionRunHook")
    listeners = validation.check_instances(
        "saving_listeners", saving_listeners, tf.train.CheckpointSaverListener,
        "CheckpointSaverListener")
    # A CheckpointSaverHook among the hooks saves (and takes the listeners).
    if listeners and checkpoints_off and not any(
            isinstance(h, tf.train.CheckpointSaverHook) for h in hooks):
        raise ValueError("saving_listeners need checkpoints: set "
                         "save_checkpoints_steps or save_checkpoints_secs")
    return hooks, listeners


def step_limits(steps, max_steps):
    """The stop and target functions of `TrainSession.run` for a train() call.

    Args:
      steps: train this many more steps from the first global step, or None.
      max_steps: train until the global step reaches this, or None.

    Returns:
      (stop_at_step_fn, target_step_fn); with neither limit, training runs until
      the input ends or a hook stops it.
    """
    start = {}

    def stop_at(step):
        start.setdefault("step", step)
        if max_steps is not None:
            return step >= max_steps
        return steps is not None and step >= start["step"] + steps

    def target_step(first_step):
        return max_steps if max_steps is not None else (
            first_step + steps if steps is not None else None)

    return stop_at, target_step


class NanLossDuringTrainingError(tf.train.NanLossDuringTrainingError):
    """The training loss became NaN or infinite.

    A subclass of `tf.compat.v1.train.NanLossDuringTrainingError` (what tf.estimator
    raises and its users catch), itself a RuntimeError.
    """

    def __str__(self):
        # TF's class prints a fixed text; ours says at which step.
        return str(self.args[0]) if self.args else super().__str__()



class TrainSession:
    """Runs a training graph: session creation and recovery, hooks, the step.

    Build the graph and the parts first (`train_setup`), then this object in the
    same graph: it calls every hook's `begin()` and finalizes the graph. `run()`
    trains until a stop condition and returns the last global step.
    """

    def __init__(self, *, global_step, scaffold, steps, failures, sessions, hooks=(),
                 checkpoints=None, actions=None, before_finalize_fn=None):
        """Prepares the graph for training.

        Args:
          global_step: the global step variable.
          scaffold: a finalizable tf.train.Scaffold (init ops, saver).
          steps: a `train_step` part (one step or a loop per session call).
          failures: a `failure_handling` part (recreate the session, or end the job).
          sessions: the graph's `session_creation.SessionCreator`.
          hooks: SessionRunHooks; their `begin()` is called here.
          checkpoints: the CheckpointSaver `sessions` has, or None (saves none).
          actions: the task's periodic_actions.StepActions, or None.
          before_finalize_fn: called after the hooks' begin() and before the graph
            is finalized (the Estimator builds its Saver there, so variables that
            hooks create are covered).
        """
        self._graph = tf.get_default_graph()
        self._global_step = global_step
        self._steps = steps
        self._failures = failures
        self._sessions = sessions
        self._hooks = steps.wrap_hooks(hooks)
        self._checkpoints = checkpoints if checkpoints is not None else CheckpointSaver()
        self._actions = actions if actions is not None else StepActions()
        # The listeners first: tf.estimator's CheckpointSaverHook (which calls
        # their begin()) is the first of its hooks.
        self._checkpoints.begin()
        for hook in self._hooks:
            hook.begin()
        if before_finalize_fn is not None:
            before_finalize_fn()
        scaffold.finalize()
        self._scaffold = scaffold
        self._graph.finalize()
        sessions.choose_executor(self._hooks)
        self._session = None
        self._queue_runners = None
        self._stop_requested = False
        self._target_step_fn = None
        self._target_step = None
        self._shutdown = GracefulShutdown(0)  # replaced in run()

    # Session lifecycle -------------------------------------------------------

    def _start(self):
        """Creates a session and readies it for training; returns the global step."""
        session = self._sessions.create()
        self._session = session
        self._queue_runners = QueueRunners(session)
        self._steps.open(session)
        step = int(session.run(self._global_step))
        # Saved at session creation (as TF's CheckpointSaverHook does), before the
        # user's hooks see the session: listeners rely on that first call (the
        # evaluation listener skips it), and a hook reading latest_checkpoint()
        # finds it, as on tf.estimator. A listener's stop request here is
        # ignored there too: training stops at the next save's request.
        if self._checkpoints.enabled:
            self._save(step)
        for hook in self._hooks:
            hook.after_create_session(session, self._queue_runners.coordinator)
        if self._target_step_fn is not None and self._target_step is None:
            self._target_step = self._target_step_fn(step)
        self._actions.start(step, self._target_step_fn)
        return step

    def _close_session(self):
        if self._session is None:
            return
        if not self._failures.closed_in_background(self._session):
            try:
                self._queue_runners.stop()
                self._session.close()
            except _CLOSE_ERRORS as e:
                logging.warning("Error while closing the session (its remote tasks "
                                "may still hold its state; nothing saved is lost): "
                                "%s: %s", type(e).__name__, e)
        self._session = None
        self._steps.close()

    def _save(self, step):
        """Saves a checkpoint; returns True when a listener asks to stop. On a
        cluster the global step is read again first (as TF's CheckpointSaverHook
        does): other workers may have moved it since `step` was fetched."""
        if self._sessions.master:
            step = int(self._session.run(self._global_step))
        return self._checkpoints.save(self._session, self._scaffold.saver, step)

    # The step --------------------------------------------------------------------

    def _step(self, last_step):
        """Runs one session call (a step or a loop, and the save due at its end);
        returns the new global step."""
        length, feeds = self._steps.plan(last_step, self._target_step)
        extra = self._actions.fetches(last_step + length)
        if not self._hooks and not extra:
            step = self._steps.run(feeds)
            self._after_step(step, None)
        else:
            step, stop = self._steps.run_with_hooks(self._session, self._hooks, last_step,
                                                    extra, feeds, self._after_step)
            if stop:
                self._stop_requested = True
        if step == NAN_STEP:
            raise NanLossDuringTrainingError(
                self._steps.nan_message(self._session, last_step, length))
        return int(step)

    def _after_step(self, step, results):
        """The chief's work at the end of a step, before the user's hooks' after_run
        (tf.estimator's CheckpointSaverHook and SummarySaverHook run first): step
        actions, then the checkpoint save when one is due. A NaN step saves nothing."""
        if step == NAN_STEP:
            return
        step = int(step)
        if results is not None:
            self._actions.after_step(step, results)
        if self._checkpoints.due(step) and self._save(step):
            self._stop_requested = True

    # Public ----------------------------------------------------------------------------

    def run(self, stop_at_step_fn, target_step_fn=None):
        """Trains until `stop_at_step_fn(step)` is true, a hook or listener stops
        training, or the input ends.

        Args:
          stop_at_step_fn: called with the global step after every step (and once
            after session creation); returns True to stop.
          target_step_fn: called once with the first global step; returns the step
            training ends at (for progress and ETA in the step log), or None.

        Returns:
          The last global step.

        Raises:
          NanLossDuringTrainingError: the loss became NaN or infinite.
        """
        self._target_step_fn = target_step_fn
        with GracefulShutdown(grace_secs_from_env()) as shutdown:
            self._shutdown = shutdown
            self._failures.start()
            try:
                step = self._train_until(stop_at_step_fn)
                self._checkpoints.end(self._session, step)
                for hook in self._hooks:
                    hook.end(self._session)
            finally:
                self._failures.stop()
                self._actions.close()
                self._close_session()
        shutdown.raise_if_signalled()
        return step

    def _train_until(self, stop_at_step_fn):
        """Trains, saving on schedule, until a stop; ends with a saved final step.
        A lost ps or worker (Aborted/Unavailable) during a step or a save goes to
        the failure handling: the session is recreated, or a collective job ends."""
        step = self._start_with_retries()
        # Only once the session exists: a model_dir that holds another model fails
        # in session creation, and then nothing may be written there.
        self._actions.open(self._graph)
        step_fn = self._failures.watch_steps(self._step)
        input_ended = False
        while True:
            while not (input_ended or self._stop_requested
                       or self._shutdown.signum is not None or stop_at_step_fn(step)):
                try:
                    step = step_fn(step)
                except tf.errors.OutOfRangeError:
                    step = self._steps.step_after_input_end(self._session, step)
                    logging.info("Input ended at global step %d; stopping training.",
                                 step)
                    input_ended = True
                except _RECOVERABLE_ERRORS as e:
                    step = self._recover(e)
                except tf.errors.DeadlineExceededError as e:
                    raise self._failures.timeout_error(e, self._steps.guard) from e
                except tf.errors.FailedPreconditionError as e:
                    self._failures.check(e)
                    raise
            try:  # the final save, unless the last step was just saved
                if self._checkpoints.enabled and not self._checkpoints.saved_at(step):
                    self._save(step)
                return step
            except _RECOVERABLE_ERRORS as e:
                step = self._recover(e)
            except tf.errors.DeadlineExceededError as e:
                raise self._failures.timeout_error(e, self._steps.guard) from e

    def _recover(self, error):
        self._failures.check(error)
        logging.warning("Session failed (%s: %s); recreating it.", type(error).__name__,
                        str(error).splitlines()[0] if str(error) else "")
        self._close_session()
        return self._start_with_retries()

    def _start_with_retries(self):
        """Creates the session, retrying while the cluster is unavailable."""
        deadline = self._sessions.deadline()
        start = self._failures.watch_start(self._start)
        while True:
            try:
                return start()
            except _RECOVERABLE_ERRORS as e:
                self._close_session()
                self._failures.check(e)
                if self._sessions.past(deadline) or self._shutdown.signum is not None:
                    raise
                logging.warning("Could not start the session (%s); retrying.",
                                type(e).__name__)
                time.sleep(_READY_POLL_SECS)
