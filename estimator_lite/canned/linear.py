"""LinearClassifier and LinearRegressor: weighted sums of feature columns.

Variables as tf.estimator 2.15's: ``linear/linear_model/<column>/weights`` and
``linear/linear_model/bias_weights``; the default optimizer is Ftrl with learning
rate 0.2. A `linear_sdca.LinearSDCA` given as the optimizer trains the same
model with SDCA instead (see that module).

Both flavors (see `flavors`) over one implementation: the TF2 classes
(`LinearClassifier`, ...) and the v1 ones (`LinearClassifierV1`, ...: TF 1.x's,
exported as ``compat.v1.LinearClassifier``), with v1's logits and logit_fn builder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import VARIABLE_TYPES, tf
from estimator_lite.canned import core, feature_layers, flavors, linear_sdca
from estimator_lite.estimator import Estimator
from estimator_lite.model_fn import ModeKeys

if TYPE_CHECKING:
    from estimator_lite.estimator import WarmStartSettings
    from estimator_lite.head.base_head import Head
    from estimator_lite.run_config import RunConfig

__all__ = ["LEARNING_RATE", "LinearClassifier", "LinearClassifierV1",
           "LinearEstimatorV1", "LinearModel", "LinearRegressor", "LinearRegressorV1",
           "check_sparse_combiner", "compute_fraction_of_zero", "linear_logit_fn_builder",
           "linear_logit_fn_builder_v2", "linear_logits", "v1_linear_logit_fn_builder",
           "v1_linear_logits"]

# tf.estimator 2.15's rate for an optimizer given by name.
LEARNING_RATE = flavors.V2.linear_learning_rate


def check_sparse_combiner(sparse_combiner, argument="sparse_combiner"):
    """Checks a sparse combiner name ('mean', 'sqrtn' or 'sum').

    Raises:
      ValueError: another value.
    """
    if sparse_combiner not in feature_layers.SPARSE_COMBINERS:
        raise ValueError(f"{argument} must be one of {feature_layers.SPARSE_COMBINERS}, "
                         f"got {sparse_combiner!r}")
    return sparse_combiner


def compute_fraction_of_zero(variables):
    """The fraction of zero entries over all of `variables` (the model's sparsity).

    Args:
      variables: a (nested) list of variables or tensors of any numeric dtype.

    Returns:
      A float32 scalar Tensor: zero entries / all entries (NaN when they hold no
      entry at all).

    Raises:
      ValueError: `variables` holds no variable or tensor.
    """
    flat = tf.nest.flatten(variables)
    if not flat:
        raise ValueError("compute_fraction_of_zero needs at least one variable or "
                         f"tensor, got {variables!r}")
    with tf.name_scope("zero_fraction"):
        sizes = [tf.size(value, out_type=tf.int64) for value in flat]
        # tf.nn.zero_fraction of an empty tensor is NaN: count those as no zeros.
        zeros = [tf.cond(tf.equal(size, 0),
                         lambda: tf.constant(0.0),
                         lambda value=value, size=size: tf.nn.zero_fraction(value) *
                         tf.cast(size, tf.float32))
                 for value, size in zip_strict(flat, sizes)]
        fraction = tf.add_n(zeros) / tf.cast(tf.add_n(sizes), tf.float32)
        return tf.identity(fraction, name="zero_fraction_or_nan")


def _parts_of(variables):
    """Variables with each partitioned variable replaced by its parts."""
    parts = []
    for variable in variables:
        if isinstance(variable, (*VARIABLE_TYPES, tf.Tensor)):
            parts.append(variable)
        else:  # A PartitionedVariable iterates over its parts.
            parts.extend(variable)
    return parts


def _weights_of(model):
    """The model's weight variables (the bias left out), partitions expanded."""
    return _parts_of([v for v in model.variables if v is not model.bias])


class LinearModel:
    """tf.estimator's LinearModel: a weighted sum of feature columns, plus a bias.

    Calling it with a features dict builds ``<name>/<column>/weights``
    [size, units] and ``<name>/bias_weights`` [units] (zero-initialised) the
    first time, reuses them afterwards, and returns the [batch, units] logits.
    A categorical column counts each id present, as an indicator column would,
    combined per example with `sparse_combiner`.
    """

    def __init__(self, feature_columns, units=1, sparse_combiner="sum", trainable=True,
                 name=None, **kwargs):
        """Checks the arguments; builds nothing until called.

        Args:
          feature_columns: the dense and categorical feature columns.
          units: the number of outputs.
          sparse_combiner: 'sum', 'mean' or 'sqrtn', how a categorical column's
            ids in one example combine.
          trainable: whether the variables are trainable.
          name: the variables' scope (default ``linear_model``).
          **kwargs: Keras layer arguments, accepted and ignored (the model is
            built from variables, not Keras).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        del kwargs
        self._columns = feature_layers.check_feature_columns(feature_columns)
        self._units = int(units)
        self._sparse_combiner = check_sparse_combiner(sparse_combiner)
        self.trainable = bool(trainable)
        self.name = name or "linear_model"
        self._variables = None
        self._bias = None

    def __call__(self, features):
        """The logits for `features` (a dict of feature name to tensor).

        Raises:
          ValueError: features is not a dict.
        """
        if not isinstance(features, dict):
            raise ValueError(f"LinearModel needs a dict of features, got {features!r}")
        built = self._variables is not None
        scope = tf.get_variable_scope()
        with tf.variable_scope(scope, reuse=True if built else None):
            logits = feature_layers.linear_logits(
                features, self._columns, self._units, self._sparse_combiner,
                name=self.name, trainable=self.trainable)
        if not built:
            self._collect_variables(f"{scope.name}/{self.name}" if scope.name
                                    else self.name)
        return logits

    def _collect_variables(self, scope_name):
        """Finds the model's variables (created now, or reused from the scope)."""
        bias_name = f"{scope_name}/bias_weights"
        found = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES,
                                  scope=re.escape(scope_name) + "/")
        weights = [v for v in found if v.op.name != bias_name]
        self._bias = next((v for v in found if v.op.name == bias_name), None)
        self._variables = sorted(weights, key=lambda v: v.op.name) + (
            [self._bias] if self._bias is not None else [])

    @property
    def bias(self):
        """The ``bias_weights`` variable (None before the first call)."""
        return self._bias

    @property
    def variables(self):
        """A new list of the model's variables, the bias last ([] before a call)."""
        return list(self._variables or ())

    @property
    def trainable_variables(self):
        """The variables when the model is trainable, else []."""
        return self.variables if self.trainable else []


def _add_summaries(bias, weights, units):
    """The linear model's summaries, as tf.estimator writes them.

    Nothing for a model whose variables live elsewhere (e.g. a strategy's).
    """
    if bias is None or not weights:
        return
    if units > 1:
        tf.summary.histogram("bias", bias)
    else:
        tf.summary.scalar("bias", tf.reshape(bias, [-1])[0])
    tf.summary.scalar("fraction_of_zero_weights", compute_fraction_of_zero(weights))


def _logit_fn_builder(units, feature_columns, sparse_combiner, check_v2):
    columns = feature_layers.check_feature_columns(feature_columns)
    sparse_combiner = check_sparse_combiner(sparse_combiner)

    def linear_logit_fn(features):
        """The linear model's logits for `features`, with its summaries."""
        if check_v2:
            feature_layers.check_v2_columns(columns)
        model = LinearModel(columns, units=units, sparse_combiner=sparse_combiner,
                            name="linear_model")
        logits = model(features)
        _add_summaries(model.bias, _weights_of(model), units)
        return logits
    return linear_logit_fn


def linear_logit_fn_builder(units, feature_columns, sparse_combiner="sum"):
    """tf.compat.v1.estimator.experimental.linear_logit_fn_builder.

    Args:
      units: the number of logits.
      feature_columns: the model's feature columns.
      sparse_combiner: 'sum', 'mean' or 'sqrtn'.

    Returns:
      logit_fn(features) -> [batch, units] logits, building a `LinearModel` named
      ``linear_model`` in the current variable scope, and the summaries ``bias``
      and ``fraction_of_zero_weights``.

    Raises:
      TypeError / ValueError: an argument has a wrong type or value.
    """
    return _logit_fn_builder(units, feature_columns, sparse_combiner, check_v2=False)


def linear_logit_fn_builder_v2(units, feature_columns, sparse_combiner="sum"):
    """`linear_logit_fn_builder` for the v2 estimators: v1-only columns raise.

    Returns:
      logit_fn(features), as `linear_logit_fn_builder`'s; it raises ValueError
      when a feature column is a TensorFlow v1-only column.
    """
    return _logit_fn_builder(units, feature_columns, sparse_combiner, check_v2=True)


def linear_logits(features, feature_columns, units, sparse_combiner):
    """The linear model's logits, built under variable scope ``linear``.

    Adds the summaries ``bias`` and ``fraction_of_zero_weights``, as tf.estimator's
    linear model_fn does.

    Raises:
      ValueError: a column is a TensorFlow v1-only column (the v2 models' check).
    """
    feature_layers.check_v2_columns(feature_columns)
    model = LinearModel(feature_columns, units=units, sparse_combiner=sparse_combiner,
                        name="linear_model")
    with tf.variable_scope("linear"):
        logits = model(features)
    _add_summaries(model.bias, _weights_of(model), units)
    return logits


def linear_model_fn(features, labels, mode, head, feature_columns, optimizer_fn,
                    sparse_combiner):
    """The model_fn of LinearClassifier / LinearRegressor.

    `optimizer_fn` builds the optimizer, or is the LinearSDCA that trains the model.
    """
    logits = linear_logits(features, feature_columns, head.logits_dimension,
                           sparse_combiner)
    # tf.estimator 2.15's Keras-based linear model nests its name scopes; serving
    # signatures name this tensor, so it gets the same name here (an identity
    # after every variable, so the graph-seeded initial values do not move).
    with tf.name_scope("linear/linear_model/linear/linear_model/linear/linear_model/"):
        logits = tf.identity(logits, name="weighted_sum")
    if isinstance(optimizer_fn, linear_sdca.LinearSDCA):
        return linear_sdca.estimator_spec(optimizer_fn, features, labels, mode, head,
                                          feature_columns, logits)
    op_fn = None
    if mode == ModeKeys.TRAIN:
        op_fn = core.train_op_fn([core.ModelPart("linear", optimizer_fn())],
                                 loss_reduction=core.head_reduction(head))
    return head.create_estimator_spec(features=features, mode=mode, logits=logits,
                                      labels=labels, train_op_fn=op_fn)


def v1_linear_logits(features, columns, units, sparse_combiner):
    """The v1 linear logits, their tensor named as v1's (the name serving clients see).

    v1's Keras-based linear model nests three ``linear_model`` name scopes; the
    output tensor of an export signature is
    ``linear/linear_model/linear_model/linear_model/weighted_sum``.
    """
    logits = feature_layers.linear_logits(features, columns, units, sparse_combiner)
    scope = tf.get_default_graph().get_name_scope()
    with tf.name_scope(f"{scope}/linear_model/linear_model/linear_model/"):
        return tf.identity(logits, name="weighted_sum")


def v1_linear_logit_fn_builder(units, feature_columns, sparse_combiner="sum"):
    """Returns logit_fn(features) building v1's linear model in the current scope.

    What `canned.v1` exports as tf.compat.v1.estimator.experimental's
    ``linear_logit_fn_builder`` (the canned v1 linear model calls it inside scope
    ``linear``).

    Raises:
      TypeError / ValueError: an argument has a wrong type or value.
    """
    columns = feature_layers.check_feature_columns(feature_columns)
    sparse_combiner = check_sparse_combiner(sparse_combiner)

    def logit_fn(features):
        return feature_layers.linear_logits(features, columns, units, sparse_combiner)
    return logit_fn


def _v1_linear_model_fn(features, labels, mode, config, head, feature_columns,
                        optimizer_fn, sparse_combiner, partitioner):
    """The model_fn of the v1 linear estimators (partitioned; see `flavors`)."""
    with tf.variable_scope("linear",
                           partitioner=flavors.input_partitioner(partitioner, config)):
        logits = v1_linear_logits(features, feature_columns, head.logits_dimension,
                                  sparse_combiner)
        if isinstance(optimizer_fn, linear_sdca.LinearSDCA):
            return linear_sdca.estimator_spec(optimizer_fn, features, labels, mode, head,
                                              feature_columns, logits)
        optimizer = optimizer_fn() if mode == ModeKeys.TRAIN else None
        return head.create_estimator_spec(features=features, mode=mode, logits=logits,
                                          labels=labels, optimizer=optimizer)


class _LinearEstimator(Estimator):
    """Checks the linear arguments and builds the model_fn of a flavor around a head."""

    def __init__(self, flavor, head, feature_columns, model_dir, optimizer, config,
                 warm_start_from, sparse_combiner, partitioner=None):
        columns = feature_layers.check_feature_columns(feature_columns)
        if isinstance(optimizer, linear_sdca.LinearSDCA):
            optimizer_fn = linear_sdca.check_usable(optimizer, head, sparse_combiner)
        else:
            optimizer_fn = flavor.optimizer_factory(optimizer, flavor.linear_learning_rate,
                                                    "optimizer")
        sparse_combiner = check_sparse_combiner(sparse_combiner)
        if flavor.partitioned:
            flavors.check_partitioner(partitioner, "partitioner")

            def model_fn(features, labels, mode, config):
                return _v1_linear_model_fn(features, labels, mode, config, head, columns,
                                           optimizer_fn, sparse_combiner, partitioner)
        else:
            def model_fn(features, labels, mode):
                return linear_model_fn(features, labels, mode, head, columns,
                                       optimizer_fn, sparse_combiner)

        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)
        self._head = head


class LinearClassifier(_LinearEstimator):
    """A linear classifier (tf.estimator.LinearClassifier's V2 signature)."""

    def __init__(self, feature_columns: Iterable[Any],
                 model_dir: str | os.PathLike[str] | None = None, n_classes: int = 2,
                 weight_column: str | Any | None = None,
                 label_vocabulary: Sequence[str] | None = None,
                 optimizer: str | Any = "Ftrl", config: RunConfig | None = None,
                 warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
                 loss_reduction: str = flavors.V2.loss_reduction,
                 sparse_combiner: str = "sum") -> None:
        """Checks the arguments (see tf.estimator.LinearClassifier).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.classifier_head(n_classes, weight_column, label_vocabulary,
                                    loss_reduction, flavors.V2.binary_head_class)
        super().__init__(flavors.V2, head, feature_columns, model_dir, optimizer, config,
                         warm_start_from, sparse_combiner)


class LinearRegressor(_LinearEstimator):
    """A linear regressor (tf.estimator.LinearRegressor's V2 signature)."""

    def __init__(self, feature_columns: Iterable[Any],
                 model_dir: str | os.PathLike[str] | None = None, label_dimension: int = 1,
                 weight_column: str | Any | None = None, optimizer: str | Any = "Ftrl",
                 config: RunConfig | None = None,
                 warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
                 loss_reduction: str = flavors.V2.loss_reduction,
                 sparse_combiner: str = "sum") -> None:
        """Checks the arguments (see tf.estimator.LinearRegressor).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(flavors.V2, head, feature_columns, model_dir, optimizer, config,
                         warm_start_from, sparse_combiner)


class LinearEstimator(_LinearEstimator):
    """A linear model with a user-given head (tf.estimator.LinearEstimator)."""

    def __init__(self, head: Head, feature_columns: Iterable[Any],
                 model_dir: str | os.PathLike[str] | None = None,
                 optimizer: str | Any = "Ftrl", config: RunConfig | None = None,
                 sparse_combiner: str = "sum",
                 warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
                 ) -> None:
        """Checks the arguments (see tf.estimator.LinearEstimator).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        super().__init__(flavors.V2, core.check_head(head), feature_columns, model_dir,
                         optimizer, config, warm_start_from, sparse_combiner)


# The v1 flavor (tf.compat.v1.estimator's classes; see `flavors`) -------------------

@flavors.v1_class
class LinearClassifierV1(_LinearEstimator):
    """A linear classifier (tf.compat.v1.estimator.LinearClassifier)."""

    def __init__(self, feature_columns: Iterable[Any],
                 model_dir: str | os.PathLike[str] | None = None, n_classes: int = 2,
                 weight_column: str | Any | None = None,
                 label_vocabulary: Sequence[str] | None = None,
                 optimizer: str | Any = "Ftrl", config: RunConfig | None = None,
                 partitioner: Callable[..., Any] | None = None,
                 warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
                 loss_reduction: str = flavors.V1.loss_reduction,
                 sparse_combiner: str = "sum") -> None:
        """Checks the arguments (see tf.compat.v1.estimator.LinearClassifier).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.classifier_head(n_classes, weight_column, label_vocabulary,
                                    loss_reduction, flavors.V1.binary_head_class)
        super().__init__(flavors.V1, head, feature_columns, model_dir, optimizer, config,
                         warm_start_from, sparse_combiner, partitioner)


@flavors.v1_class
class LinearRegressorV1(_LinearEstimator):
    """A linear regressor (tf.compat.v1.estimator.LinearRegressor)."""

    def __init__(self, feature_columns: Iterable[Any],
                 model_dir: str | os.PathLike[str] | None = None, label_dimension: int = 1,
                 weight_column: str | Any | None = None, optimizer: str | Any = "Ftrl",
                 config: RunConfig | None = None,
                 partitioner: Callable[..., Any] | None = None,
                 warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
                 loss_reduction: str = flavors.V1.loss_reduction,
                 sparse_combiner: str = "sum") -> None:
        """Checks the arguments (see tf.compat.v1.estimator.LinearRegressor).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(flavors.V1, head, feature_columns, model_dir, optimizer, config,
                         warm_start_from, sparse_combiner, partitioner)


@flavors.v1_class
class LinearEstimatorV1(_LinearEstimator):
    """A linear model with a given head (tf.compat.v1.estimator.LinearEstimator)."""

    def __init__(self, head: Head, feature_columns: Iterable[Any],
                 model_dir: str | os.PathLike[str] | None = None,
                 optimizer: str | Any = "Ftrl", config: RunConfig | None = None,
                 partitioner: Callable[..., Any] | None = None,
                 sparse_combiner: str = "sum",
                 warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
                 ) -> None:
        """Checks the arguments (see tf.compat.v1.estimator.LinearEstimator).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        super().__init__(flavors.V1, core.check_head(head), feature_columns, model_dir,
                         optimizer, config, warm_start_from, sparse_combiner, partitioner)
