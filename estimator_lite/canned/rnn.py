"""RNNClassifier and RNNEstimator: recurrent networks over sequence feature columns.

tf.estimator 2.15 builds these from Keras layers; Keras 3 cannot run RNN layers in
graph mode, so the cells here are tf.compat.v1 variables and ops with the same
equations as Keras 2's SimpleRNNCell, LSTMCell and GRUCell (``reset_after=True``),
the same masking (a padded step keeps the previous output and state) and the same
checkpoint names:

* ``sequence_features/<column>/embedding_weights`` for sequence embeddings,
  ``dense_features/<column>/...`` for context columns;
* ``rnn_model/<cell_type>/<cell_type>_cell/{kernel,recurrent_kernel,bias}`` when
  `units` is an int, ``rnn_model/rnn/<cell_type>_cell/...`` for a one-element list
  and ``rnn_model/rnn/stacked_rnn_cells/<cell_type>_cell[_<i>]/...`` for several;
* ``rnn_model/logits/{kernel,bias}``; optimizer slots as in optimizers/graph.py.

A model_dir written by tf.estimator's RNN estimators therefore evaluates and keeps
training here, and the reverse.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import feature_transformation_cache, tf
from estimator_lite.canned import core, feature_layers
from estimator_lite.canned.dnn import check_hidden_units
from estimator_lite.estimator import Estimator
from estimator_lite.head import base_head
from estimator_lite.head.sequential_head import SequentialHeadWrapper
from estimator_lite.model_fn import ModeKeys

if TYPE_CHECKING:
    from estimator_lite.head.base_head import Head
    from estimator_lite.run_config import RunConfig

__all__ = ["CELL_TYPES", "RNNClassifier", "RNNEstimator", "USE_DEFAULT"]

CELL_TYPES = ("simple_rnn", "lstm", "gru")
# Marks an argument the user did not give (cell_type defaults differ by `units`).
USE_DEFAULT = object()
# What tf.estimator gives an optimizer named by a string.
_DEFAULT_LEARNING_RATE = 0.05
_DEFAULT_CLIP_NORM = 5.0
_GATES = {"simple_rnn": 1, "lstm": 4, "gru": 3}


class _StateManager:
    """Creates feature-column variables under the current scope, one per column.

    Duck-types TF's feature-column StateManager: an embedding column asks it for
    ``embedding_weights``, created as ``<scope>/<column name>/embedding_weights``.
    """

    def __init__(self):
        self._variables = {}
        self._resources = {}

    def create_variable(self, feature_column, name, shape, dtype=None, trainable=True,
                        use_resource=True, initializer=None):
        """Creates the variable `name` of `feature_column` (tf.get_variable)."""
        with tf.variable_scope(feature_column.name):
            var = tf.get_variable(name, shape=shape, dtype=dtype or tf.float32,
                                  initializer=initializer, trainable=trainable,
                                  use_resource=use_resource)
        self._variables[(feature_column.name, name)] = var
        return var

    def get_variable(self, feature_column, name):
        """The variable created by `create_variable`."""
        return self._variables[(feature_column.name, name)]

    def add_variable(self, feature_column, var):
        """Records a variable a column made itself."""
        self._variables[(feature_column.name, var.op.name)] = var

    def has_resource(self, feature_column, name):
        """Whether a lookup table was recorded for the column."""
        return (feature_column.name, name) in self._resources

    def add_resource(self, feature_column, name, resource):
        """Records a lookup table."""
        self._resources[(feature_column.name, name)] = resource

    def get_resource(self, feature_column, name):
        """A recorded lookup table."""
        return self._resources[(feature_column.name, name)]


def _create_states(columns, state_manager):
    for column in columns:
        if hasattr(column, "create_state"):
            column.create_state(state_manager)


def _flatten_last(tensor, column, rank):
    """Reshapes a column's output to rank `rank` with all its elements last."""
    size = int(tf.TensorShape(column.variable_shape).num_elements())
    shape = tf.shape(tensor)
    return tf.reshape(tensor, tf.concat([shape[:rank - 1], [size]], 0))


def sequence_input(features, sequence_columns):
    """The sequence input [batch, time, depth] and the sequence lengths [batch].

    Columns are concatenated in name order (as Keras' SequenceFeatures); all of
    them must give the same sequence lengths. Call inside ``sequence_features``.
    """
    columns = sorted(sequence_columns, key=lambda c: c.name)
    state_manager = _StateManager()
    _create_states(columns, state_manager)
    cache = feature_transformation_cache(features)
    values, lengths = [], []
    for column in columns:
        with tf.name_scope(column.name):
            dense, length = column.get_sequence_dense_tensor(cache, state_manager)
            values.append(_flatten_last(dense, column, 3))
            lengths.append(tf.cast(length, tf.int64))
    with tf.control_dependencies([
            tf.assert_equal(lengths[0], other,
                            message="sequence feature columns must have equal lengths")
            for other in lengths[1:]]):
        length = tf.identity(lengths[0])
    return (values[0] if len(values) == 1 else tf.concat(values, axis=-1)), length


def context_input(features, context_columns):
    """The context columns' dense values [batch, depth], in name order.

    Call inside ``dense_features``.
    """
    columns = sorted(context_columns, key=lambda c: c.name)
    state_manager = _StateManager()
    _create_states(columns, state_manager)
    cache = feature_transformation_cache(features)
    values = []
    for column in columns:
        with tf.name_scope(column.name):
            values.append(_flatten_last(
                column.get_dense_tensor(cache, state_manager), column, 2))
    return values[0] if len(values) == 1 else tf.concat(values, axis=-1)


class _Cell:
    """One recurrent cell with Keras 2's equations and variable names."""

    def __init__(self, cell_type, units):
        self.cell_type = cell_type
        self.units = units
        self._kernel = self._recurrent = self._bias = None

    @property
    def state_count(self):
        """LSTM carries (h, c); the others carry h."""
        return 2 if self.cell_type == "lstm" else 1

    def build(self, input_size):
        """Creates kernel, recurrent_kernel and bias in the current scope."""
        width = _GATES[self.cell_type] * self.units
        self._kernel = tf.get_variable("kernel", [input_size, width],
                                       initializer=tf.glorot_uniform_initializer(),
                                       use_resource=True)
        self._recurrent = tf.get_variable("recurrent_kernel", [self.units, width],
                                          initializer=tf.orthogonal_initializer(),
                                          use_resource=True)
        if self.cell_type == "gru":  # reset_after: an input and a recurrent bias.
            shape, init = [2, width], tf.zeros_initializer()
        elif self.cell_type == "lstm":  # unit_forget_bias: forget gate starts at 1.
            shape, init = [width], _lstm_bias_initializer(self.units)
        else:
            shape, init = [width], tf.zeros_initializer()
        self._bias = tf.get_variable("bias", shape, initializer=init, use_resource=True)

    def step(self, inputs, states):
        """One time step; returns (output, new states)."""
        if self.cell_type == "lstm":
            h, c = states
            z = (tf.matmul(inputs, self._kernel) + tf.matmul(h, self._recurrent)
                 + self._bias)
            i, f, g, o = tf.split(z, 4, axis=1)
            c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
            h = tf.sigmoid(o) * tf.tanh(c)
            return h, [h, c]
        if self.cell_type == "gru":
            (h,) = states
            x_part = tf.matmul(inputs, self._kernel) + self._bias[0]
            h_part = tf.matmul(h, self._recurrent) + self._bias[1]
            x_z, x_r, x_h = tf.split(x_part, 3, axis=1)
            h_z, h_r, h_h = tf.split(h_part, 3, axis=1)
            z = tf.sigmoid(x_z + h_z)
            r = tf.sigmoid(x_r + h_r)
            candidate = tf.tanh(x_h + r * h_h)
            h = z * h + (1.0 - z) * candidate
            return h, [h]
        (h,) = states
        h = tf.tanh(tf.matmul(inputs, self._kernel) + self._bias
                    + tf.matmul(h, self._recurrent))
        return h, [h]


def _lstm_bias_initializer(units):
    def init(shape, dtype=tf.float32, partition_info=None):
        del shape, partition_info  # Fixed layout: [i, f, c, o] gates.
        return tf.concat([tf.zeros([units], dtype), tf.ones([units], dtype),
                          tf.zeros([2 * units], dtype)], axis=0)
    return init


def _cell_scopes(units, cell_type):
    """(layer scope, [cell scope per layer]) under ``rnn_model`` (Keras' names)."""
    if isinstance(units, int):
        return cell_type, [f"{cell_type}_cell"]
    names = [f"{cell_type}_cell" + (f"_{i}" if i else "") for i in range(len(units))]
    if len(units) == 1:
        return "rnn", names
    return "rnn", [f"stacked_rnn_cells/{n}" for n in names]


def _build_cells(inputs, units, cell_type):
    """Creates the cells' variables; returns the cells in order."""
    sizes = [units] if isinstance(units, int) else list(units)
    layer_scope, cell_scopes = _cell_scopes(units, cell_type)
    cells = []
    input_size = int(inputs.shape[-1])
    with tf.variable_scope(layer_scope):
        for size, scope in zip_strict(sizes, cell_scopes):
            cell = _Cell(cell_type, size)
            with tf.variable_scope(scope):
                cell.build(input_size)
            cells.append(cell)
            input_size = size
    return cells


def run_rnn(inputs, mask, units, cell_type):
    """Runs the (stacked) cells over time with Keras' masking.

    Args:
      inputs: float Tensor [batch, time, depth] with a static depth.
      mask: bool Tensor [batch, time]; False marks padding.
      units: an int (one layer) or a list of layer sizes.
      cell_type: one of CELL_TYPES.

    Returns:
      The outputs [batch, time, units[-1]]: at a padded step, the previous output.
    """
    cells = _build_cells(inputs, units, cell_type)
    batch = tf.shape(inputs)[0]
    states = [tf.zeros([batch, c.units]) for c in cells for _ in range(c.state_count)]
    output = tf.zeros([batch, cells[-1].units])

    def step(carry, elems):
        previous_output, previous_states = carry
        x, keep = elems
        new_states, start = [], 0
        for cell in cells:
            own = previous_states[start:start + cell.state_count]
            start += cell.state_count
            x, updated = cell.step(x, own)
            new_states.extend(updated)
        # A padded step keeps everything as it was (tf.where selects rows).
        kept = [tf.where(keep, new, old)
                for new, old in zip_strict(new_states, previous_states)]
        return tf.where(keep, x, previous_output), kept

    time_major = (tf.transpose(inputs, [1, 0, 2]), tf.transpose(mask, [1, 0]))
    outputs, _ = tf.scan(step, time_major, initializer=(output, states))
    return tf.transpose(outputs, [1, 0, 2])


def _dense(inputs, units):
    kernel = tf.get_variable("kernel", [int(inputs.shape[-1]), units],
                             initializer=tf.glorot_uniform_initializer(),
                             use_resource=True)
    bias = tf.get_variable("bias", [units], initializer=tf.zeros_initializer(),
                           use_resource=True)
    return tf.tensordot(inputs, kernel, [[inputs.shape.ndims - 1], [0]]) + bias


def rnn_logits(features, sequence_columns, context_columns, units, cell_type,
               logits_dimension, return_sequences):
    """Builds the RNN; returns (logits, sequence mask [batch, time]).

    Logits are [batch, logits_dimension], or [batch, time, logits_dimension] with
    `return_sequences`.
    """
    with tf.name_scope("sequence_input_layer"):
        with tf.variable_scope("sequence_features"):
            inputs, lengths = sequence_input(features, sequence_columns)
        tf.summary.histogram("sequence_length", lengths)
        if context_columns:
            with tf.variable_scope("dense_features"):
                context = context_input(features, context_columns)
            # The context is repeated at every step, after the sequence values.
            steps = tf.shape(inputs)[1]
            tiled = tf.tile(tf.expand_dims(context, 1), tf.stack([1, steps, 1]))
            inputs = tf.concat([inputs, tiled], axis=2)
    mask = tf.sequence_mask(lengths, maxlen=tf.shape(inputs)[1])
    with tf.variable_scope("rnn_model"):
        outputs = run_rnn(inputs, mask, units, cell_type)
        if not return_sequences:
            outputs = outputs[:, -1]
        with tf.variable_scope("logits"):
            logits = _dense(outputs, logits_dimension)
    return logits, mask


class _RNNPart(core.ModelPart):
    """The trained part: the RNN and its sequence/context embeddings."""

    _SCOPES = ("rnn_model/", "sequence_features/", "dense_features/")

    def trainable_variables(self):
        """Every trainable variable of the RNN model and its feature layers."""
        return [v for v in tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)
                if v.op.name.startswith(self._SCOPES)]


def _train_op_fn(optimizer, clip_norm, loss_reduction):
    """train_op_fn(loss): gradients, optionally clipped one by one, then applied."""
    def fn(loss):
        loss = base_head.loss_for_gradients(loss, loss_reduction)
        variables = _RNNPart("rnn_model", optimizer).trainable_variables()
        grads = tf.gradients(loss, variables)
        if clip_norm is not None:  # Keras' clipnorm: each gradient on its own.
            grads = [None if g is None else tf.clip_by_norm(g, clip_norm) for g in grads]
        return optimizer.apply_gradients(
            list(zip_strict(grads, variables)),
            iterations=tf.train.get_or_create_global_step(), name="train_op")
    return fn


def _check_units(units, cell_type, rnn_cell_fn):
    """Checks units / cell_type / rnn_cell_fn; returns (units, cell_type)."""
    if rnn_cell_fn is not None:
        if units or cell_type is not USE_DEFAULT:
            raise ValueError("units and cell_type must not be specified when using "
                             f"rnn_cell_fn, got units={units!r}, cell_type={cell_type!r}")
        raise ValueError(
            "rnn_cell_fn is not supported: it returns Keras RNN cells, which Keras 3 "
            "cannot run in graph mode; give units and cell_type (one of "
            f"{list(CELL_TYPES)}) instead, got rnn_cell_fn={rnn_cell_fn!r}")
    if isinstance(units, bool) or units is None:
        raise TypeError(f"units must be an int or a list of ints, got {units!r}")
    if isinstance(units, numbers.Integral):
        if cell_type is USE_DEFAULT:
            raise ValueError("units given as an int needs cell_type (one of "
                             f"{list(CELL_TYPES)}); give a list for the default "
                             f"'simple_rnn', got units={units!r}")
        units = int(units)
        if units < 1:
            raise ValueError(f"units must be >= 1, got {units!r}")
    else:
        units = list(check_hidden_units(units, "units"))
    if cell_type is USE_DEFAULT:
        cell_type = "simple_rnn"
    if not isinstance(cell_type, str):
        raise TypeError(
            f"cell_type must be one of {list(CELL_TYPES)}; Keras cell classes cannot "
            f"run in graph mode, got {cell_type!r}")
    if cell_type not in CELL_TYPES:
        raise ValueError(f"cell_type must be one of {list(CELL_TYPES)}, got "
                         f"{cell_type!r}")
    return units, cell_type


def _optimizer_fn(optimizer):
    """(build function, clip norm): names get lr 0.05 and clipnorm 5, as tf.estimator."""
    if isinstance(optimizer, str):
        return (core.optimizer_factory(optimizer, _DEFAULT_LEARNING_RATE),
                _DEFAULT_CLIP_NORM)
    return core.optimizer_factory(optimizer), None


class RNNEstimator(Estimator):
    """A recurrent network with a user-given head (tf.estimator.experimental)."""

    def __init__(self, head: Head, sequence_feature_columns: Iterable[Any],
                 context_feature_columns: Iterable[Any] | None = None,
                 units: Sequence[int] | None = None, cell_type: str | Any = USE_DEFAULT,
                 rnn_cell_fn: Callable[[], Any] | None = None,
                 return_sequences: bool = False,
                 model_dir: str | os.PathLike[str] | None = None,
                 optimizer: str | Any = "Adagrad", config: RunConfig | None = None) -> None:
        """Checks the arguments (see tf.estimator.experimental.RNNEstimator).

        Args:
          head: an estimator_lite Head (a SequentialHeadWrapper with
            return_sequences).
          sequence_feature_columns: sequence columns
            (``tf.feature_column.sequence_numeric_column``, embeddings of
            ``sequence_categorical_column_with_*``).
          context_feature_columns: dense columns repeated at every step.
          units: an int (one layer of `cell_type`) or a list of layer sizes.
          cell_type: 'simple_rnn' (default for a list), 'lstm' or 'gru'.
          rnn_cell_fn: not supported (Keras cells); must be None.
          return_sequences: logits for every step instead of the last one.
          model_dir: as the other canned estimators.
          optimizer: as the other canned estimators; an optimizer given by
            name uses learning rate 0.05 and clipnorm 5.
          config: as the other canned estimators.

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.check_head(head)
        if not isinstance(return_sequences, bool):
            raise TypeError(f"return_sequences must be a bool, got {return_sequences!r}")
        if return_sequences and not isinstance(head, SequentialHeadWrapper):
            raise ValueError("Provided head must be a SequentialHeadWrapper when "
                             f"return_sequences is set to True, got {head!r}")
        units, cell_type = _check_units(units, cell_type, rnn_cell_fn)
        sequence_columns = feature_layers.check_feature_columns(
            sequence_feature_columns, "sequence_feature_columns")
        context_columns = feature_layers.check_feature_columns(
            context_feature_columns, "context_feature_columns", allow_empty=True)
        optimizer_fn, clip_norm = _optimizer_fn(optimizer)

        def model_fn(features, labels, mode):
            features = dict(features)
            logits, mask = rnn_logits(features, sequence_columns, context_columns, units,
                                      cell_type, head.logits_dimension, return_sequences)
            if return_sequences and head.input_sequence_mask_key not in features:
                features[head.input_sequence_mask_key] = mask
            op_fn = None
            if mode == ModeKeys.TRAIN:
                op_fn = _train_op_fn(optimizer_fn(), clip_norm,
                                     core.head_reduction(head))
            return head.create_estimator_spec(features=features, mode=mode,
                                              logits=logits, labels=labels,
                                              train_op_fn=op_fn)

        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config)
        self._head = head


class RNNClassifier(RNNEstimator):
    """A recurrent classifier (tf.estimator.experimental.RNNClassifier)."""

    def __init__(self, sequence_feature_columns: Iterable[Any],
                 context_feature_columns: Iterable[Any] | None = None,
                 units: Sequence[int] | None = None, cell_type: str | Any = USE_DEFAULT,
                 rnn_cell_fn: Callable[[], Any] | None = None,
                 return_sequences: bool = False,
                 model_dir: str | os.PathLike[str] | None = None, n_classes: int = 2,
                 weight_column: str | Any | None = None,
                 label_vocabulary: Sequence[str] | None = None,
                 optimizer: str | Any = "Adagrad",
                 loss_reduction: str = "sum_over_batch_size",
                 sequence_mask: str = "sequence_mask",
                 config: RunConfig | None = None) -> None:
        """Checks the arguments (see tf.estimator.experimental.RNNClassifier).

        With `return_sequences` the labels are [batch, time] and the loss and
        metrics count only the steps `sequence_mask` marks (a feature of that
        name, or the steps the sequence columns fill).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.classifier_head(n_classes, weight_column, label_vocabulary,
                                    loss_reduction)
        if return_sequences is True:
            head = SequentialHeadWrapper(head, sequence_length_mask=sequence_mask,
                                         feature_columns=weight_column)
        super().__init__(head, sequence_feature_columns, context_feature_columns,
                         units, cell_type, rnn_cell_fn, return_sequences, model_dir,
                         optimizer, config)
