"""`python -m estimator_lite.inspect` on real model_dirs: ours and tf.estimator 2.15's.

Our model_dir comes from an in-process cluster (ps, chief, worker, evaluator) running
`el.train_and_evaluate` with a named EvalSpec, a LatestExporter and a BestExporter,
so it has every kind of file, completion markers included. The tf.estimator one is
written by tests/oracle/inspect_driver.py under the oracle interpreter.
"""

import json
import os
import shutil
import sys
import time

import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite import inspect as inspect_lib
from estimator_lite._engine import completion
from estimator_lite._engine import local_cluster as cluster_lib
from estimator_lite._engine import model_dir as names
from tests.oracle import driver_path, requires_oracle, run_oracle_driver
from tests.support import models, zygote

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_STEPS = 40
EVAL_NAME = "holdout"
HOUR_SECS = 3600
NOT_A_DIR = "model_dir must be an existing directory"
NO_MARKER = "no training_complete marker"
MARKER_MISMATCH = "does not match the newest checkpoint"


def _cluster_run(model_dir, monkeypatch):
    cluster = cluster_lib.local_cluster_spec(num_ps=1, num_workers=1)
    jobs = {}
    for task_type in ("ps", "chief", "worker", "evaluator"):
        monkeypatch.setenv("TF_CONFIG", cluster_lib.tf_config(cluster, task_type, 0))
        config = el.RunConfig(model_dir=model_dir, save_checkpoints_steps=10,
                              experimental_max_worker_delay_secs=0)
        estimator = el.Estimator(models.linear_model_fn, config=config)
        train_spec = el.TrainSpec(models.input_fn(), max_steps=MAX_STEPS)
        eval_spec = el.EvalSpec(
            models.input_fn(epochs=1), steps=None, name=EVAL_NAME, exporters=[
                el.LatestExporter("latest", models.raw_serving_input_fn),
                el.BestExporter("best", models.raw_serving_input_fn)],
            start_delay_secs=0, throttle_secs=0.2)
        jobs[task_type] = (lambda e=estimator, t=train_spec, s=eval_spec:
                           el.train_and_evaluate(e, t, s))
    results, errors, running = models.run_in_threads(jobs)
    assert (errors, running) == ([], [])
    return results["evaluator"]


@pytest.fixture(scope="module")
def cluster_dir(tmp_path_factory):
    """A model_dir written by a finished ps + chief + worker + evaluator run."""
    model_dir = str(tmp_path_factory.mktemp("cluster"))
    with pytest.MonkeyPatch.context() as monkeypatch:
        metrics, _ = _cluster_run(model_dir, monkeypatch)
    # Asynchronous training may overshoot max_steps by a step or two.
    assert metrics["global_step"] == _final_step(model_dir) >= MAX_STEPS
    return model_dir


def _final_step(model_dir):
    return completion.read_training_complete(model_dir).global_step


def _copy_without_marker(model_dir, tmp_path):
    copy = str(tmp_path / "copy")
    shutil.copytree(model_dir, copy)
    os.remove(names.training_complete_path(copy))
    return copy


def _age_every_file(model_dir, age_secs):
    """Sets every file's mtime `age_secs` into the past (instead of waiting)."""
    when = time.time() - age_secs
    for folder, _, files in os.walk(model_dir):
        for name in files:
            os.utime(os.path.join(folder, name), (when, when))


def test_cluster_dir_report_lists_checkpoints_evals_exports_markers(cluster_dir):
    report = inspect_lib.inspect_model_dir(cluster_dir)
    checkpoints = report["checkpoints"]
    expected_paths = names.checkpoint_paths(cluster_dir)
    assert [c["path"] for c in checkpoints] == expected_paths
    assert [c["step"] for c in checkpoints] == [names.checkpoint_step(p)
                                                for p in expected_paths]
    final = _final_step(cluster_dir)
    assert checkpoints[-1]["step"] == final
    for checkpoint in checkpoints:
        assert checkpoint["error"] is None and not checkpoint["missing"]
        files = tf.io.gfile.glob(checkpoint["path"] + ".*")
        assert checkpoint["size_bytes"] == sum(os.path.getsize(f) for f in files) > 0
        # gfile.stat reports whole seconds for local files.
        assert checkpoint["mtime_secs"] == pytest.approx(
            max(os.path.getmtime(f) for f in files), abs=1.0)
    # The eval table is the eval dir's history, step by step and metric by metric.
    eval_base = names.eval_dir_name(EVAL_NAME)
    assert list(report["evaluations"]) == [eval_base]
    table = report["evaluations"][eval_base]
    assert table["metrics"] == ["loss", "mae"]
    history = el.read_eval_metrics(names.eval_dir(cluster_dir, EVAL_NAME))
    assert [row["step"] for row in table["rows"]] == list(history)
    for row in table["rows"]:
        assert row["loss"] == history[row["step"]]["loss"]
        assert row["mae"] == history[row["step"]]["mae"]
    assert table["rows"][-1]["step"] == final
    # Exports: the step stored in each SavedModel is an evaluated step.
    assert sorted(report["exports"]) == ["best", "latest"]
    for exporter, info in report["exports"].items():
        stamps = sorted(d for d in os.listdir(names.export_dir(cluster_dir, exporter))
                        if names.is_export_timestamp(d))
        assert [str(e["timestamp"]) for e in info["exports"]] == stamps
        assert {e["step"] for e in info["exports"]} <= set(history)
        assert info["exports"][-1]["step"] == final
        assert info["temp_dirs"] == 0
        assert all(e["error"] is None for e in info["exports"])
    best = report["exports"]["best"]["best_eval_result"]
    assert best["global_step"] == final
    assert best["loss"] == pytest.approx(history[final]["loss"])
    assert report["exports"]["latest"]["best_eval_result"] is None
    # Markers: the chief's and worker 0's.
    assert report["markers"]["training_complete"]["global_step"] == final
    assert report["markers"]["training_complete"]["max_steps"] == MAX_STEPS
    assert list(report["markers"]["workers_done"]) == ["0"]
    assert report["verdict"]["state"] == inspect_lib.COMPLETE


def test_text_report_shows_the_eval_table_and_verdict(cluster_dir, capsys):
    assert inspect_lib.main([cluster_dir]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[-1].startswith("verdict: complete (")
    history = el.read_eval_metrics(names.eval_dir(cluster_dir, EVAL_NAME))
    start = lines.index(f"Evaluations in eval_{EVAL_NAME}/ ({len(history)})")
    assert lines[start + 1].split() == ["step", "loss", "mae"]
    for offset, (step, metrics) in enumerate(history.items(), start + 2):
        assert lines[offset].split() == [str(step), f"{metrics['loss']:.6g}",
                                         f"{metrics['mae']:.6g}"]
    final = _final_step(cluster_dir)
    assert any(line.startswith("Workers done (1): worker 0 at step ") for line in lines)
    assert f"Completion marker: step {final}, max_steps {MAX_STEPS}" in out
    assert "Exports of 'best'" in out and "Exports of 'latest'" in out


def test_json_from_the_command_line_matches_the_report(cluster_dir):
    env = dict(os.environ, PYTHONPATH=ROOT)
    result = zygote.run(
        [sys.executable, "-m", "estimator_lite.inspect", cluster_dir, "--json"],
        capture_output=True, text=True, env=env, timeout=120, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    printed = json.loads(result.stdout)
    expected = inspect_lib.inspect_model_dir(cluster_dir, now_secs=printed["now_secs"])
    assert printed == json.loads(json.dumps(expected))


def test_without_marker_fresh_files_are_running_old_files_stale(cluster_dir, tmp_path):
    copy = _copy_without_marker(cluster_dir, tmp_path)
    report = inspect_lib.inspect_model_dir(copy, recent_mins=5)
    assert report["verdict"]["state"] == inspect_lib.RUNNING
    assert NO_MARKER in report["verdict"]["reason"]
    _age_every_file(copy, HOUR_SECS)
    assert inspect_lib.inspect_model_dir(copy, recent_mins=5)["verdict"]["state"] == (
        inspect_lib.STALE)
    assert inspect_lib.inspect_model_dir(copy, recent_mins=90)["verdict"]["state"] == (
        inspect_lib.RUNNING)


def test_a_marker_for_an_older_step_is_not_complete(cluster_dir, tmp_path):
    copy = _copy_without_marker(cluster_dir, tmp_path)
    # What a chief leaves behind when a new run then trained past it.
    completion.write_training_complete(copy, 10, 10, time.time())
    _age_every_file(copy, HOUR_SECS)
    verdict = inspect_lib.inspect_model_dir(copy)["verdict"]
    assert verdict["state"] == inspect_lib.STALE
    assert MARKER_MISMATCH in verdict["reason"]


def test_a_truncated_checkpoint_is_reported_not_fatal(cluster_dir, tmp_path, capsys):
    copy = _copy_without_marker(cluster_dir, tmp_path)
    newest = names.checkpoint_paths(copy)[-1]
    (index,) = tf.io.gfile.glob(newest + ".index")
    with open(index, "r+b") as f:
        f.truncate(8)  # what a crash mid-write leaves
    report = inspect_lib.inspect_model_dir(copy)
    broken = report["checkpoints"][-1]
    assert broken["path"] == newest
    assert broken["error"] and not broken["missing"]
    assert broken["step"] == int(newest.rsplit("-", 1)[-1])  # from its name
    assert all(c["error"] is None for c in report["checkpoints"][:-1])
    assert inspect_lib.main([copy]) == 0
    assert f"unreadable {os.path.basename(newest)}: " in capsys.readouterr().out


def test_a_missing_directory_is_an_error(tmp_path, capsys):
    missing = str(tmp_path / "nope")
    with pytest.raises(ValueError, match=NOT_A_DIR):
        inspect_lib.inspect_model_dir(missing)
    assert inspect_lib.main([missing]) == 2
    assert NOT_A_DIR in capsys.readouterr().err


def test_inspect_module_does_not_shadow_the_stdlib_inspect():
    import inspect  # after estimator_lite.inspect was imported (at the top)
    assert inspect is not inspect_lib
    assert hasattr(inspect, "signature")
    assert inspect_lib.__name__ == "estimator_lite.inspect"


@requires_oracle
def test_reads_a_model_dir_written_by_tf_estimator_2_15(tmp_path):
    model_dir = str(tmp_path / "tf_estimator")
    driver = run_oracle_driver(driver_path("inspect_driver.py"),
                               model_dir, timeout_secs=600, checkout_on_path=False)
    report = inspect_lib.inspect_model_dir(model_dir, recent_mins=5)
    assert [c["step"] for c in report["checkpoints"]] == [0, 10, 20, 30]
    assert all(c["size_bytes"] > 0 for c in report["checkpoints"])
    table = report["evaluations"][names.eval_dir_name(EVAL_NAME)]
    assert table["metrics"] == ["loss", "mae"]
    assert [row["step"] for row in table["rows"]] == [10, 20, 30]
    assert sorted(report["exports"]) == ["best", "latest"]
    latest = report["exports"]["latest"]["exports"]
    assert [e["step"] for e in latest] == [10, 20, 30]
    assert latest[-1]["path"] in driver["exports"]
    assert report["exports"]["best"]["best_eval_result"] is None  # tf.estimator: none
    assert report["markers"] == {"training_complete": None, "workers_done": {}}
    assert report["verdict"]["state"] == inspect_lib.RUNNING
    _age_every_file(model_dir, HOUR_SECS)
    assert inspect_lib.inspect_model_dir(model_dir, recent_mins=5)["verdict"][
        "state"] == inspect_lib.STALE
