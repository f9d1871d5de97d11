"""Canned estimators: tf.estimator 2.15's Baseline, Linear, DNN and DNNLinearCombined.

Same constructor signatures and defaults as tf.estimator 2.15's V2 classes, and the
same checkpoint variable names, shapes and dtypes (optimizer slots included), so a
model_dir written by either library restores in the other. Layers are built from
tf.compat.v1 variables and ops: no tf.layers, no Keras.
"""

from estimator_lite.canned.baseline import (
    BaselineClassifier,
    BaselineEstimator,
    BaselineRegressor,
)
from estimator_lite.canned.dnn import DNNClassifier, DNNEstimator, DNNRegressor
from estimator_lite.canned.dnn_linear_combined import (
    DNNLinearCombinedClassifier,
    DNNLinearCombinedEstimator,
    DNNLinearCombinedRegressor,
)
from estimator_lite.canned.linear import LinearClassifier, LinearEstimator, LinearRegressor

__all__ = [
    "BaselineClassifier",
    "BaselineEstimator",
    "BaselineRegressor",
    "DNNClassifier",
    "DNNEstimator",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedEstimator",
    "DNNLinearCombinedRegressor",
    "DNNRegressor",
    "LinearClassifier",
    "LinearEstimator",
    "LinearRegressor",
]
