"""Tests for LatestExporter, BestExporter, FinalExporter and export GC."""

import json
import os

import pytest

import estimator_lite as el
from estimator_lite import exporter as exporter_lib
from estimator_lite._engine.event_files import new_summary_writer
from estimator_lite._tf import tf
from estimator_lite.export import saved_model
from tests.support import models


class DirEstimator:
    """Duck-typed estimator whose export writes a real timestamped dir."""

    def __init__(self, model_dir):
        self.model_dir = str(model_dir)
        self.exported_checkpoints = []

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                           assets_extra=None, as_text=False, checkpoint_path=None):
        path = saved_model.make_export_dir(export_dir_base)
        os.makedirs(path)
        self.exported_checkpoints.append(checkpoint_path)
        return os.fsencode(path)  # bytes, as an Estimator's export_saved_model


def test_exporters_return_what_the_estimator_returned(tmp_path):
    # A duck-typed estimator's own return value comes back unchanged, as from
    # tf.estimator's exporters (its tests mock export_saved_model with a str).
    class StrEstimator(DirEstimator):
        def export_saved_model(self, *args, **kwargs):
            return os.fsdecode(super().export_saved_model(*args, **kwargs))

    estimator = StrEstimator(tmp_path)
    result = el.LatestExporter("latest", _serving_fn).export(
        estimator, str(tmp_path / "export"), "ckpt-1", {"global_step": 1}, False)
    assert isinstance(result, str) and os.path.isdir(result)


def _serving_fn():
    return None


def _write_eval_events(eval_dir, losses_by_step):
    writer = new_summary_writer(eval_dir)
    for step, loss in losses_by_step.items():
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(
            tag="loss", simple_value=loss)]), step)
    writer.close()


def _export(exporter, estimator, step, loss, final=False):
    """Runs one export; returns its directory as str (None when it did not export)."""
    path = os.path.join(estimator.model_dir, "export", exporter.name)
    result = exporter.export(estimator, path, f"ckpt-{step}",
                             {"global_step": step, "loss": loss}, final)
    # tf.estimator's exporters return what export_saved_model returned (bytes).
    assert result is None or isinstance(result, bytes)
    return None if result is None else os.fsdecode(result)


def _numeric_dirs(path):
    return sorted(n for n in os.listdir(path) if n.isdigit())


def test_gc_only_removes_timestamp_dirs(tmp_path):
    for name in ("100", "200", "300", "400", "temp-500", "notes", "assets"):
        os.makedirs(tmp_path / name)
    (tmp_path / "best_eval_result.json").write_text("{}")
    (tmp_path / "600").write_text("a file, not an export")
    removed = exporter_lib.gc_exports(str(tmp_path), 2)
    assert sorted(os.path.basename(p) for p in removed) == ["100", "200"]
    assert sorted(os.listdir(tmp_path)) == ["300", "400", "600", "assets",
                                            "best_eval_result.json", "notes", "temp-500"]
    assert exporter_lib.gc_exports(str(tmp_path / "missing"), 1) == []
    assert exporter_lib.gc_exports(str(tmp_path), None) == []


def test_latest_exporter_keeps_the_newest(tmp_path):
    estimator = DirEstimator(tmp_path)
    latest = el.LatestExporter("latest", _serving_fn, exports_to_keep=2)
    paths = [_export(latest, estimator, step, 1.0) for step in (10, 20, 30)]
    assert _numeric_dirs(tmp_path / "export" / "latest") == [
        os.path.basename(p) for p in paths[1:]]
    assert estimator.exported_checkpoints == ["ckpt-10", "ckpt-20", "ckpt-30"]


def test_final_exporter_only_exports_the_final(tmp_path):
    estimator = DirEstimator(tmp_path)
    final = el.FinalExporter("final", _serving_fn)
    assert _export(final, estimator, 10, 1.0) is None
    path = _export(final, estimator, 20, 1.0, final=True)
    assert os.path.isdir(path)
    assert estimator.exported_checkpoints == ["ckpt-20"]


def test_best_exporter_exports_only_improvements(tmp_path):
    estimator = DirEstimator(tmp_path)
    best = el.BestExporter(serving_input_receiver_fn=_serving_fn, exports_to_keep=5)
    results = [_export(best, estimator, step, loss)
               for step, loss in ((10, 5.0), (20, 3.0), (30, 4.0), (40, 2.0))]
    assert [r is not None for r in results] == [True, True, False, True]
    assert estimator.exported_checkpoints == ["ckpt-10", "ckpt-20", "ckpt-40"]
    saved = json.loads((tmp_path / "export" / "best_exporter" /
                        "best_eval_result.json").read_text())
    assert saved == {"global_step": 40.0, "loss": 2.0}


def test_best_exporter_after_restart_never_exports_worse(tmp_path):
    """tensorflow/tensorflow#47396: a restarted TF Estimator job exports once anyway."""
    estimator = DirEstimator(tmp_path)
    first_run = el.BestExporter(serving_input_receiver_fn=_serving_fn)
    _export(first_run, estimator, 10, 3.0)
    restarted = el.BestExporter(serving_input_receiver_fn=_serving_fn)
    assert _export(restarted, estimator, 20, 4.0) is None
    assert _export(restarted, estimator, 30, 2.5) is not None
    assert estimator.exported_checkpoints == ["ckpt-10", "ckpt-30"]


def _tf_estimator_export(estimator, exporter_name):
    """An export left by tf.estimator's BestExporter: no best_eval_result.json."""
    os.makedirs(os.path.join(estimator.model_dir, "export", exporter_name, "1700000000"))


def test_best_exporter_reads_the_named_eval_dir(tmp_path):
    estimator = DirEstimator(tmp_path)
    _write_eval_events(str(tmp_path / "eval_holdout"), {10: 3.0, 20: 1.0, 30: 2.0})
    _write_eval_events(str(tmp_path / "eval"), {10: 9.0})  # another spec's evals
    _tf_estimator_export(estimator, "best_exporter")
    best = el.BestExporter(serving_input_receiver_fn=_serving_fn)
    best.bind_eval_dir("eval_holdout")  # as the evaluator of EvalSpec(name="holdout")
    # Step 30's own result is in the events already; 1.0 at step 20 beats it.
    assert _export(best, estimator, 30, 2.0) is None
    assert _export(best, estimator, 40, 0.5) is not None


def test_best_exporter_exports_first_while_nothing_is_exported(tmp_path):
    """As tf.estimator (its test_best_exporter_with_preemption, checked on the
    oracle): a job preempted after its best evaluation but before that export
    exports its next evaluation, even a worse one, rather than none at all."""
    estimator = DirEstimator(tmp_path)
    _write_eval_events(str(tmp_path / "eval"), {10: 50.0, 20: 60.0})
    best = el.BestExporter(serving_input_receiver_fn=_serving_fn)
    results = [_export(best, estimator, step, loss)
               for step, loss in ((30, 100.0), (40, 10.0), (50, 20.0))]
    assert [r is not None for r in results] == [True, True, False]
    assert estimator.exported_checkpoints == ["ckpt-30", "ckpt-40"]


def test_best_exporter_does_not_compare_the_current_eval_with_itself(tmp_path):
    estimator = DirEstimator(tmp_path)
    _write_eval_events(str(tmp_path / "eval"), {10: 2.0})  # written by this evaluation
    best = el.BestExporter(serving_input_receiver_fn=_serving_fn)
    assert _export(best, estimator, 10, 2.0) is not None


def test_best_exporter_custom_pattern_and_compare_fn(tmp_path):
    estimator = DirEstimator(tmp_path)
    _write_eval_events(str(tmp_path / "custom"), {10: 0.9})

    def higher_loss_wins(best_eval_result, current_eval_result):
        return current_eval_result["loss"] > best_eval_result["loss"]

    _tf_estimator_export(estimator, "b")
    best = el.BestExporter("b", _serving_fn, event_file_pattern="custom/*.tfevents.*",
                           compare_fn=higher_loss_wins)
    assert _export(best, estimator, 20, 0.5) is None
    assert _export(best, estimator, 30, 1.5) is not None


def test_exporters_take_any_name_as_tf_estimator_and_evalspec_checks_it():
    # tf.estimator 2.15 stores the name as given (kubeflow's mnist passes 'mnist/'
    # or an absolute dir) and Exporter() itself can be built; EvalSpec refuses
    # None, '' and non-strings.
    base = el.Exporter()
    assert base.name is None
    assert base.export(None, "p", "c", {}, True) is None
    for name in ("a/b", "mnist/", "/abs/dir", "", None, 5):
        assert el.LatestExporter(name, _serving_fn).name == name
        assert el.FinalExporter(name, _serving_fn).name == name
        assert el.BestExporter(name, _serving_fn).name == name
    for name in ("", None, 5):
        with pytest.raises(ValueError, match="Exporter"):
            el.EvalSpec(lambda: None, exporters=el.LatestExporter(name, _serving_fn))
    # tf.estimator's GC keeps one export for a float or bool equal to 1.
    assert el.LatestExporter("a", _serving_fn, exports_to_keep=1.0)._exports_to_keep == 1
    with pytest.raises(TypeError, match="exports_to_keep must be an int"):
        el.LatestExporter("a", _serving_fn, exports_to_keep=1.5)


def test_exporter_names_with_a_slash_or_an_absolute_path_export_as_tf_estimator(
        tmp_path):
    # tf.estimator 2.15 (checked on the oracle): <model_dir>/export/mnist/<ts>,
    # <model_dir>/export/best/sub/<ts> and /abs/dir/<ts>, GC'd there.
    est = models.make_estimator(tmp_path / "md", save_checkpoints_steps=2)
    absolute = str(tmp_path / "abs" / "dir")
    receiver_fn = models.raw_serving_input_fn
    exporters = [el.LatestExporter("mnist/", receiver_fn, exports_to_keep=1),
                 el.FinalExporter(absolute, receiver_fn),
                 el.BestExporter("best/sub", receiver_fn, exports_to_keep=1)]
    el.train_and_evaluate(est, el.TrainSpec(models.input_fn(n=64), max_steps=4),
                          el.EvalSpec(models.input_fn(n=64, epochs=1), steps=1,
                                      exporters=exporters, start_delay_secs=0,
                                      throttle_secs=0))
    stamps = {path: [n for n in os.listdir(path) if n.isdigit()] for path in (
        str(tmp_path / "md" / "export" / "mnist"), absolute,
        str(tmp_path / "md" / "export" / "best" / "sub"))}
    assert all(len(found) == 1 for found in stamps.values()), stamps


def test_exporter_argument_errors():
    with pytest.raises(ValueError, match="exports_to_keep must be >= 1"):
        el.LatestExporter("a", _serving_fn, exports_to_keep=0)
    with pytest.raises(TypeError, match="serving_input_receiver_fn must be callable"):
        el.FinalExporter("a", None)
    with pytest.raises(TypeError, match="compare_fn must be callable"):
        el.BestExporter(serving_input_receiver_fn=_serving_fn, compare_fn=3)
    with pytest.raises(ValueError, match="compare_fn must take arguments named "
                       "best_eval_result and current_eval_result"):
        el.BestExporter(serving_input_receiver_fn=_serving_fn, compare_fn=lambda a: a)
    # tf.estimator calls it by keyword: two positional arguments are not enough.
    with pytest.raises(ValueError, match=r"missing \['best_eval_result', "):
        el.BestExporter(serving_input_receiver_fn=_serving_fn,
                        compare_fn=lambda a, b: True)
    with pytest.raises(ValueError, match="must contain 'loss'"):
        exporter_lib._loss_smaller({"acc": 1.0}, {"loss": 1.0})


def test_latest_exporter_with_real_estimator(tmp_path):
    est = models.make_estimator(tmp_path)
    est.train(models.input_fn(), max_steps=10)
    latest = el.LatestExporter("latest", models.raw_serving_input_fn)
    path = latest.export(est, str(tmp_path / "export" / "latest"),
                         est.latest_checkpoint(), {"global_step": 10}, False)
    assert isinstance(path, bytes)
    assert os.path.exists(os.path.join(os.fsdecode(path), "saved_model.pb"))
