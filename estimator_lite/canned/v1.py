"""The v1 canned estimators' names: TF 1.x's tf.estimator, TF 2.x's tf.compat.v1.estimator.

The classes are declared in their family modules (`dnn`, `linear`, `baseline`,
`dnn_linear_combined`) next to the TF2 ones, over the same implementation, with
the v1 `flavors.Flavor` (SUM loss reduction, ``tf.compat.v1.train`` optimizers,
v1's learning rates, partitioned variables, ``input_layer_partitioner`` /
``partitioner``); this module names them as the v1 API does (`compat.v1` serves
them from here), with v1's defaults and logit_fn builders.
"""

from estimator_lite.canned.baseline import BaselineClassifierV1 as BaselineClassifier
from estimator_lite.canned.baseline import BaselineEstimatorV1 as BaselineEstimator
from estimator_lite.canned.baseline import BaselineRegressorV1 as BaselineRegressor
from estimator_lite.canned.dnn import DNNClassifierV1 as DNNClassifier
from estimator_lite.canned.dnn import DNNEstimatorV1 as DNNEstimator
from estimator_lite.canned.dnn import DNNRegressorV1 as DNNRegressor
from estimator_lite.canned.dnn import dnn_logit_fn_builder
from estimator_lite.canned.dnn_linear_combined import (
    DNNLinearCombinedClassifierV1 as DNNLinearCombinedClassifier,
)
from estimator_lite.canned.dnn_linear_combined import (
    DNNLinearCombinedEstimatorV1 as DNNLinearCombinedEstimator,
)
from estimator_lite.canned.dnn_linear_combined import (
    DNNLinearCombinedRegressorV1 as DNNLinearCombinedRegressor,
)
from estimator_lite.canned.flavors import V1
from estimator_lite.canned.linear import LinearClassifierV1 as LinearClassifier
from estimator_lite.canned.linear import LinearEstimatorV1 as LinearEstimator
from estimator_lite.canned.linear import LinearRegressorV1 as LinearRegressor
from estimator_lite.canned.linear import (
    v1_linear_logit_fn_builder as linear_logit_fn_builder,
)

__all__ = [
    "BaselineClassifier", "BaselineEstimator", "BaselineRegressor", "DNNClassifier",
    "DNNEstimator", "DNNLinearCombinedClassifier", "DNNLinearCombinedEstimator",
    "DNNLinearCombinedRegressor", "DNNRegressor", "LinearClassifier",
    "LinearEstimator", "LinearRegressor", "dnn_logit_fn_builder",
    "linear_logit_fn_builder",
]

SUM = V1.loss_reduction  # tf.compat.v1.losses.Reduction.SUM, v1's default.
DNN_LEARNING_RATE = V1.dnn_learning_rate
LINEAR_LEARNING_RATE = V1.linear_learning_rate
BASELINE_LEARNING_RATE = V1.baseline_learning_rate
COMBINED_DNN_LEARNING_RATE = V1.combined_dnn_learning_rate
COMBINED_LINEAR_LEARNING_RATE = V1.combined_linear_learning_rate(1)
# v1's default linear learning rate in the combined model, for a number of columns.
combined_linear_learning_rate = V1.combined_linear_learning_rate
