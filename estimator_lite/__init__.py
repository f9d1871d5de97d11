"""estimator_lite: Estimator-style training orchestration for TF graph mode.

A drop-in for the parts of TF Estimator that TensorFlow 2.16 removed:
``import estimator_lite as tf_estimator``.
"""

from estimator_lite import export
from estimator_lite.estimator import Estimator, WarmStartSettings
from estimator_lite.model_fn import EstimatorSpec, ModeKeys
from estimator_lite.run_config import RunConfig, TaskType
from estimator_lite.train_session import NanLossDuringTrainingError

__version__ = "0.1.0"

__all__ = [
    "Estimator",
    "EstimatorSpec",
    "ModeKeys",
    "NanLossDuringTrainingError",
    "RunConfig",
    "TaskType",
    "WarmStartSettings",
    "export",
    "__version__",
]
