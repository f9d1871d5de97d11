"""The public surface is pinned: a name added or dropped is a deliberate change here."""

import importlib
import subprocess
import sys

import pytest

import estimator_lite as el

TOP_LEVEL = [
    "BaselineClassifier", "BaselineEstimator", "BaselineRegressor", "DNNClassifier",
    "DNNEstimator", "DNNLinearCombinedClassifier", "DNNLinearCombinedEstimator",
    "DNNLinearCombinedRegressor", "DNNRegressor", "LinearClassifier", "LinearEstimator",
    "LinearRegressor",
    "BinaryClassHead", "CheckpointSaverHook", "CheckpointSaverListener", "FeedFnHook",
    "FinalOpsHook", "GlobalStepWaiterHook", "Head", "LoggingTensorHook",
    "LogisticRegressionHead", "MultiClassHead", "MultiHead", "MultiLabelHead",
    "NanTensorHook", "PoissonRegressionHead", "ProfilerHook", "RegressionHead",
    "SecondOrStepTimer", "SessionRunArgs", "SessionRunContext", "SessionRunHook",
    "SessionRunValues", "StepCounterHook", "StopAtStepHook", "SummarySaverHook",
    "VocabInfo", "add_metrics", "classifier_parse_example_spec", "inputs",
    "regressor_parse_example_spec",
    "BestExporter", "Estimator", "EstimatorSpec", "EvalSpec", "ExportListener",
    "Exporter", "FinalExporter", "GradientAccumulationOptimizer", "LatestExporter",
    "ModeKeys", "ModelAverageCustomGetter", "ModelAverageOptimizer",
    "NanLossDuringTrainingError", "ReduceLearningRateOnPlateau", "RunConfig", "Task",
    "TaskType", "TowerOptimizer", "TrainSpec", "WarmStartSettings", "__version__",
    "clip_gradients", "experimental", "export", "fresh_start",
    "make_early_stopping_hook", "model_to_estimator", "multi_task_spec",
    "predictor", "read_eval_metrics",
    "install_as_tf_estimator", "uninstall_as_tf_estimator",
    "replicate_model_fn", "stop_if_higher_hook", "stop_if_lower_hook",
    "stop_if_no_decrease_hook", "stop_if_no_increase_hook", "tpu", "train_and_evaluate",
]
# Exactly tf.estimator.export's names.
EXPORT = [
    "ClassificationOutput", "EvalOutput", "ExportOutput", "PredictOutput",
    "RegressionOutput",
    "ServingInputReceiver", "TensorServingInputReceiver",
    "build_parsing_serving_input_receiver_fn", "build_raw_serving_input_receiver_fn",
]
EXPERIMENTAL = [
    "InMemoryEvaluatorHook", "LinearSDCA", "RNNClassifier", "RNNEstimator",
    "make_stop_at_checkpoint_step_hook", "call_logit_fn",
    "build_raw_supervised_input_receiver_fn", "make_early_stopping_hook",
    "stop_if_higher_hook", "stop_if_lower_hook",
    "stop_if_no_decrease_hook", "stop_if_no_increase_hook",
]
# The optimizer mapping heads, canned estimators and wrappers share.
CANNED_OPTIMIZERS = [
    "Adagrad", "Adam", "Ftrl", "GraphOptimizer", "OPTIMIZER_NAMES", "RMSprop", "SGD",
    "get_optimizer_instance_v2", "graph_optimizer", "optimizer_factory",
]
# Exactly tf.compat.v1.estimator's names, less docs/differences.md's "Deliberately
# absent from compat.v1" table.
COMPAT_V1 = sorted(set(TOP_LEVEL) & {
    "BaselineClassifier", "BaselineEstimator", "BaselineRegressor", "BestExporter",
    "BinaryClassHead", "CheckpointSaverHook", "CheckpointSaverListener", "DNNClassifier",
    "DNNEstimator", "DNNLinearCombinedClassifier", "DNNLinearCombinedEstimator",
    "DNNLinearCombinedRegressor", "DNNRegressor", "Estimator", "EstimatorSpec",
    "EvalSpec", "Exporter", "FeedFnHook", "FinalExporter", "FinalOpsHook",
    "GlobalStepWaiterHook", "Head", "LatestExporter", "LinearClassifier",
    "LinearEstimator", "LinearRegressor", "LoggingTensorHook", "LogisticRegressionHead",
    "ModeKeys", "MultiClassHead", "MultiHead", "MultiLabelHead",
    "NanLossDuringTrainingError", "NanTensorHook", "PoissonRegressionHead",
    "ProfilerHook", "RegressionHead", "RunConfig", "SecondOrStepTimer", "SessionRunArgs",
    "SessionRunContext", "SessionRunHook", "SessionRunValues", "StepCounterHook",
    "StopAtStepHook", "SummarySaverHook", "TrainSpec", "VocabInfo", "WarmStartSettings",
    "add_metrics", "classifier_parse_example_spec", "experimental", "export", "inputs",
    "regressor_parse_example_spec", "train_and_evaluate"}) + ["tpu"]
# v1's experimental has no RNN estimators (they came with TF 2's canned API).
COMPAT_V1_EXPERIMENTAL = [n for n in EXPERIMENTAL if not n.startswith("RNN")] + [
    "KMeans", "dnn_logit_fn_builder", "linear_logit_fn_builder"]
# Module paths users import (tf.estimator's own module names).
PUBLIC_MODULES = [
    "estimator_lite.estimator", "estimator_lite.model_fn", "estimator_lite.run_config",
    "estimator_lite.training", "estimator_lite.exporter", "estimator_lite.export",
    "estimator_lite.early_stopping", "estimator_lite.experimental",
    "estimator_lite.launch", "estimator_lite.inputs", "estimator_lite.hooks",
    "estimator_lite.extenders", "estimator_lite.head", "estimator_lite.canned",
    "estimator_lite.tpu", "estimator_lite.keras_estimator",
    "estimator_lite.install", "estimator_lite.run", "estimator_lite.predictor",
    "estimator_lite.compat", "estimator_lite.compat.v1",
    "estimator_lite.compat.v1.experimental",
]


@pytest.mark.parametrize("module,expected", [
    ("estimator_lite", TOP_LEVEL), ("estimator_lite.export", EXPORT),
    ("estimator_lite.experimental", EXPERIMENTAL),
    ("estimator_lite.canned.optimizers", CANNED_OPTIMIZERS),
    ("estimator_lite.compat", ["v1"]), ("estimator_lite.compat.v1", COMPAT_V1),
    ("estimator_lite.compat.v1.experimental", COMPAT_V1_EXPERIMENTAL)])
def test_all_is_pinned_and_resolves(module, expected):
    mod = importlib.import_module(module)
    assert sorted(mod.__all__) == sorted(expected)
    missing = [name for name in mod.__all__ if not hasattr(mod, name)]
    assert missing == []


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_public_module_paths_import(module):
    assert importlib.import_module(module).__all__


def test_training_seams_are_module_attributes():
    training = importlib.import_module("estimator_lite.training")
    assert hasattr(training.time, "time") and hasattr(training.time, "sleep")
    assert hasattr(training.server_lib, "Server")


def test_top_level_names_are_the_implementations():
    assert el.Estimator is importlib.import_module("estimator_lite.estimator").Estimator
    towers = importlib.import_module("estimator_lite.techniques.towers")
    assert el.replicate_model_fn is towers.replicate_model_fn


def test_tpu_is_an_attribute_right_after_import_without_importing_tensorflow():
    # README lists estimator_lite.tpu as public: `import estimator_lite` must give it
    # (loaded on first use), while the import itself stays TensorFlow-free.
    code = ("import sys\n"
            "import estimator_lite\n"
            "assert 'tensorflow' not in sys.modules\n"
            "print(estimator_lite.tpu.TPUEstimator.__name__,\n"
            "      'tpu' in dir(estimator_lite))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["TPUEstimator", "True"]
    assert el.tpu is importlib.import_module("estimator_lite.tpu")


def test_each_public_name_is_listed_once_and_every_list_derives_from_that():
    # A canned estimator (or an exporter, a hook) is added to one table of
    # estimator_lite/__init__.py; `__all__`, canned's, canned.v1's and compat.v1's
    # lists follow from it.
    tables = [el._SHARED_MODULE_NAMES, el._OWN_MODULE_NAMES]
    listed = [name for table in tables for names in table.values() for name in names]
    assert len(listed) == len(set(listed))
    assert sorted(el.__all__) == sorted(listed + ["__version__"])
    canned = importlib.import_module("estimator_lite.canned")
    canned_v1 = importlib.import_module("estimator_lite.canned.v1")
    compat_v1 = importlib.import_module("estimator_lite.compat.v1")
    assert canned.__all__ == list(el._CANNED_ESTIMATORS)
    for name, family in el._CANNED_ESTIMATORS.items():
        module = importlib.import_module(f"estimator_lite.canned.{family}")
        assert getattr(el, name) is getattr(canned, name) is getattr(module, name)
        assert (getattr(compat_v1, name) is getattr(canned_v1, name)
                is getattr(module, f"{name}V1"))
    shared = [name for names in el._SHARED_MODULE_NAMES.values() for name in names]
    assert sorted(compat_v1.__all__) == sorted(shared)
