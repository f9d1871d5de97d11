"""The public API's type hints: mypy checks them (setup.cfg), a user's program sees them,
they cost nothing at run time, and an installed package says it has them (py.typed).

mypy comes with the test extra (`pip install -e ".[test]"`); without it the mypy
tests skip, saying so (and fail in CI, where ESTIMATOR_LITE_REQUIRE_ALL_TESTS=1).
"""

import ast
import configparser
import importlib
import importlib.util
import inspect
import os
import subprocess
import sys
import types

import pytest

import estimator_lite as el

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(ROOT, "setup.cfg")
# A cold run takes about 7 s (typeshed, numpy); the deadline is for a loaded machine.
MYPY_TIMEOUT_SECS = 240

requires_mypy = pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None,
    reason="mypy is not installed: pip install -e '.[test]' (the test extra has it)")


def _checked_paths():
    """The .py files setup.cfg's `files` names (its folders expanded)."""
    parser = configparser.ConfigParser()
    parser.read(CONFIG)
    paths = []
    for entry in parser["mypy"]["files"].replace("\n", "").split(","):
        path = os.path.join(ROOT, entry.strip())
        if os.path.isdir(path):
            paths += sorted(os.path.join(path, name) for name in os.listdir(path)
                            if name.endswith(".py"))
        else:
            paths.append(path)
    return paths


@pytest.fixture(scope="module")
def mypy(tmp_path_factory):
    """Runs mypy with setup.cfg (one cache for this module's runs); returns
    (exit code, output)."""
    cache_dir = str(tmp_path_factory.mktemp("mypy_cache"))

    def run(*files):
        env = dict(os.environ, MYPYPATH=ROOT)
        result = subprocess.run(
            [sys.executable, "-m", "mypy", "--config-file", CONFIG, "--cache-dir",
             cache_dir, "--no-error-summary", "--hide-error-context", *files],
            cwd=ROOT, env=env, capture_output=True, text=True,
            timeout=MYPY_TIMEOUT_SECS, check=False)
        return result.returncode, result.stdout + result.stderr
    return run


@requires_mypy
def test_the_annotated_modules_type_check(mypy):
    code, output = mypy()
    assert code == 0, output


USER_PROGRAM = '''
import tensorflow as tf

import estimator_lite as tf_estimator
from estimator_lite import predictor


def model_fn(features, labels, mode, params):
    logits = tf.compat.v1.layers.dense(features["x"], params["units"])
    return tf_estimator.RegressionHead().create_estimator_spec(
        features=features, mode=mode, logits=logits, labels=labels,
        optimizer=tf.compat.v1.train.AdamOptimizer(0.1))


def input_fn():
    return tf.data.Dataset.from_tensors(({"x": [[1.0]]}, [[2.0]]))


config = tf_estimator.RunConfig(save_summary_steps=10, tf_random_seed=1)
estimator = tf_estimator.Estimator(model_fn, model_dir="m", config=config,
                                   params={"units": 1})
estimator = estimator.train(input_fn, max_steps=5)
metrics: dict = estimator.evaluate(input_fn, steps=1)
for prediction in estimator.predict(input_fn, yield_single_examples=False):
    print(prediction)
exporter = tf_estimator.LatestExporter("latest", lambda: None, exports_to_keep=2)
tf_estimator.train_and_evaluate(
    estimator, tf_estimator.TrainSpec(input_fn, max_steps=10),
    tf_estimator.EvalSpec(input_fn, steps=1, exporters=[exporter], throttle_secs=0))
hook = tf_estimator.stop_if_no_decrease_hook(estimator, "loss", 100)
classifier = tf_estimator.DNNClassifier([4], [tf.feature_column.numeric_column("x")],
                                        n_classes=3, dropout=0.1)
path: bytes = estimator.export_saved_model("export", lambda: None)
served = predictor.from_saved_model(path)
outputs: dict = served({"x": [[1.0]]})
'''

# Each line is a mistake mypy reports; the number is the line's in the program.
USER_MISTAKES = '''
import estimator_lite as tf_estimator

tf_estimator.RunConfig(save_summary_steps="100")
estimator = tf_estimator.Estimator(lambda features: None, model_dir=3)
estimator.train(lambda: None, steps="10")
tf_estimator.TrainSpec(lambda: None, max_steps="5")
tf_estimator.EvalSpec(lambda: None, name=1)
latest: str = estimator.latest_checkpoint()
tf_estimator.DNNClassifier(hidden_units=[4], feature_columns=[], n_classes="3")
'''


@requires_mypy
def test_a_users_program_sees_the_types(mypy, tmp_path):
    (tmp_path / "program.py").write_text(USER_PROGRAM)
    (tmp_path / "mistakes.py").write_text(USER_MISTAKES)
    code, output = mypy(str(tmp_path / "program.py"), str(tmp_path / "mistakes.py"))
    assert code == 1, output
    reported = sorted({(os.path.basename(line.split(":")[0]), int(line.split(":")[1]))
                       for line in output.splitlines() if ": error:" in line})
    assert reported == [("mistakes.py", n) for n in range(4, 11)], output


def test_annotations_are_strings_at_run_time():
    """Every checked module defers its annotations (PEP 563), so none is evaluated:
    Python 3.7 with TF 1.15 runs them unchanged."""
    for path in _checked_paths():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        annotated = any(
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                node.returns is not None
                or any(a.annotation is not None for a in ast.walk(node.args)
                       if isinstance(a, ast.arg)))
            for node in ast.walk(tree))
        future = any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
                     and any(a.name == "annotations" for a in node.names)
                     for node in tree.body)
        assert future or not annotated, (
            f"{os.path.relpath(path, ROOT)} has annotations but no "
            "`from __future__ import annotations`")


def _typed_module(name):
    typed = {os.path.relpath(p, ROOT)[:-3].replace(os.sep, ".") for p in _checked_paths()}
    return name in typed


def _unannotated(function):
    """The parameters (and 'return') of `function` without an annotation."""
    names = [p.name for p in inspect.signature(function).parameters.values()
             if p.name not in ("self", "cls")]
    return [n for n in names + ["return"] if n not in function.__annotations__]


def _public_functions():
    """(qualified name, function) of the functions, methods and properties users call:
    the public names of estimator_lite and of the entry-point modules, where a
    checked module defines them (TensorFlow's own classes re-exported are not)."""
    namespaces = [el] + [importlib.import_module(f"estimator_lite.{name}") for name in
                         ("experimental", "predictor", "launch", "run", "inspect")]
    for namespace in namespaces:
        for name in namespace.__all__:
            value = getattr(namespace, name)
            if isinstance(value, types.FunctionType) and _typed_module(value.__module__):
                yield f"{value.__module__}.{value.__qualname__}", value
            elif inspect.isclass(value):
                yield from _public_methods(value)


def _public_methods(cls):
    for attribute in dir(cls):
        if attribute.startswith("_") and attribute not in ("__init__", "__new__",
                                                           "__call__"):
            continue
        owner = next(k for k in cls.__mro__ if attribute in vars(k))
        # namedtuple's generated bases (a spec's fields) are not written by hand.
        if not _typed_module(owner.__module__) or "_fields" in vars(owner):
            continue
        value = vars(owner)[attribute]
        function = getattr(value, "fget", None) or getattr(value, "__func__", value)
        # Properties made from lambdas (`x = property(lambda self: self._x)`) are
        # left to the checker's inference.
        if isinstance(function, types.FunctionType) and function.__name__ != "<lambda>":
            yield f"{owner.__module__}.{owner.__qualname__}.{attribute}", function


def test_the_public_surface_is_annotated():
    functions = dict(_public_functions())
    missing = {name: _unannotated(f) for name, f in functions.items() if _unannotated(f)}
    assert not missing
    # The surface the issue names is all there (a broken walk would find nothing).
    for name in ("estimator_lite.estimator.Estimator.train",
                 "estimator_lite.run_config.RunConfig.__init__",
                 "estimator_lite.model_fn.EstimatorSpec.__new__",
                 "estimator_lite.training.train_and_evaluate",
                 "estimator_lite.exporter.BestExporter.export",
                 "estimator_lite.head.base_head.Head.create_estimator_spec",
                 "estimator_lite.canned.dnn.DNNClassifier.__init__",
                 "estimator_lite.hooks.InMemoryEvaluatorHook.__init__",
                 "estimator_lite.predictor.from_estimator",
                 "estimator_lite.launch.main", "estimator_lite.inspect.main"):
        assert name in functions, sorted(functions)


def _type_checking_imports():
    """{name: module} of the `if TYPE_CHECKING:` imports in estimator_lite/__init__.py."""
    with open(os.path.join(ROOT, "estimator_lite", "__init__.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and getattr(node.test, "id", None) == "TYPE_CHECKING")
    imported = {}
    for node in block.body:
        for alias in node.names:
            # `as` the same name: re-exported for checkers that want it said.
            assert alias.asname == alias.name, ast.dump(node)
            imported[alias.name] = node.module
    return imported


def test_type_checkers_see_every_lazy_name():
    """The names `import estimator_lite` loads on first use are, for a type checker,
    the same objects from the same modules."""
    imported = _type_checking_imports()
    assert sorted(imported) == sorted(el._LAZY)
    for name, module in imported.items():
        loaded = importlib.import_module(module)
        assert getattr(loaded, name) is getattr(el, name), name


def test_the_package_says_it_is_typed():
    """py.typed (PEP 561) is package data of estimator_lite in setup.py, so a built
    wheel (and an installed estimator_lite) has it. Read from setup.py's text: a
    fresh Python 3.12+ virtualenv has no setuptools to run it with."""
    assert os.path.isfile(os.path.join(ROOT, "estimator_lite", "py.typed"))
    with open(os.path.join(ROOT, "setup.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    call = next(node for node in ast.walk(tree) if isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "setup")
    keywords = {k.arg: k.value for k in call.keywords}
    assert ast.literal_eval(keywords["package_data"]) == {"estimator_lite": ["py.typed"]}
