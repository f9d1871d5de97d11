"""LinearSDCA: stochastic dual coordinate ascent for LinearClassifier/LinearRegressor.

tf.estimator.experimental.LinearSDCA is not an optimizer of gradients: it is given
as ``optimizer=`` to a linear estimator, which then trains with TensorFlow's SDCA
kernels (``SdcaOptimizerV2``, ``SdcaFprint``) instead of a gradient step. Each step:

- every example id is fingerprinted, and the example's dual state (4 floats) is
  read from a sharded dense hash table (``ShardedMutableHashTable-<i>-of-<n>``,
  checkpointed as ``...-keys`` / ``...-values``);
- the kernel computes the new state and the weight deltas from the *unshrunk*
  weights (``<weights>_unshrunk``), which the train op updates together with the
  table and the global step;
- a chief hook then copies the unshrunk weights into the model weights and, with
  L1 regularization, shrinks them towards zero by ``l1 / l2``.

Variable and table names, shapes, update order and the hook are tf.estimator
2.15's, so model_dirs move between the two libraries. Supported as tf.estimator
supports it: a binary BinaryClassHead (logistic loss) or a one-dimensional
RegressionHead (squared loss), numeric (rank-1) and categorical feature columns,
``sparse_combiner='sum'``.

As in tf.estimator, a step is bit-reproducible only for one-example batches: the
kernel visits a batch's examples in an order drawn from ``std::random_device`` and
updates the weights from several threads.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from estimator_lite import head as head_lib
from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import feature_transformation_cache, tf
from estimator_lite.canned.feature_layers import is_categorical
from estimator_lite.head import head_inputs
from estimator_lite.model_fn import ModeKeys

__all__ = ["LOSS_TYPES", "LinearSDCA", "ShardedDenseHashTable", "check_usable",
           "estimator_spec"]

# Losses the SDCA kernel implements. The canned estimators pick logistic or
# squared loss from their head; the others are for direct use of `train_step`.
LOSS_TYPES = ("logistic_loss", "squared_loss", "hinge_loss", "smooth_hinge_loss",
              "poisson_loss")
# An example's state in the table: dual variable, primal loss, dual loss, weight.
_STATE_SIZE = 4
# Fingerprints are pairs of int64; these two pairs mark free and deleted buckets.
_EMPTY_KEY = (0, 0)
_DELETED_KEY = (1, 1)
_TABLE_NAME = "ShardedMutableHashTable"


def _check_int(name, value, minimum, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int{' or None' if allow_none else ''}, got "
                        f"{value!r} of type {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return int(value)


def _check_number(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {value!r} of type "
                        f"{type(value).__name__}")
    return float(value)


class LinearSDCA:
    """Stochastic Dual Coordinate Ascent for linear estimators.

    Pass it as ``optimizer=`` to `LinearClassifier` (binary) or `LinearRegressor`
    (one-dimensional label), with ``sparse_combiner='sum'``. Every batch must hold
    the feature `example_id_column`: a string Tensor [batch_size] identifying each
    example across epochs (SDCA keeps per-example state).

    ```python
    sdca = estimator_lite.experimental.LinearSDCA(
        example_id_column="example_id", symmetric_l2_regularization=2.0)
    classifier = estimator_lite.LinearClassifier(feature_columns, optimizer=sdca)
    ```
    """

    def __init__(self, example_id_column: str, num_loss_partitions: int = 1,
                 num_table_shards: int | None = None,
                 symmetric_l1_regularization: float = 0.0,
                 symmetric_l2_regularization: float = 1.0, adaptive: bool = False) -> None:
        """Checks and keeps the settings (tf.estimator.experimental.LinearSDCA's).

        Args:
          example_id_column: the feature key of the example ids (string Tensor).
          num_loss_partitions: number of concurrent trainers (workers) sharing the
            loss; more than the real number slows convergence, fewer breaks it.
          num_table_shards: shards of the example-state table (None: 1), usually
            the number of parameter servers.
          symmetric_l1_regularization: L1 strength, >= 0.
          symmetric_l2_regularization: L2 strength, > 0 (typically > 1).
          adaptive: whether the kernel samples examples adaptively.

        Raises:
          TypeError: an argument has the wrong type.
          ValueError: an argument is out of range.
        """
        if not isinstance(example_id_column, str):
            raise TypeError("example_id_column must be a str feature key, got "
                            f"{example_id_column!r} of type "
                            f"{type(example_id_column).__name__}")
        self._example_id_column = example_id_column
        self._num_loss_partitions = _check_int("num_loss_partitions",
                                               num_loss_partitions, 1)
        self._num_table_shards = _check_int("num_table_shards", num_table_shards, 1,
                                            allow_none=True)
        self._symmetric_l1_regularization = _check_number(
            "symmetric_l1_regularization", symmetric_l1_regularization)
        self._symmetric_l2_regularization = _check_number(
            "symmetric_l2_regularization", symmetric_l2_regularization)
        if self._symmetric_l1_regularization < 0.0:
            raise ValueError("symmetric_l1_regularization must be >= 0, got "
                             f"{symmetric_l1_regularization!r}")
        if self._symmetric_l2_regularization <= 0.0:
            raise ValueError("symmetric_l2_regularization must be > 0, got "
                             f"{symmetric_l2_regularization!r}")
        if not isinstance(adaptive, bool):
            raise TypeError(f"adaptive must be a bool, got {adaptive!r} of type "
                            f"{type(adaptive).__name__}")
        self._adaptive = adaptive

    @property
    def example_id_column(self) -> str:
        """The feature key of the example ids."""
        return self._example_id_column

    def train_step(self, features: Mapping[str, tf.Tensor], labels: tf.Tensor,
                   feature_columns: Iterable[Any],
                   variables: Callable[[Any], tf.Variable], loss_type: str,
                   example_weights: tf.Tensor | None = None,
                   ) -> tuple[tf.Operation, Callable[[tf.Operation], tf.Operation]]:
        """Builds one SDCA step over a batch; returns (train_op, update_weights_fn).

        Args:
          features: dict of feature Tensors (with the example ids).
          labels: the labels, one per example (0/1 for the classification losses).
          feature_columns: the linear model's columns.
          variables: callable(column) -> the column's weights variable [size, 1],
            and (with key None) the bias variable [1].
          loss_type: one of LOSS_TYPES.
          example_weights: float Tensor [batch_size] or None (all ones).

        Returns:
          The train op (updates the unshrunk weights, the example states and the
          global step) and a callable building the op that copies (and shrinks)
          the unshrunk weights into the model's, run after the train op.

        Raises:
          ValueError: an unsupported column or loss, or missing example ids.
        """
        if loss_type not in LOSS_TYPES:
            raise ValueError(f"loss_type must be one of {LOSS_TYPES}, got {loss_type!r}")
        if self._symmetric_l2_regularization <= 1.0:
            tf.logging.warning(
                "symmetric_l2_regularization for SDCA should typically be larger than "
                "for online optimization methods; a good value is of the order of the "
                "average L2 norm of the training examples.")
        if self._example_id_column not in features:
            raise ValueError(f"example_id_column {self._example_id_column!r} is not in "
                             f"features; feature keys: {sorted(features)}")
        batch = _Batch(features, labels, example_weights)
        model_variables = []
        for column in sorted(feature_columns, key=lambda c: c.name):
            batch.add_column(column)
            model_variables.append(variables(column))
        batch.add_bias()
        model_variables.append(variables(None))
        step = _Step(self, batch, model_variables, loss_type)
        return step.train_op(), step.update_weights


class _Batch:
    """The SDCA kernel's view of a batch: sparse ids, dense values, labels, weights."""

    def __init__(self, features, labels, example_weights):
        self.features = features
        self.labels = tf.reshape(tf.cast(labels, tf.float32), [-1])
        self.size = tf.shape(self.labels)[0]
        self.example_weights = (tf.ones([self.size]) if example_weights is None
                                else tf.reshape(tf.cast(example_weights, tf.float32),
                                                [-1]))
        self.sparse = []  # (example_index, feature_index, value) per sparse column
        self.dense = []  # [batch_size, size] values per dense column, bias last
        self.is_sparse = []  # per column, in the kernel's order
        self._cache = None

    def add_column(self, column):
        if is_categorical(column):
            self.sparse.append(_unique_ids(self._sparse_ids(column)))
            self.is_sparse.append(True)
            return
        shape = tf.TensorShape(column.variable_shape)
        if shape.ndims != 1:
            raise ValueError(f"LinearSDCA supports feature columns of rank 1 only; "
                             f"column {column.name!r} ({type(column).__name__}) has "
                             f"shape {shape}")
        # Dense columns' values as the linear model reads them (no new variables).
        with tf.variable_scope(tf.get_variable_scope(), reuse=True):
            values = tf.feature_column.input_layer(self.features, [column])
        self.dense.append(values)
        self.is_sparse.append(False)

    def add_bias(self):
        self.dense.append(tf.ones([self.size, 1]))
        self.is_sparse.append(False)

    def _sparse_ids(self, column):
        if self._cache is None:
            self._cache = feature_transformation_cache(self.features)
        try:
            return column.get_sparse_tensors(self._cache, None)
        except (AttributeError, TypeError) as error:
            raise ValueError(f"LinearSDCA needs TF 2 feature columns (tf.feature_column); "
                             f"column {column.name!r} of type {type(column).__name__} "
                             f"gave no sparse ids: {error}") from error


def _unique_ids(id_weight_pair):
    """(example index, feature id, summed value) per distinct id of each example.

    Negative ids (out-of-vocabulary lookups) are dropped; an id repeated in one
    example becomes one entry whose value is the sum of the repeats' values.
    """
    ids = id_weight_pair.id_tensor
    examples = tf.reshape(ids.indices[:, 0], [-1])
    feature_ids = tf.cast(tf.reshape(ids.values, [-1]), tf.int64)
    if id_weight_pair.weight_tensor is not None:
        values = id_weight_pair.weight_tensor.values
    else:
        values = tf.ones([tf.shape(ids.indices)[0]], tf.float32)
    valid = tf.greater_equal(feature_ids, 0)
    examples = tf.boolean_mask(examples, valid)
    feature_ids = tf.boolean_mask(feature_ids, valid)
    values = tf.boolean_mask(values, valid)
    # One number per (example, id) pair, so `unique` merges repeats within an
    # example only; first occurrences keep their order.
    stride = tf.reduce_max(feature_ids) + 1
    pairs, position = tf.unique(examples * stride + feature_ids)
    count = tf.shape(pairs)[0]
    pair_examples = tf.unsorted_segment_min(examples, position, count)
    pair_values = tf.reshape(tf.unsorted_segment_sum(values, position, count), [-1])
    return (pair_examples, pairs - stride * pair_examples, pair_values)


class ShardedDenseHashTable:
    """A dense hash table split into shards by key (TensorFlow's DenseHashTable).

    Keys are int64 pairs (example fingerprints); a key goes to shard
    ``abs(key[0]) % num_shards``. Each shard is checkpointed as
    ``<name>-<i>-of-<n>-keys`` and ``-values``.
    """

    def __init__(self, num_shards, value_size, name=_TABLE_NAME):
        """Creates the shards (in the current graph).

        Args:
          num_shards: int >= 1.
          value_size: length of each value vector (float32, default zeros).
          name: prefix of the shards' names.
        """
        self._shards = []
        with tf.name_scope(name):
            for index in range(num_shards):
                self._shards.append(tf.lookup.experimental.DenseHashTable(
                    key_dtype=tf.int64, value_dtype=tf.float32,
                    default_value=[0.0] * value_size, empty_key=list(_EMPTY_KEY),
                    deleted_key=list(_DELETED_KEY),
                    name=f"{name}-{index + 1}-of-{num_shards}"))

    @property
    def shards(self):
        """The DenseHashTables, in shard order."""
        return list(self._shards)

    def _shard_of(self, keys):
        return tf.cast(tf.floormod(tf.abs(keys[:, 0]), len(self._shards)), tf.int32)

    def lookup(self, keys):
        """The values of `keys` [n, 2] (defaults where absent): [n, value_size]."""
        if len(self._shards) == 1:
            return self._shards[0].lookup(keys)
        shard = self._shard_of(keys)
        parts = tf.dynamic_partition(keys, shard, len(self._shards))
        positions = tf.dynamic_partition(tf.range(tf.shape(keys)[0]), shard,
                                         len(self._shards))
        found = [table.lookup(part) for table, part in zip_strict(self._shards, parts)]
        return tf.dynamic_stitch(positions, found)

    def insert(self, keys, values):
        """The op writing `values` [n, value_size] under `keys` [n, 2]."""
        if len(self._shards) == 1:
            return self._shards[0].insert(keys, values)
        shard = self._shard_of(keys)
        key_parts = tf.dynamic_partition(keys, shard, len(self._shards))
        value_parts = tf.dynamic_partition(values, shard, len(self._shards))
        return tf.group(*[table.insert(k, v) for table, k, v in zip_strict(
            self._shards, key_parts, value_parts)])

    def size(self):
        """Number of keys in all shards (int64 scalar)."""
        return tf.add_n([table.size() for table in self._shards])

    def values(self):
        """Every shard's exported values (empty buckets hold the default)."""
        return [table.export()[1] for table in self._shards]


class _Step:
    """The graph of one SDCA step over a batch: kernel call, updates, weight copy."""

    def __init__(self, sdca, batch, model_variables, loss_type):
        self._sdca = sdca
        self._batch = batch
        self._variables = model_variables
        self._loss_type = loss_type
        self._unshrunk = [self._unshrunk_copy(v) for v in model_variables]
        self._table = ShardedDenseHashTable(sdca._num_table_shards or 1, _STATE_SIZE)
        tf.summary.scalar("approximate_duality_gap", self._duality_gap())
        tf.summary.scalar("examples_seen", self._table.size())

    @staticmethod
    def _unshrunk_copy(variable):
        """The kernel's working copy of `variable`, zero-initialised, named as tf's."""
        with tf.device(variable.device):
            return tf.Variable(tf.zeros(variable.shape, tf.float32),
                               name=variable.op.name + "_unshrunk", use_resource=True)

    def _split(self, items):
        sparse = [x for x, s in zip_strict(items, self._batch.is_sparse) if s]
        dense = [x for x, s in zip_strict(items, self._batch.is_sparse) if not s]
        return sparse, dense

    def train_op(self):
        """Runs the kernel and applies its example-state and weight deltas."""
        sdca, batch = self._sdca, self._batch
        with tf.name_scope("sdca/minimize"):
            example_ids = tf.train.sdca_fprint(
                tf.convert_to_tensor(batch.features[sdca.example_id_column]))
            sparse_unshrunk, dense_unshrunk = self._split(self._unshrunk)
            unique_ids = [tf.cast(tf.unique(tf.cast(ids, tf.int32))[0], tf.int64)
                          for _, ids, _ in batch.sparse]
            gathered = [tf.gather(w, ids)
                        for w, ids in zip_strict(sparse_unshrunk, unique_ids)]
            states, sparse_deltas, dense_deltas = tf.raw_ops.SdcaOptimizerV2(
                sparse_example_indices=[e for e, _, _ in batch.sparse],
                sparse_feature_indices=[i for _, i, _ in batch.sparse],
                sparse_feature_values=[v for _, _, v in batch.sparse],
                dense_features=batch.dense,
                example_weights=batch.example_weights,
                example_labels=batch.labels,
                sparse_indices=unique_ids,
                sparse_weights=gathered,
                dense_weights=[tf.convert_to_tensor(w) for w in dense_unshrunk],
                example_state_data=self._table.lookup(example_ids),
                loss_type=self._loss_type,
                l1=sdca._symmetric_l1_regularization,
                l2=sdca._symmetric_l2_regularization,
                num_loss_partitions=sdca._num_loss_partitions,
                num_inner_iterations=1,
                adaptive=sdca._adaptive)
            with tf.control_dependencies([states]):
                updates = [self._table.insert(example_ids, states)]
                updates += [tf.scatter_add(w, ids, delta) for w, ids, delta in zip_strict(
                    sparse_unshrunk, unique_ids, sparse_deltas)]
                updates += [tf.assign_add(w, delta) for w, delta in zip_strict(
                    dense_unshrunk, dense_deltas)]
        with tf.control_dependencies(updates):
            return tf.assign_add(tf.train.get_global_step(), 1).op

    def update_weights(self, train_op):
        """The op, run after `train_op`, setting the model weights from the kernel's.

        With L1 regularization the copies are shrunk towards zero by l1 / l2 (the
        proximal step), so small weights become exactly zero.
        """
        with tf.control_dependencies([train_op]):
            copies = [v.assign(u) for v, u in zip_strict(self._variables, self._unshrunk)]
        l1 = self._sdca._symmetric_l1_regularization
        if l1 <= 0:
            return tf.group(*copies)
        shrinkage = l1 / self._sdca._symmetric_l2_regularization
        with tf.control_dependencies(copies):
            return tf.group(*[v.assign(tf.sign(v) * tf.maximum(0.0, tf.abs(v) - shrinkage))
                              for v in self._variables])

    def _duality_gap(self):
        """(primal + dual + L1 + 2 * L2 loss) / total example weight, over the table."""
        with tf.name_scope("sdca/approximate_duality_gap"):
            totals = tf.add_n([tf.reduce_sum(tf.cast(values, tf.float64), 0)
                               for values in self._table.values()])
            weights64 = [tf.cast(v, tf.float64) for v in self._variables]
            l1 = self._sdca._symmetric_l1_regularization * tf.add_n(
                [tf.reduce_sum(tf.abs(w)) for w in weights64])
            l2 = self._sdca._symmetric_l2_regularization * tf.add_n(
                [tf.reduce_sum(tf.square(w)) for w in weights64]) / 2.0
            return (totals[1] + totals[2] + l1 + 2.0 * l2) / totals[3]


class _UpdateWeightsHook(tf.train.SessionRunHook):
    """Chief hook: runs the weight copy (and shrink) with every training step."""

    def __init__(self, update_weights_fn, train_op):
        self._update_weights_fn = update_weights_fn
        self._train_op = train_op
        self._update_op = None

    def begin(self):
        self._update_op = self._update_weights_fn(self._train_op)

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._update_op)


def _loss_type(head):
    """SDCA's loss for a canned head (tf.estimator's choice), or ValueError."""
    if isinstance(head, head_lib.BinaryClassHead):
        return "logistic_loss"
    if isinstance(head, head_lib.MultiClassHead):
        raise ValueError("LinearSDCA cannot be used in a multi-class setting: "
                         f"the head has {head.logits_dimension} logits")
    if isinstance(head, head_lib.RegressionHead):
        if head.logits_dimension != 1:
            raise ValueError("LinearSDCA can only be used with one-dimensional labels, "
                             f"got label_dimension={head.logits_dimension}")
        return "squared_loss"
    raise ValueError("LinearSDCA needs a BinaryClassHead or a one-dimensional "
                     f"RegressionHead, got {head!r}")


def check_usable(optimizer, head, sparse_combiner):
    """Checks a LinearSDCA can train a linear model with `head`; returns it.

    Raises:
      ValueError: sparse_combiner is not 'sum', or the head has no SDCA loss
        (multi-class, multi-dimensional or another kind of head).
    """
    if sparse_combiner != "sum":
        raise ValueError('sparse_combiner must be "sum" when optimizer is a LinearSDCA '
                         f"object, got {sparse_combiner!r}")
    _loss_type(head)
    return optimizer


def _model_variables(scope):
    """callable(column or None) -> the linear model's weights (or bias) variable.

    A variable of the v1 linear model is partitioned; in one part (v1's default
    partitioner splits only inputs over 64 MB) its part_0 is the whole variable.
    """
    by_name = {v.op.name: v for v in tf.global_variables()
               if v.op.name.startswith(scope + "/")}

    def variables(column):
        name = (f"{scope}/bias_weights" if column is None
                else f"{scope}/{column.name}/weights")
        if name in by_name:
            return by_name[name]
        if f"{name}/part_0" in by_name and f"{name}/part_1" not in by_name:
            return by_name[f"{name}/part_0"]
        parts = sorted(n for n in by_name if n.startswith(name + "/part_"))
        raise ValueError(f"LinearSDCA needs the linear model's variable {name!r} in one "
                         f"piece, found {parts or 'no such variable'} (variables split "
                         "over several parameter servers are not supported)")
    return variables


def estimator_spec(optimizer, features, labels, mode, head, feature_columns, logits,
                   scope="linear/linear_model"):
    """The linear model's EstimatorSpec when `optimizer` is a LinearSDCA.

    Args:
      optimizer: the LinearSDCA.
      features, labels, mode: what the model_fn received.
      head: a BinaryClassHead or one-dimensional RegressionHead.
      feature_columns: the model's columns.
      logits: the linear model's logits (its variables built under `scope`).
      scope: the linear model's variable scope.

    Returns:
      The head's EstimatorSpec; in TRAIN its train op is the SDCA step and a chief
      hook copies the weights after each step.
    """
    if mode != ModeKeys.TRAIN:
        return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                          logits=logits)
    weights = head_inputs.weights_from_features(features, head.weight_column, logits)
    # The head's own label handling (label_vocabulary strings to 0/1, range checks):
    # tf.estimator fed the raw labels to the kernel, so vocabularies failed there.
    train_op, update_weights = optimizer.train_step(
        features, head._processed_labels(labels), feature_columns,
        _model_variables(scope), _loss_type(head), example_weights=weights)
    spec = head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                      logits=logits, train_op_fn=lambda _: train_op)
    return spec._replace(training_chief_hooks=(
        *spec.training_chief_hooks, _UpdateWeightsHook(update_weights, train_op)))
