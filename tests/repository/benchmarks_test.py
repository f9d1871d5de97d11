"""Every benchmark runs in its --quick form and prints its JSON result line.

Nothing here is timed: a quick run measures nothing. It proves that the benchmarks
docs/performance.md quotes still run (benchmarks/towers.py once crashed on a RunConfig
change that no test ran). They run on estimator_lite only (ESTIMATOR_LITE_TF215_PYTHON is
removed): the tf.estimator side doubles their time in the suite and measures
nothing here either.
"""

import json
import os
import sys

import pytest

from tests.support import zygote

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Benchmark -> keys its JSON line must hold.
BENCHMARKS = {
    "train_overhead.py": ("bare_steps_per_sec", "estimator_vs_bare"),
    "strategies.py": ("one_device_steps_per_sec", "towers_2_steps_per_sec",
                      "mirrored_2_steps_per_sec", "mirrored_2_vs_one_device"),
    "towers.py": ("plain_steps_per_sec", "towers_4_steps_per_sec",
                  "one_device_overhead"),
    "canned.py": ("wide_deep_estimator_lite_steps_per_sec",
                  "wide_deep_estimator_lite_loop_steps_per_sec",
                  "wide_deep_estimator_lite_accuracy"),
    "vs_keras.py": ("estimator_k100_steps_per_sec", "keras_spe100_steps_per_sec",
                    "keras_spe100_jit_steps_per_sec", "best_estimator_vs_best_keras"),
    "vs_tf_estimator.py": ("speedup", "speedup_same_tf", "median_secs", "tf_versions"),
    "precision.py": ("plain_steps_per_sec", "jit_vs_plain", "bf16_vs_plain",
                     "load_average"),
}


def test_every_benchmark_is_listed():
    scripts = {n for n in os.listdir(os.path.join(ROOT, "benchmarks"))
               if n.endswith(".py") and n != "bench_util.py"}
    assert scripts == set(BENCHMARKS)


@pytest.mark.parametrize("script", sorted(BENCHMARKS))
def test_benchmark_quick_run_prints_its_json_line(script, tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_CONFIG", None)
    env.pop("ESTIMATOR_LITE_TF215_PYTHON", None)
    result = zygote.run(
        [sys.executable, os.path.join(ROOT, "benchmarks", script), "--quick"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False,
        # The benchmarks start worker interpreters themselves (~3 CPU s each to
        # import TensorFlow): those fork from the zygote too.
        subprocesses_via_zygote=True)
    assert result.returncode == 0, result.stderr[-4000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    missing = [key for key in BENCHMARKS[script] if key not in report]
    assert missing == [], report
