"""The v1 canned estimators' names: TF 1.x's tf.estimator, TF 2.x's tf.compat.v1.estimator.

The classes are declared in their family modules (`dnn`, `linear`, `baseline`,
`dnn_linear_combined`) next to the TF2 ones, over the same implementation, with
the v1 `flavors.Flavor` (SUM loss reduction, ``tf.compat.v1.train`` optimizers,
v1's learning rates, partitioned variables, ``input_layer_partitioner`` /
``partitioner``); this module names them as the v1 API does (`compat.v1` serves
them from here), with v1's defaults and logit_fn builders.
"""

import importlib

from estimator_lite import _CANNED_ESTIMATORS
from estimator_lite.canned.dnn import dnn_logit_fn_builder
from estimator_lite.canned.flavors import V1
from estimator_lite.canned.linear import (
    v1_linear_logit_fn_builder as linear_logit_fn_builder,
)


def _load_v1_canned():
    """Binds each canned estimator name here to its family module's v1 class
    (`<Name>V1`, declared with the v1 flavor)."""
    for name, family in _CANNED_ESTIMATORS.items():
        module = importlib.import_module(f"estimator_lite.canned.{family}")
        globals()[name] = getattr(module, f"{name}V1")


_load_v1_canned()
__all__ = list(_CANNED_ESTIMATORS) + ["dnn_logit_fn_builder", "linear_logit_fn_builder"]

SUM = V1.loss_reduction  # tf.compat.v1.losses.Reduction.SUM, v1's default.
DNN_LEARNING_RATE = V1.dnn_learning_rate
LINEAR_LEARNING_RATE = V1.linear_learning_rate
BASELINE_LEARNING_RATE = V1.baseline_learning_rate
COMBINED_DNN_LEARNING_RATE = V1.combined_dnn_learning_rate
COMBINED_LINEAR_LEARNING_RATE = V1.combined_linear_learning_rate(1)
# v1's default linear learning rate in the combined model, for a number of columns.
combined_linear_learning_rate = V1.combined_linear_learning_rate
