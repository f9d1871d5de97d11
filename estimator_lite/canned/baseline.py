"""BaselineClassifier and BaselineRegressor: a learned bias, ignoring the features.

The one variable is ``baseline/bias`` [logits_dimension]; it converges to the
label prior (log-odds for classifiers, the mean for regressors). Default optimizer:
Ftrl with learning rate 0.3, as tf.estimator 2.15.

Both flavors (see `flavors`) over one implementation: the TF2 classes
(`BaselineClassifier`, ...) and the v1 ones (`BaselineClassifierV1`, ...: TF 1.x's,
exported as ``compat.v1.BaselineClassifier``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from estimator_lite._tf import tf
from estimator_lite.canned import core, flavors
from estimator_lite.estimator import Estimator
from estimator_lite.model_fn import ModeKeys

if TYPE_CHECKING:
    from estimator_lite.head.base_head import Head
    from estimator_lite.run_config import RunConfig

__all__ = ["BaselineClassifier", "BaselineClassifierV1", "BaselineEstimatorV1",
           "BaselineRegressor", "BaselineRegressorV1", "LEARNING_RATE",
           "baseline_variables_and_logits"]

LEARNING_RATE = flavors.V2.baseline_learning_rate


def _first_dim(tensor):
    if isinstance(tensor, tf.SparseTensor):
        return tensor.dense_shape[0]
    return tf.shape(tensor, out_type=tf.int64)[0]


def _batch_size(features, weight_column):
    """(batch size, checks that every feature agrees on it), as tf.estimator's.

    The weight feature is left out (serving requests lack it) unless it is the
    only feature; the first other feature gives the size.

    Raises:
      ValueError: features is an empty dict.
    """
    if not isinstance(features, dict):
        return _first_dim(features), []
    if not features:
        raise ValueError("Baseline estimators need at least one feature to tell the "
                         "batch size, got an empty features dict")
    key = weight_column if isinstance(weight_column, str) else getattr(
        weight_column, "key", None)
    tensors = [tensor for name, tensor in features.items() if name != key] or [
        features[key]]
    batch = _first_dim(tensors[0])
    checks = [tf.assert_equal(batch, _first_dim(tensor), message="features must all "
                              "have the same batch size (dimension 0)")
              for tensor in tensors[1:]]
    return batch, checks


def baseline_variables_and_logits(features, num_outputs, weight_column=None):
    """The baseline model: its variables and its logits.

    tf.estimator's ``baseline._baseline_model_fn_builder_v2``.

    Args:
      features: the input_fn's features (a dict, or a single tensor); only the
        batch size is read from them.
      num_outputs: the number of logits.
      weight_column: the weight feature's key or numeric column, if any.

    Returns:
      ([bias], logits): the ``baseline/bias`` variable [num_outputs], and the
      [batch, num_outputs] logits repeating it per example.

    Raises:
      ValueError: features is an empty dict.
    """
    with tf.variable_scope("baseline"):
        bias = tf.get_variable("bias", [num_outputs], initializer=tf.zeros_initializer(),
                               use_resource=True)
        batch, checks = _batch_size(features, weight_column)
        with tf.control_dependencies(checks):
            return [bias], tf.tile(tf.expand_dims(bias, 0), tf.stack([batch, 1]))


def baseline_logits(features, units, weight_column):
    """Logits [batch, units]: the ``baseline/bias`` variable repeated per example."""
    return baseline_variables_and_logits(features, units, weight_column)[1]


def baseline_model_fn(features, labels, mode, head, optimizer_fn, weight_column):
    """The model_fn of BaselineClassifier / BaselineRegressor."""
    logits = baseline_logits(features, head.logits_dimension, weight_column)
    op_fn = None
    if mode == ModeKeys.TRAIN:
        op_fn = core.train_op_fn([core.ModelPart("baseline", optimizer_fn())],
                                 loss_reduction=core.head_reduction(head))
    return head.create_estimator_spec(features=features, mode=mode, logits=logits,
                                      labels=labels, train_op_fn=op_fn)


def _v1_baseline_model_fn(features, labels, mode, head, optimizer_fn, weight_column):
    """The model_fn of the v1 baseline estimators (the head runs the optimizer)."""
    logits = baseline_logits(features, head.logits_dimension, weight_column)
    optimizer = optimizer_fn() if mode == ModeKeys.TRAIN else None
    return head.create_estimator_spec(features=features, mode=mode, logits=logits,
                                      labels=labels, optimizer=optimizer)


class _BaselineEstimator(Estimator):
    """Builds the baseline model_fn of a flavor around a head."""

    def __init__(self, flavor, head, model_dir, weight_column, optimizer, config):
        optimizer_fn = flavor.optimizer_factory(optimizer, flavor.baseline_learning_rate,
                                                "optimizer")
        build = _v1_baseline_model_fn if flavor.partitioned else baseline_model_fn

        def model_fn(features, labels, mode):
            return build(features, labels, mode, head, optimizer_fn, weight_column)

        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config)
        self._head = head


class BaselineClassifier(_BaselineEstimator):
    """Predicts the label prior (tf.estimator.BaselineClassifier's V2 signature)."""

    def __init__(self, model_dir: str | os.PathLike[str] | None = None, n_classes: int = 2,
                 weight_column: str | Any | None = None,
                 label_vocabulary: Sequence[str] | None = None,
                 optimizer: str | Any = "Ftrl", config: RunConfig | None = None,
                 loss_reduction: str = flavors.V2.loss_reduction) -> None:
        """Checks the arguments (see tf.estimator.BaselineClassifier).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.classifier_head(n_classes, weight_column, label_vocabulary,
                                    loss_reduction, flavors.V2.binary_head_class)
        super().__init__(flavors.V2, head, model_dir, weight_column, optimizer, config)


class BaselineRegressor(_BaselineEstimator):
    """Predicts the label mean (tf.estimator.BaselineRegressor's V2 signature)."""

    def __init__(self, model_dir: str | os.PathLike[str] | None = None,
                 label_dimension: int = 1, weight_column: str | Any | None = None,
                 optimizer: str | Any = "Ftrl", config: RunConfig | None = None,
                 loss_reduction: str = flavors.V2.loss_reduction) -> None:
        """Checks the arguments (see tf.estimator.BaselineRegressor).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(flavors.V2, head, model_dir, weight_column, optimizer, config)


class BaselineEstimator(_BaselineEstimator):
    """Learns only a bias per logit, with a user-given head (tf.estimator's)."""

    def __init__(self, head: Head, model_dir: str | os.PathLike[str] | None = None,
                 optimizer: str | Any = "Ftrl", config: RunConfig | None = None) -> None:
        """Checks the arguments (see tf.estimator.BaselineEstimator); the weight
        column is the head's.

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.check_head(head)
        super().__init__(flavors.V2, head, model_dir, head.weight_column, optimizer,
                         config)


# The v1 flavor (tf.compat.v1.estimator's classes; see `flavors`) -------------------

@flavors.v1_class
class BaselineClassifierV1(_BaselineEstimator):
    """Predicts the label prior (tf.compat.v1.estimator.BaselineClassifier)."""

    def __init__(self, model_dir: str | os.PathLike[str] | None = None, n_classes: int = 2,
                 weight_column: str | Any | None = None,
                 label_vocabulary: Sequence[str] | None = None,
                 optimizer: str | Any = "Ftrl", config: RunConfig | None = None,
                 loss_reduction: str = flavors.V1.loss_reduction) -> None:
        """Checks the arguments (see tf.compat.v1.estimator.BaselineClassifier).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.classifier_head(n_classes, weight_column, label_vocabulary,
                                    loss_reduction, flavors.V1.binary_head_class)
        super().__init__(flavors.V1, head, model_dir, weight_column, optimizer, config)


@flavors.v1_class
class BaselineRegressorV1(_BaselineEstimator):
    """Predicts the label mean (tf.compat.v1.estimator.BaselineRegressor)."""

    def __init__(self, model_dir: str | os.PathLike[str] | None = None,
                 label_dimension: int = 1, weight_column: str | Any | None = None,
                 optimizer: str | Any = "Ftrl", config: RunConfig | None = None,
                 loss_reduction: str = flavors.V1.loss_reduction) -> None:
        """Checks the arguments (see tf.compat.v1.estimator.BaselineRegressor).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(flavors.V1, head, model_dir, weight_column, optimizer, config)


@flavors.v1_class
class BaselineEstimatorV1(_BaselineEstimator):
    """Learns a bias per logit with a given head (tf.compat.v1.estimator's)."""

    def __init__(self, head: Head, model_dir: str | os.PathLike[str] | None = None,
                 optimizer: str | Any = "Ftrl", config: RunConfig | None = None) -> None:
        """Checks the arguments (see tf.compat.v1.estimator.BaselineEstimator).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.check_head(head)
        super().__init__(flavors.V1, head, model_dir, head.weight_column, optimizer,
                         config)
