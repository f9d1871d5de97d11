"""Every on-disk name of a model_dir comes from one module."""

import os

import pytest

from estimator_lite._engine import model_dir
from estimator_lite._tf import tf

STEP_ERROR = "cannot tell the global step"


def test_names_match_tf_estimator():
    assert model_dir.checkpoint_prefix("/m") == os.path.join("/m", "model.ckpt")
    assert model_dir.eval_dir("/m") == os.path.join("/m", "eval")
    assert model_dir.eval_dir("/m", "holdout") == os.path.join("/m", "eval_holdout")
    assert model_dir.eval_dir("/m", "") == os.path.join("/m", "eval")  # '' is no name
    assert model_dir.export_dir("/m", "best") == os.path.join("/m", "export", "best")


def test_markers():
    assert model_dir.training_complete_path("/m").endswith("training_complete.json")
    path = model_dir.worker_done_file("/m", 3)
    assert path == os.path.join("/m", "workers_done", "worker-3.json")
    assert model_dir.parse_worker_done_file(os.path.basename(path)) == 3
    assert model_dir.parse_worker_done_file("worker-x.json") is None
    assert model_dir.parse_worker_done_file("notes.txt") is None


def test_export_timestamps():
    assert model_dir.is_export_timestamp("1700000000")
    assert model_dir.is_export_timestamp("1700000000/")
    assert not model_dir.is_export_timestamp("temp-1700000000")
    assert not model_dir.is_export_timestamp("best_eval_result.json")


def _save_checkpoints(directory, steps, max_to_keep=5):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        saver = tf.train.Saver(max_to_keep=max_to_keep)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            for value in steps:
                session.run(tf.assign(step, value))
                saver.save(session, model_dir.checkpoint_prefix(directory),
                           global_step=value)


def test_checkpoint_listing_and_steps(tmp_path):
    directory = str(tmp_path)
    assert model_dir.latest_checkpoint(directory) is None
    assert model_dir.checkpoint_paths(directory) == []
    _save_checkpoints(directory, [10, 20, 30], max_to_keep=2)
    paths = model_dir.checkpoint_paths(directory)
    assert [os.path.basename(p) for p in paths] == ["model.ckpt-20", "model.ckpt-30"]
    assert model_dir.latest_checkpoint(directory) == paths[-1]
    assert [model_dir.checkpoint_step(p) for p in paths] == [20, 30]


def test_checkpoint_step_is_the_stored_step(tmp_path):
    # A checkpoint named for step 5 but holding global step 7 (async workers).
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            session.run(tf.assign(step, 7))
            path = tf.train.Saver().save(session, str(tmp_path / "model.ckpt"),
                                         global_step=5)
    assert model_dir.checkpoint_step(path) == 7


def test_checkpoint_step_falls_back_to_the_name_then_fails(tmp_path):
    assert model_dir.checkpoint_step(str(tmp_path / "model.ckpt-42")) == 42
    with pytest.raises(ValueError, match=STEP_ERROR):
        model_dir.checkpoint_step(str(tmp_path / "model.ckpt"))


def test_owned_patterns_are_built_from_the_names():
    assert "model.ckpt-*" in model_dir.OWNED_FILE_PATTERNS
    assert model_dir.TRAINING_COMPLETE_FILE in model_dir.OWNED_FILE_PATTERNS
    assert {"eval", "eval_*", "export", "workers_done"} == set(
        model_dir.OWNED_DIR_PATTERNS)
def test_checkpoint_path():
    assert model_dir.checkpoint_path("/m", 42) == os.path.join("/m", "model.ckpt-42")


def test_checkpoint_paths_with_a_relative_model_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _save_checkpoints("rel", [3])
    assert model_dir.checkpoint_paths("rel") == [os.path.join("rel", "model.ckpt-3")]


def _write_checkpoint(directory, names):
    """A checkpoint holding one [2] float variable per name; returns its path."""
    with tf.Graph().as_default():
        variables = [tf.get_variable(n, [2], initializer=tf.zeros_initializer())
                     for n in names]
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            return tf.train.Saver(variables).save(session, os.path.join(directory, "ck"))


def _check(path, names, **kwargs):
    with tf.Graph().as_default():
        variables = [tf.get_variable(n, [2]) for n in names]
        model_dir.check_checkpoint_matches(path, variables, "/the/model_dir", **kwargs)


MISSING = "lacks 2 variable(s) this model needs: 'b', 'c'"


def test_missing_variables_are_a_value_error_naming_them(tmp_path):
    path = _write_checkpoint(str(tmp_path), ["a"])
    with pytest.raises(ValueError, match="model_dir '/the/model_dir'") as info:
        _check(path, ["a", "b", "c"])
    assert MISSING in str(info.value)
    assert "compat.v1" not in str(info.value)
    _check(path, ["a", "b", "c"], require_all=False)  # a user's own Saver decides
    _check(path, ["a"])


def test_errors_are_also_the_tf_errors_tf_estimators_restore_raised(tmp_path):
    # tf.estimator 2.15's train() on such a model_dir (checked on the oracle): a
    # missing variable is a NotFoundError (tfgan's test_warm_start_error catches
    # it), another shape or dtype an InvalidArgumentError.
    path = _write_checkpoint(str(tmp_path), ["a"])
    with pytest.raises(tf.errors.NotFoundError, match="lacks 1 variable"):
        _check(path, ["a", "b"])
    with tf.Graph().as_default():
        wider = [tf.get_variable("a", [3])]
        with pytest.raises(tf.errors.InvalidArgumentError, match="has shape"):
            model_dir.check_checkpoint_matches(path, wider, "/the/model_dir")
    with tf.Graph().as_default():
        other = [tf.get_variable("a", [2], tf.float64)]
        with pytest.raises(tf.errors.InvalidArgumentError, match="has dtype") as info:
            model_dir.check_checkpoint_matches(path, other, "/the/model_dir")
    assert isinstance(info.value, ValueError)


def test_many_missing_names_are_cut_short(tmp_path):
    path = _write_checkpoint(str(tmp_path), ["a"])
    with pytest.raises(ValueError, match=r"'m0', 'm1', 'm2', 'm3', 'm4' and 2 more"):
        _check(path, ["a"] + [f"m{i}" for i in range(7)])


def test_v1_slots_in_the_checkpoint_point_to_the_v1_class(tmp_path):
    path = _write_checkpoint(str(tmp_path), ["dnn/k", "dnn/k/t_0/Adagrad"])
    with pytest.raises(ValueError, match="estimator_lite.compat.v1.DNNClassifier"):
        _check(path, ["dnn/k", "training/Adagrad/dnn/k/accumulator"],
               estimator_name="DNNClassifier")


def test_keras_slots_in_the_checkpoint_point_to_the_tf2_class(tmp_path):
    path = _write_checkpoint(str(tmp_path), ["linear/w", "training/Ftrl/linear/w/linear"])
    with pytest.raises(ValueError, match=r"flavor, estimator_lite\.LinearRegressor\."):
        _check(path, ["linear/w", "linear/w/Ftrl", "linear/w/Ftrl_1"],
               estimator_name="LinearRegressor")
