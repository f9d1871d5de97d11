"""estimator_lite serving tf.estimator's module paths for the length of a test
(not a test file)."""

import contextlib
import sys

import estimator_lite


@contextlib.contextmanager
def installed_as_tf_estimator():
    """Inside the block `install_as_tf_estimator()` is in force; after it, it is
    undone and no `tensorflow_estimator` module stays imported, so the next test
    imports tf.estimator's paths afresh."""
    estimator_lite.install_as_tf_estimator()
    try:
        yield
    finally:
        estimator_lite.uninstall_as_tf_estimator()
        for name in [n for n in sys.modules if n.startswith("tensorflow_estimator")]:
            del sys.modules[name]
