"""Canned estimators: tf.estimator 2.15's Baseline, Linear, DNN and DNNLinearCombined.

Same constructor signatures and defaults as tf.estimator 2.15's V2 classes, and the
same checkpoint variable names, shapes and dtypes (optimizer slots included), so a
model_dir written by either library restores in the other. Layers are built from
tf.compat.v1 variables and ops: no tf.layers, no Keras. Each family module also
declares the v1 classes (`canned.v1` names them; see `canned.flavors`).
"""

# The names are estimator_lite's list of the canned estimators (its TF2 classes).
from estimator_lite import _CANNED_ESTIMATORS
from estimator_lite.canned.baseline import (  # noqa: F401 - exported by __all__
    BaselineClassifier,
    BaselineEstimator,
    BaselineRegressor,
)
from estimator_lite.canned.dnn import (  # noqa: F401 - exported by __all__
    DNNClassifier,
    DNNEstimator,
    DNNRegressor,
)
from estimator_lite.canned.dnn_linear_combined import (  # noqa: F401 - exported by __all__
    DNNLinearCombinedClassifier,
    DNNLinearCombinedEstimator,
    DNNLinearCombinedRegressor,
)
from estimator_lite.canned.linear import (  # noqa: F401 - exported by __all__
    LinearClassifier,
    LinearEstimator,
    LinearRegressor,
)

__all__ = list(_CANNED_ESTIMATORS)
