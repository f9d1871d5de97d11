"""`pandas_input_fn`: an input_fn over a pandas DataFrame, as tf.estimator had.

pandas is optional: it is imported only when `pandas_input_fn` is called. The frame
is split into one numpy array per column and fed like `numpy_input_fn`.
"""

import importlib

from estimator_lite.inputs import numpy_io

__all__ = ["pandas_input_fn"]

PANDAS_HINT = ("pandas_input_fn needs pandas, which is not installed: "
               "pip install estimator_lite[pandas]")


def pandas_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None,
                    queue_capacity=1000, num_threads=1, target_column="target"):
    """Returns an input_fn that yields batches of the DataFrame `x` (and `y`).

    Args:
      x: a pandas DataFrame: one feature per column, named by the column.
      y: None, a Series (the label tensor) or a DataFrame (a dict of label
        tensors by column); its index must equal `x`'s.
      batch_size: as in `numpy_input_fn`.
      num_epochs: as in `numpy_input_fn`.
      shuffle: as in `numpy_input_fn` (required).
      queue_capacity: as in `numpy_input_fn`.
      num_threads: as in `numpy_input_fn`.
      target_column: the label's name beside the features; must not be a column
        of `x` when `y` is a Series.

    Returns:
      A no-argument input_fn returning `features` (a dict of tensors) when `y` is
      None, else `(features, labels)`.

    Raises:
      ImportError: pandas is not installed.
      ValueError: `shuffle` is not a bool, the indexes of `x` and `y` differ, or
        `target_column` names a column of `x`.
      TypeError: `x` is not a DataFrame, or `y` not a Series or DataFrame.
    """
    pandas = _import_pandas()
    numpy_io.check_shuffle(shuffle)
    if not isinstance(x, pandas.DataFrame):
        raise TypeError(f"x must be a pandas DataFrame; got {type(x).__name__}")
    features = _columns(x)
    labels = None if y is None else _labels(pandas, x, y, target_column)
    return numpy_io.make_input_fn(features, labels, batch_size=batch_size,
                                  num_epochs=num_epochs, shuffle=shuffle,
                                  queue_capacity=queue_capacity,
                                  num_threads=num_threads)


def _import_pandas():
    try:
        return importlib.import_module("pandas")
    except ImportError as e:
        raise ImportError(PANDAS_HINT) from e


def _columns(frame):
    return {column: frame[column].to_numpy() for column in frame.columns}


def _labels(pandas, x, y, target_column):
    """The labels of `y` as an array (Series) or a dict of arrays (DataFrame)."""
    if not isinstance(y, (pandas.Series, pandas.DataFrame)):
        raise TypeError(f"y must be None, a pandas Series or a DataFrame; got "
                        f"{type(y).__name__}")
    if not x.index.equals(y.index):
        raise ValueError("Index for x and y are mismatched.\n"
                         f"Index for x: {x.index}\nIndex for y: {y.index}\n")
    if isinstance(y, pandas.DataFrame):
        return _columns(y)
    if target_column in x.columns:
        raise ValueError(f"Cannot use name {target_column} for target column: DataFrame "
                         f"already has a column with that name: {x.columns}")
    return y.to_numpy()
