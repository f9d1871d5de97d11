"""The one place estimator_lite imports TensorFlow.

Every other module does ``from estimator_lite._tf import tf`` and uses only names
that also exist in TF 1.15's ``tf.compat.v1`` (tests/tf115_api_test.py checks it).
Importing this module changes no global TensorFlow state: callers build every graph
inside ``tf.Graph().as_default()``.

`logging` is ``tf.compat.v1.logging``: it writes to the ``tensorflow`` Python logger,
where tf.estimator users look (``tf.compat.v1.logging.set_verbosity(INFO)``). The
library never changes that logger's level.
"""

import tensorflow.compat.v1 as tf

logging = tf.logging

# tf.compat.v1.data.Dataset is DatasetV1; the `tf.data.Dataset` users build with
# `import tensorflow as tf` is its base class DatasetV2. Both are datasets to us.
DATASET_TYPES = tuple(
    cls for cls in tf.data.Dataset.__mro__
    if cls.__name__ in ("DatasetV1", "DatasetV2")) or (tf.data.Dataset,)

__all__ = ["DATASET_TYPES", "logging", "tf"]
