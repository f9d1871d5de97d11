"""Heads used eagerly, as tf.estimator 2.15's heads may be: loss, streaming
metrics over several batches, predictions and input errors, compared with
tf.estimator's answers (tests/oracle/head_eager_driver.py runs on both)."""


import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite.head import sequential_head
from tests.oracle import driver_path, load_driver, requires_oracle, run_oracle_driver

DRIVER = driver_path("head_eager_driver.py")


def _assert_close(actual, expected, path=""):
    if isinstance(expected, dict):
        assert sorted(actual) == sorted(expected), path
        for key, value in expected.items():
            _assert_close(actual[key], value, f"{path}/{key}")
    elif isinstance(expected, str) or expected is None:
        assert actual == expected, path
    else:
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5, err_msg=path)


@pytest.fixture(scope="module")
def results():
    driver = load_driver(DRIVER, "head_eager_driver")
    return driver.run(el, sequential_head)


@requires_oracle
def test_eager_heads_and_their_errors_match_tf_estimator(results):
    expected = run_oracle_driver(DRIVER)["result"]
    _assert_close(results, expected)


def test_eager_metrics_accumulate_over_batches():
    head = el.BinaryClassHead()
    logits = np.array([[2.0], [-1.0], [0.5], [-3.0]], np.float32)
    labels = np.array([[1], [1], [0], [0]], np.int64)
    metrics = head.metrics()
    head.update_metrics(metrics, {}, logits[:2], labels[:2])
    assert float(metrics["accuracy"].result()) == pytest.approx(0.5)
    head.update_metrics(metrics, {}, logits[2:], labels[2:])
    assert float(metrics["accuracy"].result()) == pytest.approx(0.5)  # 2 of 4 right
    assert float(metrics["label/mean"].result()) == pytest.approx(0.5)
    metrics["accuracy"].reset_state()
    head.update_metrics(metrics, {}, logits[:1], labels[:1])
    assert float(metrics["accuracy"].result()) == pytest.approx(1.0)


def test_eager_wrong_weights_are_a_value_error_and_a_graph_checks_them_when_run():
    head = el.MultiClassHead(3, weight_column="w")
    logits = np.zeros([2, 2, 3], np.float32)
    labels = np.zeros([2, 2], np.int64)
    with pytest.raises(ValueError, match=r"weights shape must be"):
        head.loss(labels, logits, {"w": np.ones([2, 1], np.float32)})
    with tf.Graph().as_default():
        loss = head.loss(labels, logits, {"w": np.ones([2, 1], np.float32)})
        with tf.compat.v1.Session() as session, pytest.raises(
                tf.errors.InvalidArgumentError, match=r"\[weights_shape: \] \[2 1\]"):
            session.run(loss)
