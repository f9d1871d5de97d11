"""`job.py` on either library: estimator_lite, or tf.estimator (the oracle).

The network-fault scenarios (faults_network_test.py) run every role with this
program. With ``FAULTS_JOB_LIBRARY=tf.estimator`` (and the oracle's interpreter)
the job's ``el`` is ``tf.estimator``: the same program, the same flags, so both
libraries meet the same fault. Otherwise it is job.py unchanged.
"""

import os
import sys

# Run as a script: the repo root (on PYTHONPATH) provides `tests.faults.job`.
if os.environ.get("FAULTS_JOB_LIBRARY") == "tf.estimator":
    import tensorflow as tf

    # job.py's `import estimator_lite as el` then gets tf.estimator, whose names
    # (Estimator, RunConfig, TrainSpec, LatestExporter, export, ...) it uses.
    sys.modules["estimator_lite"] = tf.estimator

from tests.faults import job  # noqa: E402 - after the library is chosen

if __name__ == "__main__":
    sys.exit(job.main())
