"""fresh_start removes only a run's files, only inside model_dir, and refuses bad paths."""

import os

import pytest

import estimator_lite as el
from tests.support import models


def test_removes_checkpoints_events_evals_exports_only(tmp_path):
    model_dir = tmp_path / "model"
    est = models.make_estimator(model_dir)
    est.train(models.input_fn(), max_steps=10)
    est.evaluate(models.input_fn(epochs=1), name="holdout")
    est.export_saved_model(str(model_dir / "export" / "latest"),
                           models.raw_serving_input_fn)
    (model_dir / "notes.txt").write_text("keep me")
    (model_dir / "data").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "model.ckpt-1.index").write_text("not ours")
    os.symlink(outside, model_dir / "eval_linked")
    removed = el.fresh_start(str(model_dir))
    assert sorted(os.listdir(model_dir)) == ["data", "notes.txt"]
    assert any(p.endswith("model.ckpt-10.index") for p in removed)
    assert os.path.exists(outside / "model.ckpt-1.index")  # the link target survives
    assert est.latest_checkpoint() is None


def test_nothing_to_do(tmp_path):
    assert el.fresh_start(str(tmp_path / "missing")) == []
    assert el.fresh_start(str(tmp_path)) == []


@pytest.mark.parametrize("path, message", [
    ("/", "root directory"), ("~", "home directory")])
def test_refuses_root_and_home(path, message):
    with pytest.raises(ValueError, match=message):
        el.fresh_start(os.path.expanduser(path))


def test_refuses_a_directory_that_is_not_a_model_dir(tmp_path):
    (tmp_path / "thesis.tex").write_text("years of work")
    (tmp_path / "export").mkdir()
    with pytest.raises(ValueError, match="does not look like a model dir"):
        el.fresh_start(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["export", "thesis.tex"]
    with pytest.raises(ValueError, match="needs a model_dir path"):
        el.fresh_start("")
