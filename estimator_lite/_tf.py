"""The one place estimator_lite imports TensorFlow.

Every other module does ``from estimator_lite._tf import tf`` and uses only names
that also exist in TF 1.15's ``tf.compat.v1`` (tests/tf115_api_test.py checks it).
Importing this module changes no global TensorFlow state: callers build every graph
inside ``tf.Graph().as_default()``.
"""

import tensorflow.compat.v1 as tf

__all__ = ["tf"]
