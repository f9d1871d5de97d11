"""What every canned estimator shares: its head, argument checks, and its train op.

A canned model_fn computes logits from one or more parts (``dnn``, ``linear``,
``baseline``), each trained by its own optimizer, and hands them to a head. The
first part's optimizer owns the global step (Keras' ``iterations``); any other keeps
its own ``training/<Name>/iter`` counter, as in tf.estimator 2.15.
"""

import numbers

from estimator_lite import head as head_lib
from estimator_lite import optimizers
from estimator_lite._engine import mixed_precision, validation
from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import tf
from estimator_lite.head import base_head
from estimator_lite.optimizers import v1 as optimizers_v1

__all__ = ["ModelPart", "check_float", "check_head", "classifier_head",
           "head_reduction", "optimizer_factory", "optimizer_factory_v1",
           "regressor_head", "train_op_fn"]


def check_float(name, value, low, high, allow_none=True):
    """Checks a number in [low, high); returns it as a float (or None).

    Raises:
      TypeError: not a number.
      ValueError: outside [low, high).
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number{' or None' if allow_none else ''}, got "
                        f"{value!r} of type {type(value).__name__}")
    if not low <= value < high:
        raise ValueError(f"{name} must be in [{low}, {high}), got {value!r}")
    return float(value)


def _also_value_error(error):
    """`error` if it is a ValueError already, else a WrongTypeError with its text."""
    if isinstance(error, ValueError):
        return error
    return validation.WrongTypeError(str(error))


def _checked_factory(factory, optimizer, *args, **kwargs):
    """`factory(optimizer, ...)`, its wrong-type errors (now or when the returned
    function builds the optimizer) raised as WrongTypeErrors: also ValueErrors.

    tf.estimator's canned estimators raise ValueError for an optimizer argument
    that is no optimizer (an object, a number, a callable returning neither);
    the factories say TypeError, and a WrongTypeError is both.
    """
    try:
        build = factory(optimizer, *args, **kwargs)
    except TypeError as error:
        raise _also_value_error(error) from error

    def checked_build():
        try:
            return build()
        except TypeError as error:
            raise _also_value_error(error) from error
    return checked_build


def optimizer_factory(optimizer, *args, **kwargs):
    """`estimator_lite.optimizers.optimizer_factory` for a canned estimator.

    Raises:
      WrongTypeError: (a TypeError and a ValueError, as tf.estimator's) the
        optimizer, or what its callable returns, is no optimizer.
      ValueError: an unknown optimizer name, or another bad value.
    """
    return _checked_factory(optimizers.optimizer_factory, optimizer, *args, **kwargs)


def optimizer_factory_v1(optimizer, *args, **kwargs):
    """`estimator_lite.optimizers.v1.optimizer_factory` for a v1 canned estimator.

    Raises:
      WrongTypeError: (a TypeError and a ValueError, as tf.estimator's) the
        optimizer, or what its callable returns, is no tf.compat.v1 optimizer.
      ValueError: an unknown optimizer name.
    """
    return _checked_factory(optimizers_v1.optimizer_factory, optimizer, *args,
                            **kwargs)


def check_head(head):
    """The head of a head-based estimator (DNNEstimator & co.).

    Raises:
      TypeError: head is not an estimator_lite Head.
    """
    if not isinstance(head, head_lib.Head):
        raise TypeError(f"head must be an estimator_lite Head (e.g. "
                        f"estimator_lite.MultiLabelHead), got {head!r} of type "
                        f"{type(head).__name__}")
    return head


def classifier_head(n_classes, weight_column, label_vocabulary, loss_reduction,
                    binary_head_class=head_lib.BinaryClassHead):
    """BinaryClassHead for 2 classes, MultiClassHead for more (as tf.estimator).

    `binary_head_class` is the 2-class head's class (the v1 canned estimators give
    a subclass with TF 1.x's metrics).

    Raises:
      TypeError: n_classes is not an int.
      ValueError: n_classes < 2, or a head argument is invalid.
    """
    if isinstance(n_classes, bool) or not isinstance(n_classes, numbers.Integral):
        raise TypeError(f"n_classes must be an int, got {n_classes!r} of type "
                        f"{type(n_classes).__name__}")
    if n_classes < 2:
        raise ValueError(f"n_classes must be > 1, got {n_classes!r}")
    if n_classes == 2:
        return binary_head_class(weight_column=weight_column,
                                 label_vocabulary=label_vocabulary,
                                 loss_reduction=loss_reduction)
    return head_lib.MultiClassHead(int(n_classes), weight_column=weight_column,
                                   label_vocabulary=label_vocabulary,
                                   loss_reduction=loss_reduction)


def regressor_head(label_dimension, weight_column, loss_reduction):
    """RegressionHead with `label_dimension` outputs."""
    return head_lib.RegressionHead(label_dimension=label_dimension,
                                   weight_column=weight_column,
                                   loss_reduction=loss_reduction)


class ModelPart:
    """One trained part of a canned model: its variable scope and optimizer."""

    def __init__(self, scope, optimizer):
        """Args: scope: the part's variable scope name; optimizer: a built optimizer."""
        self.scope = scope
        self.optimizer = optimizer

    def trainable_variables(self):
        """The trainable variables created under this part's scope."""
        return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope=self.scope + "/")


def head_reduction(head):
    """The loss reduction of a head (a user's head may not say: None)."""
    return getattr(head, "loss_reduction", None)


def train_op_fn(parts, update_ops=(), loss_reduction=None):
    """Returns train_op_fn(loss) for a head: one gradient pass, one update per part.

    Args:
      parts: ModelParts; the first one's optimizer increments the global step.
      update_ops: ops that must run with each step (batch norm moving averages).
      loss_reduction: the head's loss reduction (a mean loss is scaled for the
        replicas of a distribution strategy; see base_head.loss_for_gradients).

    Returns:
      A callable(loss) -> train op.
    """
    def fn(loss):
        loss = base_head.loss_for_gradients(loss, loss_reduction)
        global_step = tf.train.get_or_create_global_step()
        var_lists = [part.trainable_variables() for part in parts]
        # A user's optimizer with its own get_updates trains from the loss itself.
        from_loss = [getattr(part.optimizer, "trains_from_loss", False) for part in parts]
        flat = [v for variables, own in zip_strict(var_lists, from_loss) if not own
                for v in variables]

        def apply(grads):
            grads, ops = iter(grads), []
            for index, (part, variables) in enumerate(zip_strict(parts, var_lists)):
                iterations = global_step if index == 0 else None
                if from_loss[index]:
                    ops.append(part.optimizer.updates_from_loss(loss, variables,
                                                                iterations))
                    continue
                pairs = [(next(grads), variable) for variable in variables]
                ops.append(part.optimizer.apply_gradients(pairs, iterations=iterations))
            return ops

        # Loss-scaled under RunConfig(experimental_mixed_precision="mixed_float16").
        v1_optimizers = [(part.optimizer.v1_optimizer, variables)
                         for part, variables in zip_strict(parts, var_lists)
                         if hasattr(part.optimizer, "v1_optimizer")]
        update = mixed_precision.apply_gradients(loss, flat, apply, v1_optimizers)
        with tf.control_dependencies(list(update_ops)):
            return tf.group(update, name="train_op")
    return fn
