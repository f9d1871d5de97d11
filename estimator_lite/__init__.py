"""estimator_lite: Estimator-style training orchestration for TF graph mode.

A drop-in for the parts of TF Estimator that TensorFlow 2.16 removed:
``import estimator_lite as tf_estimator``.

Layers, top to bottom (each imports only from the layers below it;
tests/layering_test.py checks the arrows):
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
- `_engine/`: how it runs (train session and its periodic actions, eval and
  predict loops, hook protocol, timer, roles, model_dir names, event files,
  completion markers, argument checks); imports no public module;
- opt-in, for code the user cannot edit: `install` (`install_as_tf_estimator()`
  makes tf.estimator's module paths resolve here, `_alias_table` says which to
  which) and the runner `python -m estimator_lite.run`; never done at import;
- `_tf`: the one TensorFlow import; `_keras`: the one place that recognises Keras
  objects and reads Keras' and TensorFlow's private attributes.
"""

import importlib

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
