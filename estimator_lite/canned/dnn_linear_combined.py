"""DNNLinearCombinedClassifier / Regressor: a linear model and a DNN, logits summed.

Each part has its own optimizer (defaults: Ftrl at 0.005 for the linear part,
Adagrad at 0.001 for the DNN, as tf.estimator 2.15 uses for optimizers given by
name). With both parts the DNN's optimizer owns the global step and the linear
optimizer keeps its own ``training/<Name>/iter`` counter; variable names are those
of DNNClassifier and LinearClassifier.
"""

from estimator_lite._tf import tf
from estimator_lite.canned import core, dnn, feature_layers, linear
from estimator_lite.estimator import Estimator
from estimator_lite.model_fn import ModeKeys

__all__ = ["DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor",
           "dnn_linear_combined_model_fn"]

LINEAR_LEARNING_RATE = 0.005
DNN_LEARNING_RATE = 0.001


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
           linear_sparse_combiner):
    """The checked (linear_part, dnn_part) of `combined_model_fn`.

    Raises:
      TypeError / ValueError: an argument has a wrong type or value.
    """
    linear_columns, dnn_columns = check_columns(linear_feature_columns,
                                                dnn_feature_columns)
    linear_part = dnn_part = None
    if linear_columns:
        linear_part = (linear_columns,
                       core.optimizer_factory(linear_optimizer,
                                                    LINEAR_LEARNING_RATE,
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
                    core.optimizer_factory(dnn_optimizer, DNN_LEARNING_RATE,
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


class _CombinedEstimator(Estimator):
    """Checks the combined arguments and builds the model_fn around a head."""

    def __init__(self, head, model_dir, linear_feature_columns, linear_optimizer,
                 dnn_feature_columns, dnn_optimizer, dnn_hidden_units, dnn_activation_fn,
                 dnn_dropout, config, warm_start_from, batch_norm, linear_sparse_combiner):
        linear_part, dnn_part = _parts(linear_feature_columns, linear_optimizer,
                                       dnn_feature_columns, dnn_optimizer,
                                       dnn_hidden_units, dnn_activation_fn, dnn_dropout,
                                       batch_norm, linear_sparse_combiner)

        def model_fn(features, labels, mode):
            return combined_model_fn(features, labels, mode, head, linear_part, dnn_part)

        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)
        self._head = head


class DNNLinearCombinedClassifier(_CombinedEstimator):
    """Wide & deep classifier (tf.estimator.DNNLinearCombinedClassifier's signature)."""

    def __init__(self, model_dir=None, linear_feature_columns=None,
                 linear_optimizer="Ftrl", dnn_feature_columns=None,
                 dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=tf.nn.relu, dnn_dropout=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, config=None,
                 warm_start_from=None, loss_reduction="sum_over_batch_size",
                 batch_norm=False, linear_sparse_combiner="sum"):
        """Checks the arguments (see tf.estimator.DNNLinearCombinedClassifier).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.classifier_head(n_classes, weight_column, label_vocabulary,
                                    loss_reduction)
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                         dnn_activation_fn, dnn_dropout, config, warm_start_from,
                         batch_norm, linear_sparse_combiner)


class DNNLinearCombinedRegressor(_CombinedEstimator):
    """Wide & deep regressor (tf.estimator.DNNLinearCombinedRegressor's signature)."""

    def __init__(self, model_dir=None, linear_feature_columns=None,
                 linear_optimizer="Ftrl", dnn_feature_columns=None,
                 dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=tf.nn.relu, dnn_dropout=None, label_dimension=1,
                 weight_column=None, config=None, warm_start_from=None,
                 loss_reduction="sum_over_batch_size", batch_norm=False,
                 linear_sparse_combiner="sum"):
        """Checks the arguments (see tf.estimator.DNNLinearCombinedRegressor).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, model_dir, linear_feature_columns, linear_optimizer,
                         dnn_feature_columns, dnn_optimizer, dnn_hidden_units,
                         dnn_activation_fn, dnn_dropout, config, warm_start_from,
                         batch_norm, linear_sparse_combiner)


class DNNLinearCombinedEstimator(_CombinedEstimator):
    """Wide & deep with a user-given head (tf.estimator.DNNLinearCombinedEstimator)."""

    def __init__(self, head, model_dir=None, linear_feature_columns=None,
                 linear_optimizer="Ftrl", dnn_feature_columns=None,
                 dnn_optimizer="Adagrad", dnn_hidden_units=None,
                 dnn_activation_fn=tf.nn.relu, dnn_dropout=None, config=None,
                 batch_norm=False, linear_sparse_combiner="sum"):
        """Checks the arguments (see tf.estimator.DNNLinearCombinedEstimator).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        super().__init__(core.check_head(head), model_dir, linear_feature_columns,
                         linear_optimizer, dnn_feature_columns, dnn_optimizer,
                         dnn_hidden_units, dnn_activation_fn, dnn_dropout, config, None,
                         batch_norm, linear_sparse_combiner)
