"""tf.estimator's `training` module's private names that no working module needs.

tf.estimator's training tests build ``training._StopAtSecsHook`` by the private
path ``tensorflow_estimator.python.estimator.training``, served after
`estimator_lite.training`'s own names and the evaluator's (`_evaluation`).
"""

from estimator_lite import training
from estimator_lite._tf import tf


class _StopAtSecsHook(tf.train.SessionRunHook):
    """Requests a stop once `stop_after_secs` have passed since `begin`.

    The clock is `training`'s (its `time` attribute), as in tf.estimator, where the
    hook lives in that module: replacing ``training.time`` reaches it too.
    """

    def __init__(self, stop_after_secs):
        self._stop_after_secs = stop_after_secs
        self._start_secs = None

    def begin(self):
        self._start_secs = training.time.time()

    def after_run(self, run_context, run_values):
        del run_values
        if training.time.time() - self._start_secs >= self._stop_after_secs:
            run_context.request_stop()
