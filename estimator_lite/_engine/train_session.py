"""A lean monitored training loop: sessions, hooks, checkpoints, summaries, recovery.

`TrainSession` does what MonitoredTrainingSession plus TF Estimator's default hooks
do, at a fraction of the per-step cost. Every step runs one precompiled callable
that fetches a single int64 computed after the train op: the new global step, or
-1 when the loss is not finite. That gives the exact step (correct on a cluster,
where other workers move it too) and a NaN check on every step for the price of a
bare ``session.run(train_op)``. Summaries, loss logging and SessionRunHook fetches
go through a full ``session.run`` only on the steps where one of them is due.

Who owns what:
| session create / restore / recover | `session_creation`; `TrainSession._recover`  |
| the step: guard, hooks, fast path  | `TrainSession._step`, `hook_protocol`          |
| K steps per call (opt-in loops)    | `step_loop`, `TrainSession._loop_step`         |
| checkpoint saves and listeners     | `periodic_actions.CheckpointSaver`             |
| training summaries (event file)    | `periodic_actions.TrainSummaries`              |
| step rate, progress and ETA log    | `periodic_actions.ReportProgress`              |
| SIGTERM / SIGINT                   | `shutdown.GracefulShutdown`                    |
| train() arguments, stop conditions | `check_train_args`, `step_limits` (here)       |
The Estimator builds the graph and the periodic actions, then hands them here.
"""

import math
import time

from estimator_lite._engine import (
    collective_watchdog,
    executor_choice,
    peer_timeout,
    session_creation,
    step_loop,
    validation,
)
from estimator_lite._engine.hook_protocol import run_with_hooks
from estimator_lite._engine.periodic_actions import (
    NOT_RESTORED,
    CheckpointPolicy,
    CheckpointSaver,
    add_default_saver,
)
from estimator_lite._engine.queue_runners import QueueRunners
from estimator_lite._engine.shutdown import GracefulShutdown, grace_secs_from_env
from estimator_lite._tf import logging, tf

__all__ = ["TrainSession", "NanLossDuringTrainingError", "build_step_guard",
           "check_train_args", "step_limits",
           # Re-exported: they lived here before periodic_actions existed.
           "NOT_RESTORED", "CheckpointPolicy", "add_default_saver"]

_RECOVERABLE_ERRORS = session_creation.RECOVERABLE_ERRORS
_READY_POLL_SECS = session_creation.READY_POLL_SECS
_NAN_STEP = -1


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


def build_step_guard(global_step, train_op, loss, finite=None):
    """Builds the one tensor fetched every step (or every multi-step loop).

    Args:
      global_step: the global step variable.
      train_op: the op that trains one step (or runs the loop).
      loss: the scalar loss of that step.
      finite: a bool tensor saying the loss was finite (a loop's, for all its
        steps), or None to test `loss`.

    Returns:
      An int64 scalar: the global step read after `train_op` ran, or -1 when
      `loss` is NaN or infinite.
    """
    with tf.control_dependencies([train_op]):
        step_after = tf.identity(global_step)
    # An integer loss cannot be NaN (and is_finite rejects integer dtypes).
    if finite is None:
        finite = (tf.reduce_all(tf.is_finite(loss)) if loss.dtype.is_floating
                  else tf.constant(True))
    return tf.where(finite, tf.cast(step_after, tf.int64),
                    tf.constant(_NAN_STEP, tf.int64), name="step_guard")


class TrainSession:
    """Runs a training graph: session creation and recovery, hooks, the step.

    Build the graph first (global step, train op, loss, and the periodic actions:
    `periodic_actions.TrainSummaries` adds summary ops), then construct this
    object in the same graph: it adds the step guard, calls every hook's
    `begin()` and finalizes the graph. `run()` trains until a stop condition and
    returns the last global step.
    """

    def __init__(self, *, global_step, train_op, loss, scaffold, hooks=(), master="",
                 session_config=None, is_chief=True, checkpoints=None, summaries=None,
                 progress=None, session_creation_timeout_secs=7200, clock=time.time,
                 before_finalize_fn=None, restore_dir=None, loop=None, watchdog=None):
        """Prepares the graph for training.

        Args:
          global_step: the global step variable.
          train_op: the training op.
          loss: the scalar loss tensor.
          scaffold: a finalizable tf.train.Scaffold (init ops, saver).
          hooks: SessionRunHooks; their `begin()` is called here.
          master: session target ('' for in-process).
          session_config: tf.ConfigProto for the session.
          is_chief: the chief initialises/restores, saves checkpoints and summaries;
            others wait for the chief to initialise.
          checkpoints: a periodic_actions.CheckpointSaver (chief only), or None.
          summaries: a periodic_actions.TrainSummaries for the task that writes
            the training summaries (the chief, or worker 0 beside a master), or None.
          progress: a periodic_actions.ReportProgress, or None.
          session_creation_timeout_secs: how long a non-chief waits for the chief.
          clock: time source (injectable for tests).
          before_finalize_fn: called after the hooks' begin() and before the graph
            is finalized (the Estimator builds its Saver there, so variables that
            hooks create are covered).
          restore_dir: a non-chief that holds its own copy of the variables (a
            MultiWorkerMirroredStrategy worker) initialises or restores them from
            this directory itself instead of waiting for the chief; None waits.
          loop: a `step_loop.TrainLoop` (train_op and loss are then its spec's):
            each session call runs up to its steps_per_loop steps, and hooks and
            periodic actions run between loops. None: one step per call.
          watchdog: a `collective_watchdog.CollectiveWatchdog` (a collective
            strategy's worker): it bounds session creation and every step, and a
            lost peer ends training instead of recreating the session. None:
            Aborted/Unavailable errors recreate the session (ps clusters).
        """
        self._graph = tf.get_default_graph()
        self._global_step = global_step
        self._train_op = train_op
        # What hooks see as the run's fetches (run_context.original_args.fetches):
        # tf.estimator runs [train_op, loss].
        self._hook_fetches = [train_op, loss]
        self._loop = loop
        if loop is not None:
            hooks = [step_loop.LoopHook(h, loop) for h in hooks]
            # The K=1 path's method stays as it is; loops have their own.
            self._step = self._loop_step
        self._hooks = tuple(hooks)
        self._master = master
        self._session_config = session_config
        self._checkpoints = (checkpoints if is_chief and checkpoints is not None
                             else CheckpointSaver())
        self._summaries = summaries
        self._progress = progress
        # Periodic actions that may add fetches to a step, in fetch order; their
        # bound `fetches` methods are kept so the per-step check is one call each.
        self._step_actions = tuple(a for a in (self._summaries, progress) if a is not None)
        self._fetch_fns = tuple(a.fetches for a in self._step_actions)
        self._creation_timeout_secs = session_creation_timeout_secs
        self._clock = clock
        self._guard = build_step_guard(
            global_step, train_op, loss,
            finite=loop.guard_parts[1] if loop is not None else None)
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
        self._session_config = executor_choice.session_config(
            self._graph, session_config, master, self._hooks,
            setup=executor_choice.scaffold_setup(scaffold))
        self._sessions = session_creation.SessionCreator(
            graph=self._graph, scaffold=scaffold, global_step=global_step, master=master,
            session_config=self._session_config, is_chief=is_chief, restore_dir=restore_dir,
            checkpoints=self._checkpoints,
            creation_timeout_secs=session_creation_timeout_secs)
        self._session = None
        self._queue_runners = None
        self._run_step = None
        self._run_short_loop = None
        self._stop_requested = False
        self._target_step_fn = None
        self._target_step = None
        self._shutdown = GracefulShutdown(0)  # replaced in run()
        self._timed_out_on = None  # remote tasks a timed-out step waited on
        self._watchdog = watchdog
        if watchdog is not None:
            self._watch_calls(watchdog)

    def _watch_calls(self, watchdog):
        """Session creation and the first step after it wait for peers that may still
        be starting; later steps have the collective bound (see collective_watchdog)."""
        self._start = watchdog.watch(self._start, "session creation", first=True)
        first = watchdog.watch(self._step, "first step", first=True)
        later = watchdog.watch(self._step, "step")
        self._stepped = False

        def step(last_step):
            result = (later if self._stepped else first)(last_step)
            self._stepped = True
            return result
        self._step = step

    # Session lifecycle -------------------------------------------------------

    def _create_session(self):
        session = self._sessions.create()
        self._session = session
        self._queue_runners = QueueRunners(session)
        self._run_step = session.make_callable(self._guard)
        if self._loop is not None:
            self._run_short_loop = session.make_callable(
                self._guard, feed_list=[self._loop.length, self._loop.stop_at])
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
        return step

    def _peer_timeout(self, error):
        """session_config.operation_timeout_in_ms ran out on a cluster: the error to
        raise (naming the tasks waited on); the session is then closed without
        waiting (see peer_timeout)."""
        config = self._session_config
        if (not self._master or self._watchdog is not None
                or not (config and config.operation_timeout_in_ms > 0)):
            return error  # collective jobs: the watchdog names lost peers
        own_task = tf.DeviceSpec.from_string(self._guard.device or "")
        own = f"/job:{own_task.job}/task:{own_task.task or 0}" if own_task.job else None
        peers = peer_timeout.remote_tasks(self._graph, own)
        new_error = peer_timeout.peer_timeout_error(error, peers, self._session_config)
        self._timed_out_on = ", ".join(peers) or "no remote task"
        logging.error("%s", new_error.message)
        return new_error

    def _close_session(self):
        if self._session is not None and self._timed_out_on is not None:
            # Its step may still wait on the unreachable task: close() would too.
            peer_timeout.close_in_background(self._session, self._timed_out_on)
            self._session = None
            self._run_step = self._run_short_loop = None
        if self._session is not None:
            try:
                self._queue_runners.stop()
                self._session.close()
            except _RECOVERABLE_ERRORS as e:
                logging.warning("Error while closing a broken session: %s", e)
            self._session = None
            self._run_step = self._run_short_loop = None

    # Periodic work -------------------------------------------------------------

    def _save(self, step):
        """Saves a checkpoint; returns True when a listener asks to stop.

        The global step is read again first (as TF's CheckpointSaverHook does):
        other workers may have moved it since `step` was fetched. Only the chief
        saves, and only on save steps, so this costs nothing per step.
        """
        if self._master:
            step = int(self._session.run(self._global_step))
        return self._checkpoints.save(self._session, self._scaffold.saver, step)

    # The step --------------------------------------------------------------------

    def _extra_fetches(self, next_step):
        extra = {}
        for fetches in self._fetch_fns:
            fetches(next_step, extra)
        return extra

    def _step(self, last_step):
        """Runs one training step (and the save due at its end); returns the new
        global step."""
        extra = self._extra_fetches(last_step + 1)
        if not self._hooks and not extra:
            step = self._run_step()
            self._after_step(step, None)
        else:
            step = self._moved_by_hooks(last_step, self._run_with_hooks(extra))
        if step == _NAN_STEP:
            raise NanLossDuringTrainingError(
                f"NaN or infinite loss during training after global step {last_step}")
        return int(step)

    def _loop_length(self, last_step):
        """The loop's steps: K, or fewer to end exactly at the target step."""
        length = self._loop.steps_per_loop
        if self._target_step is not None:
            # A float target (steps=1.5) stops at the first whole step past it.
            length = max(1, min(length, math.ceil(self._target_step - last_step)))
        return length

    def _loop_step(self, last_step):
        """Runs one multi-step loop (and the save due at its end); returns the new
        global step."""
        length = self._loop_length(last_step)
        extra = self._extra_fetches(last_step + length)
        # With a target step the loop also stops there (a train op may move the
        # global step by more than one); without one, a full loop feeds nothing.
        stop_at = self._target_step
        full = length == self._loop.steps_per_loop and stop_at is None
        stop_at = step_loop.NO_STOP if stop_at is None else math.ceil(stop_at)
        if not self._hooks and not extra:
            step = self._run_step() if full else self._run_short_loop(length, stop_at)
            self._after_step(step, None)
        else:
            step = self._moved_by_hooks(last_step, self._run_with_hooks(
                extra, None if full else {self._loop.length: length,
                                          self._loop.stop_at: stop_at},
                self._run_step_only if full else None))
        if step == _NAN_STEP:
            at = int(self._session.run(self._global_step))
            raise NanLossDuringTrainingError(
                f"NaN or infinite loss during training in the loop of global steps "
                f"{last_step + 1} to {last_step + length}: at global step {at}")
        return int(step)

    def _step_after_input_end(self, step):
        """The global step when the input ended: a loop's earlier steps trained."""
        if self._loop is None:
            return step
        return int(self._session.run(self._global_step))

    def _after_step(self, step, results):
        """The chief's work at the end of a step, before the user's hooks' after_run
        (tf.estimator's CheckpointSaverHook and SummarySaverHook run first): step
        actions, then the checkpoint save when one is due. A NaN step saves nothing."""
        if step == _NAN_STEP:
            return
        step = int(step)
        if results is not None:
            for action in self._step_actions:
                action.after_step(step, results)
        if self._checkpoints.due(step) and self._save(step):
            self._stop_requested = True

    def _moved_by_hooks(self, last_step, step):
        """The global step after the hooks' after_run, when the train op left it.

        A train op that does not move the global step may leave that to a hook
        (adanet's trains in hooks and sets the step in after_run); tf.estimator's
        StopAtStepHook and CheckpointSaverHook then read the variable again, so
        the stop and the final save see the hook's step. Only then is it read.
        """
        if step == last_step:
            return int(self._session.run(self._global_step))
        return step

    def _run_with_hooks(self, extra, feed_dict=None, fast_fn=False):
        fetches = {"step": self._guard, "extra": extra}
        if fast_fn is False:
            fast_fn = self._run_step_only
        results, stop = run_with_hooks(
            self._session, self._hooks, fetches, original_fetches=self._hook_fetches,
            fast_fn=None if extra else fast_fn, feed_dict=feed_dict,
            before_after_run_fn=lambda r: self._after_step(r["step"], r["extra"]))
        if stop:
            self._stop_requested = True
        return results["step"]

    def _run_step_only(self):
        """What the hooked run returns when only the step guard is fetched."""
        return {"step": self._run_step(), "extra": {}}

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
            if self._watchdog is not None:
                self._watchdog.start()
            try:
                step = self._train_until(stop_at_step_fn)
                self._finish(step)
            finally:
                if self._watchdog is not None:
                    self._watchdog.stop()
                if self._summaries is not None:
                    self._summaries.close()
                self._close_session()
        shutdown.raise_if_signalled()
        return step

    def _start(self):
        step = self._create_session()
        if self._target_step_fn is not None and self._target_step is None:
            self._target_step = self._target_step_fn(step)
        if self._progress is not None:
            self._progress.start(step, self._target_step_fn)
        return step

    def _train_until(self, stop_at_step_fn):
        """Trains, saving on schedule, until a stop; ends with a saved final step.

        A lost ps or worker (Aborted/Unavailable) during a step or a save recreates
        the session and goes on; so does one during the final save.
        """
        step = self._start_with_retries()
        if self._summaries is not None:
            # Only once the session exists: a model_dir that holds another model
            # fails in session creation, and then nothing may be written there.
            self._summaries.open(self._graph)
        input_ended = False
        while True:
            while not (input_ended or self._stopping() or stop_at_step_fn(step)):
                try:
                    step = self._step(step)
                except tf.errors.OutOfRangeError:
                    step = self._step_after_input_end(step)
                    logging.info("Input ended at global step %d; stopping training.",
                                 step)
                    input_ended = True
                except _RECOVERABLE_ERRORS as e:
                    step = self._recover(e)
                except tf.errors.DeadlineExceededError as e:
                    raise self._peer_timeout(e) from e
                except tf.errors.FailedPreconditionError as e:
                    self._end_if_collectives_lost(e)
                    raise
            try:
                return self._save_final(step)
            except _RECOVERABLE_ERRORS as e:
                step = self._recover(e)
            except tf.errors.DeadlineExceededError as e:
                raise self._peer_timeout(e) from e

    def _stopping(self):
        return self._stop_requested or self._shutdown.signum is not None

    def _end_if_collectives_lost(self, error):
        """A collective job's worker cannot recreate its session once a peer was
        lost (its collectives are aborted for good): it ends with a clear error.

        Raises:
          The error's type, naming the lost peers and the newest checkpoint.
        """
        if self._watchdog is not None and collective_watchdog.is_collective_loss(error):
            raise collective_watchdog.lost_error(
                error, self._watchdog.peer_list, self._watchdog.checkpoint_dir,
                self._watchdog.task) from error

    def _recover(self, error):
        self._end_if_collectives_lost(error)
        logging.warning("Session failed (%s: %s); recreating it.", type(error).__name__,
                        str(error).splitlines()[0] if str(error) else "")
        self._close_session()
        return self._start_with_retries()

    def _start_with_retries(self):
        """Creates the session, retrying while the cluster is unavailable."""
        deadline = self._clock() + self._creation_timeout_secs
        while True:
            try:
                return self._start()
            except _RECOVERABLE_ERRORS as e:
                self._close_session()
                self._end_if_collectives_lost(e)
                if self._clock() >= deadline or self._shutdown.signum is not None:
                    raise
                logging.warning("Could not start the session (%s); retrying.",
                                type(e).__name__)
                time.sleep(_READY_POLL_SECS)

    def _save_final(self, step):
        """Saves the last step unless it was just saved; returns the step."""
        if self._checkpoints.enabled and not self._checkpoints.saved_at(step):
            self._save(step)
        return step

    def _finish(self, step):
        self._checkpoints.end(self._session, step)
        for hook in self._hooks:
            hook.end(self._session)
