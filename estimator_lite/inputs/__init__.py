"""Input functions over in-memory data: `tf.estimator.inputs`'s two helpers.

`numpy_input_fn` and `pandas_input_fn` keep tf.estimator 2.15's signatures; pandas
is optional (needed only to call `pandas_input_fn`).
"""

from estimator_lite.inputs.numpy_io import numpy_input_fn
from estimator_lite.inputs.pandas_io import pandas_input_fn

__all__ = ["numpy_input_fn", "pandas_input_fn"]
