"""Every conformance scenario gives tf.estimator 2.15's observation on estimator_lite.

The scenarios (tests/conformance/scenarios_*.py) are small user programs; the
oracle's observations are recorded in tests/data/conformance_oracle.json
(regenerate: `python tests/conformance/driver.py --record`), so this test runs on
a fresh machine without the oracle; `.ci/run` checks that the recording is still
the oracle's (`driver.py --check`) before it runs the suite. A difference kept on
purpose is listed in DELIBERATE with its reason (and in docs/differences.md).
"""

import json
import os
import sys

import pytest

from tests.conformance import driver
from tests.conformance.registry import differences
from tests.support import zygote

# The first test's setup runs every scenario in one driver process (~950 small
# programs: minutes on a loaded 2-core machine), more than pytest.ini's 600 s.
pytestmark = pytest.mark.timeout(1800)

# Scenario name -> why estimator_lite differs from tf.estimator 2.15 on purpose.
_EXPORTER_CHECKED = (
    "exporters check their arguments when built; tf.estimator builds the exporter "
    "and fails at its first export (after training) with a TypeError or "
    "AttributeError")
_TF1_REDUCTION = (
    "TF1 loss-reduction names (tf.compat.v1.losses.Reduction) are accepted and "
    "mapped to their TF2 equivalents, so a TF1 program's head arguments work; "
    "tf.estimator 2.15 raises ValueError")
_MORE_OPTIMIZERS = (
    "a Keras optimizer (Keras 3 or tf-keras) or a tf.compat.v1.train optimizer "
    "given to a canned estimator or a head trains (mapped to its graph-mode "
    "equivalent); tf.estimator 2.15 refuses it in graph mode")

DELIBERATE = {
    "estimator/predict_args/scalar_prediction": (
        "predict(yield_single_examples=True) with a prediction that has no batch "
        "dimension is a ValueError naming it and suggesting yield_single_examples="
        "False; tf.estimator crashes with an IndexError"),
    "inputs/numpy_input_fn/batch_0": (
        "numpy_input_fn checks its arguments when it is called: batch_size=0 is a "
        "ValueError naming the argument there; tf.estimator fails later, in train(), "
        "with an IndexError from its feeding thread"),
    "export/raw_receiver/numpy_value": (
        "build_raw_serving_input_receiver_fn takes anything with a dtype and a shape "
        "(numpy arrays, TensorSpecs) as a template; tf.estimator 2.15 fails on them "
        "with an AttributeError when the receiver fn runs"),
    # Exporters check their receiver fn, assets_extra and exports_to_keep when
    # built; tf.estimator fails at the first export, after training.
    "training/exporter_args/latest/receiver_none": _EXPORTER_CHECKED,
    "training/exporter_args/latest/receiver_not_callable": _EXPORTER_CHECKED,
    "training/exporter_args/latest/assets_extra_list": _EXPORTER_CHECKED,
    "training/exporter_args/latest/exports_to_keep_float": _EXPORTER_CHECKED,
    "training/exporter_args/best/receiver_none": _EXPORTER_CHECKED,
    "training/exporter_args/final/receiver_none": _EXPORTER_CHECKED,
    "training/exporters/best": "BestExporter keeps best_eval_result.json beside its "
    "exports, so a restarted job never exports a worse model (tensorflow#47396)",
    "training/exporters/raising_receiver": "a failed export leaves no temp dir "
    "(exports are written atomically)",
    "hooks/train/nan_loss/from_3": (
        "a NaN loss stops training before the step's checkpoint is saved; "
        "tf.estimator saves the NaN weights first, so a restarted job resumes from "
        "them and fails again"),
    "canned/arguments/loss_reduction_v1_name": _TF1_REDUCTION,
    "heads/binary/reduction_v1_weighted_mean": _TF1_REDUCTION,
    "canned/baseline_classifier/two_features": (
        "tf.estimator 2.15's TF2 Baseline estimators fail with a "
        "FailedPreconditionError when the features hold two or more non-weight "
        "features (a bug); estimator_lite trains"),
    "canned/dnn_classifier/optimizer_keras_2_15_instance": _MORE_OPTIMIZERS,
    "canned/dnn_classifier/optimizer_v1_instance": _MORE_OPTIMIZERS,
    "heads/train_with/keras_sgd": _MORE_OPTIMIZERS,
    "heads/train_with/v1_optimizer": _MORE_OPTIMIZERS,
    "config/tf_config_model_dir/trailing_slash": (
        "a model_dir argument that differs from TF_CONFIG's only in spelling (a "
        "trailing '/') names the same directory and is accepted"),
    "config/tf_config/empty_string": (
        "an empty TF_CONFIG (what launchers and Kubernetes templates leave) is a "
        "local run; tf.estimator fails to parse it as JSON"),
    "config/tf_config/json_list": (
        "a TF_CONFIG that is not a JSON object is a ValueError saying so; "
        "tf.estimator crashes with an AttributeError"),
    "config/argument/distribute_with_tf_config": (
        "with train_distribute and a cluster TF_CONFIG, RunConfig's task_type, task_id, "
        "is_chief, master, num_worker_replicas, global_id_in_cluster and "
        "session_config describe the task TF_CONFIG names, as they do without a "
        "strategy; tf.estimator shows a placeholder view (worker 0, chief, one worker, "
        "master '') on every task and gives the real role only inside "
        "train_and_evaluate, so a program's `if config.is_chief:` outside it ran on "
        "every worker"),
    "training/local/resume_after_max_steps": (
        "re-running train_and_evaluate after max_steps was reached returns the final "
        "metrics (evaluating the last checkpoint if needed); tf.estimator returns "
        "(None, None)"),
}

# Scenario name -> a difference not yet fixed (not a choice): listed so the suite
# stays green while it is, and fails when it is fixed (the entry must then go).
KNOWN_GAPS = {}

_SCENARIOS = driver.load_scenarios().SCENARIOS


def run_driver(python, flavor, patterns=()):
    """Runs the driver in its own process; returns {name: observation}."""
    env = dict(os.environ, PYTHONPATH=driver.ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_CONFIG", None)
    result = zygote.run([python, os.path.abspath(driver.__file__), flavor, *patterns],
                        capture_output=True, text=True, env=env, timeout=1700,
                        check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def recorded():
    with open(driver.RECORDED, encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def lite_results():
    return run_driver(sys.executable, "lite")


def test_every_scenario_has_a_recorded_answer(recorded):
    missing = sorted(set(_SCENARIOS) - set(recorded))
    stale = sorted(set(recorded) - set(_SCENARIOS))
    assert not missing and not stale, (
        f"record the oracle's answers (python tests/conformance/driver.py --record): "
        f"missing {missing}, no longer a scenario {stale}")


def test_deliberate_differences_and_known_gaps_name_scenarios():
    assert set(DELIBERATE) <= set(_SCENARIOS)
    assert set(KNOWN_GAPS) <= set(_SCENARIOS)
    assert not set(DELIBERATE) & set(KNOWN_GAPS)


@pytest.mark.parametrize("name", sorted(_SCENARIOS))
def test_scenario_behaves_as_tf_estimator(name, recorded, lite_results):
    if name not in recorded:
        pytest.fail(f"no recorded answer for {name!r}: python tests/conformance/"
                    "driver.py --record")
    found = differences(recorded[name], lite_results[name])
    listed = DELIBERATE.get(name) or KNOWN_GAPS.get(name)
    if listed:
        assert found, (f"{name} is listed as a difference ({listed}) but now behaves "
                       "as tf.estimator: remove it from DELIBERATE / KNOWN_GAPS")
        return
    assert not found, "\n".join([f"{name} differs from tf.estimator 2.15:", *found])
