"""DNNClassifier and DNNRegressor: feed-forward networks over feature columns.

Both flavors (see `flavors`) over one implementation: the TF2 classes
(`DNNClassifier`, ...) and the v1 ones (`DNNClassifierV1`, ...: TF 1.x's, exported
as ``compat.v1.DNNClassifier``), with v1's `dnn_logit_fn_builder`.

Layers are built from tf.compat.v1 variables and ops (no tf.layers, no Keras) with
tf.estimator 2.15's variable names: ``dnn/hiddenlayer_<i>/{kernel,bias}``,
``dnn/hiddenlayer_<i>/batchnorm_<i>/{gamma,beta,moving_mean,moving_variance}``,
``dnn/logits/{kernel,bias}`` and the input layer's embeddings. Each hidden layer is
dense + activation, then dropout (training only), then batch normalization, as in
tf.estimator 2.15.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from estimator_lite._tf import tf
from estimator_lite.canned import core, feature_layers, flavors
from estimator_lite.estimator import Estimator
from estimator_lite.model_fn import ModeKeys

if TYPE_CHECKING:
    from estimator_lite.estimator import WarmStartSettings
    from estimator_lite.head.base_head import Head
    from estimator_lite.run_config import RunConfig

__all__ = ["DNNClassifier", "DNNClassifierV1", "DNNEstimatorV1", "DNNRegressor",
           "DNNRegressorV1", "add_layer_summaries", "check_activation",
           "check_hidden_units", "dnn_logit_fn_builder", "dnn_logits", "dnn_network"]

_BATCH_NORM_MOMENTUM = 0.999
_BATCH_NORM_EPSILON = 1e-3


def _gelu(x):
    # The exact (erf) form, Keras 2's default.
    return 0.5 * x * (1.0 + tf.math.erf(x / tf.cast(tf.sqrt(2.0), x.dtype)))


def _hard_sigmoid(x):
    # Keras 2's piecewise-linear form (Keras 3 changed it to relu6(x + 3) / 6).
    return tf.clip_by_value(0.2 * x + 0.5, 0.0, 1.0)


def _mish(x):
    return x * tf.tanh(tf.nn.softplus(x))


# The activation names tf.estimator 2.15's DNN layers resolve (through Keras 2's
# activations), as the same functions.
_ACTIVATIONS = {
    "elu": tf.nn.elu, "exponential": tf.exp, "gelu": _gelu, "hard_sigmoid": _hard_sigmoid,
    "linear": None, "mish": _mish, "relu": tf.nn.relu, "relu6": tf.nn.relu6,
    "selu": tf.nn.selu, "sigmoid": tf.sigmoid, "silu": tf.nn.swish,
    "softmax": tf.nn.softmax, "softplus": tf.nn.softplus, "softsign": tf.nn.softsign,
    "swish": tf.nn.swish, "tanh": tf.tanh,
}


def check_activation(activation_fn, argument="activation_fn"):
    """The hidden layers' activation: a callable, or None for none.

    As tf.estimator 2.15's DNN layers, `activation_fn` may also be None (no
    activation) or a Keras activation name such as ``'relu'``.

    Raises:
      TypeError: neither callable, None nor a string.
      ValueError: an unknown activation name.
    """
    if activation_fn is None or callable(activation_fn):
        return activation_fn
    if not isinstance(activation_fn, str):
        raise TypeError(f"{argument} must be callable, an activation name or None, got "
                        f"{activation_fn!r} of type {type(activation_fn).__name__}")
    if activation_fn not in _ACTIVATIONS:
        raise ValueError(f"{argument} names no activation: {activation_fn!r} is not one "
                         f"of {sorted(_ACTIVATIONS)}")
    return _ACTIVATIONS[activation_fn]


def check_hidden_units(hidden_units, argument="hidden_units", allow_empty=False,
                       sizes_as_int=False):
    """Checks a list of positive layer sizes; returns it as a tuple of ints.

    Args:
      hidden_units: the layer sizes, first layer first.
      argument: the argument's name, for error messages.
      allow_empty: whether no layer at all is valid (tf.estimator's DNNs then put
        the logits layer directly on the input layer).
      sizes_as_int: whether a size may be anything `int()` turns into one (as
        tf.estimator's DNN layers take `'3'`, `2.0` or `True`), rather than an int.

    Raises:
      TypeError: not an iterable, or a size is not an int (or not int()-able).
      ValueError: empty where not allowed, or a size < 1.
    """
    if isinstance(hidden_units, (str, bytes)) or not hasattr(hidden_units, "__iter__"):
        raise TypeError(f"{argument} must be a list of ints, got {hidden_units!r} of "
                        f"type {type(hidden_units).__name__}")
    units = tuple(hidden_units)
    if not units and not allow_empty:
        raise ValueError(f"{argument} must name at least one layer size, got "
                         f"{hidden_units!r}")
    return tuple(_layer_size(size, argument, hidden_units, sizes_as_int)
                 for size in units)


def _layer_size(size, argument, hidden_units, sizes_as_int):
    """One checked layer size of `hidden_units`, as an int."""
    if sizes_as_int and not isinstance(size, numbers.Integral):
        try:
            size = int(size)
        except (TypeError, ValueError) as error:
            raise type(error)(f"{argument} must contain only layer sizes, got "
                              f"{size!r} in {hidden_units!r}") from None
    if isinstance(size, bool) and not sizes_as_int or not isinstance(
            size, numbers.Integral):
        raise TypeError(f"{argument} must contain only ints, got {size!r} in "
                        f"{hidden_units!r}")
    if size < 1:
        raise ValueError(f"{argument} sizes must be >= 1, got {size!r} in "
                         f"{hidden_units!r}")
    return int(size)


def _dense(inputs, units, activation_fn=None):
    kernel = tf.get_variable("kernel", [int(inputs.shape[-1]), units],
                             initializer=tf.glorot_uniform_initializer(),
                             use_resource=True)
    bias = tf.get_variable("bias", [units], initializer=tf.zeros_initializer(),
                           use_resource=True)
    outputs = tf.nn.bias_add(tf.matmul(inputs, kernel), bias)
    return activation_fn(outputs) if activation_fn is not None else outputs


def _unpartitioned_variable(name, size, initializer):
    """A non-trainable variable never split by the scope's partitioner.

    Batch normalization's moving statistics are updated with assign ops, so (as in
    tf.estimator's v1 DNN, whose scopes carry a partitioner) they stay whole.
    """
    scope = tf.get_variable_scope()
    partitioner = scope.partitioner
    scope.set_partitioner(None)
    try:
        return tf.get_variable(name, size, initializer=initializer, trainable=False,
                               use_resource=True)
    finally:
        scope.set_partitioner(partitioner)


def _batch_norm(inputs, training, update_ops):
    """Batch normalization over dimension 0; moving averages updated in training."""
    size = [int(inputs.shape[-1])]

    def variable(name, initializer):
        return tf.get_variable(name, size, initializer=initializer, use_resource=True)

    gamma = variable("gamma", tf.ones_initializer())
    beta = variable("beta", tf.zeros_initializer())
    moving_mean = _unpartitioned_variable("moving_mean", size, tf.zeros_initializer())
    moving_variance = _unpartitioned_variable("moving_variance", size,
                                              tf.ones_initializer())
    if not training:
        return tf.nn.batch_normalization(inputs, moving_mean, moving_variance, beta,
                                         gamma, _BATCH_NORM_EPSILON)
    mean, variance = tf.nn.moments(inputs, [0])
    decay = 1.0 - _BATCH_NORM_MOMENTUM
    update_ops.append(moving_mean.assign_sub((moving_mean - mean) * decay).op)
    update_ops.append(moving_variance.assign_sub((moving_variance - variance) * decay).op)
    return tf.nn.batch_normalization(inputs, mean, variance, beta, gamma,
                                     _BATCH_NORM_EPSILON)


def add_layer_summaries(values, scope_name, at_root=False):
    """A layer's summaries: its fraction of zero values and its activations.

    Tagged ``<name scope>/<scope_name>/...``, or ``<scope_name>/...`` with
    `at_root` (tf.estimator's v2 models; its v1 models repeat the ``dnn`` scope).
    """
    if at_root:
        with tf.name_scope(""):
            add_layer_summaries(values, scope_name)
        return
    tf.summary.scalar(f"{scope_name}/fraction_of_zero_values", tf.nn.zero_fraction(values))
    tf.summary.histogram(f"{scope_name}/activation", values)


def dnn_network(features, feature_columns, hidden_units, units, mode,
                activation_fn=tf.nn.relu, dropout=None, batch_norm=False,
                input_layer_partitioner=None, summaries_at_root=False):
    """Builds the network in the current variable scope (``dnn`` for canned models).

    Args:
      features: dict of feature tensors.
      feature_columns: validated dense feature columns.
      hidden_units: layer sizes.
      units: logits dimension.
      mode: a ModeKeys value (dropout and batch statistics only in TRAIN).
      activation_fn: activation of the hidden layers.
      dropout: None or the probability of dropping a hidden unit.
      batch_norm: whether to batch-normalize each hidden layer.
      input_layer_partitioner: None or a variable partitioner for the input layer
        (the v1 canned estimators' argument).
      summaries_at_root: whether the layer summaries are tagged with the layers'
        variable scopes alone (see `add_layer_summaries`).

    Returns:
      (logits [batch, units], update_ops list).
    """
    training = mode == ModeKeys.TRAIN
    update_ops = []
    net = feature_layers.dense_input(features, feature_columns, input_layer_partitioner)
    for index, size in enumerate(hidden_units):
        with tf.variable_scope(f"hiddenlayer_{index}") as scope:
            net = _dense(net, size, activation_fn)
            if dropout and training:
                net = tf.nn.dropout(net, rate=dropout)
            if batch_norm:
                with tf.variable_scope(f"batchnorm_{index}"):
                    net = _batch_norm(net, training, update_ops)
        add_layer_summaries(net, scope.name, summaries_at_root)
    with tf.variable_scope("logits") as scope:
        logits = _dense(net, units)
    add_layer_summaries(logits, scope.name, summaries_at_root)
    return logits, update_ops


def dnn_logits(features, feature_columns, hidden_units, units, mode,
               activation_fn=tf.nn.relu, dropout=None, batch_norm=False):
    """Builds the network under variable scope ``dnn`` (arguments of `dnn_network`).

    Returns:
      (logits [batch, units], update_ops list).

    Raises:
      ValueError: a column is a TensorFlow v1-only column (the v2 models' check).
    """
    feature_layers.check_v2_columns(feature_columns)
    with tf.variable_scope("dnn"):
        return dnn_network(features, feature_columns, hidden_units, units, mode,
                           activation_fn, dropout, batch_norm, summaries_at_root=True)


def dnn_model_fn(features, labels, mode, head, hidden_units, feature_columns,
                 optimizer_fn, activation_fn, dropout, batch_norm):
    """The model_fn of DNNClassifier / DNNRegressor."""
    logits, update_ops = dnn_logits(features, feature_columns, hidden_units,
                                    head.logits_dimension, mode, activation_fn, dropout,
                                    batch_norm)
    op_fn = None
    if mode == ModeKeys.TRAIN:
        op_fn = core.train_op_fn([core.ModelPart("dnn", optimizer_fn())], update_ops,
                                 core.head_reduction(head))
    return head.create_estimator_spec(features=features, mode=mode, logits=logits,
                                      labels=labels, train_op_fn=op_fn)


def _v1_dnn_model_fn(features, labels, mode, config, head, hidden_units,
                     feature_columns, optimizer_fn, activation_fn, dropout, batch_norm,
                     input_layer_partitioner):
    """The model_fn of the v1 DNN estimators (partitioned; see `flavors`)."""
    # v1 builds the whole spec, optimizer included, inside scope `dnn`.
    with tf.variable_scope("dnn", partitioner=flavors.layer_partitioner(config)):
        logits, update_ops = dnn_network(
            features, feature_columns, hidden_units, head.logits_dimension, mode,
            activation_fn, dropout, batch_norm,
            flavors.input_partitioner(input_layer_partitioner, config))
        optimizer = optimizer_fn() if mode == ModeKeys.TRAIN else None
        return head.create_estimator_spec(
            features=features, mode=mode, logits=logits, labels=labels,
            optimizer=optimizer, update_ops=update_ops)


def dnn_logit_fn_builder(units, hidden_units, feature_columns, activation_fn, dropout,
                         input_layer_partitioner, batch_norm):
    """Returns logit_fn(features, mode) building v1's DNN in the current scope.

    tf.compat.v1.estimator.experimental.dnn_logit_fn_builder: call the returned
    function inside your own variable scope (the canned DNN uses ``dnn``).

    Raises:
      TypeError / ValueError: an argument has a wrong type or value.
    """
    hidden_units = check_hidden_units(hidden_units, allow_empty=True, sizes_as_int=True)
    columns = feature_layers.check_feature_columns(feature_columns)
    activation_fn = check_activation(activation_fn)
    dropout = core.check_float("dropout", dropout, 0.0, 1.0)
    flavors.check_partitioner(input_layer_partitioner, "input_layer_partitioner")

    def logit_fn(features, mode):
        logits, update_ops = dnn_network(
            features, columns, hidden_units, units, mode, activation_fn, dropout,
            batch_norm, input_layer_partitioner)
        for op in update_ops:  # Where tf.compat.v1.layers put them.
            tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, op)
        return logits
    return logit_fn


class _DNNEstimator(Estimator):
    """Checks the DNN arguments and builds the model_fn of a flavor around a head."""

    def __init__(self, flavor, head, hidden_units, feature_columns, model_dir, optimizer,
                 activation_fn, dropout, config, warm_start_from, batch_norm,
                 input_layer_partitioner=None):
        hidden_units = check_hidden_units(hidden_units, allow_empty=True,
                                          sizes_as_int=True)
        columns = feature_layers.check_feature_columns(feature_columns)
        optimizer_fn = flavor.optimizer_factory(optimizer, flavor.dnn_learning_rate,
                                                "optimizer")
        activation_fn = check_activation(activation_fn)
        dropout = core.check_float("dropout", dropout, 0.0, 1.0)
        batch_norm = bool(batch_norm)  # As tf.estimator: any truth value.
        if flavor.partitioned:
            flavors.check_partitioner(input_layer_partitioner, "input_layer_partitioner")

            def model_fn(features, labels, mode, config):
                return _v1_dnn_model_fn(features, labels, mode, config, head,
                                        hidden_units, columns, optimizer_fn,
                                        activation_fn, dropout, batch_norm,
                                        input_layer_partitioner)
        else:
            def model_fn(features, labels, mode):
                return dnn_model_fn(features, labels, mode, head, hidden_units, columns,
                                    optimizer_fn, activation_fn, dropout, batch_norm)

        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)
        self._head = head


class DNNClassifier(_DNNEstimator):
    """A feed-forward classifier (tf.estimator.DNNClassifier's V2 signature)."""

    def __init__(self, hidden_units: Sequence[int], feature_columns: Iterable[Any],
                 model_dir: str | os.PathLike[str] | None = None, n_classes: int = 2,
                 weight_column: str | Any | None = None,
                 label_vocabulary: Sequence[str] | None = None,
                 optimizer: str | Any = "Adagrad",
                 activation_fn: Callable[[tf.Tensor], tf.Tensor] = tf.nn.relu,
                 dropout: float | None = None, config: RunConfig | None = None,
                 warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
                 loss_reduction: str = flavors.V2.loss_reduction,
                 batch_norm: bool = False) -> None:
        """Checks the arguments (see tf.estimator.DNNClassifier).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.classifier_head(n_classes, weight_column, label_vocabulary,
                                    loss_reduction, flavors.V2.binary_head_class)
        super().__init__(flavors.V2, head, hidden_units, feature_columns, model_dir,
                         optimizer, activation_fn, dropout, config, warm_start_from,
                         batch_norm)


class DNNRegressor(_DNNEstimator):
    """A feed-forward regressor (tf.estimator.DNNRegressor's V2 signature)."""

    def __init__(self, hidden_units: Sequence[int], feature_columns: Iterable[Any],
                 model_dir: str | os.PathLike[str] | None = None, label_dimension: int = 1,
                 weight_column: str | Any | None = None, optimizer: str | Any = "Adagrad",
                 activation_fn: Callable[[tf.Tensor], tf.Tensor] = tf.nn.relu,
                 dropout: float | None = None, config: RunConfig | None = None,
                 warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
                 loss_reduction: str = flavors.V2.loss_reduction,
                 batch_norm: bool = False) -> None:
        """Checks the arguments (see tf.estimator.DNNRegressor).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(flavors.V2, head, hidden_units, feature_columns, model_dir,
                         optimizer, activation_fn, dropout, config, warm_start_from,
                         batch_norm)


class DNNEstimator(_DNNEstimator):
    """A feed-forward network with a user-given head (tf.estimator.DNNEstimator)."""

    def __init__(self, head: Head, hidden_units: Sequence[int],
                 feature_columns: Iterable[Any],
                 model_dir: str | os.PathLike[str] | None = None,
                 optimizer: str | Any = "Adagrad",
                 activation_fn: Callable[[tf.Tensor], tf.Tensor] = tf.nn.relu,
                 dropout: float | None = None, config: RunConfig | None = None,
                 warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
                 batch_norm: bool = False) -> None:
        """Checks the arguments (see tf.estimator.DNNEstimator).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        super().__init__(flavors.V2, core.check_head(head), hidden_units,
                         feature_columns, model_dir, optimizer, activation_fn, dropout,
                         config, warm_start_from, batch_norm)


# The v1 flavor (tf.compat.v1.estimator's classes; see `flavors`) -------------------

@flavors.v1_class
class DNNClassifierV1(_DNNEstimator):
    """A feed-forward classifier (tf.compat.v1.estimator.DNNClassifier)."""

    def __init__(self, hidden_units: Sequence[int], feature_columns: Iterable[Any],
                 model_dir: str | os.PathLike[str] | None = None, n_classes: int = 2,
                 weight_column: str | Any | None = None,
                 label_vocabulary: Sequence[str] | None = None,
                 optimizer: str | Any = "Adagrad",
                 activation_fn: Callable[[tf.Tensor], tf.Tensor] = tf.nn.relu,
                 dropout: float | None = None,
                 input_layer_partitioner: Callable[..., Any] | None = None,
                 config: RunConfig | None = None,
                 warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
                 loss_reduction: str = flavors.V1.loss_reduction,
                 batch_norm: bool = False) -> None:
        """Checks the arguments (see tf.compat.v1.estimator.DNNClassifier).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.classifier_head(n_classes, weight_column, label_vocabulary,
                                    loss_reduction, flavors.V1.binary_head_class)
        super().__init__(flavors.V1, head, hidden_units, feature_columns, model_dir,
                         optimizer, activation_fn, dropout, config, warm_start_from,
                         batch_norm, input_layer_partitioner)


@flavors.v1_class
class DNNRegressorV1(_DNNEstimator):
    """A feed-forward regressor (tf.compat.v1.estimator.DNNRegressor)."""

    def __init__(self, hidden_units: Sequence[int], feature_columns: Iterable[Any],
                 model_dir: str | os.PathLike[str] | None = None, label_dimension: int = 1,
                 weight_column: str | Any | None = None, optimizer: str | Any = "Adagrad",
                 activation_fn: Callable[[tf.Tensor], tf.Tensor] = tf.nn.relu,
                 dropout: float | None = None,
                 input_layer_partitioner: Callable[..., Any] | None = None,
                 config: RunConfig | None = None,
                 warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
                 loss_reduction: str = flavors.V1.loss_reduction,
                 batch_norm: bool = False) -> None:
        """Checks the arguments (see tf.compat.v1.estimator.DNNRegressor).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(flavors.V1, head, hidden_units, feature_columns, model_dir,
                         optimizer, activation_fn, dropout, config, warm_start_from,
                         batch_norm, input_layer_partitioner)


@flavors.v1_class
class DNNEstimatorV1(_DNNEstimator):
    """A feed-forward network with a given head (tf.compat.v1.estimator.DNNEstimator)."""

    def __init__(self, head: Head, hidden_units: Sequence[int],
                 feature_columns: Iterable[Any],
                 model_dir: str | os.PathLike[str] | None = None,
                 optimizer: str | Any = "Adagrad",
                 activation_fn: Callable[[tf.Tensor], tf.Tensor] = tf.nn.relu,
                 dropout: float | None = None,
                 input_layer_partitioner: Callable[..., Any] | None = None,
                 config: RunConfig | None = None,
                 warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
                 batch_norm: bool = False) -> None:
        """Checks the arguments (see tf.compat.v1.estimator.DNNEstimator).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        super().__init__(flavors.V1, core.check_head(head), hidden_units,
                         feature_columns, model_dir, optimizer, activation_fn, dropout,
                         config, warm_start_from, batch_norm, input_layer_partitioner)
