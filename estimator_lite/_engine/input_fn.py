"""What an input_fn returned, and how the graph consumes it.

An input_fn returns a tf.data dataset (TF1 or TF2 spelling) of features or of
(features, labels), or such tensors directly. Training, evaluation and prediction
all turn that into an `Input` here, and add the dataset iterator's initializer to
the session's local init op.
"""

import collections

from estimator_lite._tf import DATASET_TYPES, tf

__all__ = ["Input", "split_input", "scaffold_with_input", "static_batch_size"]


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
            raise ValueError("input_fn must return features, (features, labels) or a "
                             "Dataset of them; got a sequence of length "
                             f"{len(result)}")
        return Input(result[0], result[1], initializer, cardinality)
    return Input(result, None, initializer, cardinality)


def scaffold_with_input(scaffold, iterator_init):
    """Adds the input iterator's initializer to the scaffold's local init op."""
    if iterator_init is None:
        return scaffold
    local_init = scaffold.local_init_op
    if local_init is None:
        local_init = tf.group(tf.local_variables_initializer(),
                              tf.tables_initializer())
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
