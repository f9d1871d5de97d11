"""The bundled examples run as a user runs them (a subprocess, real data, no download)."""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run_example(name, *args, timeout_secs=300):
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("TF_CONFIG", None)
    return subprocess.run([sys.executable, os.path.join(ROOT, "examples", name), *args],
                          capture_output=True, text=True, env=env, check=False,
                          timeout=timeout_secs)


def test_digits_main_job_trains_evaluates_exports_and_reloads(tmp_path):
    result = _run_example("digits.py", "--model-dir", str(tmp_path),
                          "--max-steps", "400")
    assert result.returncode == 0, result.stderr[-3000:]
    line = re.search(r"test accuracy ([\d.]+) \(Estimator.evaluate\), ([\d.]+) "
                     r"\(reloaded SavedModel (\S+)\) at step (\d+)", result.stdout)
    assert line, result.stdout
    evaluated, reloaded, export_dir, step = line.groups()
    assert float(evaluated) > 0.9
    assert float(reloaded) == float(evaluated)
    assert int(step) == 400
    assert os.path.exists(os.path.join(export_dir, "saved_model.pb"))
    assert "steps/sec" in result.stderr  # progress lines are visible
