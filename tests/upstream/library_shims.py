"""Shims the libraries' own test files need on today's stacks, oracle and lite alike.

`run_libraries.py` points the generated conftest at this file (UPSTREAM_SHIMS); it
runs before pytest imports the test module, on both sides, so the shims cannot
make estimator_lite look better than tf.estimator: they stand in for what moved
in Python, NumPy, TensorFlow or the network, never for tf.estimator. Each one
applies only where the thing it replaces is missing. UPSTREAM_LIBRARY names the
library whose tests run (the data shims are lattice's only).
"""

import builtins
import collections
import importlib
import inspect
import os
import sys
import types

import numpy as np

_LIBRARY = os.environ.get("UPSTREAM_LIBRARY", "")

# --- Python 3.11 removed inspect.getargspec (tfgan 2.1.0, nsl 1.4.0 call it) ---------

ArgSpec = collections.namedtuple("ArgSpec", ["args", "varargs", "keywords", "defaults"])


def _getargspec(func):
    """Python 3.10's inspect.getargspec: getfullargspec's first four fields."""
    spec = inspect.getfullargspec(func)
    return ArgSpec(spec.args, spec.varargs, spec.varkw, spec.defaults)


if not hasattr(inspect, "getargspec"):
    inspect.getargspec = _getargspec


# --- NumPy 2.4 removed quantile's `interpolation=` (lattice's 'quantiles' keypoints) --


def _with_method(function):
    def wrapper(*args, interpolation=None, **kwargs):
        if interpolation is not None:
            kwargs.setdefault("method", interpolation)
        return function(*args, **kwargs)
    wrapper.__wrapped__ = function
    return wrapper


for _name in ("quantile", "percentile"):
    _function = getattr(np, _name)
    if "interpolation" not in inspect.signature(_function).parameters:
        setattr(np, _name, _with_method(_function))


# --- NumPy 1.24 removed the builtin-type aliases (adanet 0.9.0 uses np.float) ------

for _name in ("float", "int", "bool", "object", "complex", "str"):
    if _name not in np.__dict__:  # np.bool is back (NumPy 2): only what is missing
        setattr(np, _name, getattr(builtins, _name))


# --- TF 2.11 moved tensorflow.python.training.tracking (adanet 0.9.0 imports it) ------


def _alias_tracking():
    try:
        importlib.import_module("tensorflow.python.training.tracking.graph_view")
        return
    except ImportError:
        pass
    graph_view = importlib.import_module("tensorflow.python.checkpoint.graph_view")
    package = types.ModuleType("tensorflow.python.training.tracking")
    package.__path__ = []
    package.graph_view = graph_view
    sys.modules[package.__name__] = package
    sys.modules[package.__name__ + ".graph_view"] = graph_view
    importlib.import_module("tensorflow.python.training").tracking = package


if _LIBRARY == "adanet":
    _alias_tracking()
    # adanet's testing_utils parses `flags.FLAGS(sys.argv)` in setUp, written for a
    # test binary whose argv has no pytest options.
    del sys.argv[1:]


# --- lattice's data: heart.csv is downloaded, sklearn >= 1.2 has no load_boston -------
# No network here, so the test's two data sets are synthetic stand-ins with their
# columns, sizes and value ranges, and a label that the features predict through
# the monotonic relations the test's feature configs declare.

HEART_ROWS = 303
BOSTON_ROWS = 506
BOSTON_FEATURES = ("CRIM", "ZN", "INDUS", "CHAS", "NOX", "RM", "AGE", "DIS", "RAD",
                   "TAX", "PTRATIO", "B", "LSTAT")


def heart_csv(path):
    """Writes a heart.csv stand-in (UCI Statlog Heart's columns) to `path`.

    Its label leans on age, cp, chol, trestbps, thalach, oldpeak, ca, exang and
    thal; sex, fbs, restecg and slope carry no signal (so the tests whose six
    features are mostly those miss their AUC on the oracle too: see the report).
    """
    rng = np.random.RandomState(0)
    n = HEART_ROWS
    columns = collections.OrderedDict(
        age=rng.randint(29, 78, n), sex=rng.randint(0, 2, n), cp=rng.randint(0, 5, n),
        trestbps=rng.randint(94, 201, n), chol=rng.randint(126, 565, n),
        fbs=rng.randint(0, 2, n), restecg=rng.randint(0, 3, n),
        thalach=rng.randint(71, 203, n), exang=rng.randint(0, 2, n),
        oldpeak=np.round(rng.uniform(0.0, 6.2, n), 1), slope=rng.randint(0, 3, n),
        ca=rng.randint(0, 4, n), thal=rng.choice(["normal", "fixed", "reversible"], n))
    score = (0.04 * (columns["age"] - 54) + 0.6 * (columns["cp"] - 2)
             + 0.005 * (columns["chol"] - 246) - 0.01 * (columns["trestbps"] - 131)
             - 0.02 * (columns["thalach"] - 150) + 0.5 * (columns["oldpeak"] - 1)
             + 0.7 * (columns["ca"] - 1) + 0.8 * columns["exang"]
             + 0.8 * (columns["thal"] != "normal") + rng.normal(0.0, 0.5, n))
    columns["target"] = (score > np.median(score)).astype(int)
    with open(path, "w") as f:
        f.write(",".join(columns) + "\n")
        for row in zip(*columns.values(), strict=True):
            f.write(",".join(str(value) for value in row) + "\n")
    return path


def load_boston():
    """A load_boston stand-in: .data (506 x 13), .target, .feature_names."""
    rng = np.random.RandomState(1)
    n = BOSTON_ROWS
    data = np.stack([
        rng.exponential(3.6, n), rng.choice([0.0, 12.5, 25.0, 80.0], n),
        rng.uniform(0.5, 27.7, n), rng.randint(0, 2, n).astype(float),
        rng.uniform(0.39, 0.87, n), rng.normal(6.3, 0.7, n), rng.uniform(3.0, 100.0, n),
        rng.uniform(1.1, 12.1, n), rng.randint(1, 25, n).astype(float),
        rng.uniform(187.0, 711.0, n), rng.uniform(12.6, 22.0, n),
        rng.uniform(0.3, 396.9, n), rng.uniform(1.7, 38.0, n)], axis=1)
    column = dict(zip(BOSTON_FEATURES, data.T, strict=True))
    target = (22.5 + 4.0 * (column["RM"] - 6.3) - 0.4 * (column["LSTAT"] - 12.6)
              - 0.3 * (column["CRIM"] - 3.6) - 0.5 * (column["PTRATIO"] - 18.5)
              + 2.0 * column["CHAS"] + rng.normal(0.0, 1.5, n))
    return types.SimpleNamespace(data=data, target=np.clip(target, 5.0, 50.0),
                                 feature_names=np.array(BOSTON_FEATURES))


def _lattice_data():
    import tensorflow as tf  # the test's own tf.keras: Keras 2 on both stacks

    utils = tf.keras.utils
    download = utils.get_file

    def get_file(fname=None, origin=None, *args, **kwargs):
        if fname == "heart.csv":
            return heart_csv(os.path.join(os.environ["TEST_TMPDIR"], "heart.csv"))
        return download(fname, origin, *args, **kwargs)

    utils.get_file = get_file
    try:
        datasets = importlib.import_module("sklearn.datasets")
    except ImportError:
        sys.modules["sklearn"] = types.ModuleType("sklearn")
        datasets = sys.modules["sklearn.datasets"] = types.ModuleType("sklearn.datasets")
        sys.modules["sklearn"].datasets = datasets
    try:  # sklearn >= 1.2 raises ImportError on the name
        datasets.load_boston  # noqa: B018
    except (AttributeError, ImportError):
        datasets.load_boston = load_boston


if _LIBRARY == "lattice":
    _lattice_data()

# --- TF1 test programs (see run_libraries.LIBRARIES: nsl) ---------------------------
if os.environ.get("UPSTREAM_TF1") == "1":
    import tensorflow as tf

    tf.compat.v1.disable_v2_behavior()
