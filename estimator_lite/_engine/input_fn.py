"""What an input_fn returned, and how the graph consumes it.

An input_fn returns a tf.data dataset (TF1 or TF2 spelling) of features or of
(features, labels), or such tensors directly. Training, evaluation and prediction
all turn that into an `Input` here, and add the dataset iterator's initializer to
the session's local init op. `parse_input_fn_result` is tf.estimator's own reading
(its ``util`` module): the iterator initialized by a hook instead.
"""

import collections
import weakref

from estimator_lite._tf import DATASET_TYPES, tf

__all__ = ["DatasetInitializerHook", "Input", "ends", "is_input_op", "iterator_with_hook",
           "parse_input_fn_result", "parse_iterator_result", "split_input",
           "scaffold_with_input", "static_batch_size"]


class Input(collections.namedtuple(
        "Input", ["features", "labels", "initializer", "cardinality"])):
    """What an input_fn gave: features, labels (or None), the iterator initializer
    and the dataset's cardinality tensor (both None when it returned tensors)."""


def split_input(result):
    """Turns an input_fn result into an Input.

    Accepts a tf.data dataset (TF1 `tf.compat.v1.data` or TF2 `tf.data`) of features
    or of (features, labels), or such tensors directly; features may be a Tensor,
    a SparseTensor or a dict of them.

    Raises:
      ValueError: a sequence that is not (features, labels).
    """
    initializer = cardinality = None
    if isinstance(result, DATASET_TYPES):
        cardinality = tf.data.experimental.cardinality(result)
        iterator = tf.data.make_initializable_iterator(result)
        initializer = iterator.initializer
        result = iterator.get_next()
    if isinstance(result, (tuple, list)):
        if len(result) != 2:
            raise ValueError("input_fn should return (features, labels) as a len 2 "
                             "tuple. (input_fn must return features, (features, "
                             "labels) or a Dataset of them; got a sequence of length "
                             f"{len(result)})")
        return Input(_marked(result[0]), _marked(result[1]), initializer, cardinality)
    return Input(_marked(result), None, initializer, cardinality)


# The ops that read the input_fn's input (an iterator's get-next) in graphs built
# here, held weakly so that a graph's ops go with it.
_INPUT_OPS = weakref.WeakSet()


def _marked(tensors):
    """`tensors` (an input_fn's features or labels), their input ops noted.

    The input ops are the iterator reads among what `tensors` are computed from:
    a step that meets the input's end fails there (`is_input_op`). A model_fn's
    own side iterator is not among them.
    """
    flat = tf.nest.flatten(tensors, expand_composites=True)
    stack = [t.op for t in flat if isinstance(t, tf.Tensor)]
    seen = set()
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.type.startswith("IteratorGetNext"):
            _INPUT_OPS.add(op)
        else:
            stack += [t.op for t in op.inputs] + list(op.control_inputs)
    return tensors


def is_input_op(op):
    """Whether `op` reads the input of an input_fn result turned into an Input or
    features here (not a model_fn's side iterator)."""
    return op in _INPUT_OPS


class DatasetInitializerHook(tf.train.SessionRunHook):
    """Initializes a dataset's initializable iterator in each new session."""

    def __init__(self, iterator):
        """Args: iterator: a tf.data initializable iterator."""
        self._iterator = iterator
        self._initializer = None

    def begin(self):
        """Takes the iterator's initializer op (the graph is still open)."""
        self._initializer = self._iterator.initializer

    def after_create_session(self, session, coord):
        """Runs the initializer, so the dataset starts from its first element."""
        del coord
        session.run(self._initializer)


def iterator_with_hook(make_dataset, distribution=None):
    """An iterator over a dataset and the hook initializing it in each new session
    (what tf.estimator's `_get_iterator_from_input_fn` gives subclasses).

    Args:
      make_dataset: called with a tf.distribute.InputContext under `distribution`,
        with no argument otherwise; returns the dataset.
      distribution: a tf.distribute strategy, or None.

    Returns:
      (iterator, [a DatasetInitializerHook of it]).
    """
    if distribution is not None:
        iterator = distribution.make_input_fn_iterator(make_dataset)
    else:
        iterator = tf.data.make_initializable_iterator(make_dataset())
    return iterator, [DatasetInitializerHook(iterator)]


def parse_iterator_result(result):
    """(features, labels) from what an input_fn's iterator or the input_fn gave.

    Args:
      result: features alone, or a (features, labels) tuple or list.

    Returns:
      (features, labels), labels None when `result` is not a sequence.

    Raises:
      ValueError: a sequence whose length is not 2.
    """
    if isinstance(result, (tuple, list)):
        if len(result) != 2:
            raise ValueError("input_fn should return (features, labels) as a sequence "
                             f"of length 2, got one of length {len(result)}")
        return result[0], result[1]
    return result, None


def parse_input_fn_result(result):
    """tf.estimator's reading of an input_fn's result: features, labels, hooks.

    Unlike `split_input` (the Estimator's own path, which initializes the
    iterator in the scaffold), a dataset's iterator is initialized by the
    returned `DatasetInitializerHook`, which the caller runs with its session.

    Args:
      result: a tf.data dataset (TF1 or TF2 spelling) of features or of
        (features, labels), or such tensors directly.

    Returns:
      (features, labels or None, list of SessionRunHooks).

    Raises:
      ValueError: a sequence that is not (features, labels).
    """
    hooks = []
    if isinstance(result, DATASET_TYPES):
        iterator = tf.data.make_initializable_iterator(result)
        hooks.append(DatasetInitializerHook(iterator))
        result = iterator.get_next()
    features, labels = parse_iterator_result(result)
    return _marked(features), _marked(labels), hooks


def ends(features):
    """Whether the input can run out: features read from a tf.data iterator (the
    top-level tensors) or a graph with queue runners; constant tensors never end."""
    if any(isinstance(t, tf.Tensor) and t.op.type == "IteratorGetNext"
           for t in tf.nest.flatten(features)):
        return True
    return bool(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS))


def scaffold_with_input(scaffold, iterator_init):
    """Adds the input iterator's initializer to the scaffold's local init op."""
    if iterator_init is None:
        return scaffold
    local_init = scaffold.local_init_op
    if local_init is None:
        # What Scaffold.finalize would use, kept in the LOCAL_INIT_OP collection as
        # it does (so a checkpoint's .meta has it, as tf.estimator's).
        local_init = tf.train.Scaffold.get_or_default(
            "local_init_op", tf.GraphKeys.LOCAL_INIT_OP,
            tf.train.Scaffold.default_local_init_op)
    return tf.train.Scaffold(local_init_op=tf.group(local_init, iterator_init),
                             copy_from_scaffold=scaffold)


def static_batch_size(features):
    """Dimension 0 of the first dense feature when it is known in the graph."""
    tensors = features.values() if isinstance(features, dict) else [features]
    for tensor in tensors:
        if isinstance(tensor, tf.Tensor) and tensor.shape.ndims:
            size = tensor.shape[0]
            size = getattr(size, "value", size)
            return int(size) if size is not None else None
    return None
