"""DNNLinearCombinedClassifier / Regressor: a linear model and a DNN, logits summed.

Each part has its own optimizer (defaults: Ftrl at 0.005 for the linear part,
Adagrad at 0.001 for the DNN, as tf.estimator 2.15 uses for optimizers given by
name). With both parts the DNN's optimizer owns the global step and the linear
optimizer keeps its own ``training/<Name>/iter`` counter; variable names are those
of DNNClassifier and LinearClassifier.

Both flavors (see `flavors`) over one implementation: the TF2 classes
(`DNNLinearCombinedClassifier`, ...) and the v1 ones
(`DNNLinearCombinedClassifierV1`, ...: TF 1.x's, exported as
``compat.v1.DNNLinearCombinedClassifier``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from estimator_lite._tf import tf
from estimator_lite.canned import core, dnn, feature_layers, flavors, linear
from estimator_lite.estimator import Estimator
from estimator_lite.model_fn import ModeKeys

if TYPE_CHECKING:
    from estimator_lite.estimator import WarmStartSettings
    from estimator_lite.head.base_head import Head
    from estimator_lite.run_config import RunConfig

__all__ = ["DNNLinearCombinedClassifier", "DNNLinearCombinedClassifierV1",
           "DNNLinearCombinedEstimatorV1", "DNNLinearCombinedRegressor",
           "DNNLinearCombinedRegressorV1", "dnn_linear_combined_model_fn"]

LINEAR_LEARNING_RATE = flavors.V2.combined_linear_learning_rate(1)
DNN_LEARNING_RATE = flavors.V2.combined_dnn_learning_rate


def combined_model_fn(features, labels, mode, head, linear_part, dnn_part,
                      loss_reduction=None):
    """The model_fn: sums the logits of the parts that have feature columns.

    Args:
      linear_part: None or (columns, optimizer_fn, sparse_combiner).
      dnn_part: None or (columns, optimizer_fn, hidden_units, activation_fn, dropout,
        batch_norm).
      loss_reduction: how the training loss was reduced (None: the head's).
    """
    units = head.logits_dimension
    logits, parts, update_ops = [], [], []
    if dnn_part is not None:
        columns, optimizer_fn, hidden_units, activation_fn, dropout, batch_norm = dnn_part
        dnn_logits, update_ops = dnn.dnn_logits(features, columns, hidden_units, units,
                                                mode, activation_fn, dropout, batch_norm)
        logits.append(dnn_logits)
        parts.append(("dnn", optimizer_fn))
    if linear_part is not None:
        columns, optimizer_fn, sparse_combiner = linear_part
        linear_logits = linear.linear_logits(features, columns, units, sparse_combiner)
        dnn.add_layer_summaries(linear_logits, "linear")  # As tf.estimator does.
        logits.append(linear_logits)
        parts.append(("linear", optimizer_fn))
    total = logits[0] if len(logits) == 1 else tf.add_n(logits)
    op_fn = None
    if mode == ModeKeys.TRAIN:
        op_fn = core.train_op_fn([core.ModelPart(scope, build()) for scope, build in parts],
                                 update_ops, loss_reduction or core.head_reduction(head))
    return head.create_estimator_spec(features=features, mode=mode, logits=total,
                                      labels=labels, train_op_fn=op_fn)


def check_columns(linear_feature_columns, dnn_feature_columns):
    """The checked (linear, dnn) feature columns of a combined model (both flavors).

    Raises:
      TypeError: a column list holds something else.
      ValueError: both lists are empty.
    """
    linear_columns = feature_layers.check_feature_columns(
        linear_feature_columns, "linear_feature_columns", allow_empty=True)
    dnn_columns = feature_layers.check_feature_columns(
        dnn_feature_columns, "dnn_feature_columns", allow_empty=True)
    if not linear_columns and not dnn_columns:
        raise ValueError("Either linear_feature_columns or dnn_feature_columns must "
                         f"be defined; got {linear_feature_columns!r} and "
                         f"{dnn_feature_columns!r}")
    return linear_columns, dnn_columns


def _parts(linear_feature_columns, linear_optimizer, dnn_feature_columns, dnn_optimizer,
           dnn_hidden_units, dnn_activation_fn, dnn_dropout, batch_norm,
           linear_sparse_combiner, flavor=flavors.V2, input_layer_partitioner=None):
    """The checked (linear_part, dnn_part) of a flavor's combined model_fn.

    Raises:
      TypeError / ValueError: an argument has a wrong type or value.
    """
    linear_columns, dnn_columns = check_columns(linear_feature_columns,
                                                dnn_feature_columns)
    if flavor.partitioned:
        flavors.check_partitioner(input_layer_partitioner, "input_layer_partitioner")
    linear_part = dnn_part = None
    if linear_columns:
        linear_part = (linear_columns,
                       flavor.optimizer_factory(
                           linear_optimizer,
                           flavor.combined_linear_learning_rate(len(linear_columns)),
                           "linear_optimizer"),
                       linear.check_sparse_combiner(linear_sparse_combiner,
                                                    "linear_sparse_combiner"))
    if dnn_columns:
        if not dnn_hidden_units:
            raise ValueError("dnn_hidden_units must be defined when "
                             f"dnn_feature_columns is specified, got "
                             f"{dnn_hidden_units!r}")
        activation_fn = dnn.check_activation(dnn_activation_fn, "dnn_activation_fn")
        dnn_part = (dnn_columns,
                    flavor.optimizer_factory(dnn_optimizer,
                                             flavor.combined_dnn_learning_rate,
                                             "dnn_optimizer"),
                    dnn.check_hidden_units(dnn_hidden_units, "dnn_hidden_units",
                                           sizes_as_int=True),
                    activation_fn,
                    core.check_float("dnn_dropout", dnn_dropout, 0.0, 1.0),
                    bool(batch_norm))  # As tf.estimator: any truth value.
    return linear_part, dnn_part


def dnn_linear_combined_model_fn(
        features, labels, mode, head, linear_feature_columns=None,
        linear_optimizer="Ftrl", dnn_feature_columns=None, dnn_optimizer="Adagrad",
        dnn_hidden_units=None, dnn_activation_fn=tf.nn.relu, dnn_dropout=None,
        config=None, batch_norm=False, linear_sparse_combiner="sum",
        loss_reduction="sum_over_batch_size"):
    """The wide & deep model_fn, its arguments as the estimators' (checked per call).

    tf.estimator's ``dnn_linear_combined._dnn_linear_combined_model_fn_v2``.

    Args:
      features: dict of feature tensors.
      labels: the labels, as `head` takes them.
      mode: a ModeKeys value.
      head: the Head turning the summed logits into an EstimatorSpec.
      linear_feature_columns: the linear part's columns (as the estimators').
      linear_optimizer: the linear part's optimizer.
      dnn_feature_columns: the DNN's columns.
      dnn_optimizer: the DNN's optimizer.
      dnn_hidden_units: the DNN's layer sizes.
      dnn_activation_fn: the DNN's activation.
      dnn_dropout: the DNN's dropout rate, or None.
      batch_norm: whether the DNN normalizes each hidden layer's batch.
      linear_sparse_combiner: 'sum', 'mean' or 'sqrtn'.
      config: the RunConfig (unused).
      loss_reduction: how `head` reduces the training loss (a mean is scaled for
        the replicas of a distribution strategy).

    Returns:
      The head's EstimatorSpec.

    Raises:
      ValueError: features is not a dict, no feature column is given, or an
        argument has a wrong value.
      TypeError: an argument has a wrong type.
    """
    del config
    if not isinstance(features, dict):
        raise ValueError("features should be a dict of Tensors, got "
                         f"{type(features).__name__}")
    linear_part, dnn_part = _parts(linear_feature_columns, linear_optimizer,
                                   dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                                   dnn_activation_fn, dnn_dropout, batch_norm,
                                   linear_sparse_combiner)
    return combined_model_fn(features, labels, mode, head, linear_part, dnn_part,
                             loss_reduction)


def _v1_train_op_fn(parts):
    """train_op_fn(loss): each part's optimizer minimizes over its scope, then +1 step.

    Args:
      parts: (scope name, optimizer) pairs, DNN first as in v1.
    """
    def fn(loss):
        ops = [optimizer.minimize(loss, var_list=tf.get_collection(
            tf.GraphKeys.TRAINABLE_VARIABLES, scope=scope + "/"))
            for scope, optimizer in parts]
        with tf.control_dependencies([tf.group(*ops)]):
            return tf.assign_add(tf.train.get_global_step(), 1).op
    return fn


def _v1_combined_model_fn(features, labels, mode, config, head, linear_part, dnn_part,
                          input_layer_partitioner):
    """The model_fn of the v1 combined estimators (partitioned; see `flavors`)."""
    input_partitioner = flavors.input_partitioner(input_layer_partitioner, config)
    logits, parts, update_ops = [], [], []
    if dnn_part is not None:
        columns, optimizer_fn, hidden_units, activation_fn, dropout, batch_norm = dnn_part
        with tf.variable_scope("dnn", partitioner=flavors.layer_partitioner(config)):
            dnn_logits, update_ops = dnn.dnn_network(
                features, columns, hidden_units, head.logits_dimension, mode,
                activation_fn, dropout, batch_norm, input_partitioner)
        logits.append(dnn_logits)
        parts.append(("dnn", optimizer_fn))
    if linear_part is not None:
        columns, optimizer_fn, sparse_combiner = linear_part
        with tf.variable_scope("linear", partitioner=input_partitioner):
            logits.append(linear.v1_linear_logits(
                features, columns, head.logits_dimension, sparse_combiner))
        parts.append(("linear", optimizer_fn))
    op_fn = None
    if mode == ModeKeys.TRAIN:
        op_fn = _v1_train_op_fn([(scope, build()) for scope, build in parts])
    return head.create_estimator_spec(
        features=features, mode=mode, labels=labels, train_op_fn=op_fn,
        logits=logits[0] if len(logits) == 1 else logits[0] + logits[1],
        update_ops=update_ops)


class _CombinedEstimator(Estimator):
    """Checks the combined arguments and builds the model_fn of a flavor around a head."""

    def __init__(self, flavor, head, model_dir, linear_feature_columns, linear_optimizer,
                 dnn_feature_columns, dnn_optimizer, dnn_hidden_units, dnn_activation_fn,
                 dnn_dropout, config, warm_start_from, batch_norm, linear_sparse_combiner,
                 input_layer_partitioner=None):
        linear_part, dnn_part = _parts(linear_feature_columns, linear_optimizer,
                                       dnn_feature_columns, dnn_optimizer,
                                       dnn_hidden_units, dnn_activation_fn, dnn_dropout,
                                       batch_norm, linear_sparse_combiner, flavor,
                                       input_layer_partitioner)
        if flavor.partitioned:
            def model_fn(features, labels, mode, config):
                return _v1_combined_model_fn(features, labels, mode, config, head,
                                             linear_part, dnn_part,
                                             input_layer_partitioner)
        else:
            def model_fn(features, labels, mode):
                return combined_model_fn(features, labels, mode, head, linear_part,
                                         dnn_part)

        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)
        self._head = head


class DNNLinearCombinedClassifier(_CombinedEstimator):
    """Wide & deep classifier (tf.estimator.DNNLinearCombinedClassifier's signature)."""

    def __init__(self, model_dir: str | os.PathLike[str] | None = None,
                 linear_feature_columns: Iterable[Any] | None = None,
                 linear_optimizer: str | Any = "Ftrl",
                 dnn_feature_columns: Iterable[Any] | None = None,
                 dnn_optimizer: str | Any = "Adagrad",
                 dnn_hidden_units: Sequence[int] | None = None,
                 dnn_activation_fn: Callable[[tf.Tensor], tf.Tensor] = tf.nn.relu,
                 dnn_dropout: float | None = None, n_classes: int = 2,
                 weight_column: str | Any | None = None,
                 label_vocabulary: Sequence[str] | None = None,
                 config: RunConfig | None = None,
                 warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
                 loss_reduction: str = flavors.V2.loss_reduction, batch_norm: bool = False,
                 linear_sparse_combiner: str = "sum") -> None:
        """Checks the arguments (see tf.estimator.DNNLinearCombinedClassifier).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.classifier_head(n_classes, weight_column, label_vocabulary,
                                    loss_reduction, flavors.V2.binary_head_class)
        super().__init__(flavors.V2, head, model_dir, linear_feature_columns,
                         linear_optimizer, dnn_feature_columns, dnn_optimizer,
                         dnn_hidden_units, dnn_activation_fn, dnn_dropout, config,
                         warm_start_from, batch_norm, linear_sparse_combiner)


class DNNLinearCombinedRegressor(_CombinedEstimator):
    """Wide & deep regressor (tf.estimator.DNNLinearCombinedRegressor's signature)."""

    def __init__(self, model_dir: str | os.PathLike[str] | None = None,
                 linear_feature_columns: Iterable[Any] | None = None,
                 linear_optimizer: str | Any = "Ftrl",
                 dnn_feature_columns: Iterable[Any] | None = None,
                 dnn_optimizer: str | Any = "Adagrad",
                 dnn_hidden_units: Sequence[int] | None = None,
                 dnn_activation_fn: Callable[[tf.Tensor], tf.Tensor] = tf.nn.relu,
                 dnn_dropout: float | None = None, label_dimension: int = 1,
                 weight_column: str | Any | None = None, config: RunConfig | None = None,
                 warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
                 loss_reduction: str = flavors.V2.loss_reduction, batch_norm: bool = False,
                 linear_sparse_combiner: str = "sum") -> None:
        """Checks the arguments (see tf.estimator.DNNLinearCombinedRegressor).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(flavors.V2, head, model_dir, linear_feature_columns,
                         linear_optimizer, dnn_feature_columns, dnn_optimizer,
                         dnn_hidden_units, dnn_activation_fn, dnn_dropout, config,
                         warm_start_from, batch_norm, linear_sparse_combiner)


class DNNLinearCombinedEstimator(_CombinedEstimator):
    """Wide & deep with a user-given head (tf.estimator.DNNLinearCombinedEstimator)."""

    def __init__(self, head: Head, model_dir: str | os.PathLike[str] | None = None,
                 linear_feature_columns: Iterable[Any] | None = None,
                 linear_optimizer: str | Any = "Ftrl",
                 dnn_feature_columns: Iterable[Any] | None = None,
                 dnn_optimizer: str | Any = "Adagrad",
                 dnn_hidden_units: Sequence[int] | None = None,
                 dnn_activation_fn: Callable[[tf.Tensor], tf.Tensor] = tf.nn.relu,
                 dnn_dropout: float | None = None, config: RunConfig | None = None,
                 batch_norm: bool = False, linear_sparse_combiner: str = "sum") -> None:
        """Checks the arguments (see tf.estimator.DNNLinearCombinedEstimator).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        super().__init__(flavors.V2, core.check_head(head), model_dir,
                         linear_feature_columns, linear_optimizer, dnn_feature_columns,
                         dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout,
                         config, None, batch_norm, linear_sparse_combiner)


# The v1 flavor (tf.compat.v1.estimator's classes; see `flavors`) -------------------

@flavors.v1_class
class DNNLinearCombinedClassifierV1(_CombinedEstimator):
    """Wide & deep classifier (tf.compat.v1.estimator.DNNLinearCombinedClassifier)."""

    def __init__(self, model_dir: str | os.PathLike[str] | None = None,
                 linear_feature_columns: Iterable[Any] | None = None,
                 linear_optimizer: str | Any = "Ftrl",
                 dnn_feature_columns: Iterable[Any] | None = None,
                 dnn_optimizer: str | Any = "Adagrad",
                 dnn_hidden_units: Sequence[int] | None = None,
                 dnn_activation_fn: Callable[[tf.Tensor], tf.Tensor] = tf.nn.relu,
                 dnn_dropout: float | None = None, n_classes: int = 2,
                 weight_column: str | Any | None = None,
                 label_vocabulary: Sequence[str] | None = None,
                 input_layer_partitioner: Callable[..., Any] | None = None,
                 config: RunConfig | None = None,
                 warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
                 loss_reduction: str = flavors.V1.loss_reduction, batch_norm: bool = False,
                 linear_sparse_combiner: str = "sum") -> None:
        """Checks the arguments (see tf.compat.v1.estimator.DNNLinearCombinedClassifier).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.classifier_head(n_classes, weight_column, label_vocabulary,
                                    loss_reduction, flavors.V1.binary_head_class)
        super().__init__(flavors.V1, head, model_dir, linear_feature_columns,
                         linear_optimizer, dnn_feature_columns, dnn_optimizer,
                         dnn_hidden_units, dnn_activation_fn, dnn_dropout, config,
                         warm_start_from, batch_norm, linear_sparse_combiner,
                         input_layer_partitioner)


@flavors.v1_class
class DNNLinearCombinedRegressorV1(_CombinedEstimator):
    """Wide & deep regressor (tf.compat.v1.estimator.DNNLinearCombinedRegressor)."""

    def __init__(self, model_dir: str | os.PathLike[str] | None = None,
                 linear_feature_columns: Iterable[Any] | None = None,
                 linear_optimizer: str | Any = "Ftrl",
                 dnn_feature_columns: Iterable[Any] | None = None,
                 dnn_optimizer: str | Any = "Adagrad",
                 dnn_hidden_units: Sequence[int] | None = None,
                 dnn_activation_fn: Callable[[tf.Tensor], tf.Tensor] = tf.nn.relu,
                 dnn_dropout: float | None = None, label_dimension: int = 1,
                 weight_column: str | Any | None = None,
                 input_layer_partitioner: Callable[..., Any] | None = None,
                 config: RunConfig | None = None,
                 warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
                 loss_reduction: str = flavors.V1.loss_reduction, batch_norm: bool = False,
                 linear_sparse_combiner: str = "sum") -> None:
        """Checks the arguments (see tf.compat.v1.estimator.DNNLinearCombinedRegressor).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(flavors.V1, head, model_dir, linear_feature_columns,
                         linear_optimizer, dnn_feature_columns, dnn_optimizer,
                         dnn_hidden_units, dnn_activation_fn, dnn_dropout, config,
                         warm_start_from, batch_norm, linear_sparse_combiner,
                         input_layer_partitioner)


@flavors.v1_class
class DNNLinearCombinedEstimatorV1(_CombinedEstimator):
    """Wide & deep with a given head (tf.compat.v1.estimator.DNNLinearCombinedEstimator)."""

    def __init__(self, head: Head, model_dir: str | os.PathLike[str] | None = None,
                 linear_feature_columns: Iterable[Any] | None = None,
                 linear_optimizer: str | Any = "Ftrl",
                 dnn_feature_columns: Iterable[Any] | None = None,
                 dnn_optimizer: str | Any = "Adagrad",
                 dnn_hidden_units: Sequence[int] | None = None,
                 dnn_activation_fn: Callable[[tf.Tensor], tf.Tensor] = tf.nn.relu,
                 dnn_dropout: float | None = None,
                 input_layer_partitioner: Callable[..., Any] | None = None,
                 config: RunConfig | None = None, batch_norm: bool = False,
                 linear_sparse_combiner: str = "sum") -> None:
        """Checks the arguments (see tf.compat.v1.estimator.DNNLinearCombinedEstimator).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        super().__init__(flavors.V1, core.check_head(head), model_dir,
                         linear_feature_columns, linear_optimizer, dnn_feature_columns,
                         dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout,
                         config, None, batch_norm, linear_sparse_combiner,
                         input_layer_partitioner)
