"""The bundled examples run as a user runs them (a subprocess, real data, no download)."""

import os
import re
import sys

from tests.support import zygote

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run_example(name, *args, timeout_secs=300):
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("TF_CONFIG", None)
    return zygote.run([sys.executable, os.path.join(ROOT, "examples", name), *args],
                      capture_output=True, text=True, env=env, check=False,
                      timeout=timeout_secs)


def _example_result(name, pattern, *args):
    """Runs examples/<name> with `args`; asserts it exited 0 and printed its result
    line. Returns (the line's regex match of `pattern`, what the run printed)."""
    result = _run_example(name, *args)
    assert result.returncode == 0, result.stderr[-3000:]
    line = re.search(pattern, result.stdout)
    assert line, result.stdout
    return line, result


def test_digits_main_job_trains_evaluates_exports_and_reloads(tmp_path):
    line, result = _example_result(
        "digits.py", r"test accuracy ([\d.]+) \(Estimator.evaluate\), ([\d.]+) "
                     r"\(reloaded SavedModel (\S+)\) at step (\d+)",
        "--model-dir", str(tmp_path), "--max-steps", "400")
    evaluated, reloaded, export_dir, step = line.groups()
    assert float(evaluated) > 0.9
    assert float(reloaded) == float(evaluated)
    assert int(step) == 400
    assert os.path.exists(os.path.join(export_dir, "saved_model.pb"))
    assert "steps/sec" in result.stderr  # progress lines are visible


def test_multi_tower_example_trains_on_two_logical_devices(tmp_path):
    line, _ = _example_result(
        "multi_tower.py",
        r"2 towers on \['/device:CPU:0', '/device:CPU:1'\]: test accuracy ([\d.]+) "
        r"\(evaluate\), ([\d.]+) \(reloaded SavedModel\) at step (\d+)",
        "--towers", "2", "--max-steps", "300", "--model-dir", str(tmp_path))
    assert float(line.group(1)) > 0.85
    assert float(line.group(2)) == float(line.group(1))
    assert int(line.group(3)) == 300


def test_multitask_example_reports_both_heads(tmp_path):
    line, _ = _example_result(
        "multitask.py",
        r"local: digit accuracy ([\d.]+), parity accuracy ([\d.]+) at step (\d+)",
        "--model-dir", str(tmp_path), "--max-steps", "400", "--fresh-start")
    assert float(line.group(1)) > 0.85 and float(line.group(2)) > 0.85
    assert int(line.group(3)) <= 400


def test_canned_census_style_example_trains_exports_and_serves(tmp_path):
    line, _ = _example_result(
        "canned_census_style.py",
        r"test accuracy ([\d.]+) \(evaluate\), ([\d.]+) \(reloaded SavedModel (\S+)\), "
        r"auc ([\d.]+) at step (\d+)",
        "--model-dir", str(tmp_path), "--max-steps", "300")
    assert float(line.group(1)) > 0.85
    assert float(line.group(2)) == float(line.group(1))  # the SavedModel agrees
    assert int(line.group(5)) == 300
