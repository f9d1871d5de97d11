"""estimator_lite: Estimator-style training orchestration for TF graph mode.

A drop-in for the parts of TF Estimator that TensorFlow 2.16 removed:
``import estimator_lite as tf_estimator``.

Layers, top to bottom (each imports only from the layers below it):
- the tf.estimator API, under tf.estimator's own module names: `estimator`,
  `model_fn`, `run_config`, `training`, `exporter`, `early_stopping`,
  `experimental`, `export/` (receivers, outputs, SavedModel writing), `launch`;
- `techniques/`: what tf.estimator lacked (towers, gradient accumulation, model
  averaging, LR plateau, multi-task, periodic export, fresh start); never imports
  `estimator` or `training`;
- `_engine/`: how it runs (train session, hook protocol, timer, model_dir names,
  event files, completion markers, argument checks); imports no public module;
- `_tf`: the one TensorFlow import.
"""

from estimator_lite import experimental, export
from estimator_lite._engine.event_files import read_eval_metrics
from estimator_lite._engine.train_session import NanLossDuringTrainingError
from estimator_lite.early_stopping import (
    make_early_stopping_hook,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
from estimator_lite.estimator import Estimator, WarmStartSettings
from estimator_lite.exporter import BestExporter, Exporter, FinalExporter, LatestExporter
from estimator_lite.model_fn import EstimatorSpec, ModeKeys
from estimator_lite.run_config import RunConfig, TaskType
from estimator_lite.techniques.export_listener import ExportListener
from estimator_lite.techniques.fresh_start import fresh_start
from estimator_lite.techniques.gradient_accumulation import (
    GradientAccumulationOptimizer,
    clip_gradients,
)
from estimator_lite.techniques.lr_plateau import ReduceLearningRateOnPlateau
from estimator_lite.techniques.model_average import (
    ModelAverageCustomGetter,
    ModelAverageOptimizer,
)
from estimator_lite.techniques.multi_task import Task, multi_task_spec
from estimator_lite.techniques.towers import TowerOptimizer, replicate_model_fn
from estimator_lite.training import EvalSpec, TrainSpec, train_and_evaluate

__version__ = "0.1.0"

__all__ = [
    "BestExporter",
    "Estimator",
    "EstimatorSpec",
    "EvalSpec",
    "ExportListener",
    "Exporter",
    "FinalExporter",
    "GradientAccumulationOptimizer",
    "LatestExporter",
    "ModeKeys",
    "ModelAverageCustomGetter",
    "ModelAverageOptimizer",
    "NanLossDuringTrainingError",
    "ReduceLearningRateOnPlateau",
    "RunConfig",
    "Task",
    "TaskType",
    "TowerOptimizer",
    "TrainSpec",
    "WarmStartSettings",
    "clip_gradients",
    "experimental",
    "export",
    "fresh_start",
    "make_early_stopping_hook",
    "multi_task_spec",
    "read_eval_metrics",
    "replicate_model_fn",
    "stop_if_higher_hook",
    "stop_if_lower_hook",
    "stop_if_no_decrease_hook",
    "stop_if_no_increase_hook",
    "train_and_evaluate",
    "__version__",
]
