"""estimator_lite.inputs.numpy_input_fn behaves like tf.estimator 2.15's.

Batches, epochs, shuffling and errors are checked in process; one test runs the
same script on tf.estimator 2.15 (ESTIMATOR_LITE_TF215_PYTHON) and compares.
"""

import json
import os
import sys

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite.inputs import numpy_input_fn
from tests.oracle import TF215_PYTHON, requires_oracle
from tests.support import models, zygote
from tests.support.models import read_batches

SHUFFLE_ERROR = "shuffle must be provided and explicitly set as boolean"
X_TYPE_ERROR = "x must be a dict or array; got list"
EMPTY_X_ERROR = "x cannot be an empty dict"
EMPTY_Y_ERROR = "y cannot be empty dict, use None instead."
DUPLICATE_ERROR = "1 duplicate keys are found in both x and y: {'a'}"
LENGTH_ERROR = "Length of tensors in x and y is mismatched."
ARRAY_ERROR = "x['a'] must be a numpy array; got list"
NO_ROWS_ERROR = "must have at least one row"
SCALAR_ERROR = "must have a first (row) dimension"


def test_batches_run_across_epochs_and_the_last_one_may_be_short():
    x = {"a": np.arange(5, dtype=np.float32), "b": np.arange(10).reshape(5, 2)}
    batches = read_batches(numpy_input_fn(x, np.arange(5) * 10, batch_size=2,
                                          num_epochs=2, shuffle=False))
    assert [list(features["a"]) for features, _ in batches] == [
        [0, 1], [2, 3], [4, 0], [1, 2], [3, 4]]
    assert [list(labels) for _, labels in batches] == [
        [0, 10], [20, 30], [40, 0], [10, 20], [30, 40]]
    assert batches[0][0]["b"].tolist() == [[0, 1], [2, 3]]
    assert batches[0][0]["a"].dtype == np.float32


def test_array_x_and_no_y_give_a_single_feature_tensor():
    fn = numpy_input_fn(np.arange(10.0).reshape(5, 2), batch_size=3, shuffle=False)
    with tf.Graph().as_default():
        features = fn()
        assert isinstance(features, tf.Tensor)
        assert features.shape.as_list() == [None, 2]
        assert features.dtype == tf.float64
    batches = read_batches(fn)
    assert [b.shape for b in batches] == [(3, 2), (2, 2)]


def test_dict_labels_and_text_features():
    fn = numpy_input_fn({"s": np.array(["x", "yy", "z"])},
                        {"l1": np.arange(3), "l2": np.ones(3)}, batch_size=2,
                        shuffle=False)
    batches = read_batches(fn)
    assert [list(f["s"]) for f, _ in batches] == [[b"x", b"yy"], [b"z"]]
    assert [list(labels["l1"]) for _, labels in batches] == [[0, 1], [2]]
    objects = read_batches(numpy_input_fn({"s": np.array(["é", b"b"], dtype=object)},
                                          batch_size=2, shuffle=False))
    assert list(objects[0]["s"]) == ["é".encode(), b"b"]


def test_endless_input_has_full_static_batches():
    fn = numpy_input_fn({"a": np.arange(5)}, np.arange(5), batch_size=2,
                        num_epochs=None, shuffle=False)
    with tf.Graph().as_default():
        features, labels = fn()
        assert features["a"].shape.as_list() == [2]
        assert labels.shape.as_list() == [2]
    batches = read_batches(fn, max_batches=7)
    assert len(batches) == 7
    assert np.concatenate([f["a"] for f, _ in batches]).tolist() == [0, 1, 2, 3, 4] * 2 + [
        0, 1, 2, 3]


def test_zero_or_negative_epochs_are_an_empty_input_as_on_tf_estimator():
    for epochs in (0, -1):
        fn = numpy_input_fn({"a": np.arange(3)}, batch_size=2, num_epochs=epochs,
                            shuffle=False)
        assert read_batches(fn, max_batches=4) == []


def test_shuffle_permutes_every_epoch_and_follows_the_graph_seed():
    def epochs(seed):
        with tf.Graph().as_default():
            tf.compat.v1.set_random_seed(seed)
            features = numpy_input_fn({"a": np.arange(20)}, batch_size=20, num_epochs=3,
                                      shuffle=True)()
            with tf.compat.v1.Session() as session:
                return [session.run(features)["a"].tolist() for _ in range(3)]

    first = epochs(seed=1)
    assert all(sorted(epoch) == list(range(20)) for epoch in first)
    assert first[0] != list(range(20))
    assert first[0] != first[1]  # reshuffled per epoch
    assert epochs(seed=1) == first
    assert epochs(seed=2) != first


def test_several_threads_keep_the_row_order():
    batches = read_batches(numpy_input_fn({"a": np.arange(50)}, batch_size=4,
                                          shuffle=False, num_threads=3))
    assert np.concatenate([b["a"] for b in batches]).tolist() == list(range(50))


def test_the_arrays_stay_out_of_the_graph_def():
    x = {"a": np.zeros((100_000, 4), np.float32)}  # 1.6 MB of data
    with tf.Graph().as_default() as graph:
        numpy_input_fn(x, batch_size=10, shuffle=True)()
        assert graph.as_graph_def().ByteSize() < 50_000


@pytest.mark.parametrize("shuffle", [None, 1, "True"])
def test_shuffle_must_be_a_bool(shuffle):
    with pytest.raises(ValueError, match=SHUFFLE_ERROR):
        numpy_input_fn({"a": np.arange(3)}, shuffle=shuffle)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"x": [1, 2]}, TypeError, X_TYPE_ERROR),
    ({"x": {"a": [1, 2]}}, TypeError, ARRAY_ERROR),
    ({"x": {}}, ValueError, EMPTY_X_ERROR),
    ({"y": {}}, ValueError, EMPTY_Y_ERROR),
    ({"y": {"a": np.arange(3)}}, ValueError, DUPLICATE_ERROR),
    ({"y": np.arange(4)}, ValueError, LENGTH_ERROR),
    ({"x": {"a": np.arange(3), "b": np.arange(2)}}, ValueError, LENGTH_ERROR),
    ({"x": {"a": np.arange(0)}}, ValueError, NO_ROWS_ERROR),
    ({"x": np.array(3.0)}, ValueError, SCALAR_ERROR),
    ({"batch_size": 0}, ValueError, "batch_size must be >= 1, got 0"),
    ({"batch_size": 2.5}, TypeError, "batch_size must be an int"),
    ({"num_epochs": 1.5}, TypeError, "num_epochs must be an int"),
    ({"num_threads": 0}, ValueError, "num_threads must be >= 1, got 0"),
    ({"queue_capacity": 0}, ValueError, "queue_capacity must be >= 1, got 0"),
])
def test_bad_arguments(kwargs, error, message):
    arguments = {"x": {"a": np.arange(3)}, "shuffle": False}
    arguments.update(kwargs)
    with pytest.raises(error) as raised:
        numpy_input_fn(**arguments)()
    assert message in str(raised.value)


def test_arrays_of_different_lengths_fail_when_the_input_fn_is_called():
    # tf.estimator 2.15: numpy_input_fn builds the input_fn; calling it raises.
    input_fn = numpy_input_fn({"a": np.arange(3)}, np.arange(4), shuffle=False)
    with pytest.raises(ValueError, match=LENGTH_ERROR):
        input_fn()


def model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.zeros_initializer())
    return models.squared_error_spec(mode, tf.matmul(features["x"], w), labels)


def test_estimator_trains_evaluates_and_predicts_on_numpy_input(tmp_path):
    x = np.random.RandomState(0).randn(50, 3).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    estimator = el.Estimator(model_fn, model_dir=str(tmp_path))
    estimator.train(numpy_input_fn({"x": x}, y, batch_size=10, num_epochs=None,
                                   shuffle=True), max_steps=60)
    metrics = estimator.evaluate(numpy_input_fn({"x": x}, y, batch_size=16,
                                                shuffle=False), steps=None)
    assert metrics["global_step"] == 60
    assert metrics["loss"] < 0.05
    predictions = list(estimator.predict(numpy_input_fn({"x": x[:7]}, batch_size=3,
                                                        shuffle=False)))
    assert len(predictions) == 7  # batches of 3, 3 and 1
    np.testing.assert_allclose([p["y"][0] for p in predictions], y[:7, 0], atol=0.2)


# Runs on both backends: `inputs` is tf.compat.v1.estimator.inputs (TF 2.15) or
# estimator_lite.inputs; prints the batches and the errors as JSON.
PARITY_SCRIPT = r"""
import json, sys
import numpy as np
import tensorflow as tf
if sys.argv[1] == "oracle":
    inputs = tf.compat.v1.estimator.inputs
else:
    from estimator_lite import inputs

def batches(fn):
    out = []
    with tf.Graph().as_default():
        tensors = fn()
        with tf.compat.v1.train.MonitoredSession() as session:
            while not session.should_stop() and len(out) < 20:
                out.append(tf.nest.map_structure(
                    lambda v: [x.decode() if isinstance(x, bytes) else x
                               for x in v.tolist()], session.run(tensors)))
    return out

def error(**kwargs):
    args = dict(x={"a": np.arange(5)}, shuffle=False)
    args.update(kwargs)
    try:
        with tf.Graph().as_default():
            inputs.numpy_input_fn(**args)()
    except Exception as e:
        return [type(e).__name__, str(e)]
    return None

report = {
    "dict": batches(inputs.numpy_input_fn(
        {"a": np.arange(5.0), "s": np.array(list("vwxyz"))}, np.arange(5) * 10,
        batch_size=2, num_epochs=2, shuffle=False)),
    "array": batches(inputs.numpy_input_fn(np.arange(10).reshape(5, 2), batch_size=3,
                                           shuffle=False)),
    "label_dict": batches(inputs.numpy_input_fn(
        {"a": np.arange(3)}, {"b": np.ones(3), "c": np.arange(3)}, batch_size=2,
        shuffle=False)),
    "errors": [error(shuffle=None), error(x=[1, 2]), error(x={}), error(y={}),
               error(y={"a": np.arange(5)}), error(y=np.arange(4))],
}
print("PARITY " + json.dumps(report, sort_keys=True))
"""


def _parity_report(python, backend):
    result = zygote.run([python, "-c", PARITY_SCRIPT, backend], capture_output=True,
                        text=True, timeout=300, check=False,
                        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, result.stderr[-3000:]
    line = [x for x in result.stdout.splitlines() if x.startswith("PARITY ")][-1]
    return json.loads(line[len("PARITY "):])


@requires_oracle
def test_same_batches_and_errors_as_tf_estimator():
    lite = _parity_report(sys.executable, "lite")
    oracle = _parity_report(TF215_PYTHON, "oracle")
    assert lite == oracle
    assert len(oracle["dict"]) == 5 and len(oracle["errors"]) == 6
