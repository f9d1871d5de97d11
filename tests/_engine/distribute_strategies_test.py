"""Multi-device strategies (MirroredStrategy, CentralStorageStrategy) on logical CPUs.

tests/oracle/strategy_driver.py runs every case in one fresh interpreter with 4
logical CPUs (set up before TensorFlow starts, and no `device_count` in the
session config: estimator_lite must see the devices by itself) and prints the
numbers. Checked here:
* one step with a strategy over 2 and 4 replicas equals one step of the
  unreplicated model on the global batch (SGD and Adam, custom model_fn; canned
  LinearRegressor/DNNRegressor with Keras-style optimizers; TF1's canned
  LinearRegressor with its SUM loss), to 1e-5;
* everything equals tf.estimator 2.15's answers for the same program (live when
  the oracle is installed, else the recorded tests/data/strategy_oracle.json),
  except where estimator_lite does better on purpose (a checkpoint written
  without a strategy keeps training with one).
"""

import json
import os
import sys

import numpy as np
import pytest

from tests.oracle import TF215_PYTHON, driver_path, requires_oracle
from tests.support import zygote

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVER = driver_path("strategy_driver.py")
RECORDED = os.path.join(ROOT, "tests", "data", "strategy_oracle.json")
PREFIX = "STRATEGY_RESULTS "
TOLERANCE = 1e-5
# tf.estimator 2.15 fails to restore a checkpoint written without a strategy when
# training with one (its Keras optimizer slots get `replica_1` keys); we do not.
IMPROVED = {("restore_both_ways", "None->mirrored:1"): "NotFoundError"}


def _run(python, backend):
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("TF_CONFIG", None)
    result = zygote.run([python, DRIVER, backend], capture_output=True, text=True,
                        env=env, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    lines = [line for line in result.stdout.splitlines() if line.startswith(PREFIX)]
    assert len(lines) == 1, result.stdout[-2000:]
    return json.loads(lines[0][len(PREFIX):])


@pytest.fixture(scope="module")
def lite():
    return _run(sys.executable, "estimator_lite")


def _close(a, b):
    return np.allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                       rtol=TOLERANCE, atol=TOLERANCE)


def _assert_same_numbers(got, want, where=""):
    """Same keys; numbers within TOLERANCE; everything else equal."""
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), where
        for key in want:
            _assert_same_numbers(got[key], want[key], f"{where}/{key}")
    elif isinstance(want, list) and want and isinstance(want[0], list):
        assert len(got) == len(want), f"{where}: {got} != {want}"
        for index, (one, other) in enumerate(zip(got, want, strict=True)):
            _assert_same_numbers(one, other, f"{where}[{index}]")
    elif isinstance(want, float) or (isinstance(want, list) and want and
                                     isinstance(want[-1], float)):
        assert _close(got, want), f"{where}: {got} != {want}"
    else:
        assert got == want, f"{where}: {got} != {want}"


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("replicas", [2, 4])
def test_one_mirrored_step_equals_one_step_on_the_global_batch(lite, optimizer,
                                                               replicas):
    replicated = lite[f"custom_{optimizer}_{replicas}_mirrored"]
    single = lite[f"custom_{optimizer}_{replicas}_none"]
    _assert_same_numbers(replicated["weights"], single["weights"])
    assert replicated["global_step"] == single["global_step"] == 1
    # The reported (summary) loss of a mean loss is the global batch's loss.
    _assert_same_numbers(replicated["loss"], single["loss"])
    # Eval metrics are aggregated over every replica's batches.
    _assert_same_numbers(replicated["eval"], single["eval"])
    assert replicated["keys"] == single["keys"]  # no replica-suffixed variables
    # The input_fn is called once (one worker) with an InputContext.
    assert replicated["input_calls"] == [[1, 0, replicas]]
    assert single["input_calls"] == [None]


@pytest.mark.parametrize("case", ["custom_sgd_2_mirrored_v1",
                                  "custom_sgd_2_central_storage"])
def test_v1_mirrored_and_central_storage_train_like_mirrored(lite, case):
    _assert_same_numbers(lite[case]["weights"], lite["custom_sgd_2_none"]["weights"])
    _assert_same_numbers(lite[case]["eval"], lite["custom_sgd_2_none"]["eval"])


@pytest.mark.parametrize("name", ["linear", "dnn", "v1_linear"])
def test_canned_estimator_step_with_a_strategy_equals_the_global_batch_step(lite, name):
    replicated, single = lite[f"canned_{name}_mirrored"], lite[f"canned_{name}_none"]
    _assert_same_numbers(replicated["weights"], single["weights"])
    replicated_eval, single_eval = dict(replicated["eval"]), dict(single["eval"])
    if name == "v1_linear":
        # TF1's SUM loss is per batch, and a replica's batch is half the global
        # one: the eval `loss` (mean of batch losses) halves, on tf.estimator too.
        assert _close(replicated_eval.pop("loss") * 2, single_eval.pop("loss"))
    _assert_same_numbers(replicated_eval, single_eval)


def test_checkpoints_restore_with_and_without_a_strategy(lite):
    assert lite["restore_both_ways"] == {
        "None->mirrored:0": 2, "None->mirrored:1": 4,
        "mirrored->None:0": 2, "mirrored->None:1": 4}


def _assert_matches_oracle(lite_results, oracle_results):
    for (case, key), oracle_value in IMPROVED.items():
        assert oracle_results[case][key] == oracle_value
        oracle_results[case][key] = lite_results[case][key]
    _assert_same_numbers(lite_results, oracle_results)


def test_results_equal_the_recorded_tf_estimator_answers(lite):
    with open(RECORDED) as f:
        _assert_matches_oracle(lite, json.load(f))


@pytest.mark.slow
@requires_oracle
def test_results_equal_tf_estimator_run_now(lite):
    _assert_matches_oracle(lite, _run(TF215_PYTHON, "tf_estimator"))
