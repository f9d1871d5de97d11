"""The v1 canned estimators: TF 1.x's tf.estimator, TF 2.x's tf.compat.v1.estimator.

The same networks as the TF2 classes in this package (`dnn`, `linear`,
`baseline`, `dnn_linear_combined`), with the v1 flavor that TF1-era programs and
model_dirs were made with:

* ``loss_reduction`` defaults to ``tf.compat.v1.losses.Reduction.SUM``
  (``'weighted_sum'``): the training loss and the ``loss`` metric are sums over
  the batch;
* optimizers are ``tf.compat.v1.train`` optimizers (`v1_optimizers`), a name
  getting v1's learning rate: DNN 0.05, linear 0.2, baseline 0.3, and in the
  combined model 0.001 for the DNN and ``min(0.005, 1/sqrt(#linear columns))``
  for the linear part;
* variables are created under v1's partitioners (``min_max_variable_partitioner``
  over the ps tasks: one ``part_0`` per variable without ps) and each optimizer
  runs where v1 ran it (inside the ``dnn`` / ``linear`` variable scope for
  DNN and linear models, at the top for the combined and baseline models), so
  the checkpoints hold v1's names: ``dnn/hiddenlayer_0/kernel/t_0/Adagrad``,
  ``linear/linear_model/x/weights/part_0/Ftrl``, ``dnn/head/beta1_power``,
  ``dnn/hiddenlayer_0/kernel/Adagrad`` (combined), ``baseline/bias/Ftrl``;
* the v1 arguments: ``input_layer_partitioner`` (DNN, combined) and
  ``partitioner`` (linear).
"""

import math

from estimator_lite import head as head_lib
from estimator_lite._tf import tf
from estimator_lite.canned import (
    baseline,
    core,
    dnn,
    dnn_linear_combined,
    feature_layers,
    linear,
    linear_sdca,
)
from estimator_lite.estimator import Estimator
from estimator_lite.model_fn import ModeKeys

__all__ = [
    "BaselineClassifier", "BaselineEstimator", "BaselineRegressor", "DNNClassifier",
    "DNNEstimator", "DNNLinearCombinedClassifier", "DNNLinearCombinedEstimator",
    "DNNLinearCombinedRegressor", "DNNRegressor", "LinearClassifier",
    "LinearEstimator", "LinearRegressor", "dnn_logit_fn_builder",
    "linear_logit_fn_builder",
]

SUM = "weighted_sum"  # tf.compat.v1.losses.Reduction.SUM, v1's default.
DNN_LEARNING_RATE = 0.05
LINEAR_LEARNING_RATE = 0.2
BASELINE_LEARNING_RATE = 0.3
COMBINED_DNN_LEARNING_RATE = 0.001
COMBINED_LINEAR_LEARNING_RATE = 0.005
_INPUT_LAYER_MIN_SLICE_BYTES = 64 << 20


class _V1BinaryClassHead(head_lib.BinaryClassHead):
    """The 2-class head of the v1 classifiers: TF 1.x's trapezoidal AUCs."""

    _AUC_SUMMATION = "trapezoidal"


def _classifier_head(n_classes, weight_column, label_vocabulary, loss_reduction):
    return core.classifier_head(n_classes, weight_column, label_vocabulary,
                                loss_reduction, _V1BinaryClassHead)


def _num_ps_replicas(config):
    return config.num_ps_replicas if config is not None else 0


def _layer_partitioner(config):
    """v1's partitioner of the DNN layers: split over the ps tasks."""
    return tf.min_max_variable_partitioner(max_partitions=_num_ps_replicas(config))


def _input_partitioner(partitioner, config):
    """A user's partitioner, or v1's default for input layers and linear models."""
    if partitioner is not None:
        return partitioner
    return tf.min_max_variable_partitioner(max_partitions=_num_ps_replicas(config),
                                           min_slice_size=_INPUT_LAYER_MIN_SLICE_BYTES)


def _check_partitioner(partitioner, argument):
    if partitioner is not None and not callable(partitioner):
        raise TypeError(f"{argument} must be None or a variable partitioner (e.g. "
                        f"tf.compat.v1.min_max_variable_partitioner(...)), got "
                        f"{partitioner!r} of type {type(partitioner).__name__}")
    return partitioner


def combined_linear_learning_rate(num_linear_columns):
    """v1's default linear learning rate in the combined model."""
    return min(COMBINED_LINEAR_LEARNING_RATE, 1.0 / math.sqrt(num_linear_columns))


# DNN -------------------------------------------------------------------------------

def dnn_logit_fn_builder(units, hidden_units, feature_columns, activation_fn, dropout,
                         input_layer_partitioner, batch_norm):
    """Returns logit_fn(features, mode) building v1's DNN in the current scope.

    tf.compat.v1.estimator.experimental.dnn_logit_fn_builder: call the returned
    function inside your own variable scope (the canned DNN uses ``dnn``).

    Raises:
      TypeError / ValueError: an argument has a wrong type or value.
    """
    hidden_units = dnn.check_hidden_units(hidden_units, allow_empty=True,
                                          sizes_as_int=True)
    columns = feature_layers.check_feature_columns(feature_columns)
    activation_fn = dnn.check_activation(activation_fn)
    dropout = core.check_float("dropout", dropout, 0.0, 1.0)
    _check_partitioner(input_layer_partitioner, "input_layer_partitioner")

    def logit_fn(features, mode):
        logits, update_ops = dnn.dnn_network(
            features, columns, hidden_units, units, mode, activation_fn, dropout,
            batch_norm, input_layer_partitioner)
        for op in update_ops:  # Where tf.compat.v1.layers put them.
            tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, op)
        return logits
    return logit_fn


class _DNNEstimator(Estimator):
    """Checks v1's DNN arguments and builds its model_fn around a head."""

    def __init__(self, head, hidden_units, feature_columns, model_dir, optimizer,
                 activation_fn, dropout, input_layer_partitioner, config,
                 warm_start_from, batch_norm):
        hidden_units = dnn.check_hidden_units(hidden_units, allow_empty=True,
                                              sizes_as_int=True)
        columns = feature_layers.check_feature_columns(feature_columns)
        optimizer_fn = core.optimizer_factory_v1(optimizer, DNN_LEARNING_RATE)
        activation_fn = dnn.check_activation(activation_fn)
        dropout = core.check_float("dropout", dropout, 0.0, 1.0)
        batch_norm = bool(batch_norm)  # As tf.estimator: any truth value.
        _check_partitioner(input_layer_partitioner, "input_layer_partitioner")

        def model_fn(features, labels, mode, config):
            # v1 builds the whole spec, optimizer included, inside scope `dnn`.
            with tf.variable_scope("dnn", partitioner=_layer_partitioner(config)):
                logits, update_ops = dnn.dnn_network(
                    features, columns, hidden_units, head.logits_dimension, mode,
                    activation_fn, dropout, batch_norm,
                    _input_partitioner(input_layer_partitioner, config))
                optimizer = optimizer_fn() if mode == ModeKeys.TRAIN else None
                return head.create_estimator_spec(
                    features=features, mode=mode, logits=logits, labels=labels,
                    optimizer=optimizer, update_ops=update_ops)

        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)
        self._head = head


class DNNClassifier(_DNNEstimator):
    """A feed-forward classifier (tf.compat.v1.estimator.DNNClassifier)."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, optimizer="Adagrad",
                 activation_fn=tf.nn.relu, dropout=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction=SUM,
                 batch_norm=False):
        """Checks the arguments (see tf.compat.v1.estimator.DNNClassifier).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = _classifier_head(n_classes, weight_column, label_vocabulary,
                                loss_reduction)
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer,
                         activation_fn, dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm)


class DNNRegressor(_DNNEstimator):
    """A feed-forward regressor (tf.compat.v1.estimator.DNNRegressor)."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer="Adagrad", activation_fn=tf.nn.relu,
                 dropout=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction=SUM, batch_norm=False):
        """Checks the arguments (see tf.compat.v1.estimator.DNNRegressor).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, hidden_units, feature_columns, model_dir, optimizer,
                         activation_fn, dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm)


class DNNEstimator(_DNNEstimator):
    """A feed-forward network with a given head (tf.compat.v1.estimator.DNNEstimator)."""

    def __init__(self, head, hidden_units, feature_columns, model_dir=None,
                 optimizer="Adagrad", activation_fn=tf.nn.relu, dropout=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None,
                 batch_norm=False):
        """Checks the arguments (see tf.compat.v1.estimator.DNNEstimator).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        super().__init__(core.check_head(head), hidden_units, feature_columns,
                         model_dir, optimizer, activation_fn, dropout,
                         input_layer_partitioner, config, warm_start_from, batch_norm)


# Linear ----------------------------------------------------------------------------

def linear_logit_fn_builder(units, feature_columns, sparse_combiner="sum"):
    """Returns logit_fn(features) building v1's linear model in the current scope.

    tf.compat.v1.estimator.experimental.linear_logit_fn_builder (the canned linear
    model calls it inside scope ``linear``).

    Raises:
      TypeError / ValueError: an argument has a wrong type or value.
    """
    columns = feature_layers.check_feature_columns(feature_columns)
    sparse_combiner = linear.check_sparse_combiner(sparse_combiner)

    def logit_fn(features):
        return feature_layers.linear_logits(features, columns, units, sparse_combiner)
    return logit_fn


def _v1_linear_logits(features, columns, units, sparse_combiner):
    """The linear logits, their tensor named as v1's (the name serving clients see).

    v1's Keras-based linear model nests three ``linear_model`` name scopes; the
    output tensor of an export signature is
    ``linear/linear_model/linear_model/linear_model/weighted_sum``.
    """
    logits = feature_layers.linear_logits(features, columns, units, sparse_combiner)
    scope = tf.get_default_graph().get_name_scope()
    with tf.name_scope(f"{scope}/linear_model/linear_model/linear_model/"):
        return tf.identity(logits, name="weighted_sum")


class _LinearEstimator(Estimator):
    """Checks v1's linear arguments and builds its model_fn around a head."""

    def __init__(self, head, feature_columns, model_dir, optimizer, config, partitioner,
                 warm_start_from, sparse_combiner):
        columns = feature_layers.check_feature_columns(feature_columns)
        if isinstance(optimizer, linear_sdca.LinearSDCA):
            optimizer_fn = linear_sdca.check_usable(optimizer, head, sparse_combiner)
        else:
            optimizer_fn = core.optimizer_factory_v1(optimizer,
                                                           LINEAR_LEARNING_RATE)
        sparse_combiner = linear.check_sparse_combiner(sparse_combiner)
        _check_partitioner(partitioner, "partitioner")

        def model_fn(features, labels, mode, config):
            with tf.variable_scope("linear",
                                   partitioner=_input_partitioner(partitioner, config)):
                logits = _v1_linear_logits(features, columns, head.logits_dimension,
                                           sparse_combiner)
                if isinstance(optimizer_fn, linear_sdca.LinearSDCA):
                    return linear_sdca.estimator_spec(optimizer_fn, features, labels,
                                                      mode, head, columns, logits)
                optimizer = optimizer_fn() if mode == ModeKeys.TRAIN else None
                return head.create_estimator_spec(
                    features=features, mode=mode, logits=logits, labels=labels,
                    optimizer=optimizer)

        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)
        self._head = head


class LinearClassifier(_LinearEstimator):
    """A linear classifier (tf.compat.v1.estimator.LinearClassifier)."""

    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer="Ftrl", config=None, partitioner=None,
                 warm_start_from=None, loss_reduction=SUM, sparse_combiner="sum"):
        """Checks the arguments (see tf.compat.v1.estimator.LinearClassifier).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = _classifier_head(n_classes, weight_column, label_vocabulary,
                                loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config,
                         partitioner, warm_start_from, sparse_combiner)


class LinearRegressor(_LinearEstimator):
    """A linear regressor (tf.compat.v1.estimator.LinearRegressor)."""

    def __init__(self, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer="Ftrl", config=None, partitioner=None,
                 warm_start_from=None, loss_reduction=SUM, sparse_combiner="sum"):
        """Checks the arguments (see tf.compat.v1.estimator.LinearRegressor).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config,
                         partitioner, warm_start_from, sparse_combiner)


class LinearEstimator(_LinearEstimator):
    """A linear model with a given head (tf.compat.v1.estimator.LinearEstimator)."""

    def __init__(self, head, feature_columns, model_dir=None, optimizer="Ftrl",
                 config=None, partitioner=None, sparse_combiner="sum",
                 warm_start_from=None):
        """Checks the arguments (see tf.compat.v1.estimator.LinearEstimator).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        super().__init__(core.check_head(head), feature_columns, model_dir, optimizer,
                         config, partitioner, warm_start_from, sparse_combiner)


# DNN + linear ----------------------------------------------------------------------

def _combined_train_op_fn(parts):
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


class _CombinedEstimator(Estimator):
    """Checks v1's combined arguments and builds its model_fn around a head."""

    def __init__(self, head, model_dir, linear_feature_columns, linear_optimizer,
                 dnn_feature_columns, dnn_optimizer, dnn_hidden_units, dnn_activation_fn,
                 dnn_dropout, input_layer_partitioner, config, warm_start_from,
                 batch_norm, linear_sparse_combiner):
        linear_columns, dnn_columns = dnn_linear_combined.check_columns(
            linear_feature_columns, dnn_feature_columns)
        _check_partitioner(input_layer_partitioner, "input_layer_partitioner")
        linear_part = dnn_part = None
        if linear_columns:
            linear_part = (linear_columns, core.optimizer_factory_v1(
                linear_optimizer, combined_linear_learning_rate(len(linear_columns)),
                "linear_optimizer"), linear.check_sparse_combiner(
                    linear_sparse_combiner, "linear_sparse_combiner"))
        if dnn_columns:
            if not dnn_hidden_units:
                raise ValueError("dnn_hidden_units must be defined when "
                                 f"dnn_feature_columns is specified, got "
                                 f"{dnn_hidden_units!r}")
            dnn_activation_fn = dnn.check_activation(dnn_activation_fn,
                                                     "dnn_activation_fn")
            batch_norm = bool(batch_norm)  # As tf.estimator: any truth value.
            dnn_part = (dnn_columns, core.optimizer_factory_v1(
                dnn_optimizer, COMBINED_DNN_LEARNING_RATE, "dnn_optimizer"),
                dnn.check_hidden_units(dnn_hidden_units, "dnn_hidden_units",
                                       sizes_as_int=True),
                dnn_activation_fn, core.check_float("dnn_dropout", dnn_dropout, 0.0, 1.0))

        def model_fn(features, labels, mode, config):
            input_partitioner = _input_partitioner(input_layer_partitioner, config)
            logits, parts, update_ops = [], [], []
            if dnn_part is not None:
                columns, optimizer_fn, hidden_units, activation_fn, dropout = dnn_part
                with tf.variable_scope("dnn", partitioner=_layer_partitioner(config)):
                    dnn_logits, update_ops = dnn.dnn_network(
                        features, columns, hidden_units, head.logits_dimension, mode,
                        activation_fn, dropout, batch_norm, input_partitioner)
                logits.append(dnn_logits)
                parts.append(("dnn", optimizer_fn))
            if linear_part is not None:
                columns, optimizer_fn, sparse_combiner = linear_part
                with tf.variable_scope("linear", partitioner=input_partitioner):
                    logits.append(_v1_linear_logits(
                        features, columns, head.logits_dimension, sparse_combiner))
                parts.append(("linear", optimizer_fn))
            op_fn = None
            if mode == ModeKeys.TRAIN:
                op_fn = _combined_train_op_fn([(scope, build()) for scope, build in parts])
            return head.create_estimator_spec(
                features=features, mode=mode, labels=labels, train_op_fn=op_fn,
                logits=logits[0] if len(logits) == 1 else logits[0] + logits[1],
                update_ops=update_ops)

        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)
        self._head = head


class DNNLinearCombinedClassifier(_CombinedEstimator):
    """Wide & deep classifier (tf.compat.v1.estimator.DNNLinearCombinedClassifier)."""

    def __init__(self, model_dir=None, linear_feature_columns=None,
                 linear_optimizer="Ftrl", dnn_feature_columns=None,
                 dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=tf.nn.relu, dnn_dropout=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction=SUM,
                 batch_norm=False, linear_sparse_combiner="sum"):
        """Checks the arguments (see tf.compat.v1.estimator.DNNLinearCombinedClassifier).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = _classifier_head(n_classes, weight_column, label_vocabulary,
                                loss_reduction)
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                         dnn_activation_fn, dnn_dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm, linear_sparse_combiner)


class DNNLinearCombinedRegressor(_CombinedEstimator):
    """Wide & deep regressor (tf.compat.v1.estimator.DNNLinearCombinedRegressor)."""

    def __init__(self, model_dir=None, linear_feature_columns=None,
                 linear_optimizer="Ftrl", dnn_feature_columns=None,
                 dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=tf.nn.relu, dnn_dropout=None, label_dimension=1,
                 weight_column=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction=SUM, batch_norm=False,
                 linear_sparse_combiner="sum"):
        """Checks the arguments (see tf.compat.v1.estimator.DNNLinearCombinedRegressor).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                         dnn_activation_fn, dnn_dropout, input_layer_partitioner, config,
                         warm_start_from, batch_norm, linear_sparse_combiner)


class DNNLinearCombinedEstimator(_CombinedEstimator):
    """Wide & deep with a given head (tf.compat.v1.estimator.DNNLinearCombinedEstimator)."""

    def __init__(self, head, model_dir=None, linear_feature_columns=None,
                 linear_optimizer="Ftrl", dnn_feature_columns=None,
                 dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=tf.nn.relu, dnn_dropout=None,
                 input_layer_partitioner=None, config=None, batch_norm=False,
                 linear_sparse_combiner="sum"):
        """Checks the arguments (see tf.compat.v1.estimator.DNNLinearCombinedEstimator).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        super().__init__(core.check_head(head), model_dir, linear_feature_columns,
                         linear_optimizer, dnn_feature_columns, dnn_optimizer,
                         dnn_hidden_units, dnn_activation_fn, dnn_dropout,
                         input_layer_partitioner, config, None, batch_norm,
                         linear_sparse_combiner)


# Baseline --------------------------------------------------------------------------

class _BaselineEstimator(Estimator):
    """Builds v1's baseline model_fn around a head."""

    def __init__(self, head, model_dir, weight_column, optimizer, config):
        optimizer_fn = core.optimizer_factory_v1(optimizer, BASELINE_LEARNING_RATE)

        def model_fn(features, labels, mode):
            logits = baseline.baseline_logits(features, head.logits_dimension,
                                              weight_column)
            optimizer = optimizer_fn() if mode == ModeKeys.TRAIN else None
            return head.create_estimator_spec(features=features, mode=mode,
                                              logits=logits, labels=labels,
                                              optimizer=optimizer)

        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config)
        self._head = head


class BaselineClassifier(_BaselineEstimator):
    """Predicts the label prior (tf.compat.v1.estimator.BaselineClassifier)."""

    def __init__(self, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer="Ftrl", config=None,
                 loss_reduction=SUM):
        """Checks the arguments (see tf.compat.v1.estimator.BaselineClassifier).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = _classifier_head(n_classes, weight_column, label_vocabulary,
                                loss_reduction)
        super().__init__(head, model_dir, weight_column, optimizer, config)


class BaselineRegressor(_BaselineEstimator):
    """Predicts the label mean (tf.compat.v1.estimator.BaselineRegressor)."""

    def __init__(self, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer="Ftrl", config=None, loss_reduction=SUM):
        """Checks the arguments (see tf.compat.v1.estimator.BaselineRegressor).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, model_dir, weight_column, optimizer, config)


class BaselineEstimator(_BaselineEstimator):
    """Learns a bias per logit with a given head (tf.compat.v1.estimator's)."""

    def __init__(self, head, model_dir=None, optimizer="Ftrl", config=None):
        """Checks the arguments (see tf.compat.v1.estimator.BaselineEstimator).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.check_head(head)
        super().__init__(head, model_dir, head.weight_column, optimizer, config)
