"""Request values for a signature's inputs: checked, then converted for feeding.

Used by `predictor.Predictor`, which checks every request before TensorFlow sees it,
so an error names the input, what it expects and what was given.
"""

import numpy as np

from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import tf

__all__ = ["InputSpec"]

# The numpy kinds (bool, int, uint, float, complex) each TF dtype family accepts:
# the ones numpy casts without changing what a value means.
_NUMERIC_KINDS = (("is_bool", "b"), ("is_integer", "biu"), ("is_floating", "biuf"),
                  ("is_complex", "biufc"))


def _describe_dtype(array):
    """The given dtype in words: 'float64', or 'object (holding int)'."""
    if array.dtype.kind == "O":
        kinds = sorted({type(v).__name__ for v in array.flat})
        return f"object (holding {', '.join(kinds) or 'nothing'})"
    if array.dtype.kind == "U":
        return "str"
    return str(array.dtype)


class InputSpec:
    """What one signature input accepts; turns a request's value into a feedable array.

    Immutable after construction, so concurrent requests share it safely.
    """

    __slots__ = ("_dtype", "_key", "_shape")

    def __init__(self, key, tensor):
        """Args: key: the input's name in the signature; tensor: the tf.Tensor fed."""
        self._key = key
        self._dtype = tensor.dtype.base_dtype
        # None: unknown rank, anything goes; else one entry per dim (None: any size).
        self._shape = (tuple(tensor.shape.as_list())
                       if tensor.shape.ndims is not None else None)

    def feed_value(self, value):
        """`value` as a numpy array of the input's dtype and a fitting shape.

        Raises:
          TypeError: a dtype that does not cast safely to the input's.
          ValueError: values that do not fit, or the wrong shape.
        """
        if isinstance(value, (tf.Tensor, tf.SparseTensor, tf.Operation)):
            raise TypeError(f"input {self._key!r} must be array-like (numpy array, list "
                            f"or scalar), got the graph tensor {value!r}")
        if self._dtype == tf.string:
            array = self._string_array(value)
        else:
            array = self._numeric_array(value)
        self._check_shape(array.shape)
        return array

    def _as_array(self, value, dtype=None):
        if isinstance(value, np.ndarray):
            return value
        try:
            return np.array(value, dtype=dtype)
        except (TypeError, ValueError) as e:  # e.g. ragged nested lists
            raise ValueError(f"input {self._key!r} is not a rectangular array: "
                             f"{value!r} ({e})") from e

    def _dtype_error(self, array):
        return TypeError(f"input {self._key!r} has dtype {self._dtype.name}; got values "
                         f"of dtype {_describe_dtype(array)}, which do not cast to it "
                         "safely")

    def _string_array(self, value):
        # An object array, never numpy's fixed-width bytes ('S'), which drops
        # trailing NUL bytes: a serialized tf.Example often ends with them.
        array = self._as_array(value, dtype=object)
        if array.dtype.kind in "US":
            return array
        if array.dtype.kind == "O" and all(isinstance(v, (bytes, str))
                                           for v in array.flat):
            return array
        raise self._dtype_error(array)

    def _numeric_array(self, value):
        array = self._as_array(value)
        kinds = next((k for test, k in _NUMERIC_KINDS if getattr(self._dtype, test)),
                     None)
        if kinds is None:
            return array  # resource, variant, quantized: TensorFlow checks those
        if array.dtype.kind not in kinds:
            raise self._dtype_error(array)
        target = np.dtype(self._dtype.as_numpy_dtype)
        if (self._dtype.is_integer and array.size
                and not np.can_cast(array.dtype, target, "safe")):
            limits = np.iinfo(target)
            low, high = array.min(), array.max()
            if low < limits.min or high > limits.max:
                raise ValueError(f"input {self._key!r} has dtype {self._dtype.name}; "
                                 f"got values from {low} to {high}, outside its range "
                                 f"[{limits.min}, {limits.max}]")
        return array.astype(target, copy=False)

    def _check_shape(self, given):
        expected = self._shape
        if expected is None:
            return
        if len(given) != len(expected) or any(
                want is not None and want != got
                for want, got in zip_strict(expected, given)):
            raise ValueError(f"input {self._key!r} has shape {expected} (None: any "
                             f"size); got shape {tuple(given)}")
