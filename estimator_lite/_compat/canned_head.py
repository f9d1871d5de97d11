"""tf.estimator's v1 head module (its `canned/head.py`): its private head factories.

TF 1.x's heads were built by private factories that libraries and their tests
still call by this path (adanet's tests build
``_binary_logistic_head_with_sigmoid_cross_entropy_loss()``). Each returns the head
the v1 canned estimators use here, with the factory's signature and defaults
(``loss_reduction=tf.compat.v1.losses.Reduction.SUM``): the head answers the TF2
head API (`estimator_lite.Head`: ``create_estimator_spec`` with ``optimizer`` or
``train_op_fn``, ``logits_dimension``, ``name``), and its losses, metrics and
predictions are those of tf.estimator's v1 heads, as the v1 canned estimators'.
"""

from estimator_lite import head as head_lib
from estimator_lite._tf import tf
from estimator_lite.canned import flavors

__all__ = []  # tf.estimator's private names only (served by their module path).

# tf.estimator's v1 default: the training loss is the sum over the batch.
_SUM = tf.losses.Reduction.SUM


def _binary_logistic_head_with_sigmoid_cross_entropy_loss(
        weight_column=None, thresholds=None, label_vocabulary=None,
        loss_reduction=_SUM, loss_fn=None, name=None):
    """The v1 head for binary classification (sigmoid cross entropy).

    Args:
      weight_column: None, a feature key or a numeric feature column of weights.
      thresholds: floats in (0, 1); adds accuracy/precision/recall at each.
      label_vocabulary: the two class names, when labels are strings.
      loss_reduction: how the training loss is reduced (a
        `tf.compat.v1.losses.Reduction` or a TF2 name; not NONE).
      loss_fn: a custom loss ``loss_fn(labels, logits[, features])``.
      name: the head's name (suffix of its metric keys).

    Returns:
      The v1 classifiers' binary head (TF 1.x's trapezoidal AUCs).

    Raises:
      ValueError: a threshold outside (0, 1) or a bad loss_reduction.
      TypeError: label_vocabulary is not a list or tuple.
    """
    # tf.estimator's v1 factory: a TypeError for this vocabulary (its TF2 head
    # raises ValueError), and any falsy thresholds mean none.
    if label_vocabulary is not None and not isinstance(label_vocabulary, (list, tuple)):
        raise TypeError("label_vocabulary should be a list or tuple. Given type: "
                        f"{type(label_vocabulary)}")
    return flavors.V1BinaryClassHead(
        weight_column=weight_column, thresholds=tuple(thresholds) if thresholds else (),
        label_vocabulary=label_vocabulary, loss_reduction=loss_reduction,
        loss_fn=loss_fn, name=name)


def _multi_class_head_with_softmax_cross_entropy_loss(
        n_classes, weight_column=None, label_vocabulary=None, loss_reduction=_SUM,
        loss_fn=None, name=None):
    """The v1 head for classification into n_classes > 2 (softmax cross entropy).

    Args:
      n_classes: the number of classes, > 2.
      weight_column: None, a feature key or a numeric feature column of weights.
      label_vocabulary: the class names, when labels are strings.
      loss_reduction: how the training loss is reduced (not NONE).
      loss_fn: a custom loss ``loss_fn(labels, logits[, features])``.
      name: the head's name (suffix of its metric keys).

    Returns:
      The multi-class head.

    Raises:
      ValueError: n_classes <= 2, a vocabulary that is not a list or tuple, or a
        bad loss_reduction.
    """
    return head_lib.MultiClassHead(
        n_classes, weight_column=weight_column, label_vocabulary=label_vocabulary,
        loss_reduction=loss_reduction, loss_fn=loss_fn, name=name)


def _regression_head(weight_column=None, label_dimension=1, loss_reduction=_SUM,
                     loss_fn=None, inverse_link_fn=None, name=None):
    """The v1 regression head (mean squared error).

    Args:
      weight_column: None, a feature key or a numeric feature column of weights.
      label_dimension: the number of regression targets per example.
      loss_reduction: how the training loss is reduced (not NONE).
      loss_fn: a custom loss ``loss_fn(labels, logits[, features])``.
      inverse_link_fn: maps logits to predictions (None: the identity).
      name: the head's name (suffix of its metric keys).

    Returns:
      The regression head.

    Raises:
      ValueError: label_dimension < 1 or a bad loss_reduction.
    """
    return head_lib.RegressionHead(
        label_dimension=label_dimension, weight_column=weight_column,
        loss_reduction=loss_reduction, loss_fn=loss_fn,
        inverse_link_fn=inverse_link_fn, name=name)


def _binary_logistic_or_multi_class_head(n_classes, weight_column, label_vocabulary,
                                         loss_reduction):
    """The v1 binary head for two classes, else the v1 multi-class head.

    Args:
      n_classes: the number of classes.
      weight_column: None, a feature key or a numeric feature column of weights.
      label_vocabulary: the class names, when labels are strings.
      loss_reduction: how the training loss is reduced (not NONE).

    Returns:
      The head.
    """
    if n_classes == 2:
        return _binary_logistic_head_with_sigmoid_cross_entropy_loss(
            weight_column=weight_column, label_vocabulary=label_vocabulary,
            loss_reduction=loss_reduction)
    return _multi_class_head_with_softmax_cross_entropy_loss(
        n_classes, weight_column=weight_column, label_vocabulary=label_vocabulary,
        loss_reduction=loss_reduction)
