"""What a failed training step does: recreate the session, or end a collective job.

`train_setup` chooses the part once, from `topology.Topology.failure_ends_job`,
and hands it to `TrainSession`, which never asks which one it has:

| part               | jobs                 | a lost peer        | a step past the    |
|                    |                      | (Aborted,          | operation_timeout_ |
|                    |                      | Unavailable)       | in_ms              |
| ------------------ | -------------------- | ------------------ | ------------------ |
| `RecreateSession`  | local, ps, and a     | the session is     | an error naming    |
|                    | collective job of    | recreated          | the peers          |
|                    | one worker           |                    | (`peer_timeout`)   |
| `EndCollectiveJob` | collective, with     | the job ends with  | the error as it is |
|                    | peers                | an error naming    | (the watchdog      |
|                    |                      | the lost peers     | names lost peers)  |

`EndCollectiveJob` also runs the watchdog thread and watches session creation and
every step (see `collective_watchdog`).
"""

from estimator_lite._engine import collective_watchdog, peer_timeout
from estimator_lite._tf import logging, tf

__all__ = ["EndCollectiveJob", "RecreateSession"]


class RecreateSession:
    """A lost ps or worker recreates the session; a timed-out step names its peers."""

    def __init__(self, master, session_config):
        """Args:
          master: the session target ('' for in-process: no peers to time out on).
          session_config: the session's tf.ConfigProto (its operation_timeout_in_ms),
            or None.
        """
        self._master = master
        self._session_config = session_config
        self._timed_out_on = None  # the remote tasks a timed-out step waited on

    def start(self):
        """Nothing runs beside the training loop."""

    def stop(self):
        """Nothing runs beside the training loop."""

    def watch_start(self, start_fn):
        """Session creation, as it is."""
        return start_fn

    def watch_steps(self, step_fn):
        """The step, as it is (the one-callable fast path stays one call)."""
        return step_fn

    def check(self, error):
        """Nothing ends the job here: the caller recreates the session.

        Args:
          error: what a step or session creation raised.
        """

    def timeout_error(self, error, guard):
        """The error to raise when a step outlasted operation_timeout_in_ms.

        On a cluster with that bound set, a new DeadlineExceededError naming the
        tasks the step waited on (logged); the session is then closed without
        waiting (`closed_in_background`). Otherwise `error` itself.

        Args:
          error: the DeadlineExceededError.
          guard: the step guard (its device is this task's; its graph the step's).
        """
        config = self._session_config
        if not self._master or not (config and config.operation_timeout_in_ms > 0):
            return error
        own_task = tf.DeviceSpec.from_string(guard.device or "")
        own = f"/job:{own_task.job}/task:{own_task.task or 0}" if own_task.job else None
        peers = peer_timeout.remote_tasks(guard.graph, own)
        new_error = peer_timeout.peer_timeout_error(error, peers, config)
        self._timed_out_on = ", ".join(peers) or "no remote task"
        logging.error("%s", new_error.message)
        return new_error

    def closed_in_background(self, session):
        """Closes the session in the background after a timed-out step (whose close
        would wait on the unreachable task too); returns whether it did."""
        if self._timed_out_on is None:
            return False
        peer_timeout.close_in_background(session, self._timed_out_on)
        return True


class EndCollectiveJob:
    """A collective job's worker: a lost peer ends the job, as the watchdog does.

    Once a peer was lost, the worker's collectives are aborted for good: it cannot
    recreate its session, so it ends with an error naming the lost peers and the
    newest checkpoint, for the orchestrator to restart the job.
    """

    def __init__(self, watchdog):
        """Args:
          watchdog: the task's `collective_watchdog.CollectiveWatchdog`.
        """
        self._watchdog = watchdog
        self._stepped = False

    def start(self):
        """Starts the watchdog thread."""
        self._watchdog.start()

    def stop(self):
        """Stops the watchdog thread."""
        self._watchdog.stop()

    def watch_start(self, start_fn):
        """Session creation, bounded as peers may still be starting."""
        return self._watchdog.watch(start_fn, "session creation", first=True)

    def watch_steps(self, step_fn):
        """The step, watched: the first one after session creation waits for peers
        that may still be starting; later ones have the collective bound."""
        first = self._watchdog.watch(step_fn, "first step", first=True)
        later = self._watchdog.watch(step_fn, "step")

        def step(last_step):
            result = (later if self._stepped else first)(last_step)
            self._stepped = True
            return result
        return step

    def check(self, error):
        """Ends the job when `error` means a lost peer.

        Args:
          error: what a step or session creation raised.

        Raises:
          The error's type, naming the lost peers and the newest checkpoint.
        """
        if collective_watchdog.is_collective_loss(error):
            watchdog = self._watchdog
            raise collective_watchdog.lost_error(
                error, watchdog.peer_list, watchdog.checkpoint_dir,
                watchdog.task) from error

    def timeout_error(self, error, guard):
        """`error` as it is: the watchdog names lost peers."""
        del guard
        return error

    def closed_in_background(self, session):
        """Never: a collective job's session closes as usual."""
        del session
        return False
