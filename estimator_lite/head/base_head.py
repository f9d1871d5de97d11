"""Head: turns logits into predictions, a loss, eval metrics and an EstimatorSpec.

A model_fn computes logits and hands them to a head's `create_estimator_spec`, as
with tf.estimator's heads. Subclasses say how labels become a per-example loss,
what the predictions and export outputs are, and which metrics they report.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from estimator_lite import _keras, optimizers
from estimator_lite._engine import distribute, mixed_precision
from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import tf
from estimator_lite.head import head_inputs, reduction
from estimator_lite.head.keys import MetricKeys, metric_key
from estimator_lite.head.metrics import Metric, eval_metric_ops, weighted_mean
from estimator_lite.model_fn import EstimatorSpec, ModeKeys

__all__ = ["EvalContext", "Head", "check_prediction_keys", "loss_for_gradients",
           "make_train_op"]


class EvalContext:
    """The tensors a head's metrics are computed from (one batch, in the graph).

    Attributes:
      labels: processed labels (float32, what the loss compares the logits with).
      predictions: dict of prediction tensors.
      weights: float32 example weights broadcastable to the labels, or None.
      unreduced_loss: float32 per-example loss [batch_size, d].
      regularization_loss: scalar Tensor, or None.
    """

    def __init__(self, labels, predictions, weights, unreduced_loss, regularization_loss):
        self.labels = labels
        self.predictions = predictions
        self.weights = weights
        self.unreduced_loss = unreduced_loss
        self.regularization_loss = regularization_loss


def check_prediction_keys(keys, valid_keys):
    """Checks `keys` (None, one key or a list of keys) against `valid_keys`.

    Returns:
      The list of requested keys in `valid_keys`' order: all valid keys for None
      or an empty list (as tf.estimator's heads: no keys asked for means every
      prediction).

    Raises:
      ValueError: a key is not valid.
    """
    if keys is None or (isinstance(keys, (str, list, tuple)) and not keys):
        return list(valid_keys)
    keys = [keys] if isinstance(keys, (str, tuple)) else list(keys)
    unknown = [k for k in keys if k not in valid_keys]
    if unknown:
        raise ValueError(f"Prediction key must be in PredictionKeys, given: "
                         f"{unknown[0]}. Valid prediction keys of this head: "
                         f"{list(valid_keys)}")
    # In the head's order, not the caller's: tf.estimator's heads filter their
    # predictions dict by the keys.
    return [k for k in valid_keys if k in keys]


def _train_variables(trainable_variables):
    """The tf.Variables to train (Keras 3 Variables unwrapped; None: all trainable).

    Raises:
      ValueError: not a list or tuple (tf.estimator's type for it).
      TypeError: an item is not a variable.
    """
    if trainable_variables is None:
        return tf.trainable_variables()
    if not isinstance(trainable_variables, (list, tuple)):
        raise ValueError(f"trainable_variables should be a list or a tuple of variables, "
                         f"got {trainable_variables!r} of type "
                         f"{type(trainable_variables).__name__}")
    unwrapped = []
    for variable in trainable_variables:
        inner = _keras.tf_variable(variable)  # a Keras 3 Variable holds one
        if inner is None:
            raise TypeError(f"trainable_variables must hold variables, got {variable!r} "
                            f"of type {type(variable).__name__}")
        unwrapped.append(inner)
    return unwrapped


def _keras_train_op(loss, optimizer, trainable_variables):
    """One gradient pass and update with a Keras (or graph) optimizer.

    The optimizer goes through the canned estimators' mapping: a tf-keras legacy
    optimizer runs as it is, a Keras 3 / tf-keras one becomes its graph
    equivalent. Either way the global step is its iteration count. A user's
    optimizer that defines its own ``get_updates(loss, params)`` makes the train
    op itself, as tf.estimator 2.15's heads had it: the first op it returns (the
    global step is its ``iterations`` when it is a legacy one without a counter).

    Raises:
      ValueError: trainable_variables is None or not a list or tuple, or such a
        get_updates returned no op.
    """
    built = optimizers.graph_optimizer(optimizer, argument="optimizer")
    if trainable_variables is None:
        # As tf.estimator 2.15: TF2 code has no collection to take them from.
        raise ValueError("trainable_variables cannot be None with a Keras optimizer "
                         f"({type(optimizer).__name__}): pass the variables to train, "
                         "e.g. trainable_variables=tf.compat.v1.trainable_variables() "
                         "or a Keras model's trainable_variables")
    variables = _train_variables(trainable_variables)
    global_step = tf.train.get_or_create_global_step()
    if getattr(built, "trains_from_loss", False):
        updates = built.get_updates(loss, variables, iterations=global_step)
        if not updates:
            raise ValueError(f"optimizer {type(optimizer).__name__}.get_updates(loss, "
                             "params) must return a list holding the train op, got []")
        return updates[0]
    # Loss-scaled under RunConfig(experimental_mixed_precision="mixed_float16").
    return mixed_precision.apply_gradients(
        loss, variables, lambda grads: built.apply_gradients(
            list(zip_strict(grads, variables)), iterations=global_step))


def _check_optimizer_object(optimizer):
    """Refuses what is no optimizer object at all, as tf.estimator 2.15's heads do.

    A head takes optimizer instances only (a canned estimator also takes names):
    anything without an optimizer's methods, or a class, is a ValueError there,
    with the words kept here so programs matching them still do.

    Raises:
      ValueError: `optimizer` is a class, or has none of apply_gradients,
        minimize and get_updates (a name such as 'SGD', a number...).
    """
    methods = ("apply_gradients", "minimize", "get_updates")
    if isinstance(optimizer, type) or not any(
            callable(getattr(optimizer, name, None)) for name in methods):
        raise ValueError("The given optimizer is not a tf.keras.optimizers.Optimizer "
                         "instance. Received optimizer of type "
                         f"{type(optimizer)} (nor a tf.compat.v1.train.Optimizer: "
                         f"optimizer={optimizer!r}; a head takes an optimizer object, "
                         "names are for canned estimators)")


def _check_v1_optimizer_has_variables(optimizer, var_list):
    """A tf.compat.v1.train optimizer trains here only when there is something to
    train; otherwise tf.estimator 2.15's refusal of such an optimizer is raised.

    Raises:
      ValueError: no variable to train (tf.estimator refused every v1 optimizer;
        its minimize() would fail with "No variables to optimize").
    """
    if var_list is None:
        var_list = tf.trainable_variables() + tf.get_collection(
            tf.GraphKeys.TRAINABLE_RESOURCE_VARIABLES)
    if not var_list:
        raise ValueError("The given optimizer is not a tf.keras.optimizers.Optimizer "
                         f"instance. Received optimizer of type {type(optimizer)} (a "
                         "tf.compat.v1.train optimizer trains a head's model here, "
                         "but this model has no trainable variables to optimize)")


def loss_for_gradients(loss, loss_reduction):
    """The loss whose gradients a Keras-style optimizer applies.

    Under a distribution strategy the replicas' gradients are summed, so a loss
    that is a mean over the batch (SUM_OVER_BATCH_SIZE) counts 1/N per replica,
    as tf.estimator's heads scaled it; a step then equals one on the global
    batch. Without a strategy, or for other reductions, `loss` itself.
    """
    if loss_reduction == reduction.SUM_OVER_BATCH_SIZE:
        return distribute.scale_loss_for_replicas(loss)
    return loss


def make_train_op(loss, optimizer, trainable_variables, train_op_fn, update_ops,
                  loss_reduction=None):
    """Builds the train op from exactly one of `optimizer` and `train_op_fn`.

    Args:
      loss: the scalar training loss.
      optimizer: a tf.compat.v1.train.Optimizer, a Keras optimizer (Keras 3,
        tf-keras, or tf-keras legacy), or None. See
        `estimator_lite.canned.optimizers.graph_optimizer`.
      trainable_variables: a list or tuple of the variables `optimizer` trains;
        required with a Keras optimizer, as in tf.estimator 2.15 (None: all
        trainable variables, for a tf.compat.v1 optimizer only).
      train_op_fn: callable(loss) returning the train op, or None.
      update_ops: ops to run with every step (e.g. batch norm moving averages).
      loss_reduction: the head's reduction; see `loss_for_gradients`.

    Returns:
      The train op.

    Raises:
      ValueError: neither or both of optimizer and train_op_fn are given,
        optimizer is not an optimizer object (a name, say: as tf.estimator 2.15),
        a Keras optimizer has no graph equivalent or comes without
        trainable_variables, or trainable_variables or update_ops is not a list
        or tuple.
      TypeError: train_op_fn not callable.
    """
    if (optimizer is None) == (train_op_fn is None):
        raise ValueError("exactly one of optimizer and train_op_fn must be given, got "
                         f"optimizer={optimizer!r}, train_op_fn={train_op_fn!r}")
    if update_ops is not None and not isinstance(update_ops, (list, tuple)):
        # ValueError, as tf.estimator 2.15 (a dict would be iterated for its keys).
        raise ValueError(f"update_ops should be a list or a tuple of ops, got "
                         f"{update_ops!r} of type {type(update_ops).__name__}")
    update_ops = list(update_ops or [])
    if optimizer is not None:
        _check_optimizer_object(optimizer)
        # Update ops first, so a step trains on this batch's moving statistics.
        with tf.control_dependencies(update_ops):
            if isinstance(optimizer, tf.train.Optimizer):
                # compute_gradients stays the optimizer's own (TowerOptimizer & co.).
                # Keras 3 Variables unwrapped, as on the Keras path.
                var_list = (None if trainable_variables is None
                            else _train_variables(trainable_variables))
                _check_v1_optimizer_has_variables(optimizer, var_list)
                # Loss-scaled under RunConfig's mixed_float16.
                return mixed_precision.minimize(optimizer, loss,
                                                tf.train.get_global_step(), var_list)
            return _keras_train_op(loss_for_gradients(loss, loss_reduction), optimizer,
                                   trainable_variables)
    if not callable(train_op_fn):
        raise TypeError(f"train_op_fn must be callable, got {train_op_fn!r}")
    train_op = train_op_fn(loss)
    if update_ops:
        train_op = tf.group(train_op, *update_ops)
    return train_op


def _regularization_loss(regularization_losses):
    if not regularization_losses:
        return None
    return tf.add_n([tf.cast(loss, tf.float32) for loss in regularization_losses])


class Head(abc.ABC):
    """Base class of the heads (abstract, as tf.estimator's `Head`).

    The built-in heads implement `_processed_labels`, `_builtin_unreduced_loss`,
    `predictions`, `_export_outputs` and `_metric_builders`, and share the rest.
    A user's subclass may instead implement tf.estimator's interface (`name`,
    `logits_dimension`, `loss_reduction`, `loss`, `predictions`, `metrics`,
    `update_metrics`) and `create_estimator_spec` (or `_create_tpu_estimator_spec`);
    it needs no constructor arguments.
    """

    def __init__(self, logits_dimension: int | None = None, name: str | None = None,
                 weight_column: str | Any | None = None,
                 loss_reduction: str = reduction.SUM_OVER_BATCH_SIZE,
                 loss_fn: Callable[..., tf.Tensor] | None = None) -> None:
        """Stores the arguments every head shares, checked.

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        self._logits_dimension = logits_dimension
        self._name = head_inputs.check_name(name)
        self._weight_column = head_inputs.check_weight_column(weight_column)
        self._loss_reduction = reduction.check_loss_reduction(loss_reduction)
        self._loss_fn = head_inputs.check_loss_fn(loss_fn)

    name = property(lambda self: self._name, doc="The head name (None if unnamed).")
    logits_dimension = property(lambda self: self._logits_dimension,
                                doc="Size of the last dimension of the logits.")
    loss_reduction = property(lambda self: self._loss_reduction,
                              doc="How the training loss is reduced.")

    # For subclasses ---------------------------------------------------------------


    @property
    def weight_column(self) -> str | Any | None:
        """The weight column (a key or numeric column), or None."""
        return self._weight_column

    def _processed_labels(self, labels):
        """Returns labels as the float32 tensor the loss and metrics compare with."""
        raise NotImplementedError

    def _builtin_unreduced_loss(self, labels, logits):
        """Returns the per-example loss [batch_size, d] for processed labels."""
        raise NotImplementedError

    def _export_outputs(self, predictions):
        """Returns the dict of signature name to ExportOutput."""
        raise NotImplementedError

    def _metric_builders(self):
        """Returns (metric key without head name, fn(EvalContext) -> (value, update))."""
        raise NotImplementedError

    @abc.abstractmethod
    def predictions(self, logits: tf.Tensor, keys: str | Iterable[str] | None = None,
                    ) -> dict[str, tf.Tensor]:
        """Returns a dict of prediction key to Tensor (only `keys` if given)."""

    # Shared -----------------------------------------------------------------------

    def _metric_key(self, key):
        return metric_key(key, self._name)

    # Whether example weights may be given per logit ([batch_size, d]): regression
    # heads only, as in tf.estimator.
    _PER_LOGIT_WEIGHTS = False
    # Whether labels have one value per logit (regression, multi-label) rather than
    # one class per example.
    _LABELS_PER_LOGIT = False
    # Whether the labels' shape is checked before their values (as tf.estimator's
    # heads but its MultiLabelHead).
    _SHAPE_BEFORE_VALUES = True

    # Whether update_metrics refuses, when the graph is built, weights whose
    # static shape cannot broadcast to the logits' (as tf.estimator's heads but
    # its MultiClassHead, whose metrics take such weights until they run).
    _METRIC_WEIGHTS_BROADCAST = True

    def _weights(self, features, logits, for_metrics=False):
        return head_inputs.weights_from_features(
            features, self._weight_column, logits, per_logit=self._PER_LOGIT_WEIGHTS,
            broadcast_to_logits=for_metrics and self._METRIC_WEIGHTS_BROADCAST)

    def _unreduced_loss(self, labels, logits, features):
        """Returns (processed labels, per-example loss)."""
        labels = head_inputs.labels_like_logits(labels, logits)
        label_dimension = self._logits_dimension if self._LABELS_PER_LOGIT else 1
        if isinstance(labels, tf.Tensor) and self._SHAPE_BEFORE_VALUES:
            # Shape first, as tf.estimator: a wrong shape is reported as such, not
            # as out-of-range values.
            labels = head_inputs.check_labels_match_logits(labels, logits,
                                                           label_dimension)
        processed = head_inputs.check_labels_match_logits(
            self._processed_labels(labels), logits, label_dimension)
        if self._loss_fn is None:
            return processed, self._builtin_unreduced_loss(processed, logits)
        unreduced = head_inputs.call_loss_fn(self._loss_fn, processed, logits, features,
                                             self._loss_dimension())
        return processed, unreduced

    def _loss_dimension(self):
        """The last dimension of the unreduced loss a custom loss_fn must return."""
        return self._logits_dimension if self._LABELS_PER_LOGIT else 1

    def _unweighted_loss_and_weights(self, logits, labels, features):
        """The per-example loss and the weights (1.0 without a weight column), as
        tf.estimator's heads' private method of that name."""
        logits = self._checked_logits(logits)
        _, unreduced = self._unreduced_loss(labels, logits, features)
        weights = self._weights(features, logits)
        return unreduced, 1.0 if weights is None else weights

    def loss(self, labels: Any, logits: tf.Tensor,
             features: Mapping[str, Any] | None = None, mode: str | None = None,
             regularization_losses: Iterable[tf.Tensor] | None = None) -> tf.Tensor:
        """Returns the scalar training loss, regularization losses added.

        Args:
          labels: the labels Tensor.
          logits: float Tensor [batch_size, logits_dimension].
          features: dict of features (needed for a weight column).
          mode: unused; kept for tf.estimator's signature.
          regularization_losses: list of scalar Tensors added to the loss.
        """
        del mode  # The loss is the same in every mode.
        logits = head_inputs.check_logits(logits, self._logits_dimension)
        with tf.name_scope("losses"):
            _, unreduced = self._unreduced_loss(labels, logits, features)
            weights = self._weights(features, logits)
            loss = reduction.reduce_loss(unreduced, weights, self._loss_reduction)
            regularization = _regularization_loss(regularization_losses)
            return loss if regularization is None else loss + regularization

    def metrics(self, regularization_losses: Iterable[tf.Tensor] | None = None,
                ) -> dict[str, Any]:
        """Returns a dict of metric key to (not yet updated) Metric."""
        builders = [(MetricKeys.LOSS_MEAN, _mean_loss)] + list(self._metric_builders())
        if regularization_losses is not None:
            builders.append((MetricKeys.LOSS_REGULARIZATION, _mean_regularization))
        return {self._metric_key(key): Metric(self._metric_key(key), fn)
                for key, fn in builders}

    def update_metrics(self, eval_metrics: dict[str, Any], features: Mapping[str, Any],
                       logits: tf.Tensor, labels: Any,
                       regularization_losses: Iterable[tf.Tensor] | None = None,
                       ) -> dict[str, Any]:
        """Builds the update ops of this head's metrics in `eval_metrics`.

        Returns:
          `eval_metrics`, its Metric objects now holding (value, update_op).
        """
        logits = head_inputs.check_logits(logits, self._logits_dimension)
        with tf.name_scope("metrics"):
            processed, unreduced = self._unreduced_loss(labels, logits, features)
            context = EvalContext(
                labels=processed, predictions=self.predictions(logits),
                weights=self._weights(features, logits, for_metrics=True),
                unreduced_loss=unreduced,
                regularization_loss=_regularization_loss(regularization_losses))
            for metric in eval_metrics.values():
                if isinstance(metric, Metric) and not metric.built:
                    metric.update_state(context)
        return eval_metrics

    def _checked_logits(self, logits):
        """The logits, checked against logits_dimension (MultiHead: per head)."""
        return head_inputs.check_logits(logits, self._logits_dimension)

    def create_estimator_spec(
            self, features: Mapping[str, Any], mode: str, logits: tf.Tensor,
            labels: Any = None, optimizer: Any = None,
            trainable_variables: Sequence[tf.Variable] | None = None,
            train_op_fn: Callable[[tf.Tensor], Any] | None = None,
            update_ops: Iterable[Any] | None = None,
            regularization_losses: Iterable[tf.Tensor] | None = None) -> EstimatorSpec:
        """Returns the EstimatorSpec for `mode`.

        Args:
          features: dict of features (for a weight column).
          mode: a ModeKeys value.
          logits: float Tensor [batch_size, logits_dimension].
          labels: labels Tensor (TRAIN and EVAL).
          optimizer: a Keras optimizer (as tf.estimator 2.15: the global step is
            its ``iterations``) or a tf.compat.v1.train.Optimizer (TRAIN; or give
            train_op_fn).
          trainable_variables: a list or tuple of the variables the optimizer
            trains; required with a Keras optimizer (None: all trainable
            variables, for a tf.compat.v1 optimizer only).
          train_op_fn: callable(loss) -> train op (TRAIN; or give optimizer).
          update_ops: ops run with each train step.
          regularization_losses: scalar Tensors added to the training loss.

        Returns:
          An estimator_lite.EstimatorSpec.

        Raises:
          ValueError: bad mode, missing labels, not exactly one of optimizer and
            train_op_fn in TRAIN mode, optimizer not an optimizer object, or bad
            trainable_variables (see `make_train_op`).
          TypeError: an optimizer of a kind no graph can run.
        """
        if type(self)._export_outputs is Head._export_outputs:
            # A user's head on tf.estimator's interface: it builds its own spec.
            return self._user_head_spec(
                features=features, mode=mode, logits=logits, labels=labels,
                optimizer=optimizer, trainable_variables=trainable_variables,
                train_op_fn=train_op_fn, update_ops=update_ops,
                regularization_losses=regularization_losses)
        with tf.name_scope(self._name or "head"):
            logits = self._checked_logits(logits)
            predictions = self.predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode, predictions=predictions,
                                     export_outputs=self._export_outputs(predictions))
            loss = self.loss(labels, logits, features, mode, regularization_losses)
            if mode == ModeKeys.EVAL:
                metrics = self.update_metrics(self.metrics(regularization_losses),
                                              features, logits, labels,
                                              regularization_losses)
                return EstimatorSpec(mode, predictions=predictions, loss=loss,
                                     eval_metric_ops=eval_metric_ops(metrics))
            if mode != ModeKeys.TRAIN:
                raise ValueError(f"mode must be one of {ModeKeys.TRAIN!r}, "
                                 f"{ModeKeys.EVAL!r}, {ModeKeys.PREDICT!r}; got {mode!r}")
            loss_reduction = self.loss_reduction  # A MultiHead's heads must agree.
            train_op = make_train_op(loss, optimizer, trainable_variables, train_op_fn,
                                     update_ops, loss_reduction)
            self._add_train_summaries(loss, regularization_losses, features, logits,
                                      labels)
            return EstimatorSpec(mode, predictions=predictions, loss=loss,
                                 train_op=train_op)

    def _create_tpu_estimator_spec(self, features, mode, logits, labels=None,
                                   optimizer=None, trainable_variables=None,
                                   train_op_fn=None, update_ops=None,
                                   regularization_losses=None):
        """A user's head may build its spec here (a TPUEstimatorSpec or an
        EstimatorSpec) instead of overriding `create_estimator_spec`.

        Raises:
          NotImplementedError: not overridden.
        """
        raise NotImplementedError("TPUEstimatorSpec not available for this model head.")

    def _user_head_spec(self, **kwargs):
        """The spec of a head that implements only tf.estimator's interface."""
        try:
            spec = self._create_tpu_estimator_spec(**kwargs)
        except NotImplementedError:
            raise NotImplementedError(
                "Subclasses of Head must implement `create_estimator_spec()` or "
                f"_create_tpu_estimator_spec(). {type(self).__name__} implements "
                "neither.") from None
        as_estimator_spec = getattr(spec, "as_estimator_spec", None)
        return as_estimator_spec() if as_estimator_spec is not None else spec

    def _summary_name(self, key):
        """The tag of a training summary: the metric key (head name suffixed)."""
        return self._metric_key(key)

    def _add_train_summaries(self, loss, regularization_losses, features, logits,
                             labels):
        """Adds TRAIN mode's scalar summaries, as tf.estimator's heads do.

        'loss' (the regularized training loss) and 'regularization_loss', suffixed
        with the head name, at the graph's top name scope; the Estimator writes
        them with the other summaries (and adds no second 'loss').
        """
        average = (self._average_loss(features, logits, labels)
                   if self._loss_reduction == reduction.V1_SUM else None)
        with tf.name_scope(""):
            tf.summary.scalar(self._summary_name(MetricKeys.LOSS), loss)
            if average is not None:
                tf.summary.scalar(self._summary_name(MetricKeys.LOSS_MEAN), average)
            regularization = _regularization_loss(regularization_losses)
            if regularization is not None:
                tf.summary.scalar(self._summary_name(MetricKeys.LOSS_REGULARIZATION),
                                  regularization)

    def _average_loss(self, features, logits, labels):
        """The weighted mean training loss, which TF 1.x's heads (the v1 canned
        estimators: tf.compat.v1.losses' SUM reduction) also summarize."""
        with tf.name_scope("average_loss"):
            _, unreduced = self._unreduced_loss(labels, logits, features)
            weights = self._weights(features, logits)
            weights = tf.ones_like(unreduced) if weights is None else (
                weights * tf.ones_like(unreduced))
            return tf.reduce_sum(unreduced * weights) / tf.reduce_sum(weights)


def _mean_loss(context):
    return weighted_mean(context.unreduced_loss, context.weights)


def _mean_regularization(context):
    if context.regularization_loss is None:
        raise ValueError("the regularization_loss metric needs regularization_losses in "
                         "update_metrics, got None")
    return tf.metrics.mean(context.regularization_loss)
