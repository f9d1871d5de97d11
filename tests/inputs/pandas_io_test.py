"""estimator_lite.inputs.pandas_input_fn behaves like tf.estimator 2.15's.

The behaviour tests need pandas (the `test` extra installs it) and skip without
it; the ImportError hint is checked in a subprocess where pandas cannot be
imported, so it runs either way.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite.inputs import pandas_input_fn
from tests.support import models
from tests.support.models import read_batches


@pytest.fixture(name="pd")
def _pandas():
    return pytest.importorskip("pandas")

SHUFFLE_ERROR = "shuffle must be provided and explicitly set as boolean"
INDEX_ERROR = "Index for x and y are mismatched."
TARGET_ERROR = ("Cannot use name a for target column: DataFrame already has a column "
                "with that name")
X_TYPE_ERROR = "x must be a pandas DataFrame; got ndarray"
Y_TYPE_ERROR = "y must be None, a pandas Series or a DataFrame; got ndarray"
PANDAS_HINT = "pip install estimator_lite[pandas]"


def frame(pd):
    return pd.DataFrame({"a": np.arange(5, dtype=np.float32), "s": list("vwxyz"),
                         "i": np.arange(5)}, index=np.arange(100, 105))


def test_columns_become_features_and_a_series_the_labels(pd):
    x = frame(pd)
    batches = read_batches(pandas_input_fn(x, pd.Series(np.arange(5) * 10, index=x.index),
                                           batch_size=2, shuffle=False))
    assert [list(features["a"]) for features, _ in batches] == [[0, 1], [2, 3], [4]]
    assert [list(features["s"]) for features, _ in batches] == [
        [b"v", b"w"], [b"x", b"y"], [b"z"]]
    assert [list(labels) for _, labels in batches] == [[0, 10], [20, 30], [40]]
    assert batches[0][0]["a"].dtype == np.float32
    assert batches[0][0]["i"].dtype == np.int64


def test_a_label_frame_gives_a_dict_of_labels_and_no_y_gives_features_only(pd):
    x = frame(pd)
    y = pd.DataFrame({"t1": np.arange(5), "t2": np.ones(5)}, index=x.index)
    batches = read_batches(pandas_input_fn(x, y, batch_size=3, shuffle=False))
    assert [sorted(labels) for _, labels in batches] == [["t1", "t2"]] * 2
    assert [list(labels["t1"]) for _, labels in batches] == [[0, 1, 2], [3, 4]]
    features_only = read_batches(pandas_input_fn(x, batch_size=5, shuffle=False))
    assert sorted(features_only[0]) == ["a", "i", "s"]


def test_epochs_and_shuffle_follow_numpy_input_fn(pd):
    x = frame(pd)
    with tf.Graph().as_default():
        tf.compat.v1.set_random_seed(3)
        features = pandas_input_fn(x, batch_size=5, num_epochs=2, shuffle=True)()
        with tf.compat.v1.Session() as session:
            epochs = [session.run(features)["i"].tolist() for _ in range(2)]
    assert [sorted(epoch) for epoch in epochs] == [[0, 1, 2, 3, 4]] * 2
    assert epochs != [[0, 1, 2, 3, 4]] * 2


@pytest.mark.parametrize("kwargs, error, message", [
    (lambda pd: {"shuffle": None}, ValueError, SHUFFLE_ERROR),
    (lambda pd: {"x": np.arange(5)}, TypeError, X_TYPE_ERROR),
    (lambda pd: {"y": np.arange(5)}, TypeError, Y_TYPE_ERROR),
    (lambda pd: {"y": pd.Series(np.arange(5))}, ValueError, INDEX_ERROR),
    (lambda pd: {"y": pd.Series(np.arange(5), index=np.arange(100, 105)),
                 "target_column": "a"}, ValueError, TARGET_ERROR),
    (lambda pd: {"batch_size": 0}, ValueError, "batch_size must be >= 1, got 0"),
])
def test_bad_arguments(pd, kwargs, error, message):
    arguments = {"x": frame(pd), "shuffle": False}
    arguments.update(kwargs(pd))
    with pytest.raises(error) as raised:
        pandas_input_fn(**arguments)
    assert message in str(raised.value)


def test_a_label_frame_may_reuse_a_feature_name(pd):
    x = frame(pd)  # tf.estimator 2.15 accepts this too: labels are a separate dict
    y = pd.DataFrame({"a": np.arange(5)}, index=x.index)
    batches = read_batches(pandas_input_fn(x, y, batch_size=5, shuffle=False))
    assert list(batches[0][1]["a"]) == [0, 1, 2, 3, 4]


def model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.zeros_initializer())
    x = tf.stack([features["u"], features["v"]], axis=1)
    predictions = tf.squeeze(tf.matmul(x, w), axis=1)
    return models.squared_error_spec(mode, predictions, labels, learning_rate=0.2)


def test_estimator_trains_and_evaluates_on_a_data_frame(pd, tmp_path):
    rng = np.random.RandomState(0)
    x = pd.DataFrame({"u": rng.randn(40).astype(np.float32),
                      "v": rng.randn(40).astype(np.float32)})
    y = (2.0 * x["u"] - x["v"]).astype(np.float32)
    estimator = el.Estimator(model_fn, model_dir=str(tmp_path))
    estimator.train(pandas_input_fn(x, y, batch_size=8, num_epochs=None, shuffle=True),
                    max_steps=50)
    metrics = estimator.evaluate(pandas_input_fn(x, y, batch_size=16, shuffle=False),
                                 steps=None)
    assert metrics["global_step"] == 50
    assert metrics["loss"] < 0.01


# Importing estimator_lite.inputs must not need pandas; calling pandas_input_fn must
# say how to get it. A meta-path finder makes `import pandas` fail in a subprocess.
NO_PANDAS_SCRIPT = r"""
import sys
class NoPandas:
    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("No module named 'pandas' (blocked for the test)")
sys.meta_path.insert(0, NoPandas())
from estimator_lite import inputs
try:
    inputs.pandas_input_fn(None, shuffle=False)
except ImportError as e:
    print("IMPORT_ERROR " + str(e))
"""


def test_without_pandas_importing_works_and_calling_says_how_to_install_it():
    result = subprocess.run([sys.executable, "-c", NO_PANDAS_SCRIPT], capture_output=True,
                            text=True, timeout=300, check=False,
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "IMPORT_ERROR " in result.stdout
    assert PANDAS_HINT in result.stdout
