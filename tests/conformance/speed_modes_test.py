"""Every conformance scenario gives the same observation in every speed mode.

The speed modes (tests/conformance/driver.py MODES) run estimator_lite with an
optimization forced on or off: multi-step loops of 4 and 3 steps
(`experimental_steps_per_loop` on every RunConfig that does not set it) and the
thread pool for every session (the default executor choice off). Each is compared
with the plain run, exactly: a default-on optimization must not change a result,
an error or a hang, and a loop must give K single steps' result, or fall back.
What differs at loop boundaries only (hooks and periodic actions run once per
loop; docs/performance.md "Multi-step loops") is listed in LOOP_BOUNDARY with the
reason. Slow (five driver runs over ~960 scenarios): `.ci/run` runs it after the
suite, with the fault scenarios.
"""

import sys

import pytest

from tests.conformance import driver
from tests.conformance.conformance_test import run_driver
from tests.conformance.registry import differences

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

# Why a loop of K steps shows a scenario differently from K single steps, by design
# (docs/performance.md, "Multi-step loops": what happens at loop boundaries only).
_CHECKPOINTS = (
    "checkpoints are saved at the first loop boundary at or past each period, so "
    "the files, the listeners' calls and the evaluations and exports that follow "
    "each save (train_and_evaluate) are at other steps")
_HOOKS = (
    "hooks run once per loop: their before_run/after_run calls, the steps they see, "
    "and a stop request or an error take effect at the loop's end (so do the "
    "checkpoints)")
_SUMMARIES = "the training summaries are written at loop boundaries"
_EARLY_STOP = (
    "early-stopping checks run after each loop, so training stops at the end of the "
    "loop in which the condition held")

# Scenario name -> the reason above (K=4 or K=3 differs there, at boundaries only).
LOOP_BOUNDARY = {
    "config/train_effect/keep_max_0": _CHECKPOINTS,
    "config/train_effect/keep_max_none": _CHECKPOINTS,
    "config/train_effect/log_steps_none": _CHECKPOINTS,
    "config/train_effect/no_graph_def": _CHECKPOINTS,
    "config/train_effect/steps_1": _CHECKPOINTS,
    "config/train_effect/steps_2": _CHECKPOINTS,
    "config/train_effect/summary_steps_0": _CHECKPOINTS,
    "config/train_effect/summary_steps_none": _CHECKPOINTS,
    "constructs/model_fn/replay_queue": _CHECKPOINTS,
    "constructs/model_fn/side_dataset_metric": _CHECKPOINTS,
    "constructs/model_fn/waiting_py_functions": _CHECKPOINTS,
    "estimator/evaluate_args/checkpoint_path_explicit": _CHECKPOINTS,
    "estimator/export_args/checkpoint_path_first": _CHECKPOINTS,
    "estimator/train_sequence/max_steps_then_lower_max_steps": _CHECKPOINTS,
    "estimator/train_sequence/max_steps_twice": _CHECKPOINTS,
    "estimator/train_sequence/steps_then_max_steps": _CHECKPOINTS,
    "estimator/train_sequence/steps_then_steps": _CHECKPOINTS,
    "hooks/summaries/every_2": _SUMMARIES,
    "hooks/summaries/every_step": _SUMMARIES,
    "hooks/summaries/user_summary": _SUMMARIES,
    "hooks/summaries/with_step_log": _SUMMARIES,
    "hooks/train/after_run_raises/at_1": _HOOKS,
    "hooks/train/after_run_raises/at_2": _HOOKS,
    "hooks/train/after_run_raises/at_3": _HOOKS,
    "hooks/train/hook_adds_variable_in_begin": _HOOKS,
    "hooks/train/hook_without_fetches": _HOOKS,
    "hooks/train/input_ends": _HOOKS,
    "hooks/train/listener_stops/at_0": _HOOKS,
    "hooks/train/listener_stops/at_2": _HOOKS,
    "hooks/train/listener_stops/at_4_every_2": _HOOKS,
    "hooks/train/max_steps/keep_max_2": _HOOKS,
    "hooks/train/max_steps/none": _HOOKS,
    "hooks/train/max_steps/secs_large": _HOOKS,
    "hooks/train/max_steps/steps_1": _HOOKS,
    "hooks/train/max_steps/steps_2": _HOOKS,
    "hooks/train/max_steps/steps_3": _HOOKS,
    "hooks/train/nan_loss/from_2": _HOOKS,
    "hooks/train/nan_loss/from_3": _HOOKS,
    "hooks/train/order/all": _HOOKS,
    "hooks/train/order/chief_and_user": _HOOKS,
    "hooks/train/order/spec_only": _HOOKS,
    "hooks/train/order/training_and_user": _HOOKS,
    "hooks/train/order/two_user_hooks": _HOOKS,
    "hooks/train/raises_in/end": _HOOKS,
    "hooks/train/request_stop/at_1": _HOOKS,
    "hooks/train/request_stop/at_2": _HOOKS,
    "hooks/train/request_stop/at_3": _HOOKS,
    "hooks/train/request_stop/at_5": _HOOKS,
    "hooks/train/resume/max_steps_below": _HOOKS,
    "hooks/train/resume/max_steps_further": _HOOKS,
    "hooks/train/resume/max_steps_reached": _HOOKS,
    "hooks/train/resume/steps_after_max_steps": _HOOKS,
    "hooks/train/resume/steps_twice": _HOOKS,
    "hooks/train/steps/keep_max_2": _HOOKS,
    "hooks/train/steps/none": _HOOKS,
    "hooks/train/steps/secs_large": _HOOKS,
    "hooks/train/steps/steps_1": _HOOKS,
    "hooks/train/steps/steps_2": _HOOKS,
    "hooks/train/steps/steps_3": _HOOKS,
    "hooks/train/stop_at_step_hook": _HOOKS,
    "training/early_stopping/explicit_eval_dir": _EARLY_STOP,
    "training/early_stopping/higher/crossed": _EARLY_STOP,
    "training/early_stopping/higher/min_steps_equal": _EARLY_STOP,
    "training/early_stopping/lower/crossed": _EARLY_STOP,
    "training/early_stopping/no_decrease/stalled": _EARLY_STOP,
    "training/early_stopping/no_decrease/zero_steps": _EARLY_STOP,
    "training/early_stopping/no_increase/stalled": _EARLY_STOP,
    "training/early_stopping/resume_after_stop": _EARLY_STOP,
    "training/early_stopping_fn/after_3_calls": _EARLY_STOP,
    "training/early_stopping_fn/first_call": _EARLY_STOP,
    "training/early_stopping_local/first_evaluation": _EARLY_STOP,
    "training/early_stopping_local/never": _EARLY_STOP,
    "training/early_stopping_local/unknown_metric": _EARLY_STOP,
    "training/exporters/best": _CHECKPOINTS,
    "training/exporters/best_always": _CHECKPOINTS,
    "training/exporters/best_bigger_loss": _CHECKPOINTS,
    "training/exporters/best_keep_1": _CHECKPOINTS,
    "training/exporters/best_named_eval": _CHECKPOINTS,
    "training/exporters/best_never": _CHECKPOINTS,
    "training/exporters/best_pattern_elsewhere": _CHECKPOINTS,
    "training/exporters/custom_exporter": _CHECKPOINTS,
    "training/exporters/final": _CHECKPOINTS,
    "training/exporters/latest": _CHECKPOINTS,
    "training/exporters/latest_and_final": _CHECKPOINTS,
    "training/exporters/latest_as_text": _CHECKPOINTS,
    "training/exporters/latest_keep_1": _CHECKPOINTS,
    "training/exporters/latest_keep_none": _CHECKPOINTS,
    "training/exporters/raising_receiver": _CHECKPOINTS,
    "training/exporters/single_not_list": _CHECKPOINTS,
    "training/local/eval_hooks": _CHECKPOINTS,
    "training/local/eval_name": _CHECKPOINTS,
    "training/local/plain": _CHECKPOINTS,
    "training/local/save_every_3": _CHECKPOINTS,
    "training/local/save_every_step": _CHECKPOINTS,
    "training/local/steps_1_eval_each": _CHECKPOINTS,
    "training/local/throttle_large": _CHECKPOINTS,
    "training/local/train_hooks": _CHECKPOINTS,
    "training/local/train_input_ends": _CHECKPOINTS,
    "training/local/train_listeners": _CHECKPOINTS,
}


@pytest.fixture(scope="module")
def plain():
    return run_driver(sys.executable, "lite")


@pytest.mark.parametrize("mode", driver.MODES)
def test_a_speed_mode_gives_the_plain_runs_observations(mode, plain):
    moded = run_driver(sys.executable, "lite", ("--mode", mode))
    assert sorted(moded) == sorted(plain)
    unlisted = []
    for name in sorted(plain):
        found = differences(plain[name], moded[name], rtol=0.0, atol=0.0)
        # The thread pool must show no difference at all.
        if found and (mode == "pool" or name not in LOOP_BOUNDARY):
            unlisted += [f"{name}: {line}" for line in found[:5]]
    assert not unlisted, "\n".join([f"mode {mode} differs from the plain run:",
                                    *unlisted])


def test_loop_boundary_entries_name_scenarios():
    assert set(LOOP_BOUNDARY) <= set(driver.load_scenarios().SCENARIOS)
