"""Creating a training session: wait for the chief, keep a live model, or restore.

`train_setup` builds the `SessionCreator` of a training graph; `TrainSession` asks
it for every session it opens (the first one, and a new one after a lost ps or
worker) and for how long a failing start is retried; what it then does with the
session (the step callables, the first save, the hooks' `after_create_session`)
stays there.

| a non-chief waiting for the chief   | `SessionCreator.create`                       |
| a restarted chief keeping the ps's  | `SessionCreator._adopt_live_model`            |
| live model                          |                                               |
| restore the newest checkpoint (it   | `SessionCreator._restore_or_initialize`       |
| must fit the graph) or initialise   |                                               |
"""

import time

from estimator_lite._engine import executor_choice, model_dir
from estimator_lite._engine.periodic_actions import (
    NOT_RESTORED,
    remove_checkpoint_temps,
    restoring_saver,
)
from estimator_lite._tf import logging, tf

__all__ = ["SessionCreator", "RECOVERABLE_ERRORS", "READY_POLL_SECS"]

# What a lost ps or worker raises: the session is recreated.
RECOVERABLE_ERRORS = (tf.errors.AbortedError, tf.errors.UnavailableError)
# How often a non-chief checks whether the chief has initialised the model
# (SessionManager's default of 30 s delays every worker start by up to that much).
READY_POLL_SECS = 1


class SessionCreator:
    """Creates the sessions of one training graph, as this task's role asks."""

    def __init__(self, *, graph, scaffold, global_step, master, session_config,
                 is_chief, restore_dir, checkpoints, creation_timeout_secs,
                 clock=time.time):
        """Keeps what a session is created from.

        Args:
          graph: the training graph.
          scaffold: its Scaffold (init ops, saver), finalized before `create`.
          global_step: the global step variable.
          master: session target ('' for in-process).
          session_config: tf.ConfigProto for the session, or None.
          is_chief: the chief initialises or restores; others wait for it.
          restore_dir: a non-chief that holds its own copy of the variables (a
            MultiWorkerMirroredStrategy worker) initialises or restores them from
            this directory itself; None waits for the chief.
          checkpoints: the task's periodic_actions.CheckpointSaver (its directory
            and estimator name; a disabled one for non-chiefs).
          creation_timeout_secs: how long a non-chief waits for the chief, and a
            failing start is retried.
          clock: time source (injectable for tests).
        """
        self._graph = graph
        self._scaffold = scaffold
        self._global_step = global_step
        self._master = master
        self._session_config = session_config
        self._is_chief = is_chief
        self._restore_dir = restore_dir
        self._checkpoints = checkpoints
        self._creation_timeout_secs = creation_timeout_secs
        self._clock = clock

    master = property(lambda self: self._master,
                      doc="The session target ('' for in-process).")

    def choose_executor(self, hooks):
        """Picks the executor of the sessions, once the graph is finalized (see
        `executor_choice`).

        Args:
          hooks: the SessionRunHooks of the sessions' runs.
        """
        self._session_config = executor_choice.session_config(
            self._graph, self._session_config, self._master, hooks,
            setup=executor_choice.scaffold_setup(self._scaffold))

    def deadline(self):
        """When a start that keeps failing is given up: the creation timeout from now."""
        return self._clock() + self._creation_timeout_secs

    def past(self, deadline):
        """Whether `deadline` (from `deadline`) has passed."""
        return self._clock() >= deadline

    def create(self):
        """A new session with the model ready to train.

        Returns:
          The session: a non-chief's once the chief initialised the model; the
          chief's on the live model, a restored checkpoint or a fresh model.
        """
        manager = tf.train.SessionManager(
            local_init_op=self._scaffold.local_init_op,
            ready_op=self._scaffold.ready_op,
            ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
            graph=self._graph, recovery_wait_secs=READY_POLL_SECS)
        if not self._is_chief and self._restore_dir is None:
            return manager.wait_for_session(
                self._master, config=self._session_config,
                max_wait_secs=self._creation_timeout_secs)
        session = self._adopt_live_model()
        if session is None:
            session = self._restore_or_initialize(manager)
        return session

    def _restore_or_initialize(self, manager):
        """Chief (or a worker with its own variables): restores the newest checkpoint
        (after checking it fits the graph) or initialises the model."""
        ckpt_dir = self._checkpoints.checkpoint_dir or self._restore_dir
        latest = model_dir.latest_checkpoint(ckpt_dir) if ckpt_dir else None
        if latest:
            # The variables the Estimator's Saver restores; a model_fn's own Saver
            # decides for itself, so then only shapes and dtypes are checked.
            skipped = {id(v) for v in tf.get_collection(NOT_RESTORED)}
            estimator_saver = self._scaffold.saver in tf.get_collection(tf.GraphKeys.SAVERS)
            model_dir.check_checkpoint_matches(
                latest, [v for v in tf.global_variables() if id(v) not in skipped],
                ckpt_dir, require_all=estimator_saver,
                estimator_name=self._checkpoints.estimator_name)
        if self._checkpoints.checkpoint_dir:
            tf.io.gfile.makedirs(ckpt_dir)  # the Saver does not create it
            remove_checkpoint_temps(ckpt_dir)
        return manager.prepare_session(
            self._master, init_op=self._scaffold.init_op,
            saver=restoring_saver(self._scaffold.saver),
            checkpoint_dir=ckpt_dir, config=self._session_config,
            init_feed_dict=self._scaffold.init_feed_dict,
            init_fn=self._scaffold.init_fn)

    def _adopt_live_model(self):
        """A restarted chief keeps the live model on the ps instead of going back.

        When the ps tasks still hold every variable initialised and their global
        step is ahead of the newest checkpoint (the workers kept training while the
        chief was down), restoring that checkpoint would throw their steps away.

        Returns:
          A ready session on the live model, or None to initialise/restore as usual.
        """
        ckpt_dir = self._checkpoints.checkpoint_dir
        if not self._master or ckpt_dir is None:
            return None  # no remote variables to keep
        latest = model_dir.latest_checkpoint(ckpt_dir)
        if latest is None:
            # A fresh run (the chief saves at step 0 as soon as it starts): no extra
            # session just to find uninitialised variables.
            return None
        session = tf.Session(self._master, graph=self._graph, config=self._session_config)
        try:
            if len(session.run(self._scaffold.ready_op)):
                session.close()
                return None
            live_step = int(session.run(self._global_step))
            saved_step = model_dir.checkpoint_step(latest)
            if live_step <= saved_step:
                session.close()
                return None
            session.run(self._scaffold.local_init_op)
        except RECOVERABLE_ERRORS:
            session.close()
            raise
        # A collective worker's variables live on its own server, not on a ps.
        holder = "This task's server" if self._restore_dir is not None else "The ps"
        logging.info("%s holds a live model at global step %d, ahead of the newest "
                     "checkpoint (step %d): keeping it instead of restoring.", holder,
                     live_step, saved_step)
        return session
