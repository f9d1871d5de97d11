"""`numpy_input_fn`: an input_fn over in-memory numpy arrays, as tf.estimator had.

tf.estimator fed arrays through queues and a feeding thread. Here the pipeline is
`tf.data` inside the caller's graph: a dataset of row indices (shuffled per epoch,
repeated, batched) mapped through `tf.numpy_function` to the rows themselves. The
arrays stay in Python memory, so they are never copied into the GraphDef (which
checkpoints and `graph.pbtxt` would carry), and the input_fn returns tensors, as
tf.estimator's did, so `features, labels = input_fn()` keeps working.
"""

import numpy as np

from estimator_lite._engine import validation as _validation
from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import tf

__all__ = ["numpy_input_fn"]

_SHUFFLE_MESSAGE = ("shuffle must be provided and explicitly set as boolean (it is "
                    "recommended to set it as True for training); got {!r}")


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None,
                   queue_capacity=1000, num_threads=1):
    """Returns an input_fn that yields batches of `x` (and `y`) as tensors.

    Args:
      x: a numpy array, or a non-empty dict of name -> numpy array: the features.
        All arrays (here and in `y`) share their first dimension, the rows.
      y: None, a numpy array or a non-empty dict of arrays: the labels. Dict keys
        must differ from those of `x`.
      batch_size: rows per batch (an int >= 1).
      num_epochs: passes over the data (an int; 0 or less is an empty input, as
        on tf.estimator), or None to repeat forever.
        With None every batch has exactly `batch_size` rows (a static batch
        dimension); otherwise the last batch may be smaller.
      shuffle: required bool. True reshuffles every epoch, with the graph-level
        seed (RunConfig's `tf_random_seed`), so it is reproducible when that is set.
      queue_capacity: rows buffered ahead of the model (an int >= 1).
      num_threads: threads gathering batches (an int >= 1); the order of the
        rows does not depend on it.

    Returns:
      A no-argument input_fn returning `features` when `y` is None, else
      `(features, labels)`; each a tensor or a dict of tensors, like `x` and `y`.

    Raises:
      ValueError: `shuffle` is not a bool, a dict is empty, keys of `x` and `y`
        collide, the arrays have no rows, or a count is < 1 (arrays of different
        lengths: when the input_fn is called, as tf.estimator).
      TypeError: `x` or `y` is not an array or dict of arrays, or a count is not
        an int.
    """
    check_shuffle(shuffle)
    features = _check_structure("x", x)
    labels = None if y is None else _check_structure("y", y)
    _check_disjoint_keys(features, labels)
    if len({len(array) for array in _flatten((features, labels))}) == 1:
        _check_same_length(features, labels)  # rows at all: checked now
    input_fn = make_input_fn(features, labels, batch_size=batch_size,
                             num_epochs=num_epochs, shuffle=shuffle,
                             queue_capacity=queue_capacity, num_threads=num_threads)

    def checked_input_fn():
        # Arrays of different lengths fail when the input_fn is called, as in
        # tf.estimator (a program that never calls it runs).
        _check_same_length(features, labels)
        return input_fn()

    return checked_input_fn


def check_shuffle(shuffle):
    """tf.estimator refused to guess whether to shuffle; so do we.

    Raises:
      ValueError: `shuffle` is not a bool (tf.estimator's type and message).
    """
    if not isinstance(shuffle, bool):
        raise ValueError(_SHUFFLE_MESSAGE.format(shuffle))


def make_input_fn(features, labels, batch_size, num_epochs, shuffle, queue_capacity,
                  num_threads):
    """Builds the input_fn over already checked arrays (shared with pandas_io).

    Args:
      features: a numpy array or a dict of them.
      labels: None, a numpy array or a dict of them.
      batch_size, num_epochs, shuffle, queue_capacity, num_threads: as in
        `numpy_input_fn`.

    Returns:
      The no-argument input_fn.

    Raises:
      TypeError, ValueError: a count is of the wrong type or below 1 (num_epochs
        may be any int).
    """
    _validation.check_int("batch_size", batch_size, 1)
    # 0 (or fewer) epochs is an empty input, as on tf.estimator: training and
    # evaluation end at once.
    _validation.check_int("num_epochs", num_epochs, allow_none=True)
    _validation.check_int("queue_capacity", queue_capacity, 1)
    _validation.check_int("num_threads", num_threads, 1)
    structure = features if labels is None else (features, labels)
    arrays = _flatten(structure)

    def input_fn():
        with tf.name_scope("numpy_input_fn"):
            batch = _batch_tensors(arrays, batch_size, num_epochs, shuffle,
                                   queue_capacity, num_threads)
        return _pack(structure, batch)

    return input_fn


def _check_structure(name, value):
    """An array, or a non-empty dict of arrays; returned unchanged."""
    if isinstance(value, dict):
        if not value:
            # tf.estimator's two messages, word for word.
            raise ValueError("y cannot be empty dict, use None instead." if name == "y"
                             else f"{name} cannot be an empty dict")
        for key, array in value.items():
            _check_array(f"{name}[{key!r}]", array)
        return value
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a dict or array; got {type(value).__name__}")
    _check_array(name, value)
    return value


def _check_array(name, array):
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{name} must be a numpy array; got {type(array).__name__}")
    if array.ndim == 0:
        raise ValueError(f"{name} must have a first (row) dimension; got a scalar "
                         f"array {array!r}")
    _tf_dtype(name, array)


def _check_disjoint_keys(features, labels):
    if isinstance(features, dict) and isinstance(labels, dict):
        shared = set(features) & set(labels)
        if shared:
            raise ValueError(f"{len(shared)} duplicate keys are found in both x and y: "
                             f"{shared}")


def _shapes(structure):
    if isinstance(structure, dict):
        return {key: array.shape for key, array in structure.items()}
    return None if structure is None else structure.shape


def _check_same_length(features, labels):
    lengths = {len(array) for array in _flatten((features, labels))}
    if len(lengths) > 1:
        raise ValueError("Length of tensors in x and y is mismatched. All elements in x "
                         "and y must have the same length.\n"
                         f"Shapes in x: {_shapes(features)}\n"
                         f"Shapes in y: {_shapes(labels)}\n")
    if lengths == {0}:
        raise ValueError(f"x and y must have at least one row; got shapes "
                         f"{_shapes(features)} and {_shapes(labels)}")


def _flatten(structure):
    """The arrays of a (nested tuple of) array / dict of arrays, in a fixed order."""
    if structure is None:
        return []
    if isinstance(structure, tuple):
        return [array for part in structure for array in _flatten(part)]
    if isinstance(structure, dict):
        return list(structure.values())
    return [structure]


def _pack(structure, tensors):
    """Inverse of `_flatten`: puts `tensors` back into the shape of `structure`."""
    tensors = list(tensors)
    if isinstance(structure, tuple):
        packed = []
        for part in structure:
            size = len(_flatten(part))
            packed.append(_pack(part, tensors[:size]))
            tensors = tensors[size:]
        return tuple(packed)
    if isinstance(structure, dict):
        return dict(zip_strict(structure, tensors))
    return tensors[0]


def _tf_dtype(name, array):
    """Text (str, bytes, object) becomes tf.string; numbers keep their type."""
    if array.dtype.kind in "USO":
        return tf.string
    try:
        return tf.as_dtype(array.dtype)
    except TypeError:
        raise TypeError(f"{name} has dtype {array.dtype}, which TensorFlow cannot "
                        "represent; convert it to a numeric or string dtype") from None


def _rows(array, indices):
    """The rows of `array` at `indices`, as something tf.numpy_function accepts."""
    rows = array[indices]
    if rows.dtype.kind == "U":
        return np.char.encode(rows, "utf-8")
    if rows.dtype.kind == "O":
        encode = np.vectorize(lambda v: v.encode("utf-8") if isinstance(v, str) else v,
                              otypes=[object])
        return encode(rows) if rows.size else rows
    return rows


def _batch_tensors(arrays, batch_size, num_epochs, shuffle, queue_capacity,
                   num_threads):
    """One batch of every array, as tensors from a one-shot iterator."""
    num_rows = len(arrays[0])
    dtypes = [_tf_dtype("array", array) for array in arrays]
    indices = tf.data.Dataset.range(num_rows)
    if shuffle:
        # A full permutation of the row indices per epoch (a shuffle queue only
        # mixed within its capacity); only int64 indices are buffered.
        indices = indices.shuffle(num_rows, reshuffle_each_iteration=True)
    # Repeat before batching: batches run across epoch boundaries, as
    # tf.estimator's queues did, and an endless input has full batches only.
    epochs = None if num_epochs is None else max(num_epochs, 0)
    batches = indices.repeat(epochs).batch(batch_size,
                                               drop_remainder=num_epochs is None)

    def gather(batch_indices):
        return tuple(tf.numpy_function(
            lambda i: [_rows(array, i) for array in arrays], [batch_indices], dtypes,
            name="gather_rows"))

    batches = batches.map(gather, num_parallel_calls=num_threads)
    batches = batches.prefetch(max(1, queue_capacity // batch_size))
    tensors = tf.data.make_one_shot_iterator(batches).get_next()
    batch_dim = batch_size if num_epochs is None else None
    for tensor, array in zip_strict(tensors, arrays):
        tensor.set_shape([batch_dim, *array.shape[1:]])
    return tensors
