"""Other flavors of the tf.estimator API: `compat.v1` is TF 1.x's tf.estimator.

``import estimator_lite.compat.v1 as tf_estimator`` for programs written against
TF 1.x's ``tf.estimator`` or TF 2.x's ``tf.compat.v1.estimator``.
"""

import importlib

__all__ = ["v1"]


def __getattr__(name):
    if name == "v1":
        return importlib.import_module("estimator_lite.compat.v1")
    raise AttributeError(f"module 'estimator_lite.compat' has no attribute {name!r}")
