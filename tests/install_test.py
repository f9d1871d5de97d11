"""install_as_tf_estimator(): which path resolves to what, lazily, and its undo.

In-process (TensorFlow is already imported by the test session): every test
installs through the `installed` fixture, which uninstalls afterwards and checks
the process is back as it was. The v1 API, TPU and model_to_estimator targets are
checked through the lazy mechanism only (which estimator_lite module a lookup asks
for), so these tests hold whether or not those modules exist in the tree.
"""

import importlib
import json
import logging
import os
import subprocess
import sys
import types

import pytest
import tensorflow as tf  # noqa: F401 -- the module the aliases attach to

import estimator_lite
from estimator_lite import install
from estimator_lite._compat import alias_modules, alias_table
from tests.oracle import TF215_PYTHON, requires_legacy_keras, requires_oracle
from tests.support.stale_estimator import (
    STALE_VERSION,
    install_stale_estimator,
    requires_tf_without_estimator,
)

NOT_PROVIDED = "estimator_lite does not provide"
ROOT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOTS = alias_table.PRIVATE_ROOTS

# (path under a private root, name, the estimator_lite object it must be).
PRIVATE_CONCEPTS = [
    # As in tf.estimator 2.15: a module's `<Name>` is the v1 class, `<Name>V2` the
    # TF2 one (they train differently).
    ("estimator", "Estimator", "estimator_lite.compat.v1:Estimator"),
    ("estimator", "EstimatorV2", "estimator_lite.estimator:Estimator"),
    ("canned.linear", "LinearClassifier", "estimator_lite.compat.v1:LinearClassifier"),
    ("canned.linear", "LinearClassifierV2", "estimator_lite:LinearClassifier"),
    ("canned.baseline", "BaselineEstimatorV2", "estimator_lite:BaselineEstimator"),
    ("canned.dnn_linear_combined", "DNNLinearCombinedRegressor",
     "estimator_lite.compat.v1:DNNLinearCombinedRegressor"),
    ("model_fn", "call_logit_fn", "estimator_lite.experimental:call_logit_fn"),
    ("estimator_lib", "train_and_evaluate", "estimator_lite:train_and_evaluate"),
    ("run_config", "RunConfig", "estimator_lite.run_config:RunConfig"),
    ("run_config", "TaskType", "estimator_lite.run_config:TaskType"),
    ("training", "TrainSpec", "estimator_lite.training:TrainSpec"),
    ("training", "_TrainingExecutor", "estimator_lite.training:_TrainingExecutor"),
    ("exporter", "BestExporter", "estimator_lite.exporter:BestExporter"),
    ("model_fn", "EstimatorSpec", "estimator_lite.model_fn:EstimatorSpec"),
    ("mode_keys", "ModeKeys", "estimator_lite.model_fn:ModeKeys"),
    ("export.export", "ServingInputReceiver", "estimator_lite.export:ServingInputReceiver"),
    ("export.export_lib", "build_parsing_serving_input_receiver_fn",
     "estimator_lite.export:build_parsing_serving_input_receiver_fn"),
    ("export.export_output", "PredictOutput", "estimator_lite.export:PredictOutput"),
    ("canned.metric_keys", "MetricKeys", "estimator_lite.head.keys:MetricKeys"),
    ("canned.prediction_keys", "PredictionKeys", "estimator_lite.head.keys:PredictionKeys"),
    ("canned.dnn", "DNNClassifier", "estimator_lite.compat.v1:DNNClassifier"),
    ("canned.dnn", "DNNClassifierV2", "estimator_lite.canned.dnn:DNNClassifier"),
    ("canned.linear", "LinearSDCA", "estimator_lite.experimental:LinearSDCA"),
    ("canned.kmeans", "KMeansClustering", "estimator_lite.canned.kmeans:KMeansClustering"),
    ("canned.parsing_utils", "classifier_parse_example_spec",
     "estimator_lite:classifier_parse_example_spec"),
    ("head.binary_class_head", "BinaryClassHead", "estimator_lite:BinaryClassHead"),
    ("head.base_head", "Head", "estimator_lite:Head"),
    ("head.head_utils", "binary_or_multi_class_head",
     "estimator_lite._compat.head_utils:binary_or_multi_class_head"),
    ("hooks.session_run_hook", "SessionRunHook", "estimator_lite:SessionRunHook"),
    ("hooks.basic_session_run_hooks", "LoggingTensorHook",
     "estimator_lite:LoggingTensorHook"),
    ("hooks.hooks", "InMemoryEvaluatorHook", "estimator_lite.hooks:InMemoryEvaluatorHook"),
    ("early_stopping", "read_eval_metrics", "estimator_lite:read_eval_metrics"),
    # Used by tensorflow_lattice's canned estimators.
    ("estimator", "maybe_overwrite_model_dir_and_session_config",
     "estimator_lite.estimator:maybe_overwrite_model_dir_and_session_config"),
    ("canned.optimizers", "get_optimizer_instance_v2",
     "estimator_lite.canned.optimizers:get_optimizer_instance_v2"),
    ("inputs.numpy_io", "numpy_input_fn", "estimator_lite.inputs.numpy_io:numpy_input_fn"),
    # adanet's tests build v1 heads with tf.estimator's private factories.
    ("canned.head", "_binary_logistic_head_with_sigmoid_cross_entropy_loss",
     "estimator_lite._compat.canned_head:"
     "_binary_logistic_head_with_sigmoid_cross_entropy_loss"),
    ("canned.head", "_regression_head",
     "estimator_lite._compat.canned_head:_regression_head"),
    # adanet's TPU estimator passes export_saved_model_api_version=... by this path.
    ("tpu.tpu_estimator", "ExportSavedModelApiVersion",
     "estimator_lite.tpu.tpu_estimator:ExportSavedModelApiVersion"),
]
# (alias path, attribute chain) -> the estimator_lite module a lookup must ask for.
LAZY_TARGETS = [
    ("tensorflow.compat.v1.estimator", "Estimator", "estimator_lite.compat.v1"),
    ("tensorflow_estimator.estimator", "DNNClassifier", "estimator_lite.compat.v1"),
    ("tensorflow_estimator.compat.v1", "LinearClassifier", "estimator_lite.compat.v1"),
    ("tensorflow.compat.v1.estimator", "tpu.TPUEstimator", "estimator_lite.tpu"),
    ("tensorflow_estimator.python.estimator.tpu.tpu_estimator", "TPUEstimator",
     "estimator_lite.tpu"),
    ("tensorflow.python.estimator.tpu.tpu_config", "RunConfig", "estimator_lite.tpu"),
    ("tensorflow.python.estimator.canned.head", "_regression_head",
     "estimator_lite._compat.canned_head"),
    ("tensorflow.keras.estimator", "model_to_estimator", "estimator_lite"),
    ("tensorflow_estimator.python.estimator.keras_lib", "model_to_estimator",
     "estimator_lite"),
]


def _object(spec):
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


@pytest.fixture
def installed():
    before_meta_path = list(sys.meta_path)
    assert not hasattr(tf, "estimator")
    assert estimator_lite.install_as_tf_estimator() is True
    yield install
    estimator_lite.uninstall_as_tf_estimator()
    assert sys.meta_path == before_meta_path
    assert not hasattr(tf, "estimator")
    assert not hasattr(tf.compat.v1, "estimator")
    assert not hasattr(install._tensorflow_module(("keras",)), "estimator")
    assert not any(n == "tensorflow_estimator" or n.startswith(ROOTS) for n in sys.modules)
    with pytest.raises(ImportError):
        importlib.import_module("tensorflow_estimator")


def test_tf_estimator_spellings_resolve_to_estimator_lite(installed):
    from tensorflow import estimator as from_import  # noqa: PLC0415
    v1_module = importlib.import_module("tensorflow.compat.v1")
    v2_module = importlib.import_module("tensorflow.compat.v2")
    assert from_import is tf.estimator
    assert tf.estimator.Estimator is estimator_lite.Estimator
    assert tf.compat.v2.estimator.DNNClassifier is estimator_lite.DNNClassifier
    assert tf.estimator.export.ServingInputReceiver is (
        estimator_lite.export.ServingInputReceiver)
    assert tf.estimator.experimental.InMemoryEvaluatorHook is (
        estimator_lite.experimental.InMemoryEvaluatorHook)
    # `import tensorflow.compat.v1` is a module object distinct from tf.compat.v1.
    assert v1_module.estimator is tf.compat.v1.estimator
    assert v2_module.estimator.RunConfig is estimator_lite.RunConfig
    assert importlib.import_module("tensorflow.estimator") is tf.estimator


# Every attribute path under `tf` that TF 2.15 resolves to its estimator API module
# (enumerated on the oracle by walking `compat`, `v1`, `v2` and `keras` attributes;
# deeper paths are the same module objects again): "v1" for
# tensorflow_estimator's api._v1.estimator, "v2" for api._v2.estimator, "keras"
# for a keras namespace's estimator module (model_to_estimator).
NESTED_ESTIMATOR_PATHS = {
    "estimator": "v2",
    "compat.v1.estimator": "v1",
    "compat.v2.estimator": "v2",
    "compat.v1.compat.v1.estimator": "v1",
    "compat.v1.compat.v2.estimator": "v2",
    "compat.v2.compat.v1.estimator": "v1",
    "compat.v2.compat.v2.estimator": "v2",
    "compat.v1.compat.v1.compat.v1.estimator": "v1",
    "compat.v1.compat.v1.compat.v2.estimator": "v2",
    "compat.v1.compat.v2.compat.v1.estimator": "v1",
    "compat.v1.compat.v2.compat.v2.estimator": "v2",
    "compat.v2.compat.v1.compat.v1.estimator": "v1",
    "compat.v2.compat.v1.compat.v2.estimator": "v2",
    "compat.v2.compat.v2.compat.v1.estimator": "v1",
    "compat.v2.compat.v2.compat.v2.estimator": "v2",
    "keras.estimator": "keras",
    "compat.v1.keras.estimator": "keras",
    "compat.v2.keras.estimator": "keras",
    "compat.v1.compat.v1.keras.estimator": "keras",
    "compat.v1.compat.v2.keras.estimator": "keras",
    "compat.v2.compat.v1.keras.estimator": "keras",
    "compat.v2.compat.v2.keras.estimator": "keras",
}


def _attribute_path(module, path):
    for name in filter(None, path.split(".")):
        module = getattr(module, name)
    return module


def test_nested_compat_paths_resolve_as_in_tf_2_15(installed):
    # adanet/core/tpu_estimator.py reads tf.compat.v2.compat.v1.estimator.tpu.
    v1_api = importlib.import_module("estimator_lite.compat.v1")
    expected = {"v1": v1_api.DNNClassifier, "v2": estimator_lite.DNNClassifier}
    for path, flavor in NESTED_ESTIMATOR_PATHS.items():
        module = _attribute_path(tf, path)
        if flavor == "keras":
            assert module.model_to_estimator is estimator_lite.model_to_estimator, path
        else:
            assert module.DNNClassifier is expected[flavor], path
    assert tf.compat.v2.compat.v1.estimator.tpu.TPUEstimator is (
        importlib.import_module("estimator_lite.tpu").TPUEstimator)
    # The same from the compat modules imported by name (module objects of their own).
    for name in ("tensorflow.compat.v1", "tensorflow.compat.v2"):
        module = importlib.import_module(name)
        flavor = name.rsplit(".", 1)[1]
        assert module.estimator.DNNClassifier is expected[flavor]
        assert module.compat.v1.estimator.DNNClassifier is expected["v1"]
        assert module.compat.v2.estimator.DNNClassifier is expected["v2"]


def test_nested_compat_paths_are_left_alone_without_install():
    for path in NESTED_ESTIMATOR_PATHS:
        owner, _, name = path.rpartition(".")
        assert name not in vars(_attribute_path(tf, owner)), path


@pytest.mark.parametrize("root", ROOTS)
@pytest.mark.parametrize("suffix,name,expected", PRIVATE_CONCEPTS,
                         ids=[f"{s}.{n}" for s, n, _ in PRIVATE_CONCEPTS])
def test_private_paths_map_to_the_module_owning_the_concept(installed, root, suffix,
                                                            name, expected):
    module = importlib.import_module(f"{root}.{suffix}")
    assert getattr(module, name) is _object(expected)


def test_from_imports_of_private_paths(installed):
    from tensorflow.python.estimator.canned import metric_keys  # noqa: PLC0415
    from tensorflow_estimator.python.estimator.export import export_lib  # noqa: PLC0415
    assert metric_keys.MetricKeys.LOSS_MEAN == "average_loss"
    assert export_lib.build_raw_serving_input_receiver_fn is (
        estimator_lite.export.build_raw_serving_input_receiver_fn)


@pytest.mark.parametrize("looked_up_first", [False, True])
def test_patching_through_a_tf_estimator_path_reaches_estimator_lite(installed,
                                                                    looked_up_first):
    # With tf.estimator, `training` below is the module whose train_and_evaluate
    # runs: a test patching its executor sees the patch used (tf.estimator's own
    # test_run_task does this), and the patch is undone on exit.
    from unittest import mock  # noqa: PLC0415

    from tensorflow_estimator.python.estimator import training  # noqa: PLC0415
    lite_training = importlib.import_module("estimator_lite.training")
    real = lite_training._TrainingExecutor
    if looked_up_first:  # mock then patches a cached attribute of the alias
        assert training._TrainingExecutor is real
    estimator = mock.Mock(spec=tf.estimator.Estimator)
    train_spec = tf.estimator.TrainSpec(lambda: None)
    eval_spec = tf.estimator.EvalSpec(lambda: None)
    with mock.patch.object(training, "_TrainingExecutor") as executor:
        training.train_and_evaluate(estimator, train_spec, eval_spec)
        assert lite_training._TrainingExecutor is executor
    executor.assert_called_once_with(estimator=estimator, train_spec=train_spec,
                                     eval_spec=eval_spec)
    assert executor.return_value.run.called
    assert lite_training._TrainingExecutor is real
    assert training._TrainingExecutor is real


def test_a_value_set_through_an_alias_is_undone_by_uninstall():
    lite_training = importlib.import_module("estimator_lite.training")
    estimator_lite.install_as_tf_estimator()
    try:
        from tensorflow_estimator.python.estimator import training  # noqa: PLC0415
        training._DELAY_SECS_PER_WORKER = 0
        assert lite_training._DELAY_SECS_PER_WORKER == 0
        training.brand_new_name = 1  # estimator_lite has no such name: alias only
        assert not hasattr(estimator_lite.training, "brand_new_name")
    finally:
        estimator_lite.uninstall_as_tf_estimator()
    assert lite_training._DELAY_SECS_PER_WORKER == 5


def test_a_private_name_without_equivalent_fails_at_use_naming_it(installed):
    from tensorflow.python.estimator.canned.saved_model_estimator import (  # noqa: PLC0415
        SavedModelEstimator,
    )
    from tensorflow_estimator.python.estimator.inputs.queues.feeding_functions import (  # noqa: PLC0415
        _enqueue_data,
    )
    for call in (lambda: SavedModelEstimator("/tmp"), lambda: _enqueue_data(None, 1)):
        with pytest.raises(install.NotProvidedError, match=NOT_PROVIDED):
            call()
    with pytest.raises(install.NotProvidedError) as raised:
        SavedModelEstimator.some_method  # noqa: B018 -- reading it is the use
    assert ("SavedModelEstimator (from module "
            "tensorflow.python.estimator.canned.saved_model_estimator)") in (
        str(raised.value))

    class Derived(SavedModelEstimator):  # a library subclassing it at import still imports
        def __init__(self):
            pass

    with pytest.raises(install.NotProvidedError, match="SavedModelEstimator"):
        Derived()


def test_a_public_name_estimator_lite_lacks_is_a_clear_attribute_error(installed):
    assert not hasattr(tf.estimator, "NoSuchThing")
    with pytest.raises(AttributeError, match=f"{NOT_PROVIDED} NoSuchThing "
                                             r"\(from module tensorflow.estimator\)"):
        tf.estimator.NoSuchThing  # noqa: B018


def test_an_unknown_module_under_an_aliased_root_is_a_clear_import_error(installed):
    with pytest.raises(ModuleNotFoundError, match="does not provide module "
                                                  "tensorflow.python.estimator.nowhere"):
        importlib.import_module("tensorflow.python.estimator.nowhere")


def test_a_missing_target_module_is_named_in_the_error():
    module, reason = alias_modules.import_target("estimator_lite.not_a_module_here")
    assert module is None
    assert "estimator_lite.not_a_module_here" in reason


@pytest.mark.parametrize("path,chain,target", LAZY_TARGETS,
                         ids=[f"{p}.{c}" for p, c, _ in LAZY_TARGETS])
def test_v1_tpu_and_keras_paths_ask_for_their_target_lazily(installed, monkeypatch, path,
                                                            chain, target):
    asked = []
    fake = types.ModuleType(target)
    fake.__dict__.update({name: object() for name in (
        "Estimator", "DNNClassifier", "LinearClassifier", "TPUEstimator", "RunConfig",
        "_regression_head", "model_to_estimator")})
    fake.tpu = fake

    def fake_import(name):
        asked.append(name)
        return fake, None

    monkeypatch.setattr(alias_modules, "import_target", fake_import)
    value = importlib.import_module(path)
    for name in chain.split("."):
        value = getattr(value, name)
    assert asked == [target] * len(asked) and asked
    assert value is getattr(fake, chain.split(".")[-1])


def test_install_resolves_nothing_until_used(monkeypatch):
    asked = []
    monkeypatch.setattr(alias_modules, "import_target", asked.append)
    try:
        assert estimator_lite.install_as_tf_estimator() is True
        assert estimator_lite.install_as_tf_estimator() is True  # idempotent
        assert isinstance(tf.estimator, types.ModuleType)
        compat_v1 = install._tensorflow_module(("compat", "v1"))
        assert isinstance(compat_v1.estimator, types.ModuleType)
    finally:
        estimator_lite.uninstall_as_tf_estimator()
    assert asked == []


@pytest.fixture(scope="module")
def stale_site(tmp_path_factory):
    """A directory holding the real tensorflow-estimator 2.15.0 wheel's package."""
    return install_stale_estimator(tmp_path_factory.mktemp("stale_estimator"))


def _notices(caplog):
    return [r.getMessage() for r in caplog.records if "estimator_lite" in r.getMessage()]


def _modules_from(directory):
    return sorted(name for name, module in sys.modules.items()
                  if str(getattr(module, "__file__", "") or "").startswith(str(directory)))


@requires_tf_without_estimator
def test_the_stale_wheel_beside_this_tensorflow_is_replaced_saying_why(
        stale_site, monkeypatch, caplog):
    monkeypatch.syspath_prepend(str(stale_site))
    assert install.real_tf_estimator_location() is None
    try:
        with caplog.at_level(logging.WARNING, logger="tensorflow"):
            assert estimator_lite.install_as_tf_estimator() is True
        assert tf.estimator.Estimator is estimator_lite.Estimator
        assert type(importlib.import_module("tensorflow_estimator")).__name__ == (
            "_AliasModule")
    finally:
        estimator_lite.uninstall_as_tf_estimator()
    assert _notices(caplog) == [
        f"estimator_lite: serving tf.estimator from estimator_lite, not from "
        f"tensorflow-estimator {STALE_VERSION} at {stale_site / 'tensorflow_estimator'}: "
        f"TensorFlow {tf.__version__} has no tf.estimator (removed in 2.16), so that "
        "package cannot import"]
    assert _modules_from(stale_site) == []  # told from its metadata, never imported


@requires_tf_without_estimator
def test_replacing_the_stale_wheel_on_request_says_nothing(stale_site, monkeypatch,
                                                          caplog):
    monkeypatch.syspath_prepend(str(stale_site))
    try:
        with caplog.at_level(logging.WARNING, logger="tensorflow"):
            assert estimator_lite.install_as_tf_estimator(replace_existing=True) is True
        assert tf.compat.v1.estimator.RunConfig is estimator_lite.RunConfig
    finally:
        estimator_lite.uninstall_as_tf_estimator()
    assert _notices(caplog) == []
    assert _modules_from(stale_site) == []


def test_a_tensorflow_estimator_of_another_version_is_replaced(tmp_path, monkeypatch,
                                                               caplog):
    package = tmp_path / "tensorflow_estimator"
    package.mkdir()
    (package / "__init__.py").write_text("raise RuntimeError('never imported')\n")
    info = tmp_path / "tensorflow_estimator-2.14.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: tensorflow-estimator\nVersion: 2.14.0\n")
    (info / "top_level.txt").write_text("tensorflow_estimator\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(install, "_tensorflow_version", lambda: "2.15.1")
    try:
        with caplog.at_level(logging.WARNING, logger="tensorflow"):
            assert estimator_lite.install_as_tf_estimator() is True
    finally:
        estimator_lite.uninstall_as_tf_estimator()
    assert _notices(caplog) == [
        f"estimator_lite: serving tf.estimator from estimator_lite, not from "
        f"tensorflow-estimator 2.14.0 at {package}: it does not match TensorFlow 2.15.1 "
        "(tensorflow-estimator works only with TensorFlow of its own major.minor)"]
    assert _modules_from(tmp_path) == []


LEFT_ALONE_ON_TF215 = """
import json, logging, sys
import tensorflow as tf
import estimator_lite
from estimator_lite import install
messages = []
handler = logging.Handler()
handler.emit = lambda record: messages.append(record.getMessage())
logging.getLogger("tensorflow").addHandler(handler)
location = install.real_tf_estimator_location()
served = estimator_lite.install_as_tf_estimator()
own = type(tf.estimator).__name__
replaced = estimator_lite.install_as_tf_estimator(replace_existing=True)
alias = type(tf.estimator).__name__
estimator_lite.uninstall_as_tf_estimator()  # puts back what install found imported
print(json.dumps({"location": location, "served": served, "own": own,
                  "replaced": replaced, "alias": alias,
                  "messages": [m for m in messages if "estimator_lite" in m],
                  "left": sorted(n for n in sys.modules
                                 if n.startswith("tensorflow_estimator"))}))
"""


def _on_oracle(code, cwd, pythonpath):
    ran = subprocess.run([TF215_PYTHON, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=pythonpath), cwd=cwd,
                         timeout=300, check=False)
    assert ran.returncode == 0, ran.stderr[-3000:]
    return json.loads(ran.stdout.splitlines()[-1])


@requires_oracle
def test_a_real_tensorflow_estimator_is_left_alone_unless_replaced(tmp_path):
    """TF 2.15 with tensorflow-estimator 2.15 (the oracle): a real tf.estimator."""
    seen = _on_oracle(LEFT_ALONE_ON_TF215, tmp_path, ROOT_DIR)
    assert seen["location"].endswith(os.path.join("site-packages", "tensorflow_estimator"))
    assert (seen["served"], seen["replaced"], seen["alias"]) == (False, True,
                                                                 "_AliasModule")
    assert seen["own"] != "_AliasModule"
    assert len(seen["messages"]) == 1
    assert seen["messages"][0].startswith(
        "estimator_lite: a real tf.estimator is installed (tensorflow-estimator 2.15.0 at ")
    assert seen["messages"][0].endswith(
        "with TensorFlow 2.15.1); leaving it alone (pass replace_existing=True to use "
        "estimator_lite instead)")


@requires_oracle
def test_a_matching_tensorflow_estimator_failing_to_import_is_replaced(tmp_path):
    """Imported after TensorFlow, in this process: nothing half-imported stays."""
    broken = tmp_path / "site"
    (broken / "tensorflow_estimator" / "python").mkdir(parents=True)
    (broken / "tensorflow_estimator" / "__init__.py").write_text(
        "from tensorflow_estimator import python\n"
        "raise ImportError('broken on purpose')\n")
    (broken / "tensorflow_estimator" / "python" / "__init__.py").write_text("")
    info = broken / "tensorflow_estimator-2.15.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: tensorflow-estimator\nVersion: 2.15.0\n")
    (info / "top_level.txt").write_text("tensorflow_estimator\n")
    seen = _on_oracle(LEFT_ALONE_ON_TF215, tmp_path,
                      os.pathsep.join([str(broken), ROOT_DIR]))
    assert (seen["location"], seen["served"], seen["own"]) == (None, True, "_AliasModule")
    assert seen["left"] == []  # its half-imported submodules are gone too
    assert seen["messages"] == [
        f"estimator_lite: serving tf.estimator from estimator_lite, not from "
        f"tensorflow-estimator 2.15.0 at {broken / 'tensorflow_estimator'}: importing it "
        "fails: ImportError: broken on purpose (TensorFlow 2.15.1)"]


def test_replace_existing_must_be_a_bool():
    with pytest.raises(TypeError, match="replace_existing must be a bool, got str 'yes'"):
        estimator_lite.install_as_tf_estimator(replace_existing="yes")


FRESH_PROCESS = """
import sys
import estimator_lite
assert estimator_lite.install_as_tf_estimator() is True
assert "tensorflow" not in sys.modules  # installing does not import TensorFlow
import tensorflow.compat.v1 as v1  # attaches to this module object and to tensorflow
import tensorflow as tf
from tensorflow.estimator import RunConfig
print(v1.estimator is tf.compat.v1.estimator,
      tf.estimator.Estimator is estimator_lite.Estimator,
      RunConfig is estimator_lite.RunConfig, type(tf.keras.estimator).__name__)
estimator_lite.uninstall_as_tf_estimator()
print(hasattr(tf, "estimator"), hasattr(v1, "estimator"),
      hasattr(tf.compat.v1, "estimator"))
"""


def test_installed_before_tensorflow_attaches_when_the_program_imports_it(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT_DIR)
    env.pop("TF_USE_LEGACY_KERAS", None)
    ran = subprocess.run([sys.executable, "-c", FRESH_PROCESS], capture_output=True,
                         text=True, env=env, cwd=tmp_path, timeout=300, check=False)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.split() == ["True", "True", "True", "_AliasModule",
                                  "False", "False", "False"]


FIRST_IMPORT_IS_A_PRIVATE_PATH = """
import estimator_lite
estimator_lite.install_as_tf_estimator()
# The first TensorFlow import happens inside this lookup (estimator_lite's modules
# import it): tf.estimator must still be attached.
from tensorflow_estimator.python.estimator.canned import dnn
import tensorflow as tf
print(dnn.DNNClassifierV2 is estimator_lite.DNNClassifier,
      tf.estimator.Estimator is estimator_lite.Estimator,
      tf.compat.v1.estimator.Estimator is estimator_lite.compat.v1.Estimator)
"""


def test_installed_before_tensorflow_a_first_private_import_still_attaches(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT_DIR)
    env.pop("TF_USE_LEGACY_KERAS", None)
    ran = subprocess.run([sys.executable, "-c", FIRST_IMPORT_IS_A_PRIVATE_PATH],
                         capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=300, check=False)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.split() == ["True", "True", "True"]


LEGACY_KERAS_PROGRAM = """
import estimator_lite
estimator_lite.install_as_tf_estimator()
import tensorflow as tf
# TensorFlow's __init__ imports tf_keras, which imports tensorflow.compat.v2: that
# module's keras.estimator is set only once `import tensorflow` is done, so tf_keras
# is imported once, whole (a second copy of half its modules broke set_random_seed).
tf.keras.utils.set_random_seed(42)
print(tf.compat.v2.keras.estimator.model_to_estimator is estimator_lite.model_to_estimator,
      tf.compat.v1.keras.estimator.model_to_estimator is estimator_lite.model_to_estimator,
      tf.compat.v2.compat.v1.estimator.Estimator is estimator_lite.compat.v1.Estimator)
"""


@requires_legacy_keras
def test_under_legacy_keras_tf_keras_is_imported_once_and_keras_estimator_attached(
        tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT_DIR, TF_USE_LEGACY_KERAS="1")
    ran = subprocess.run([sys.executable, "-c", LEGACY_KERAS_PROGRAM],
                         capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=300, check=False)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.split() == ["True", "True", "True"]
