"""Tests for Estimator: train, resume, evaluate, predict, export, distributed."""

import glob
import os
import sys
import threading
import types
from unittest import mock

import numpy as np
import pytest
import tensorflow as tf2
from google.protobuf import text_format

import estimator_lite as el
from estimator_lite._engine import local_cluster as cluster_lib
from estimator_lite._tf import logging as estimator_lite_logging
from estimator_lite._tf import tf
from estimator_lite.early_stopping import read_eval_metrics
from tests.support import models
from tests.support.tf_versions import serve, signature_keys, tf2_only

ERR_STEPS_AND_MAX = "give steps or max_steps, not both"
ERR_NO_CHECKPOINT = "no checkpoint found"


def _checkpoint_steps(model_dir):
    state = tf.train.get_checkpoint_state(str(model_dir))
    return sorted(int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths)


def _scalar_events(event_dir, tag):
    """{step: value} of a scalar summary over all event files in `event_dir`."""
    values = {}
    for path in glob.glob(os.path.join(str(event_dir), "events.out.tfevents.*")):
        for event in tf.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == tag:
                    values[event.step] = value.simple_value
    return values


class _RecordingListener(tf.train.CheckpointSaverListener):
    def __init__(self, stop_at_step=None):
        self.saved_steps = []
        self.calls = []
        self._stop_at_step = stop_at_step

    def begin(self):
        self.calls.append("begin")

    def after_save(self, session, global_step_value):
        self.saved_steps.append(global_step_value)
        return self._stop_at_step is not None and global_step_value >= self._stop_at_step

    def end(self, session, global_step_value):
        self.calls.append(("end", global_step_value))


def test_train_resume_evaluate_predict_export_round_trip(tmp_path):
    est = models.make_estimator(tmp_path, log_step_count_steps=5)
    est.train(models.input_fn(), max_steps=20)
    assert _checkpoint_steps(tmp_path) == [0, 10, 20]
    est.train(models.input_fn(), steps=5)  # resumes from step 20
    assert est.get_variable_value("global_step") == 25
    assert _checkpoint_steps(tmp_path)[-1] == 25
    assert "w" in est.get_variable_names()

    metrics = est.evaluate(models.input_fn(epochs=1))
    assert metrics["global_step"] == 25
    assert metrics["loss"] < 0.05 and metrics["mae"] < 0.2
    assert set(metrics) == {"loss", "mae", "global_step"}

    x, _ = models.linear_data(10)
    predictions = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices(
        {"x": x}).batch(4)))
    assert len(predictions) == 10 and set(predictions[0]) == {"y"}
    weights = est.get_variable_value("w")
    bias = est.get_variable_value("b")
    expected = x @ weights + bias
    np.testing.assert_allclose([p["y"] for p in predictions], expected, rtol=1e-5)

    export_dir = est.export_saved_model(str(tmp_path / "export"),
                                        models.raw_serving_input_fn)
    assert isinstance(export_dir, bytes)  # as tf.estimator returned it
    export_dir = export_dir.decode("utf-8")
    assert os.path.basename(export_dir).isdigit()
    assert sorted(os.listdir(tmp_path / "export")) == [os.path.basename(export_dir)]
    assert signature_keys(export_dir) == {"serving_default", "regress"}
    served = serve(export_dir, x=x)["outputs"]
    np.testing.assert_allclose(served, expected, rtol=1e-5)


def test_max_steps_already_reached_skips_training(tmp_path):
    est = models.make_estimator(tmp_path)
    est.train(models.input_fn(), max_steps=10)
    files_before = sorted(os.listdir(tmp_path))
    est.train(models.input_fn(), max_steps=10)
    assert sorted(os.listdir(tmp_path)) == files_before
    est.train(models.input_fn(), max_steps=12)
    assert est.get_variable_value("global_step") == 12


def test_steps_and_max_steps_validation(tmp_path):
    est = models.make_estimator(tmp_path)
    with pytest.raises(ValueError, match=ERR_STEPS_AND_MAX):
        est.train(models.input_fn(), steps=1, max_steps=2)
    with pytest.raises(ValueError, match="steps must be > 0"):
        est.train(models.input_fn(), steps=0)
    with pytest.raises(TypeError, match="max_steps must be a number"):
        est.train(models.input_fn(), max_steps="10")
    # A float count (max_steps=1e6 from a config file) is fine, as on tf.estimator.
    est.train(models.input_fn(), max_steps=3.0)
    assert est.get_variable_value("global_step") == 3
    with pytest.raises(TypeError, match="hooks must contain only SessionRunHook"):
        est.train(models.input_fn(), steps=1, hooks=[object()])


def test_input_end_stops_training_cleanly(tmp_path):
    est = models.make_estimator(tmp_path)
    est.train(models.input_fn(n=256, batch_size=32, epochs=1), max_steps=100)
    assert est.get_variable_value("global_step") == 8
    assert _checkpoint_steps(tmp_path)[-1] == 8


def test_input_fn_may_return_a_tuple_and_model_fn_fewer_args(tmp_path):
    x, y = models.linear_data(32)

    def input_fn():
        return {"x": tf.constant(x)}, tf.constant(y)

    def model_fn(features, labels, mode):
        return models.linear_model_fn(features, labels, mode, {})

    est = el.Estimator(model_fn, config=el.RunConfig(model_dir=str(tmp_path)))
    est.train(input_fn, steps=3)
    assert est.get_variable_value("global_step") == 3
    assert est.evaluate(input_fn, steps=2)["global_step"] == 3


def test_warm_start_copies_variables(tmp_path):
    source = models.make_estimator(tmp_path / "source")
    source.train(models.input_fn(), max_steps=20)
    target = el.Estimator(models.linear_model_fn,
                          config=el.RunConfig(model_dir=str(tmp_path / "target")),
                          params={"learning_rate": 0.0},
                          warm_start_from=str(tmp_path / "source"))
    target.train(models.input_fn(), steps=1)
    np.testing.assert_allclose(target.get_variable_value("w"),
                               source.get_variable_value("w"))
    assert target.get_variable_value("global_step") == 1  # global step is not copied


def test_warm_start_from_the_bytes_path_export_saved_model_returns(tmp_path):
    # As tf.estimator: a SavedModel directory warm-starts from its variables, and
    # the bytes path export_saved_model returns is accepted as it is.
    source = models.make_estimator(tmp_path / "source")
    source.train(models.input_fn(), max_steps=20)
    export_dir = source.export_saved_model(str(tmp_path / "export"),
                                           models.raw_serving_input_fn)
    assert isinstance(export_dir, bytes)
    target = el.Estimator(models.linear_model_fn,
                          config=el.RunConfig(model_dir=str(tmp_path / "target")),
                          params={"learning_rate": 0.0}, warm_start_from=export_dir)
    target.train(models.input_fn(), steps=1)
    np.testing.assert_allclose(target.get_variable_value("w"),
                               source.get_variable_value("w"))


def test_listener_after_save_true_stops_training(tmp_path):
    listener = _RecordingListener(stop_at_step=20)
    est = models.make_estimator(tmp_path)
    est.train(models.input_fn(), max_steps=100, saving_listeners=[listener])
    assert listener.saved_steps == [0, 10, 20]
    assert listener.calls == ["begin", ("end", 20)]
    assert est.get_variable_value("global_step") == 20


def test_listeners_need_checkpointing(tmp_path):
    est = models.make_estimator(tmp_path, save_checkpoints_steps=None,
                                save_checkpoints_secs=None)
    with pytest.raises(ValueError, match="saving_listeners need checkpoints"):
        est.train(models.input_fn(), steps=1, saving_listeners=[_RecordingListener()])


def test_eval_dir_naming_and_summaries(tmp_path):
    est = models.make_estimator(tmp_path)
    est.train(models.input_fn(), max_steps=10)
    assert est.eval_dir() == os.path.join(str(tmp_path), "eval")
    assert est.eval_dir("holdout") == os.path.join(str(tmp_path), "eval_holdout")
    default = est.evaluate(models.input_fn(epochs=1))
    named = est.evaluate(models.input_fn(epochs=1), name="holdout")
    assert _scalar_events(est.eval_dir(), "loss") == {10: pytest.approx(default["loss"])}
    assert _scalar_events(est.eval_dir("holdout"), "mae") == {
        10: pytest.approx(named["mae"])}


def test_evaluate_steps_limits_batches(tmp_path):
    est = models.make_estimator(tmp_path)
    est.train(models.input_fn(), max_steps=1)
    # Batch i has labels all equal to i, so the mean label tells how many ran.
    labels = np.repeat(np.arange(4, dtype=np.float32), 8).reshape(-1, 1)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(
            ({"x": np.zeros((32, 4), np.float32)}, labels)).batch(8)

    def model_fn(features, labels, mode):
        spec = models.linear_model_fn(features, labels, mode, {})
        metrics = {"label_mean": tf.metrics.mean(labels)}
        return spec._replace(eval_metric_ops=metrics)

    two = el.Estimator(model_fn, config=est.config).evaluate(input_fn, steps=2)
    assert two["label_mean"] == pytest.approx(0.5)
    everything = el.Estimator(model_fn, config=est.config).evaluate(input_fn)
    assert everything["label_mean"] == pytest.approx(1.5)


def test_training_summaries_every_save_summary_steps(tmp_path):
    est = models.make_estimator(tmp_path, save_summary_steps=5)
    est.train(models.input_fn(), max_steps=12)
    assert sorted(_scalar_events(tmp_path, "loss")) == [1, 6, 11]
    assert os.path.exists(os.path.join(str(tmp_path), "model.ckpt-12.index"))


@pytest.mark.parametrize("config, written", [
    ({"save_checkpoints_steps": 2}, True),
    ({"save_checkpoints_steps": 2, "checkpoint_save_graph_def": False}, False),
    ({"save_checkpoints_steps": None, "save_checkpoints_secs": None}, False)])
def test_graph_pbtxt_is_written_beside_the_checkpoints(tmp_path, config, written):
    # As tf.estimator 2.15: the chief's checkpointing writes graph.pbtxt (with
    # shapes) once the session exists, unless checkpoint_save_graph_def is off.
    est = models.make_estimator(tmp_path, **config)
    est.train(models.input_fn(), max_steps=3)
    path = tmp_path / "graph.pbtxt"
    assert path.exists() is written
    if written:
        graph = text_format.Parse(path.read_text(), tf.GraphDef())
        names = {node.name for node in graph.node}
        assert {"global_step", "w", "b"} <= names
        assert all("_output_shapes" in node.attr for node in graph.node
                   if node.name in ("global_step", "w", "b"))


def test_predict_options(tmp_path):
    est = models.make_estimator(tmp_path)
    # No checkpoint: like tf.estimator, predict warns and uses initial values;
    # reading a variable has nothing to read.
    assert next(est.predict(models.input_fn(epochs=1)))["y"] == [0.0]
    with pytest.raises(ValueError, match=ERR_NO_CHECKPOINT):
        est.get_variable_names()
    est.train(models.input_fn(), max_steps=2)
    batches = list(est.predict(models.input_fn(n=40, batch_size=16, epochs=1),
                               yield_single_examples=False))
    assert [b["y"].shape[0] for b in batches] == [16, 16, 8]
    with pytest.raises(ValueError, match="Expected to run at least one output from"):
        next(est.predict(models.input_fn(epochs=1), predict_keys=["nope"]))
    first = next(est.predict(models.input_fn(epochs=1), predict_keys="y"))
    assert set(first) == {"y"}
    # As tf.estimator: keys naming no prediction are left out while one does.
    first = next(est.predict(models.input_fn(epochs=1), predict_keys=["nope", "y"]))
    assert set(first) == {"y"}


def test_nan_loss_stops_training(tmp_path):
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [], initializer=tf.ones_initializer())
        step = tf.train.get_global_step()
        loss = tf.where(step >= 3, tf.constant(np.nan), w * 1.0)
        train_op = tf.train.GradientDescentOptimizer(0.0).minimize(loss, step)
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op)

    est = el.Estimator(model_fn, config=el.RunConfig(model_dir=str(tmp_path)))
    with pytest.raises(el.NanLossDuringTrainingError, match="after global step 3"):
        est.train(models.input_fn(), max_steps=10)
    # The class tf.estimator users catch (tf.compat.v1.train's) catches ours too.
    with pytest.raises(tf2.compat.v1.train.NanLossDuringTrainingError):
        est.train(models.input_fn(), max_steps=10)


class _FetchingHook(tf.train.SessionRunHook):
    """Fetches the loss every step and counts session creations."""

    def __init__(self, fail_at_run=None):
        self.losses = []
        self.sessions_created = 0
        self.ended = False
        self._fail_at_run = fail_at_run

    def after_create_session(self, session, coord):
        self.sessions_created += 1

    def before_run(self, run_context):
        return tf.train.SessionRunArgs({"loss": tf.get_collection("test_loss")[0]})

    def after_run(self, run_context, run_values):
        self.losses.append(run_values.results["loss"])
        if len(self.losses) == self._fail_at_run:
            raise tf.errors.AbortedError(None, None, "simulated preemption")

    def end(self, session):
        self.ended = True


def _model_fn_exposing_loss(features, labels, mode, params):
    spec = models.linear_model_fn(features, labels, mode, params)
    if spec.loss is not None:
        tf.add_to_collection("test_loss", spec.loss)
    return spec


def test_hooks_get_their_fetches_and_stop_requests(tmp_path):
    hook = _FetchingHook()
    est = el.Estimator(_model_fn_exposing_loss, config=el.RunConfig(
        model_dir=str(tmp_path), save_checkpoints_steps=10))
    est.train(models.input_fn(), hooks=[hook, tf.train.StopAtStepHook(last_step=7)])
    assert len(hook.losses) == 7 and hook.ended
    assert est.get_variable_value("global_step") == 7


def test_recovers_from_aborted_session(tmp_path):
    hook = _FetchingHook(fail_at_run=15)
    est = el.Estimator(_model_fn_exposing_loss, config=el.RunConfig(
        model_dir=str(tmp_path), save_checkpoints_steps=10))
    est.train(models.input_fn(), hooks=[hook], max_steps=30)
    assert hook.sessions_created == 2  # recreated once, restored from step 10
    assert len(hook.losses) == 15 + 20
    assert est.get_variable_value("global_step") == 30


def test_estimator_argument_errors(tmp_path):
    with pytest.raises(TypeError, match="config must be an estimator_lite.RunConfig"):
        el.Estimator(models.linear_model_fn, config={"model_dir": "x"})
    with pytest.raises(ValueError, match="must take a 'features' argument"):
        el.Estimator(lambda inputs, mode: None)
    with pytest.raises(ValueError, match="unknown arguments"):
        el.Estimator(lambda features, extra: None)
    # tf.estimator's rules: params may be any object (an HParams, say), but only a
    # model_fn taking `params` may be given them; a missing model_fn is a ValueError.
    with pytest.raises(ValueError, match="does not include params argument"):
        el.Estimator(lambda features, labels, mode: None, params={"lr": 0.1})
    with pytest.raises(ValueError, match="model_fn must be given"):
        el.Estimator(None)
    hparams = types.SimpleNamespace(learning_rate=0.1)
    est = el.Estimator(models.linear_model_fn, params=hparams)
    assert est.params.learning_rate == 0.1 and est.params is not hparams
    with pytest.raises(ValueError, match="differs from config.model_dir"):
        el.Estimator(models.linear_model_fn, model_dir=str(tmp_path / "a"),
                     config=el.RunConfig(model_dir=str(tmp_path / "b")))
    with pytest.raises(TypeError, match="model_fn must be callable"):
        el.Estimator("not callable")


def test_model_dir_defaults_and_config_sync(tmp_path):
    est = el.Estimator(models.linear_model_fn, model_dir=str(tmp_path))
    assert est.model_dir == str(tmp_path) and est.config.model_dir == str(tmp_path)
    temp = el.Estimator(models.linear_model_fn)
    assert os.path.isdir(temp.model_dir)


def test_maybe_overwrite_model_dir_and_session_config(tmp_path):
    # tf.estimator's helper that libraries' Estimator subclasses call (lattice):
    # results and errors as tf.estimator 2.15 gives them (checked on the oracle).
    from estimator_lite.estimator import (  # noqa: PLC0415
        maybe_overwrite_model_dir_and_session_config as resolve,
    )
    given = el.RunConfig(tf_random_seed=3)
    config = resolve(given, str(tmp_path))
    assert config.model_dir == str(tmp_path) and config.tf_random_seed == 3
    assert given.model_dir is None  # a copy, the caller's config unchanged
    assert config.session_config.allow_soft_placement
    assert resolve(config, None) is config
    assert resolve(config, tmp_path).model_dir == str(tmp_path)  # os.PathLike
    fresh = resolve(None, None)
    assert os.path.isdir(fresh.model_dir) and isinstance(fresh, el.RunConfig)
    with pytest.raises(ValueError, match="differs from config.model_dir"):
        resolve(config, str(tmp_path / "other"))
    for error in (TypeError, ValueError):  # tf.estimator: ValueError
        with pytest.raises(error, match="config must be an estimator_lite.RunConfig"):
            resolve({"model_dir": "x"}, None)


def test_model_fn_must_return_a_spec_of_any_mode(tmp_path):
    # As tf.estimator: a spec built for another mode is used for what it holds
    # (old programs hard-code mode=TRAIN), and anything but a spec is refused.
    def model_fn(features, labels, mode):
        if mode == el.ModeKeys.PREDICT:
            return None
        return models.linear_model_fn(features, labels, el.ModeKeys.TRAIN, {})

    est = el.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(models.input_fn(), steps=2)
    assert est.evaluate(models.input_fn(), steps=1)["global_step"] == 2
    for error in (TypeError, ValueError):
        with pytest.raises(error, match="must return an EstimatorSpec"):
            next(est.predict(models.input_fn()))


def test_subclasses_cannot_override_estimator_members(tmp_path):
    class Mine(el.Estimator):
        def predict(self, *args, **kwargs):
            return super().predict(*args, **kwargs)

    class Allowed(el.Estimator):
        def latest_checkpoint(self):
            return super().latest_checkpoint()

    with pytest.raises(ValueError, match=r"Mine overrides \['predict'\]"):
        Mine(models.linear_model_fn, model_dir=str(tmp_path))
    assert Allowed(models.linear_model_fn, model_dir=str(tmp_path)).latest_checkpoint() \
        is None


def test_create_and_assert_global_step_makes_every_graphs_global_step(tmp_path):
    # tf.estimator 2.15 (checked on the oracle): train, evaluate, predict and export
    # each call it once with the graph being built (the default graph); a subclass
    # may override it (adanet, a global step in a variable scope) and the override
    # takes effect; _create_global_step itself may not be overridden.
    calls = []

    class Recording(el.Estimator):
        def _create_and_assert_global_step(self, graph):
            calls.append(graph is tf.get_default_graph())
            return super()._create_and_assert_global_step(graph)

    est = Recording(models.linear_model_fn, model_dir=str(tmp_path / "a"))
    seen = {}
    for name, run in [
            ("train", lambda: est.train(models.input_fn(n=64), steps=2)),
            ("evaluate", lambda: est.evaluate(models.input_fn(n=64, epochs=1))),
            ("predict", lambda: list(est.predict(models.input_fn(n=8, epochs=1)))),
            ("export", lambda: est.export_saved_model(str(tmp_path / "export"),
                                                      models.raw_serving_input_fn))]:
        run()
        seen[name], calls[:] = list(calls), []
    assert seen == {"train": [True], "evaluate": [True], "predict": [True],
                    "export": [True]}

    class Scoped(el.Estimator):
        def _create_and_assert_global_step(self, graph):
            with tf.variable_scope("tag"):
                return tf.train.create_global_step(graph)

    scoped = Scoped(models.linear_model_fn, model_dir=str(tmp_path / "b"))
    scoped.train(models.input_fn(n=64), steps=2)
    assert "tag/global_step" in scoped.get_variable_names()
    assert scoped.evaluate(models.input_fn(n=64, epochs=1))["global_step"] == 2

    # tf.estimator's asserts on what _create_global_step made.
    plain = el.Estimator(models.linear_model_fn, model_dir=str(tmp_path / "c"))
    with tf.Graph().as_default() as graph:
        plain._create_global_step = lambda g: tf.get_variable("other", [], tf.int64)
        with pytest.raises(AssertionError, match="not the graph's global step"):
            plain._create_and_assert_global_step(graph)
    with tf.Graph().as_default() as graph:
        del plain._create_global_step
        step = plain._create_and_assert_global_step(graph)
        assert step is tf.train.get_global_step() and step.op.name == "global_step"
        with pytest.raises(ValueError, match="already exists"):
            plain._create_and_assert_global_step(graph)

    class Own(el.Estimator):
        def _create_global_step(self, graph):
            return super()._create_global_step(graph)

    with pytest.raises(ValueError, match=r"Own overrides \['_create_global_step'\]"):
        Own(models.linear_model_fn, model_dir=str(tmp_path / "d"))


def test_model_fn_property_is_bound_to_params_as_in_tf_estimator(tmp_path):
    # tf.estimator's Estimator.model_fn is model_fn(features, labels, mode, config)
    # with params bound; libraries (tensorflow_hub's exporter) call it so.
    seen = {}

    def model_fn(features, labels, mode, params, config):
        seen.update(params=params, config=config)
        return models.linear_model_fn(features, labels, mode, params)

    est = el.Estimator(model_fn, model_dir=str(tmp_path), params={"lr": 0.5})
    config = est.config.replace(tf_random_seed=3)
    with tf.Graph().as_default():
        tf.train.get_or_create_global_step()
        spec = est.model_fn({"x": tf.zeros([2, 4])}, None, el.ModeKeys.PREDICT, config)
    assert isinstance(spec, el.EstimatorSpec) and spec.mode == el.ModeKeys.PREDICT
    assert seen["params"] == {"lr": 0.5} and seen["config"] is config
    assert est._session_config is est.config.session_config


class _DeviceRecorder(tf.train.SessionRunHook):
    def begin(self):
        self.devices = {v.op.name: v.device for v in tf.global_variables()}


def _start_servers(cluster):
    spec = tf.train.ClusterSpec(cluster)
    return [tf.train.Server(spec, job_name=job, task_index=i, start=True)
            for job, addresses in cluster.items() for i in range(len(addresses))]


def test_distributed_training_with_real_servers(tmp_path, monkeypatch):
    cluster = cluster_lib.local_cluster_spec(num_ps=1, num_workers=1)
    servers = _start_servers(cluster)
    estimators, recorders = {}, {}
    for task_type in ("chief", "worker"):
        monkeypatch.setenv("TF_CONFIG", cluster_lib.tf_config(cluster, task_type, 0))
        config = el.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=20)
        estimators[task_type] = el.Estimator(models.linear_model_fn, config=config)
        recorders[task_type] = _DeviceRecorder()
    _, errors, running = models.run_in_threads({
        task_type: lambda t=task_type: estimators[t].train(
            models.input_fn(), hooks=[recorders[t]], max_steps=60)
        for task_type in ("chief", "worker")}, timeout_secs=120)
    assert running == [], "training did not finish"
    assert errors == []
    for recorder in recorders.values():
        assert recorder.devices["w"].startswith("/job:ps/task:0")
        assert recorder.devices["global_step"].startswith("/job:ps/task:0")
    steps = _checkpoint_steps(tmp_path)
    assert steps[-1] >= 60
    # Saves come every 20 steps, plus the final one. With an asynchronous worker
    # the save at session creation can land after the worker's first steps, so
    # the spacing is what is checked, not multiples of 20.
    periodic = steps[:-1]
    assert all(periodic[i + 1] - periodic[i] >= 20 for i in range(len(periodic) - 1))
    assert len(servers) == 3


class _BeginRecorder(tf.train.SessionRunHook):
    def __init__(self):
        self.begun = False

    def begin(self):
        self.begun = True


def test_a_worker_whose_max_steps_is_reached_while_it_builds_skips_its_session(
        tmp_path, monkeypatch):
    # A late worker (CI's loaded machine): the chief saves its final checkpoint
    # while the worker's input_fn and model_fn run. The worker then creates no
    # session (on TF 1.15 closing such a session once hung forever); no server
    # runs here, so creating one would wait for the chief.
    cluster = cluster_lib.local_cluster_spec(num_ps=1, num_workers=1)
    monkeypatch.setenv("TF_CONFIG", cluster_lib.tf_config(cluster, "worker", 0))
    estimator = el.Estimator(models.linear_model_fn, config=el.RunConfig(
        model_dir=str(tmp_path), session_creation_timeout_secs=30))
    assert not estimator.config.is_chief

    def input_fn():
        with tf.Graph().as_default():  # the chief, finishing meanwhile
            step = tf.train.get_or_create_global_step()
            with tf.Session() as session:
                session.run(step.initializer)
                session.run(step.assign(10))
                tf.train.Saver().save(session, str(tmp_path / "model.ckpt"),
                                      global_step=10)
        return models.input_fn()()

    recorder = _BeginRecorder()
    assert estimator.latest_checkpoint() is None
    estimator.train(input_fn, hooks=[recorder], max_steps=10)
    assert estimator.latest_checkpoint().endswith("model.ckpt-10")
    assert not recorder.begun


class _SignallingHook(tf.train.SessionRunHook):
    def __init__(self, event):
        self._event = event

    def after_run(self, run_context, run_values):
        self._event.set()


class _WaitingHook(tf.train.SessionRunHook):
    def __init__(self, event):
        self._event = event

    def before_run(self, run_context):
        self._event.wait(timeout=60)


def test_beside_a_master_worker_0_writes_the_training_summaries(tmp_path, monkeypatch):
    # A legacy master also evaluates, so with workers in the cluster tf.estimator
    # moves the training summaries from the master to worker 0 (checked on
    # tf.estimator 2.15 with this cluster: only worker 0's summaries get written).
    ports = iter(cluster_lib.pick_free_ports(4))
    cluster = {"master": [f"127.0.0.1:{next(ports)}"],
               "worker": [f"127.0.0.1:{next(ports)}", f"127.0.0.1:{next(ports)}"],
               "ps": [f"127.0.0.1:{next(ports)}"]}
    servers = _start_servers(cluster)

    def model_fn(features, labels, mode, config):
        tf.summary.scalar("written_by_worker", float(config.task_type == "worker"))
        return models.linear_model_fn(features, labels, mode, {})

    # The others wait for worker 0's first step, so worker 0 trains (and has
    # something to summarize) before they may reach max_steps without it.
    worker_0_stepped = threading.Event()
    hooks = {"master0": [_WaitingHook(worker_0_stepped)],
             "worker0": [_SignallingHook(worker_0_stepped)],
             "worker1": [_WaitingHook(worker_0_stepped)]}
    trainers = {}
    for task_type, index in (("master", 0), ("worker", 0), ("worker", 1)):
        monkeypatch.setenv("TF_CONFIG", cluster_lib.tf_config(cluster, task_type, index))
        config = el.RunConfig(model_dir=str(tmp_path), save_summary_steps=5,
                              log_step_count_steps=5)
        trainers[f"{task_type}{index}"] = el.Estimator(model_fn, config=config)
    _, errors, running = models.run_in_threads({
        name: lambda n=name, e=est: e.train(models.input_fn(), hooks=hooks[n],
                                            max_steps=40)
        for name, est in trainers.items()}, timeout_secs=120)
    assert (errors, running) == ([], [])
    written = set()
    for path in glob.glob(str(tmp_path / "events.out.tfevents.*")):
        for event in tf.train.summary_iterator(path):
            written.update(v.simple_value for v in event.summary.value
                           if v.tag == "written_by_worker")
    assert written == {1.0}
    assert _scalar_events(tmp_path, "loss")  # the loss summary is still written
    assert len(servers) == 4


def test_a_different_model_in_an_existing_model_dir_fails_before_writing(tmp_path):
    est = models.make_estimator(tmp_path)
    est.train(models.input_fn(), max_steps=10)
    before = {n: os.path.getmtime(tmp_path / n) for n in os.listdir(tmp_path)}

    def wider_model_fn(features, labels, mode):
        w = tf.get_variable("w", [models.NUM_FEATURES, 2])  # was [4, 1]
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w)[:, :1] - labels))
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.train.get_global_step())
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op)

    other = el.Estimator(wider_model_fn, config=est.config)
    with pytest.raises(ValueError) as info:
        other.train(models.input_fn(), max_steps=20)
    message = str(info.value)
    assert "'w' has shape [4, 2] in the model but [4, 1]" in message
    assert str(tmp_path) in message
    after = {n: os.path.getmtime(tmp_path / n) for n in os.listdir(tmp_path)}
    assert after == before  # nothing written, nothing rewritten
    # tf.estimator 2.15's restore raised InvalidArgumentError here: so does this.
    assert isinstance(info.value, tf.errors.InvalidArgumentError)


def test_a_model_with_a_new_variable_is_tf_estimators_not_found_error(tmp_path):
    # tfgan's test_warm_start_error: the same model_dir, a model with one more
    # variable; tf.estimator 2.15 raised NotFoundError from its restore.
    est = models.make_estimator(tmp_path)
    est.train(models.input_fn(), max_steps=2)

    def bigger_model_fn(features, labels, mode, params):
        tf.get_variable("new_var", [1])
        return models.linear_model_fn(features, labels, mode, params)

    other = el.Estimator(bigger_model_fn, config=est.config)
    with pytest.raises(tf.errors.NotFoundError, match="new_var"):
        other.train(models.input_fn(), max_steps=4)


def test_evaluation_writes_summary_and_tensor_metrics_to_its_events(tmp_path):
    # As tf.estimator: a metric whose value is a serialized Summary (an image, say)
    # is written under '<name>/<i>', an array as a tensor, numbers as scalars.
    def model_fn(features, labels, mode):
        spec = models.linear_model_fn(features, labels, mode, {})
        if mode != el.ModeKeys.EVAL:
            return spec
        image = tf.summary.image("picture", tf.zeros([1, 2, 2, 1]))
        metrics = dict(spec.eval_metric_ops, picture=(image, tf.no_op()),
                       vector=(tf.constant([1.0, 2.0]), tf.no_op()))
        return spec._replace(eval_metric_ops=metrics)

    est = el.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(models.input_fn(), steps=1)
    metrics = est.evaluate(models.input_fn(), steps=1)
    assert isinstance(metrics["picture"], bytes)
    values = {}
    for path in glob.glob(str(tmp_path / "eval" / "events.out.tfevents.*")):
        for event in tf.train.summary_iterator(path):
            for value in event.summary.value:
                values[value.tag] = value.WhichOneof("value")
    assert values == {"loss": "simple_value", "mae": "simple_value",
                      "picture/0": "image", "vector": "tensor",
                      "checkpoint_path": "tensor"}


def _eval_events(event_dir):
    """[(step, sorted [(tag, what), ...]), ...] of every summary event in `event_dir`."""
    events = []
    for path in sorted(glob.glob(os.path.join(str(event_dir), "events.out.tfevents.*"))):
        for event in tf.train.summary_iterator(path):
            if event.HasField("summary"):
                events.append((event.step, sorted(
                    (v.tag, tf.make_ndarray(v.tensor).item() if v.HasField("tensor")
                     else "scalar") for v in event.summary.value)))
    return events


def test_evaluation_summarizes_the_evaluated_checkpoint_path(tmp_path):
    # As tf.estimator 2.15 (checked on it): after each evaluation's metrics, an
    # event of its own at the same step holds the evaluated checkpoint's path as
    # a string tensor tagged 'checkpoint_path' (an explicit path included).
    est = models.make_estimator(tmp_path, save_checkpoints_steps=2)
    est.train(models.input_fn(), max_steps=4)
    first = os.path.join(str(tmp_path), "model.ckpt-2")
    est.evaluate(models.input_fn(), steps=1)
    est.evaluate(models.input_fn(), steps=1, checkpoint_path=first)
    latest = est.latest_checkpoint().encode()
    assert _eval_events(est.eval_dir()) == [
        (4, [("loss", "scalar"), ("mae", "scalar")]), (4, [("checkpoint_path", latest)]),
        (2, [("loss", "scalar"), ("mae", "scalar")]),
        (2, [("checkpoint_path", first.encode())])]
    # The readers of eval metrics (exporters, early stopping) see numbers only.
    assert sorted(read_eval_metrics(est.eval_dir())[4]) == ["loss", "mae"]


def _predict_warnings(est, input_fn):
    # The logging module estimator_lite holds: importing tf_keras (another test
    # file, earlier in this process) puts a new one on tf.compat.v1.
    with mock.patch.object(estimator_lite_logging, "warning") as warning:
        next(est.predict(input_fn))
    return [call[0][0] for call in warning.call_args_list]


def test_predict_warns_when_the_input_never_ends(tmp_path):
    # As tf.estimator 2.15 (checked on it): constant tensors never run out, so
    # predict() would yield forever; a dataset, an iterator or a queue ends.
    est = models.make_estimator(tmp_path)
    est.train(models.input_fn(), max_steps=1)
    x = np.ones((2, models.NUM_FEATURES), np.float32)

    def constants():
        return {"x": tf2.constant(x)}

    def iterator():
        dataset = tf2.data.Dataset.from_tensors({"x": x})
        return tf.data.make_one_shot_iterator(dataset).get_next()

    def queue():
        return el.inputs.numpy_input_fn({"x": x}, batch_size=2,
                                        shuffle=False)()

    warned = _predict_warnings(est, constants)
    assert len(warned) == 1
    assert warned[0].startswith("Input graph does not use tf.data.Dataset or contain a "
                                "QueueRunner")
    for ends in (models.input_fn(), iterator, queue):
        assert _predict_warnings(est, ends) == []


@tf2_only("TF2's tf.summary.create_file_writer")
def test_tf2_summaries_without_tensorboard_say_what_to_install(tmp_path, monkeypatch):
    # TensorFlow >= 2.21 does not install TensorBoard, which TF2's tf.summary.*
    # needs: a model_fn using it gets an ImportError naming the package.
    monkeypatch.setitem(sys.modules, "tensorboard.summary.v2", None)

    def model_fn(features, labels, mode):
        spec = models.linear_model_fn(features, labels, mode, {})
        writer = tf2.summary.create_file_writer(str(tmp_path / "tb"))
        with writer.as_default():
            tf2.summary.scalar("loss", spec.loss, step=tf.train.get_global_step())
        return spec

    est = el.Estimator(model_fn, model_dir=str(tmp_path / "m"))
    with pytest.raises(ImportError, match="pip install tensorboard"):
        est.train(models.input_fn(), steps=1)


def test_get_iterator_from_input_fn_as_subclasses_use_it(tmp_path):
    # tf.estimator's helper for subclasses that build their own training graph:
    # an iterator over the input_fn's dataset (through the strategy when given,
    # with an input_context) and hooks that initialize it in each new session.
    # The values match tf.estimator 2.15's (checked on it).
    est = models.make_estimator(tmp_path)
    contexts = []

    def plain():
        return tf2.data.Dataset.from_tensor_slices(({"x": [1.0, 2.0, 3.0]},
                                                    [4.0, 5.0, 6.0]))

    def with_context(input_context, mode):
        contexts.append((input_context.num_input_pipelines, mode))
        return plain()

    def run(iterator, hooks, batches):
        features, labels = iterator.get_next()
        for hook in hooks:
            hook.begin()
        with tf.Session() as session:
            for hook in hooks:
                hook.after_create_session(session, None)
            return [session.run([features["x"], labels]) for _ in range(batches)]

    with tf.Graph().as_default():
        iterator, hooks = est._get_iterator_from_input_fn(plain, "train")
        assert run(iterator, hooks, 2) == [[1.0, 4.0], [2.0, 5.0]]
    with tf.Graph().as_default():
        strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
        with strategy.scope():
            iterator, hooks = est._get_iterator_from_input_fn(with_context, "eval",
                                                              strategy)
        assert run(iterator, hooks, 2) == [[1.0, 4.0], [2.0, 5.0]]
    assert contexts == [(1, "eval")]


# An Estimator's refusals start with tf.estimator 2.15's words. tf.estimator's own
# unit tests (and programs written against it) match its error messages with
# assertRaisesRegex; estimator_lite raises the same exception type with those words
# first and its own detail after them. The patterns below are the ones tf.estimator
# 2.15's estimator_test.py uses (the EstimatorSpec ones are in model_fn_test.py).


def _two_row_input_fn():
    return {"x": tf2.constant([[1.0], [2.0]])}, tf2.constant([[1.0], [0.0]])


def _one_weight_model_fn(metrics=None, predictions=None):
    """A model_fn with one weight; EVAL adds `metrics` (name: value tensor)."""
    def model_fn(features, labels, mode):
        weight = tf2.compat.v1.get_variable("w", [1, 1])
        output = tf2.matmul(features["x"], weight)
        loss = tf2.reduce_mean(tf2.square(output - labels)) if labels is not None else None
        step = tf2.compat.v1.train.get_global_step()
        ops = {name: tf2.compat.v1.metrics.mean(value(output))
               for name, value in (metrics or {}).items()}
        preds = predictions(output) if predictions else output
        return el.EstimatorSpec(
            mode, predictions=preds, loss=loss, eval_metric_ops=ops,
            train_op=tf2.compat.v1.assign_add(step, 1) if mode == "train" else None)
    return model_fn


@pytest.mark.parametrize("name, words", [
    ("global_step", "Metric with name `global_step` is not allowed"),
    ("loss", 'Metric with name "loss" is not allowed'),
])
def test_a_metric_named_as_the_estimators_own_is_refused(tmp_path, name, words):
    estimator = el.Estimator(_one_weight_model_fn(metrics={name: tf2.reduce_mean}),
                             str(tmp_path))
    estimator.train(_two_row_input_fn, steps=1)
    with pytest.raises(ValueError, match=words) as raised:
        estimator.evaluate(_two_row_input_fn, steps=1)
    assert "because Estimator already defines a default metric" in str(raised.value)


def test_an_input_fn_returning_three_things_is_refused(tmp_path):
    estimator = el.Estimator(_one_weight_model_fn(), str(tmp_path))
    with pytest.raises(ValueError, match="len 2 tuple") as raised:
        estimator.train(lambda: (*_two_row_input_fn(), tf2.constant(1.0)), steps=1)
    assert "length 3" in str(raised.value)


def test_params_for_a_model_fn_without_params_are_refused(tmp_path):
    with pytest.raises(ValueError, match="does not include params argument"):
        el.Estimator(_one_weight_model_fn(), str(tmp_path), params={"a": "b"})


def test_predict_keys_are_checked_in_tf_estimators_words(tmp_path):
    estimator = el.Estimator(_one_weight_model_fn(), str(tmp_path))
    estimator.train(_two_row_input_fn, steps=1)
    with pytest.raises(ValueError, match="predict_keys argument is not valid in case "
                                         "of non-dict predictions"):
        next(estimator.predict(_two_row_input_fn, predict_keys=["y"]))
    keyed = el.Estimator(_one_weight_model_fn(predictions=lambda y: {"y1": y, "y2": 2 * y}),
                         str(tmp_path))
    with pytest.raises(ValueError, match="Expected to run at least one output from"):
        next(keyed.predict(_two_row_input_fn, predict_keys=["y3"]))
    # Keys naming no prediction are left out while one does (as tf.estimator),
    # and the predictions keep their own order.
    keys = ["y2", "y3", "y1"]
    assert list(next(keyed.predict(_two_row_input_fn, predict_keys=keys))) == ["y1", "y2"]


def test_predictions_of_different_batch_sizes_name_the_one_that_differs(tmp_path):
    estimator = el.Estimator(
        _one_weight_model_fn(predictions=lambda y: {"y1": y, "y2": y[:1]}), str(tmp_path))
    estimator.train(_two_row_input_fn, steps=1)
    with pytest.raises(ValueError, match="Batch length of predictions should be same. "
                                         "y2 has different batch length") as raised:
        next(estimator.predict(_two_row_input_fn))
    assert "{'y1': 2, 'y2': 1}" in str(raised.value)
    batch = next(estimator.predict(_two_row_input_fn, yield_single_examples=False))
    assert np.shape(batch["y2"]) == (1, 1)
