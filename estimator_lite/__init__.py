"""estimator_lite: Estimator-style training orchestration for TF graph mode.

A drop-in for the parts of TF Estimator that TensorFlow 2.16 removed:
``import estimator_lite as tf_estimator``.

Layers, top to bottom (each imports only from the layers below it;
tests/repository/layering_test.py checks the arrows):
- the tf.estimator API, under tf.estimator's own module names: `estimator`,
  `run_config`, `training`, `early_stopping`, `experimental`, `hooks`,
  `extenders`, `parsing_utils`, `inputs/`, `head/`, `optimizers/`, `canned/`
  (built on the heads and optimizers, which never import it), `tpu/` (TPUEstimator
  on CPU/GPU), `compat/v1/` (TF 1.x's tf.estimator), `keras_estimator`
  (model_to_estimator); tools `launch` and `inspect`; `predictor` (in-process
  serving of a SavedModel or an Estimator, which tf.contrib.predictor was);
- `techniques/`: what tf.estimator lacked (towers, gradient accumulation, model
  averaging, LR plateau, multi-task, periodic export, fresh start); built on the
  spec modules below, never on `estimator` or `training`;
- the spec modules, the vocabulary of model_fns and exporters: `model_fn`
  (EstimatorSpec, ModeKeys), `export/` (receivers, outputs, SavedModel writing),
  `exporter`; they import only each other, `_engine`, `_keras` and `_tf`;
- `_engine/`: how it runs (train session, its parts and its periodic actions,
  eval and predict loops, hook protocol, timer, roles and a task's topology,
  model_dir names, event files, completion markers, argument checks); imports no
  public module;
- opt-in, for code the user cannot edit: `install` (`install_as_tf_estimator()`
  makes tf.estimator's module paths resolve here) and the runner
  `python -m estimator_lite.run`; never done at import. `_compat/` is what those
  paths serve: `alias_table` says which path to which modules, and the private
  names tf.estimator's tests and libraries reach that no working module needs live
  there (working modules never import it);
- `_tf`: the one TensorFlow import; `_keras`: the one place that recognises Keras
  objects and reads Keras' and TensorFlow's private attributes.
"""

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

# The public names: each is listed once, below, with the module that defines it;
# `__all__`, `canned.__all__`, `canned.v1` and `compat.v1`'s lists are derived from
# these tables (TensorFlow-free, so `import estimator_lite` and tools such as
# `python -m estimator_lite.launch --help` do not import TensorFlow until something
# needs it: names are loaded on first use, PEP 562).

# The canned estimators: class name -> its family module under `canned/`, which
# declares the TF2 class and its v1 flavor `<Name>V1` (what compat.v1 serves).
_CANNED_ESTIMATORS = {
    "BaselineClassifier": "baseline", "BaselineEstimator": "baseline",
    "BaselineRegressor": "baseline",
    "DNNClassifier": "dnn", "DNNEstimator": "dnn", "DNNRegressor": "dnn",
    "DNNLinearCombinedClassifier": "dnn_linear_combined",
    "DNNLinearCombinedEstimator": "dnn_linear_combined",
    "DNNLinearCombinedRegressor": "dnn_linear_combined",
    "LinearClassifier": "linear", "LinearEstimator": "linear",
    "LinearRegressor": "linear",
}

# Names tf.compat.v1.estimator has too (compat.v1 serves these same objects; its
# `experimental` and `tpu` are its own): defining module -> names.
_SHARED_MODULE_NAMES = {
    "estimator_lite.canned": tuple(_CANNED_ESTIMATORS),
    "estimator_lite._engine.train_session": (
        "NanLossDuringTrainingError",
    ),
    "estimator_lite.estimator": (
        "Estimator", "VocabInfo", "WarmStartSettings",
    ),
    "estimator_lite.experimental": (
        "experimental",
    ),
    "estimator_lite.export": (
        "export",
    ),
    "estimator_lite.exporter": (
        "BestExporter", "Exporter", "FinalExporter", "LatestExporter",
    ),
    "estimator_lite.extenders": (
        "add_metrics",
    ),
    "estimator_lite.head": (
        "BinaryClassHead", "Head", "LogisticRegressionHead", "MultiClassHead",
        "MultiHead", "MultiLabelHead", "PoissonRegressionHead", "RegressionHead",
    ),
    "estimator_lite.hooks": (
        "CheckpointSaverHook", "CheckpointSaverListener", "FeedFnHook", "FinalOpsHook",
        "GlobalStepWaiterHook", "LoggingTensorHook", "NanTensorHook", "ProfilerHook",
        "SecondOrStepTimer", "SessionRunArgs", "SessionRunContext", "SessionRunHook",
        "SessionRunValues", "StepCounterHook", "StopAtStepHook", "SummarySaverHook",
    ),
    "estimator_lite.inputs": (
        "inputs",
    ),
    "estimator_lite.model_fn": (
        "EstimatorSpec", "ModeKeys",
    ),
    "estimator_lite.parsing_utils": (
        "classifier_parse_example_spec", "regressor_parse_example_spec",
    ),
    "estimator_lite.run_config": (
        "RunConfig",
    ),
    "estimator_lite.tpu": (
        "tpu",
    ),
    "estimator_lite.training": (
        "EvalSpec", "TrainSpec", "train_and_evaluate",
    ),
}

# Names only the top level has: tf.estimator's TF2-only names, the techniques and
# tools tf.estimator never had.
_OWN_MODULE_NAMES = {
    "estimator_lite._engine.event_files": (
        "read_eval_metrics",
    ),
    "estimator_lite.early_stopping": (
        "make_early_stopping_hook", "stop_if_higher_hook", "stop_if_lower_hook",
        "stop_if_no_decrease_hook", "stop_if_no_increase_hook",
    ),
    "estimator_lite.keras_estimator": (
        "model_to_estimator",
    ),
    "estimator_lite.install": (
        "install_as_tf_estimator", "uninstall_as_tf_estimator",
    ),
    "estimator_lite.predictor": (
        "predictor",
    ),
    "estimator_lite.run_config": (
        "TaskType",
    ),
    "estimator_lite.techniques.export_listener": (
        "ExportListener",
    ),
    "estimator_lite.techniques.fresh_start": (
        "fresh_start",
    ),
    "estimator_lite.techniques.gradient_accumulation": (
        "GradientAccumulationOptimizer", "clip_gradients",
    ),
    "estimator_lite.techniques.lr_plateau": (
        "ReduceLearningRateOnPlateau",
    ),
    "estimator_lite.techniques.model_average": (
        "ModelAverageCustomGetter", "ModelAverageOptimizer",
    ),
    "estimator_lite.techniques.multi_task": (
        "Task", "multi_task_spec",
    ),
    "estimator_lite.techniques.towers": (
        "TowerOptimizer", "replicate_model_fn",
    ),
}
_LAZY = {name: module for table in (_SHARED_MODULE_NAMES, _OWN_MODULE_NAMES)
         for module, names in table.items() for name in names}

if TYPE_CHECKING:
    # What type checkers see of the names loaded on first use: the same names
    # from the same modules (tests/repository/typing_test.py checks both lists
    # agree).
    from estimator_lite import experimental as experimental
    from estimator_lite import export as export
    from estimator_lite import inputs as inputs
    from estimator_lite import predictor as predictor
    from estimator_lite import tpu as tpu
    from estimator_lite._engine.event_files import read_eval_metrics as read_eval_metrics
    from estimator_lite._engine.train_session import (
        NanLossDuringTrainingError as NanLossDuringTrainingError,
    )
    from estimator_lite.canned.baseline import BaselineClassifier as BaselineClassifier
    from estimator_lite.canned.baseline import BaselineEstimator as BaselineEstimator
    from estimator_lite.canned.baseline import BaselineRegressor as BaselineRegressor
    from estimator_lite.canned.dnn import DNNClassifier as DNNClassifier
    from estimator_lite.canned.dnn import DNNEstimator as DNNEstimator
    from estimator_lite.canned.dnn import DNNRegressor as DNNRegressor
    from estimator_lite.canned.dnn_linear_combined import (
        DNNLinearCombinedClassifier as DNNLinearCombinedClassifier,
    )
    from estimator_lite.canned.dnn_linear_combined import (
        DNNLinearCombinedEstimator as DNNLinearCombinedEstimator,
    )
    from estimator_lite.canned.dnn_linear_combined import (
        DNNLinearCombinedRegressor as DNNLinearCombinedRegressor,
    )
    from estimator_lite.canned.linear import LinearClassifier as LinearClassifier
    from estimator_lite.canned.linear import LinearEstimator as LinearEstimator
    from estimator_lite.canned.linear import LinearRegressor as LinearRegressor
    from estimator_lite.early_stopping import (
        make_early_stopping_hook as make_early_stopping_hook,
    )
    from estimator_lite.early_stopping import stop_if_higher_hook as stop_if_higher_hook
    from estimator_lite.early_stopping import stop_if_lower_hook as stop_if_lower_hook
    from estimator_lite.early_stopping import (
        stop_if_no_decrease_hook as stop_if_no_decrease_hook,
    )
    from estimator_lite.early_stopping import (
        stop_if_no_increase_hook as stop_if_no_increase_hook,
    )
    from estimator_lite.estimator import Estimator as Estimator
    from estimator_lite.estimator import VocabInfo as VocabInfo
    from estimator_lite.estimator import WarmStartSettings as WarmStartSettings
    from estimator_lite.exporter import BestExporter as BestExporter
    from estimator_lite.exporter import Exporter as Exporter
    from estimator_lite.exporter import FinalExporter as FinalExporter
    from estimator_lite.exporter import LatestExporter as LatestExporter
    from estimator_lite.extenders import add_metrics as add_metrics
    from estimator_lite.head import BinaryClassHead as BinaryClassHead
    from estimator_lite.head import Head as Head
    from estimator_lite.head import LogisticRegressionHead as LogisticRegressionHead
    from estimator_lite.head import MultiClassHead as MultiClassHead
    from estimator_lite.head import MultiHead as MultiHead
    from estimator_lite.head import MultiLabelHead as MultiLabelHead
    from estimator_lite.head import PoissonRegressionHead as PoissonRegressionHead
    from estimator_lite.head import RegressionHead as RegressionHead
    from estimator_lite.hooks import CheckpointSaverHook as CheckpointSaverHook
    from estimator_lite.hooks import CheckpointSaverListener as CheckpointSaverListener
    from estimator_lite.hooks import FeedFnHook as FeedFnHook
    from estimator_lite.hooks import FinalOpsHook as FinalOpsHook
    from estimator_lite.hooks import GlobalStepWaiterHook as GlobalStepWaiterHook
    from estimator_lite.hooks import LoggingTensorHook as LoggingTensorHook
    from estimator_lite.hooks import NanTensorHook as NanTensorHook
    from estimator_lite.hooks import ProfilerHook as ProfilerHook
    from estimator_lite.hooks import SecondOrStepTimer as SecondOrStepTimer
    from estimator_lite.hooks import SessionRunArgs as SessionRunArgs
    from estimator_lite.hooks import SessionRunContext as SessionRunContext
    from estimator_lite.hooks import SessionRunHook as SessionRunHook
    from estimator_lite.hooks import SessionRunValues as SessionRunValues
    from estimator_lite.hooks import StepCounterHook as StepCounterHook
    from estimator_lite.hooks import StopAtStepHook as StopAtStepHook
    from estimator_lite.hooks import SummarySaverHook as SummarySaverHook
    from estimator_lite.install import install_as_tf_estimator as install_as_tf_estimator
    from estimator_lite.install import (
        uninstall_as_tf_estimator as uninstall_as_tf_estimator,
    )
    from estimator_lite.keras_estimator import model_to_estimator as model_to_estimator
    from estimator_lite.model_fn import EstimatorSpec as EstimatorSpec
    from estimator_lite.model_fn import ModeKeys as ModeKeys
    from estimator_lite.parsing_utils import (
        classifier_parse_example_spec as classifier_parse_example_spec,
    )
    from estimator_lite.parsing_utils import (
        regressor_parse_example_spec as regressor_parse_example_spec,
    )
    from estimator_lite.run_config import RunConfig as RunConfig
    from estimator_lite.run_config import TaskType as TaskType
    from estimator_lite.techniques.export_listener import ExportListener as ExportListener
    from estimator_lite.techniques.fresh_start import fresh_start as fresh_start
    from estimator_lite.techniques.gradient_accumulation import (
        GradientAccumulationOptimizer as GradientAccumulationOptimizer,
    )
    from estimator_lite.techniques.gradient_accumulation import (
        clip_gradients as clip_gradients,
    )
    from estimator_lite.techniques.lr_plateau import (
        ReduceLearningRateOnPlateau as ReduceLearningRateOnPlateau,
    )
    from estimator_lite.techniques.model_average import (
        ModelAverageCustomGetter as ModelAverageCustomGetter,
    )
    from estimator_lite.techniques.model_average import (
        ModelAverageOptimizer as ModelAverageOptimizer,
    )
    from estimator_lite.techniques.multi_task import Task as Task
    from estimator_lite.techniques.multi_task import multi_task_spec as multi_task_spec
    from estimator_lite.techniques.towers import TowerOptimizer as TowerOptimizer
    from estimator_lite.techniques.towers import replicate_model_fn as replicate_model_fn
    from estimator_lite.training import EvalSpec as EvalSpec
    from estimator_lite.training import TrainSpec as TrainSpec
    from estimator_lite.training import train_and_evaluate as train_and_evaluate


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'estimator_lite' has no attribute {name!r}")
    loaded = importlib.import_module(module)
    value = loaded if module == f"estimator_lite.{name}" else getattr(loaded, name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = list(_LAZY) + ["__version__"]
