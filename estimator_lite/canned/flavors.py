"""The two flavors of the canned estimators, as data.

Each canned family module (`dnn`, `linear`, `dnn_linear_combined`, `baseline`)
declares both flavors over one implementation: the TF2 classes (``tf.estimator``,
e.g. `dnn.DNNClassifier`) and the v1 ones (TF 1.x's ``tf.estimator``, TF 2.x's
``tf.compat.v1.estimator``, e.g. `dnn.DNNClassifierV1`, exported as
``estimator_lite.compat.v1.DNNClassifier`` through `canned.v1`). A class's
`Flavor` says what differs:

* the default ``loss_reduction``: ``'sum_over_batch_size'`` (TF2) or
  ``tf.compat.v1.losses.Reduction.SUM``, ``'weighted_sum'`` (v1): the training
  loss and the ``loss`` metric are then sums over the batch;
* the optimizers: graph versions of the Keras optimizers (TF2) or
  ``tf.compat.v1.train`` ones (v1), and the learning rate of an optimizer given
  by name: DNN 0.05 (v1; TF2 the Keras default), linear 0.2, baseline 0.3, and in
  the combined model 0.001 for the DNN and 0.005 for the linear part (v1:
  ``min(0.005, 1/sqrt(#linear columns))``);
* the 2-class head: v1's reports TF 1.x's trapezoidal AUCs;
* ``partitioned`` (v1): variables are created under v1's partitioners
  (``min_max_variable_partitioner`` over the ps tasks: one ``part_0`` per
  variable without ps), the ``input_layer_partitioner`` (DNN, combined) and
  ``partitioner`` (linear) arguments exist, and each optimizer runs where v1
  ran it (inside the ``dnn`` / ``linear`` variable scope for DNN and linear
  models, at the top for the combined and baseline models), so the checkpoints
  hold v1's names: ``dnn/hiddenlayer_0/kernel/t_0/Adagrad``,
  ``linear/linear_model/x/weights/part_0/Ftrl``, ``baseline/bias/Ftrl``.
"""

import dataclasses
import math
from collections.abc import Callable

from estimator_lite import head as head_lib
from estimator_lite._tf import tf
from estimator_lite.canned import core

__all__ = ["V1", "V2", "Flavor", "check_partitioner", "input_partitioner",
           "layer_partitioner", "v1_class"]

_INPUT_LAYER_MIN_SLICE_BYTES = 64 << 20
_COMBINED_LINEAR_LEARNING_RATE = 0.005


class V1BinaryClassHead(head_lib.BinaryClassHead):
    """The 2-class head of the v1 classifiers: TF 1.x's trapezoidal AUCs and
    accuracy_baseline."""

    _AUC_SUMMATION = "trapezoidal"
    _BASELINE_OF_NO_DATA = None  # v1's max(mean, 1 - mean), 1.0 for no data


def _fixed_linear_rate(num_linear_columns):
    """TF2's linear learning rate in the combined model, whatever the columns."""
    del num_linear_columns
    return _COMBINED_LINEAR_LEARNING_RATE


def _scaled_linear_rate(num_linear_columns):
    """v1's linear learning rate in the combined model: smaller for many columns."""
    return min(_COMBINED_LINEAR_LEARNING_RATE, 1.0 / math.sqrt(num_linear_columns))


@dataclasses.dataclass(frozen=True)
class Flavor:
    """What one flavor of the canned estimators defaults to (see the module doc).

    Attributes:
      name: ``'v2'`` or ``'v1'``.
      loss_reduction: the default ``loss_reduction``.
      optimizer_factory: ``(optimizer, learning_rate, argument) -> () -> optimizer``,
        checking an optimizer argument.
      dnn_learning_rate: the DNN's rate for an optimizer given by name (None: the
        optimizer's own default).
      linear_learning_rate: the linear model's.
      baseline_learning_rate: the baseline's.
      combined_dnn_learning_rate: the combined model's DNN's.
      combined_linear_learning_rate: ``(number of linear columns) -> rate`` of the
        combined model's linear part.
      binary_head_class: the 2-class head of the classifiers.
      partitioned: variables under v1's partitioners, optimizers in v1's scopes.
    """

    name: str
    loss_reduction: str
    optimizer_factory: Callable
    dnn_learning_rate: object  # a float, or None
    linear_learning_rate: float
    baseline_learning_rate: float
    combined_dnn_learning_rate: float
    combined_linear_learning_rate: Callable
    binary_head_class: type
    partitioned: bool


V2 = Flavor(
    name="v2", loss_reduction="sum_over_batch_size",
    optimizer_factory=core.optimizer_factory, dnn_learning_rate=None,
    linear_learning_rate=0.2, baseline_learning_rate=0.3,
    combined_dnn_learning_rate=0.001,
    combined_linear_learning_rate=_fixed_linear_rate,
    binary_head_class=head_lib.BinaryClassHead, partitioned=False)

V1 = Flavor(
    name="v1", loss_reduction="weighted_sum",  # tf.compat.v1.losses.Reduction.SUM
    optimizer_factory=core.optimizer_factory_v1, dnn_learning_rate=0.05,
    linear_learning_rate=0.2, baseline_learning_rate=0.3,
    combined_dnn_learning_rate=0.001,
    combined_linear_learning_rate=_scaled_linear_rate,
    binary_head_class=V1BinaryClassHead, partitioned=True)


def v1_class(cls):
    """Class decorator: a v1 class (``<Name>V1``) reports its API name ``<Name>``.

    `type(estimator).__name__` is what estimator_lite names the estimator by (e.g.
    in the hint of a checkpoint written by the other flavor); the qualified name
    stays ``<Name>V1``, where the family module defines it.
    """
    if not cls.__name__.endswith("V1"):
        raise ValueError(f"a v1 class's name must end with 'V1', got {cls.__name__!r}")
    cls.__name__ = cls.__name__[:-len("V1")]
    return cls


def _num_ps_replicas(config):
    return config.num_ps_replicas if config is not None else 0


def layer_partitioner(config):
    """v1's partitioner of the DNN layers: split over the ps tasks."""
    return tf.min_max_variable_partitioner(max_partitions=_num_ps_replicas(config))


def input_partitioner(partitioner, config):
    """A user's partitioner, or v1's default for input layers and linear models."""
    if partitioner is not None:
        return partitioner
    return tf.min_max_variable_partitioner(max_partitions=_num_ps_replicas(config),
                                           min_slice_size=_INPUT_LAYER_MIN_SLICE_BYTES)


def check_partitioner(partitioner, argument):
    """Checks a v1 partitioner argument: None or a callable.

    Raises:
      TypeError: anything else.
    """
    if partitioner is not None and not callable(partitioner):
        raise TypeError(f"{argument} must be None or a variable partitioner (e.g. "
                        f"tf.compat.v1.min_max_variable_partitioner(...)), got "
                        f"{partitioner!r} of type {type(partitioner).__name__}")
    return partitioner
