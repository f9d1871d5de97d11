"""SequentialHeadWrapper: a head applied to every unpadded step of a sequence.

RNNClassifier with ``return_sequences=True`` gives logits [batch, time, d] and
labels [batch, time]. In TRAIN and EVAL the wrapper keeps only the steps its
sequence mask (a [batch, time] bool feature) marks, flattened to
[steps, ...], and hands them to the wrapped head, so loss and metrics count real
steps only. In PREDICT it returns the wrapped head's predictions for every step
plus the mask, as tf.estimator 2.15's wrapper does.
"""

from estimator_lite._tf import tf
from estimator_lite.head.base_head import Head
from estimator_lite.head.multi_head import MultiHead
from estimator_lite.model_fn import EstimatorSpec, ModeKeys

__all__ = ["SequentialHeadWrapper"]

_MASK_MISMATCH = "Tensor shape is incompatible with provided mask."


def _flatten(tensor, sequence_mask, expected_length):
    """[batch, time, ...] -> [steps, ...] over the masked steps ([steps, 1] for rank 2).

    Raises:
      ValueError: `tensor` has fewer than 2 dimensions, or is not a (Sparse)Tensor.
    """
    shape = tensor.get_shape()
    if shape.ndims is None or shape.ndims < 2:
        raise ValueError("tensors to flatten must have at least 2 dimensions "
                         f"[batch, time, ...], got shape {shape}")
    if isinstance(tensor, tf.SparseTensor):
        # A sparse sequence holds exactly its real steps, in row-major order.
        flat = tf.sparse.reorder(tensor).values
        if shape.ndims > 2:
            flat = tf.reshape(flat, tf.concat([[-1], shape[2:].as_list()], 0))
    elif isinstance(tensor, tf.Tensor):
        flat = tf.boolean_mask(tensor, sequence_mask)
    else:
        raise ValueError("tensors to flatten must be a Tensor or a SparseTensor, got "
                         f"{tensor!r}")
    if shape.ndims == 2:
        flat = tf.expand_dims(flat, -1)
        expected = tf.stack([expected_length, 1])
    else:
        expected = tf.concat([[expected_length], shape[2:].as_list()], 0)
    check = tf.assert_equal(tf.shape(flat), expected, message=_MASK_MISMATCH)
    with tf.control_dependencies([check]):
        return tf.identity(flat)


class SequentialHeadWrapper(Head):
    """Wraps a head so that it works on the masked steps of sequences."""

    def __init__(self, static_head, sequence_length_mask="sequence_length_mask",
                 feature_columns=None):
        """Stores the wrapped head and the names of the features it flattens.

        Args:
          static_head: the Head applied to each step (not a MultiHead).
          sequence_length_mask: key of the [batch, time] bool mask in features.
          feature_columns: a key or list of keys of features flattened with the
            mask before the wrapped head sees them (typically a weight).

        Raises:
          TypeError: a key is not a string, or static_head is not a Head.
          ValueError: static_head is a MultiHead.
        """
        if not isinstance(sequence_length_mask, str):
            raise TypeError("sequence_length_mask must be a string, got "
                            f"{sequence_length_mask!r}")
        columns = feature_columns or []
        columns = [columns] if isinstance(columns, str) else list(columns)
        for column in columns:
            if not isinstance(column, str):
                raise TypeError("feature_columns must be a string or a list of "
                                f"strings, got {feature_columns!r}")
        if not isinstance(static_head, Head):
            raise TypeError(f"static_head must be an estimator_lite Head, got "
                            f"{static_head!r}")
        if isinstance(static_head, MultiHead):
            raise ValueError("MultiHead is not supported with SequentialHeadWrapper")
        super().__init__(static_head.logits_dimension,
                         name=f"{static_head.name}_sequential" if static_head.name
                         else None, loss_reduction=static_head.loss_reduction)
        self._static_head = static_head
        self._sequence_length_mask = sequence_length_mask
        self._feature_columns = columns

    input_sequence_mask_key = property(lambda self: self._sequence_length_mask,
                                       doc="Key of the sequence mask in features.")
    static_head = property(lambda self: self._static_head, doc="The wrapped head.")

    def _flat_inputs(self, labels, logits, features):
        if self.input_sequence_mask_key not in features:
            raise ValueError(f"The sequence mask key {self.input_sequence_mask_key!r} "
                             f"must be in features; found keys {sorted(features)}")
        mask = features[self.input_sequence_mask_key]
        if mask.get_shape().ndims != 2:
            raise ValueError("the sequence mask must have 2 dimensions [batch, time], "
                             f"got shape {mask.get_shape()}")
        with tf.name_scope("flatten"):
            steps = tf.reduce_sum(tf.cast(mask, tf.int32))
            flat_features = {}
            for column in self._feature_columns:
                if column not in features:
                    raise ValueError(f"feature {column!r} expected in features; found "
                                     f"keys {sorted(features)}")
                flat_features[column] = _flatten(features[column], mask, steps)
            return (_flatten(labels, mask, steps), _flatten(logits, mask, steps),
                    flat_features)

    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        """The wrapped head's loss over the masked steps."""
        labels, logits, features = self._flat_inputs(labels, logits, features or {})
        return self._static_head.loss(labels, logits, features, mode,
                                      regularization_losses)

    def predictions(self, logits, keys=None):
        """The wrapped head's predictions."""
        return self._static_head.predictions(logits, keys)

    def metrics(self, regularization_losses=None):
        """The wrapped head's metrics."""
        return self._static_head.metrics(regularization_losses)

    def update_metrics(self, eval_metrics, features, logits, labels,
                       regularization_losses=None):
        """Updates the wrapped head's metrics with the masked steps."""
        labels, logits, features = self._flat_inputs(labels, logits, features)
        return self._static_head.update_metrics(eval_metrics, features, logits, labels,
                                                regularization_losses)

    def create_estimator_spec(self, features, mode, logits, labels=None, optimizer=None,
                              trainable_variables=None, train_op_fn=None, update_ops=None,
                              regularization_losses=None):
        """The wrapped head's spec on the masked steps; PREDICT adds the mask."""
        if mode == ModeKeys.PREDICT:
            spec = self._static_head.create_estimator_spec(features=features, mode=mode,
                                                           logits=logits)
            predictions = dict(spec.predictions)
            predictions[self.input_sequence_mask_key] = features[
                self.input_sequence_mask_key]
            return EstimatorSpec(mode, predictions=predictions,
                                 export_outputs=spec.export_outputs)
        flat_labels, flat_logits, flat_features = self._flat_inputs(labels, logits,
                                                                    features)
        return self._static_head.create_estimator_spec(
            features=flat_features, mode=mode, logits=flat_logits, labels=flat_labels,
            optimizer=optimizer, trainable_variables=trainable_variables,
            train_op_fn=train_op_fn, update_ops=update_ops,
            regularization_losses=regularization_losses)
