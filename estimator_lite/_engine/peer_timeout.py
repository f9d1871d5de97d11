"""A step that outlasts ``operation_timeout_in_ms`` on a cluster: name the peers, end.

On a ps-style cluster a network partition does not break a step: gRPC waits on
the TCP connection, and the step blocks for as long as the partition lasts. The
one bound TensorFlow offers is ``session_config.operation_timeout_in_ms``: the
blocked ``session.run`` then raises DeadlineExceededError, whose text names no
task. Two things make that bound usable here:

- `peer_timeout_error` rewrites the error so that it names the remote tasks the
  step was waiting on (the jobs/tasks the graph places ops on, other than the
  caller's own), and the timeout;
- `close_in_background` closes such a session without waiting for it: closing
  a session whose step is still blocked on an unreachable task blocks too (the
  master waits for the step to end), which would turn the bounded error back
  into a hang. The close goes on in a daemon thread and finishes by itself if
  the network comes back.
"""

import threading

from estimator_lite._tf import logging, tf

__all__ = ["remote_tasks", "peer_timeout_error", "close_in_background"]

# How long the caller waits for a close that may be stuck on an unreachable task.
_CLOSE_WAIT_SECS = 5


def remote_tasks(graph, own_task):
    """The ``/job:<name>/task:<index>`` prefixes of the graph's devices but `own_task`."""
    tasks = set()
    for op in graph.get_operations():
        spec = tf.DeviceSpec.from_string(op.device or "")
        if spec.job is not None:
            task = f"/job:{spec.job}/task:{spec.task or 0}"
            if task != own_task:
                tasks.add(task)
    return sorted(tasks)


def peer_timeout_error(error, peers, session_config):
    """A DeadlineExceededError saying which tasks did not answer in time.

    Args:
      error: the DeadlineExceededError a session call raised.
      peers: the remote tasks the step waits on (`remote_tasks`).
      session_config: the session's tf.ConfigProto (for the timeout's value).

    Returns:
      A new tf.errors.DeadlineExceededError (the same type, so callers that
      handle it still do) whose message names the peers and the bound.
    """
    timeout_ms = session_config.operation_timeout_in_ms if session_config else 0
    peers = peers or ["(no remote task in the graph)"]
    lines = [line for line in str(error).splitlines() if line.strip()]
    message = (f"a training step got no answer within operation_timeout_in_ms="
               f"{timeout_ms} from the task(s) it waits on: {', '.join(peers)} "
               f"(unreachable: a network partition, or the task hangs); this task "
               f"gives up so that it can be restarted. Cause: "
               f"{lines[-1] if lines else type(error).__name__}")
    return tf.errors.DeadlineExceededError(None, None, message)


def close_in_background(session, what):
    """Closes `session` in a daemon thread; waits a few seconds at most.

    Args:
      session: a tf.Session whose last step timed out.
      what: the unreachable tasks, for the log.
    """
    def close():
        try:
            session.close()
        except tf.errors.OpError as e:
            logging.warning("Closing the timed-out session failed: %s", e)

    thread = threading.Thread(target=close, name="close-timed-out-session", daemon=True)
    thread.start()
    thread.join(_CLOSE_WAIT_SECS)
    if thread.is_alive():
        logging.warning("The timed-out session is still closing after %d s (it waits "
                        "on %s); leaving it to a background thread.", _CLOSE_WAIT_SECS,
                        what)
