"""A user's own Keras optimizer classes train as on tf.estimator 2.15.

tf.estimator 2.15 trained a Keras optimizer by calling its ``get_updates(loss,
params)``; users (and tf.estimator's own tests) wrote optimizers that define it,
minimal legacy OptimizerV2 subclasses (``_create_slots``, ``_resource_apply_dense``)
and legacy optimizers overriding ``get_gradients``.
tests/oracle/user_optimizer_driver.py trains such optimizers in LinearRegressor,
BaselineClassifier, a linear-only DNNLinearCombinedRegressor and a RegressionHead
model_fn, 10 steps each, on the oracle, on estimator_lite with tf-keras
(TF_USE_LEGACY_KERAS=1, in a subprocess; the linear model in two train() calls with
the same optimizer instance) and on estimator_lite with Keras 3 (this process):
same checkpoints, same metrics.
"""

import functools
import json
import os
import sys

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite import _keras
from estimator_lite.canned import optimizers
from tests.oracle import (
    LEGACY_KERAS_REASON,
    driver_path,
    legacy_keras_available,
    load_driver,
    requires_oracle,
    run_oracle_driver,
)
from tests.support import zygote

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVER_PATH = driver_path("user_optimizer_driver.py")
RTOL, ATOL = 1e-4, 1e-5

driver = load_driver(DRIVER_PATH, "user_optimizer_driver")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("user_optimizer"))


@functools.cache
def _oracle(workdir):
    return run_oracle_driver(DRIVER_PATH, workdir, "oracle")["results"]


@functools.cache
def _tf_keras(workdir):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2",
               TF_USE_LEGACY_KERAS="1")
    env.pop("TF_CONFIG", None)
    result = zygote.run([sys.executable, DRIVER_PATH, workdir, "legacy"],
                        capture_output=True, text=True, env=env, timeout=900,
                        check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout.strip().splitlines()[-1])["results"]


@functools.cache
def _keras3(workdir):
    return driver.run(el, "keras3", workdir)


def _assert_same(actual, expected, label):
    assert "error" not in expected, expected.get("error")
    assert "error" not in actual, f"{label}: {actual.get('error')}"
    assert sorted(actual["variables"]) == sorted(expected["variables"]), label
    for name, value in expected["variables"].items():
        np.testing.assert_allclose(actual["variables"][name], value, rtol=RTOL, atol=ATOL,
                                   err_msg=f"{label}: {name}")
    assert sorted(actual["metrics"]) == sorted(expected["metrics"]), label
    for key, value in expected["metrics"].items():
        np.testing.assert_allclose(actual["metrics"][key], value, rtol=RTOL, atol=ATOL,
                                   err_msg=f"{label}: {key}")


@pytest.mark.slow
@requires_oracle
@pytest.mark.skipif(not legacy_keras_available(), reason=LEGACY_KERAS_REASON)
@pytest.mark.parametrize("case", driver.cases("legacy"))
def test_legacy_user_optimizer_trains_as_tf_estimator(case, workdir):
    expected = _oracle(workdir)[case]
    _assert_same(_tf_keras(workdir)[case], expected, f"tf-keras/{case}")
    assert expected["variables"]["global_step"] == driver.TRAIN_STEPS


@requires_oracle
def test_oracle_keeps_the_minimal_optimizer_slots_in_its_checkpoint(workdir):
    variables = _oracle(workdir)["linear_user_momentum"]["variables"]
    assert variables["training/UserMomentum/momentum"] == pytest.approx(0.5)
    assert "training/UserMomentum/linear/linear_model/x/weights/velocity" in variables


@requires_oracle
def test_oracle_clips_through_the_users_get_gradients(workdir):
    # 10 steps of at most 0.5 * 0.1 each: the clipping is what was applied.
    variables = _oracle(workdir)["linear_clipped_sgd"]["variables"]
    assert abs(variables["linear/linear_model/bias_weights"][0]) <= 0.5 + 1e-6


@requires_oracle
@pytest.mark.parametrize("case", driver.cases("keras3"))
def test_keras3_optimizer_with_get_updates_trains_as_tf_estimator(case, workdir):
    # The oracle's legacy HandSGD and a Keras 3 one run the same get_updates.
    _assert_same(_keras3(workdir)[case], _oracle(workdir)[case], f"keras3/{case}")


# Fast checks: neither the oracle nor tf-keras needed. -----------------------------

class TrainOpSGD(tf.keras.optimizers.SGD):
    """Defines get_updates: the first op it returns is a head's train op."""

    def get_updates(self, loss, params):
        del params
        return [tf.strings.join(["trained at loss ", tf.strings.as_string(loss)]),
                tf.constant("not the train op")]


class HyperSGD(tf.keras.optimizers.SGD):
    """Only other defaults: trained as Keras' SGD is."""

    def __init__(self):
        super().__init__(learning_rate=0.3)


def test_which_optimizers_train_through_their_get_updates():
    assert _keras.trains_through_get_updates(TrainOpSGD())
    assert not _keras.trains_through_get_updates(HyperSGD())
    assert not _keras.trains_through_get_updates(tf.keras.optimizers.SGD())
    assert not _keras.trains_through_get_updates(
        tf.compat.v1.train.GradientDescentOptimizer(0.1))
    assert _keras.user_defined_methods(TrainOpSGD, ("get_updates", "build")) == [
        "get_updates"]


def test_head_train_op_is_the_first_op_get_updates_returns():
    optimizer = TrainOpSGD()  # Keras 3 makes its variables where it is built.
    with tf.Graph().as_default():
        w = tf.compat.v1.get_variable("w", initializer=tf.constant([[1.0]]))
        spec = el.RegressionHead().create_estimator_spec(
            features={}, mode=el.ModeKeys.TRAIN, logits=w, labels=tf.constant([[3.0]]),
            optimizer=optimizer, trainable_variables=[w])
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            assert session.run(spec.train_op) == b"trained at loss 4.000000"


def test_get_updates_optimizer_cannot_be_given_gradients():
    built = optimizers.graph_optimizer(TrainOpSGD())
    assert built.trains_from_loss
    with pytest.raises(TypeError, match="defines its own get_updates"):
        built.apply_gradients([])


def test_get_optimizer_instance_v2_returns_a_get_updates_optimizer_as_it_is():
    optimizer = TrainOpSGD()
    assert optimizers.get_optimizer_instance_v2(optimizer) is optimizer
    assert isinstance(optimizers.get_optimizer_instance_v2(HyperSGD()),
                      optimizers.SGD)

