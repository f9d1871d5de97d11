"""SequentialHeadWrapper: a head applied to every unpadded step of a sequence.

RNNClassifier with ``return_sequences=True`` gives logits [batch, time, d] and
labels [batch, time]. In TRAIN and EVAL the wrapper keeps only the steps its
sequence mask (a [batch, time] feature, nonzero where a step is real) marks,
flattened to [steps, ...], and hands them to the wrapped head, so loss and
metrics count real steps only. In PREDICT it returns the wrapped head's
predictions for every step plus the mask, as tf.estimator 2.15's wrapper does.

tf.estimator serves this module at the private path
``tensorflow_estimator.python.estimator.head.sequential_head``; so does
`estimator_lite.install_as_tf_estimator()`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from estimator_lite._tf import tf
from estimator_lite.head.base_head import Head
from estimator_lite.head.multi_head import MultiHead
from estimator_lite.model_fn import EstimatorSpec, ModeKeys

__all__ = ["SequentialHeadWrapper"]

_MASK_MISMATCH = "Tensor shape is incompatible with provided mask."


def _flatten_tensor(tensor, sequence_mask, expected_length):
    """[batch, time, ...] -> [steps, ...] over the masked steps ([steps, 1] for rank 2).

    A dense tensor keeps the steps where `sequence_mask` is nonzero; a sparse one
    holds exactly its real steps, taken in row-major order (its indices sorted
    first). The result must have `expected_length` steps: in a graph that is an
    assertion failing with InvalidArgumentError when the graph runs, eagerly a
    ValueError at once (as tf.estimator 2.15).

    Args:
      tensor: a Tensor or SparseTensor of rank >= 2, [batch, time, D0, ...].
      sequence_mask: [batch, time] mask (bool or 0/1 numbers).
      expected_length: scalar int: the number of masked steps.

    Returns:
      The dense Tensor [expected_length, D0, ...] (or [expected_length, 1]).

    Raises:
      ValueError: `tensor` has fewer than 2 dimensions or is neither a Tensor
        nor a SparseTensor; eagerly, its steps do not match the mask.
    """
    shape = tensor.get_shape()
    if shape.ndims is None or shape.ndims < 2:
        raise ValueError("Input tensor expected to have at least 2 dimensions "
                         f"[batch, time, ...], got {shape.ndims} instead (shape "
                         f"{shape}).")
    if isinstance(tensor, tf.SparseTensor):
        flat = tf.sparse.reorder(tensor).values
        if shape.ndims > 2:
            flat = tf.reshape(flat, tf.concat([[-1], shape[2:].as_list()], 0))
    elif isinstance(tensor, tf.Tensor):
        flat = tf.boolean_mask(tensor, tf.cast(sequence_mask, tf.bool))
    else:
        raise ValueError("`tensor` expected to be a Tensor or a SparseTensor, got "
                         f"{tensor!r} instead.")
    if shape.ndims == 2:
        flat = tf.expand_dims(flat, -1)
        expected = tf.stack([tf.cast(expected_length, tf.int32), 1])
    else:
        expected = tf.concat([[tf.cast(expected_length, tf.int32)],
                              shape[2:].as_list()], 0)
    if tf.executing_eagerly():
        if tuple(flat.shape.as_list()) != tuple(expected.numpy()):
            raise ValueError(f"{_MASK_MISMATCH} The mask marks {int(expected[0])} steps; "
                             f"the flattened tensor has shape {flat.shape}.")
        return flat
    check = tf.assert_equal(tf.shape(flat), expected, message=_MASK_MISMATCH)
    with tf.control_dependencies([check]):
        return tf.identity(flat)


class _SequentialHead(Head):
    """A head whose inputs are sequences; `input_sequence_mask_key` names the
    [batch, time] mask feature marking the real (unpadded) steps."""

    @property
    @abc.abstractmethod
    def input_sequence_mask_key(self) -> str:
        """Key of the sequence mask in the features dict."""


def _feature_column_keys(feature_columns):
    """`feature_columns` (None, a key or an iterable of keys) as a list of keys.

    Raises:
      TypeError: not a string nor an iterable of strings.
    """
    columns = feature_columns or []
    if isinstance(columns, str):
        return [columns]
    if not isinstance(columns, Iterable):
        raise TypeError("`feature_columns` must be either a string or an iterable of "
                        f"strings, got {columns!r} of type {type(columns).__name__} "
                        "instead.")
    columns = list(columns)
    for column in columns:
        if not isinstance(column, str):
            # "must a string": tf.estimator's wording, which programs may match.
            raise TypeError(f"Column must a string. Given type: {type(column)}. "
                            f"(feature_columns must hold feature keys, got {column!r}.)")
    return columns


class SequentialHeadWrapper(_SequentialHead):
    """Wraps a head so that it works on the masked steps of sequences.

    The wrapped ("static") head sees, in TRAIN and EVAL, the logits, labels and
    the features named in `feature_columns` flattened to the masked steps; its
    loss, metrics and train op are those of a batch of steps. In PREDICT it sees
    the unflattened logits, and the mask is added to its predictions.
    """

    def __init__(self, static_head: Head,
                 sequence_length_mask: str = "sequence_length_mask",
                 feature_columns: str | Iterable[str] | None = None) -> None:
        """Stores the wrapped head and the names of the features it flattens.

        Args:
          static_head: the head applied to each step (not a MultiHead). Any
            object with the head methods the wrapper delegates to (as
            tf.estimator: it is not type-checked).
          sequence_length_mask: key of the [batch, time] mask in features.
          feature_columns: a key or an iterable of keys of features flattened
            with the mask before the wrapped head sees them (typically a
            weight).

        Raises:
          TypeError: a key is not a string.
          ValueError: static_head is a MultiHead.
        """
        if not isinstance(sequence_length_mask, str):
            raise TypeError("`sequence_mask` column must be a string (a key of "
                            f"features), got {sequence_length_mask!r} of type "
                            f"{type(sequence_length_mask).__name__}.")
        columns = _feature_column_keys(feature_columns)
        if isinstance(static_head, MultiHead):
            raise ValueError("`MultiHead` is not supported with `SequentialHeadWrapper`: "
                             "wrap each head of the MultiHead instead.")
        super().__init__()
        self._static_head = static_head
        self._sequence_length_mask = sequence_length_mask
        self._feature_columns = columns

    @property
    def input_sequence_mask_key(self) -> str:
        """Key of the sequence mask in features."""
        return self._sequence_length_mask

    @property
    def static_head(self) -> Head:
        """The wrapped head."""
        return self._static_head

    @property
    def name(self) -> str | None:
        """The wrapped head's name suffixed with '_sequential' (None if unnamed)."""
        static_name = self._static_head.name
        return f"{static_name}_sequential" if static_name else None

    @property
    def logits_dimension(self) -> int:
        """The wrapped head's logits dimension."""
        return self._static_head.logits_dimension

    @property
    def loss_reduction(self) -> str:
        """The wrapped head's loss reduction."""
        return self._static_head.loss_reduction

    def _flatten(self, labels, logits, features):
        """Flattens labels, logits and this wrapper's feature columns to the steps
        the sequence mask marks.

        Returns:
          (flat labels, flat logits, dict of flat features), dense Tensors.

        Raises:
          ValueError: the mask or a feature column is missing, the mask is not
            [batch, time], or a tensor has fewer than 2 dimensions.
        """
        if self.input_sequence_mask_key not in features:
            raise ValueError(f"The provided sequence_length_mask key "
                             f"`{self.input_sequence_mask_key}` should be included in "
                             "the features dictionary, but it is missing. Found "
                             f"keys: {list(features)}.")
        mask = tf.convert_to_tensor(features[self.input_sequence_mask_key])
        if mask.get_shape().ndims != 2:
            raise ValueError("Mask is expected to have two dimensions, got "
                             f"{mask.get_shape().ndims} instead (it must be "
                             "[batch, time]).")
        with tf.name_scope("flatten"):
            steps = tf.reduce_sum(tf.cast(tf.cast(mask, tf.bool), tf.int32))
            flat_logits = _flatten_tensor(_as_tensor(logits), mask, steps)
            flat_labels = _flatten_tensor(_as_tensor(labels), mask, steps)
            flat_features = {}
            for column in self._feature_columns:
                if column not in features:
                    raise ValueError(f"`{column}` column expected in features dictionary "
                                     f"(it is in feature_columns); found keys "
                                     f"{list(features)}.")
                flat_features[column] = _flatten_tensor(_as_tensor(features[column]),
                                                        mask, steps)
            return flat_labels, flat_logits, flat_features

    def loss(self, logits: tf.Tensor, labels: Any,  # type: ignore[override]  # see below
             features: Mapping[str, Any] | None = None, mode: str | None = None,
             regularization_losses: Iterable[tf.Tensor] | None = None) -> tf.Tensor:
        """The wrapped head's loss over the masked steps.

        Note the argument order: logits first, as tf.estimator's wrapper (the
        other heads take labels first); pass them by keyword to be safe.
        """
        flat_labels, flat_logits, flat_features = self._flatten(labels, logits,
                                                                 features or {})
        return self._static_head.loss(
            logits=flat_logits, labels=flat_labels, features=flat_features, mode=mode,
            regularization_losses=regularization_losses)

    def predictions(self, logits: tf.Tensor, keys: str | Iterable[str] | None = None,
                    ) -> dict[str, tf.Tensor]:
        """The wrapped head's predictions (only `keys` if given).

        `keys` is passed on only when given: a regression head's `predictions`
        takes none (tf.estimator's wrapper always passed it, so its regression
        heads' predictions could not be asked for at all).
        """
        if keys is None:
            return self._static_head.predictions(logits)
        return self._static_head.predictions(logits, keys=keys)

    def metrics(self, regularization_losses: Iterable[tf.Tensor] | None = None,
                ) -> dict[str, Any]:
        """The wrapped head's metrics."""
        return self._static_head.metrics(regularization_losses)

    def update_metrics(self, eval_metrics: dict[str, Any], features: Mapping[str, Any],
                       logits: tf.Tensor, labels: Any,
                       regularization_losses: Iterable[tf.Tensor] | None = None,
                       ) -> dict[str, Any]:
        """Updates the wrapped head's metrics with the masked steps."""
        flat_labels, flat_logits, flat_features = self._flatten(labels, logits,
                                                                features)
        return self._static_head.update_metrics(
            eval_metrics=eval_metrics, features=flat_features, logits=flat_logits,
            labels=flat_labels, regularization_losses=regularization_losses)

    def create_estimator_spec(
            self, features: Mapping[str, Any], mode: str, logits: tf.Tensor,
            labels: Any = None, optimizer: Any = None,
            trainable_variables: Sequence[tf.Variable] | None = None,
            train_op_fn: Callable[[tf.Tensor], Any] | None = None,
            update_ops: Iterable[Any] | None = None,
            regularization_losses: Iterable[tf.Tensor] | None = None) -> EstimatorSpec:
        """The wrapped head's spec on the masked steps; PREDICT adds the mask."""
        if mode == ModeKeys.PREDICT:
            spec = self._static_head.create_estimator_spec(features=features, mode=mode,
                                                           logits=logits)
            predictions = dict(spec.predictions)
            predictions[self.input_sequence_mask_key] = features[
                self.input_sequence_mask_key]
            return spec._replace(predictions=predictions)
        flat_labels, flat_logits, flat_features = self._flatten(labels, logits,
                                                                features)
        return self._static_head.create_estimator_spec(
            features=flat_features, mode=mode, logits=flat_logits, labels=flat_labels,
            optimizer=optimizer, trainable_variables=trainable_variables,
            train_op_fn=train_op_fn, update_ops=update_ops,
            regularization_losses=regularization_losses)


def _as_tensor(value):
    """A SparseTensor stays as it is; anything else becomes a Tensor."""
    if isinstance(value, (tf.SparseTensor, tf.SparseTensorValue)):
        return tf.SparseTensor.from_value(value)
    return tf.convert_to_tensor(value)
