"""`job.py` on either library: estimator_lite, or tf.estimator (the oracle).

The network-fault scenarios (faults_network_test.py) run every role with this
program. With ``FAULTS_JOB_LIBRARY=tf.estimator`` (and the oracle's interpreter)
the job's ``el`` is ``tf.estimator``: the same program, the same flags, so both
libraries meet the same fault. Otherwise it is job.py unchanged.
"""

import os
import sys
import types

# Run as a script: the repo root (on PYTHONPATH) provides `tests.faults.job`.
if os.environ.get("FAULTS_JOB_LIBRARY") == "tf.estimator":
    import tensorflow as tf

    def _train_and_evaluate(*args, **kwargs):
        # tf.estimator returns None on a chief/worker/evaluator of a cluster.
        result = tf.estimator.train_and_evaluate(*args, **kwargs)
        return (None, None) if result is None else result

    # job.py's `import estimator_lite as el` then gets tf.estimator's names
    # (Estimator, RunConfig, TrainSpec, LatestExporter, export, ...).
    _shim = types.ModuleType("estimator_lite")
    _shim.__getattr__ = lambda name: getattr(tf.estimator, name)
    _shim.train_and_evaluate = _train_and_evaluate
    sys.modules["estimator_lite"] = _shim

from tests.faults import job  # noqa: E402 - after the library is chosen

if __name__ == "__main__":
    sys.exit(job.main())
