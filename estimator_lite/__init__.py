"""estimator_lite: Estimator-style training orchestration for TF graph mode.

A drop-in for the parts of TF Estimator that TensorFlow 2.16 removed:
``import estimator_lite as tf_estimator``.
"""

from estimator_lite import export
from estimator_lite.estimator import Estimator, WarmStartSettings
from estimator_lite.eval_metrics import read_eval_metrics
from estimator_lite.exporter import BestExporter, Exporter, FinalExporter, LatestExporter
from estimator_lite.model_fn import EstimatorSpec, ModeKeys
from estimator_lite.replicate_model_fn import TowerOptimizer, replicate_model_fn
from estimator_lite.run_config import RunConfig, TaskType
from estimator_lite.train_session import NanLossDuringTrainingError
from estimator_lite.training import EvalSpec, TrainSpec, train_and_evaluate

__version__ = "0.1.0"

__all__ = [
    "BestExporter",
    "Estimator",
    "EstimatorSpec",
    "EvalSpec",
    "Exporter",
    "FinalExporter",
    "LatestExporter",
    "ModeKeys",
    "NanLossDuringTrainingError",
    "RunConfig",
    "TaskType",
    "TowerOptimizer",
    "TrainSpec",
    "WarmStartSettings",
    "export",
    "read_eval_metrics",
    "replicate_model_fn",
    "train_and_evaluate",
    "__version__",
]
