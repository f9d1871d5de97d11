"""Queue runners of TF1 input pipelines, started with each session.

TF1-era input_fns (`tf.compat.v1.train.string_input_producer`, `batch`,
`shuffle_batch`, hand-built `FIFOQueue`s with a `QueueRunner`) fill their queues
from threads that someone must start; tf.estimator's MonitoredSession started
every runner in the graph's QUEUE_RUNNERS collection when it created a session and
stopped them when it closed. Graphs without queue runners pay nothing.
"""

from estimator_lite._tf import tf

__all__ = ["QueueRunners"]

# How long closing waits for the runner threads (MonitoredSession's default).
_STOP_GRACE_SECS = 120


class QueueRunners:
    """The coordinator a session's hooks get, and the queue-runner threads on it."""

    def __init__(self, session):
        """Starts the default graph's queue runners (if any) on `session`."""
        self.coordinator = tf.train.Coordinator()
        self._threads = []
        if tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS):
            self._threads = tf.train.start_queue_runners(session, coord=self.coordinator)

    def stop(self):
        """Asks the runner threads to stop and waits for them (before the session
        closes, as MonitoredSession does).

        Raises:
          Whatever a runner thread reported to the coordinator (e.g. a failed
          enqueue), as MonitoredSession re-raises it.
        """
        self.coordinator.request_stop()
        if self._threads:
            self.coordinator.join(self._threads, stop_grace_period_secs=_STOP_GRACE_SECS,
                                  ignore_live_threads=True)
