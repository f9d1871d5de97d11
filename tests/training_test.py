"""Tests for train_and_evaluate, the specs, _TrainingExecutor and the evaluator."""

import logging as std_logging
import os
import types
from unittest import mock

import numpy as np
import pytest

import estimator_lite as el
from estimator_lite import _evaluation as evaluation
from estimator_lite import training
from estimator_lite._compat import training_module
from estimator_lite._engine import completion
from estimator_lite._engine import local_cluster as cluster_lib
from estimator_lite._tf import tf
from tests.oracle import driver_path, load_driver, requires_oracle, run_oracle_driver
from tests.support import models
from tests.support.tf_versions import serve

EXECUTOR_DRIVER = driver_path("executor_driver.py")
MOCK_EXECUTOR_DRIVER = driver_path("mock_executor_driver.py")

ERR_VALID_TYPES = "valid task types: chief, evaluator, master, ps, worker"
ERR_ONE_EVALUATOR = r"only one evaluator \(index 0\)"
ERR_MISSING_METHODS = "lacks"


# Fakes ---------------------------------------------------------------------------


class FakeTime:
    """Stands in for the `time` module inside training.py; sleeping is instant."""

    def __init__(self, start=1000.0):
        self.now = start
        self.sleeps = []
        self.on_sleep = None

    def time(self):
        return self.now

    def sleep(self, secs):
        self.sleeps.append(secs)
        self.now += secs
        if self.on_sleep is not None:
            self.on_sleep()


class FakeServer:
    def __init__(self, cluster_spec, job_name, task_index, config=None, start=True,
                 protocol=None):
        self.args = (job_name, task_index, protocol)
        self.started = False
        FakeServerLib.created.append(self)

    def start(self):
        self.started = True


class FakeServerLib:
    created = []
    Server = FakeServer


class FakeConfig:
    def __init__(self, task_type="worker", task_id=0, cluster=None, master=None,
                 environment="cloud", max_delay=None):
        self.cluster_spec = tf.train.ClusterSpec(cluster or {})
        self.task_type = task_type
        self.task_id = task_id
        self.is_chief = task_type in ("chief", "master")
        self.master = master if master is not None else (
            "grpc://127.0.0.1:1" if cluster else "")
        self.environment = environment
        self.experimental_max_worker_delay_secs = max_delay
        self.session_config = None
        self.protocol = None


class FakeEstimator:
    """Duck-typed estimator: train() 'saves' at fixed steps and calls listeners."""

    def __init__(self, model_dir, config=None, save_steps=(0, 10, 20, 30), clock=None,
                 secs_per_save=0):
        self.model_dir = str(model_dir)
        self.config = config or FakeConfig()
        self.save_steps = save_steps
        self.clock = clock
        self.secs_per_save = secs_per_save
        self.checkpoints = []
        self.train_calls = []
        self.evaluated = []
        self.exported = []
        self.evaluate_errors = {}

    def add_checkpoint(self, step):
        path = os.path.join(self.model_dir, f"model.ckpt-{step}")
        self.checkpoints.append(path)
        return path

    def latest_checkpoint(self):
        return self.checkpoints[-1] if self.checkpoints else None

    def train(self, input_fn, hooks=None, steps=None, max_steps=None,
              saving_listeners=None):
        listeners = list(saving_listeners or [])
        self.train_calls.append({"max_steps": max_steps, "hooks": list(hooks or []),
                                 "listeners": listeners})
        for listener in listeners:
            listener.begin()
        last = None
        for step in self.save_steps:
            if self.clock is not None:
                self.clock.now += self.secs_per_save
            self.add_checkpoint(step)
            last = step
            stops = [listener.after_save(None, step) for listener in listeners]
            if any(stops):
                break
        for listener in listeners:
            listener.end(None, last)
        return self

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None,
                 name=None):
        if checkpoint_path in self.evaluate_errors:
            raise self.evaluate_errors[checkpoint_path]
        step = int(checkpoint_path.rsplit("-", 1)[1])
        self.evaluated.append(step)
        return {"global_step": step, "loss": 100.0 - step}

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                           assets_extra=None, as_text=False, checkpoint_path=None):
        self.exported.append((export_dir_base, checkpoint_path))
        return f"{export_dir_base}/{len(self.exported)}"


class RecordingExporter(el.Exporter):
    def __init__(self, name="rec"):
        self._name = name
        self.calls = []

    @property
    def name(self):
        return self._name

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        self.calls.append((eval_result["global_step"], is_the_final_export, export_path))
        return f"exported-{eval_result['global_step']}"


class StoppingListener(training._ContinuousEvalListener):
    def __init__(self, stop_before_eval_number=None, stop_after_eval_number=None):
        self.before = 0
        self.after = []
        self._stop_before = stop_before_eval_number
        self._stop_after = stop_after_eval_number

    def before_eval(self):
        self.before += 1
        return self.before != self._stop_before

    def after_eval(self, eval_result):
        self.after.append(eval_result.status)
        return len(self.after) != self._stop_after


def _input_fn():
    return None


def _one_per_sleep(*actions):
    """An on_sleep callback that runs the next action on each sleep, then nothing."""
    pending = iter(actions)

    def on_sleep():
        action = next(pending, None)
        if action is not None:
            action()

    return on_sleep


@pytest.fixture
def clock(monkeypatch):
    fake = FakeTime()
    monkeypatch.setattr(training, "time", fake)
    monkeypatch.setattr(evaluation, "time", fake)  # the evaluator's clock
    return fake


@pytest.fixture
def servers(monkeypatch):
    FakeServerLib.created = []
    monkeypatch.setattr(training, "server_lib", FakeServerLib)
    return FakeServerLib


CLUSTER = {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2", "127.0.0.1:3"],
           "ps": ["127.0.0.1:4"]}


def _executor(estimator, max_steps=30, exporters=None, throttle_secs=0,
              start_delay_secs=0, listener=None, train_hooks=None, steps=None):
    train_spec = el.TrainSpec(_input_fn, max_steps=max_steps)
    eval_spec = el.EvalSpec(_input_fn, steps=steps, exporters=exporters,
                            throttle_secs=throttle_secs,
                            start_delay_secs=start_delay_secs)
    return training._TrainingExecutor(estimator, train_spec, eval_spec,
                                      train_hooks=train_hooks,
                                      continuous_eval_listener=listener)


# Specs ---------------------------------------------------------------------------


def test_train_spec_defaults_and_immutability():
    spec = el.TrainSpec(_input_fn)
    assert (spec.max_steps, spec.hooks, spec.saving_listeners) == (None, (), ())
    with pytest.raises(AttributeError):
        spec.max_steps = 3


@pytest.mark.parametrize("kwargs, error, message", [
    ({"input_fn": "not callable"}, TypeError, "input_fn must be callable"),
    ({"max_steps": 0}, ValueError, "max_steps must be > 0, got 0"),
    ({"max_steps": "2"}, TypeError, "max_steps must be a number"),
    ({"hooks": [object()]}, TypeError, "hooks must contain only SessionRunHook"),
    ({"hooks": 3}, TypeError, "hooks must be an iterable"),
    ({"saving_listeners": [tf.train.StopAtStepHook(1)]}, TypeError,
     "saving_listeners must contain only CheckpointSaverListener"),
])
def test_train_spec_errors(kwargs, error, message):
    kwargs.setdefault("input_fn", _input_fn)
    with pytest.raises(error, match=message):
        el.TrainSpec(**kwargs)


def test_step_counts_may_be_floats_as_on_tf_estimator():
    # max_steps=1e6 from a config file is a float; tf.estimator takes it.
    assert el.TrainSpec(_input_fn, max_steps=1e6).max_steps == 1e6
    assert el.EvalSpec(_input_fn, steps=10.0).steps == 10.0


def test_eval_spec_defaults_follow_tf_estimator():
    spec = el.EvalSpec(_input_fn)
    assert (spec.steps, spec.name, spec.start_delay_secs, spec.throttle_secs) == (
        100, None, 120, 600)
    assert spec.exporters == () and spec.hooks == ()
    single = RecordingExporter()
    assert el.EvalSpec(_input_fn, exporters=single).exporters == (single,)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"input_fn": None}, TypeError, "input_fn must be callable"),
    ({"steps": 0}, ValueError, "steps must be > 0"),
    ({"name": 7}, TypeError, "name must be a str or None, got 7 of type int"),
    ({"hooks": ["x"]}, TypeError, "hooks must contain only SessionRunHook"),
    ({"exporters": ["x"]}, TypeError, "exporters must contain only Exporter"),
    ({"exporters": [RecordingExporter("a"), RecordingExporter("a")]}, ValueError,
     "exporter names must be unique"),
    ({"exporters": [RecordingExporter("")]}, ValueError, "non-empty strings"),
    ({"start_delay_secs": -1}, ValueError, "start_delay_secs must be >= 0"),
    ({"throttle_secs": -0.5}, ValueError, "throttle_secs must be >= 0"),
    ({"throttle_secs": "60"}, TypeError, "throttle_secs must be a number"),
])
def test_eval_spec_errors(kwargs, error, message):
    kwargs.setdefault("input_fn", _input_fn)
    with pytest.raises(error, match=message):
        el.EvalSpec(**kwargs)


def test_eval_spec_with_empty_name_is_unnamed(tmp_path):
    spec = el.EvalSpec(_input_fn, name="")
    est = models.make_estimator(tmp_path)
    assert est.eval_dir(spec.name) == est.eval_dir()


def test_evaluator_binds_best_exporter_to_its_eval_dir(tmp_path):
    best = el.BestExporter(serving_input_receiver_fn=models.raw_serving_input_fn)
    spec = el.EvalSpec(_input_fn, name="holdout", exporters=[best])
    assert best._eval_dir_name is None  # the spec leaves its arguments alone
    est = models.make_estimator(tmp_path)
    training._Evaluator(est, spec, max_training_steps=None)
    assert best._eval_dir_name == "eval_holdout"
    with pytest.raises(ValueError, match="already used with eval dir 'eval_holdout'"):
        training._Evaluator(est, el.EvalSpec(_input_fn, exporters=[best]), None)


def test_eval_result_validation():
    with pytest.raises(ValueError, match="status must be one of"):
        evaluation._EvalResult("done")
    with pytest.raises(ValueError, match="needs metrics"):
        evaluation._EvalResult(evaluation._EvalStatus.EVALUATED, checkpoint_path="p")
    with pytest.raises(ValueError, match="must contain 'global_step'"):
        evaluation._EvalResult(evaluation._EvalStatus.EVALUATED, {"loss": 1.0}, "p")
    with pytest.raises(ValueError, match="needs a checkpoint_path"):
        evaluation._EvalResult(evaluation._EvalStatus.EVALUATED, {"global_step": 1})
    with pytest.raises(ValueError, match="takes no metrics"):
        evaluation._EvalResult(evaluation._EvalStatus.NO_NEW_CHECKPOINT, {"global_step": 1})
    # tf.estimator 2.15: metrics that are not a dict are a TypeError.
    with pytest.raises(TypeError, match="must return a dict of metrics"):
        evaluation._EvalResult(evaluation._EvalStatus.EVALUATED,
                             [("loss", 1.0), ("global_step", 1)], "p")
    ok = evaluation._EvalResult(evaluation._EvalStatus.EVALUATED, {"global_step": 3}, "p")
    assert ok.metrics["global_step"] == 3


# Dispatch ---------------------------------------------------------------------------


@pytest.mark.parametrize("task_type", ["chief", "worker", "ps", "master", "evaluator"])
def test_run_dispatches_by_task_type(tmp_path, task_type, monkeypatch):
    cluster = dict(CLUSTER) if task_type != "master" else {
        "master": ["127.0.0.1:1"], "ps": ["127.0.0.1:4"]}
    executor = _executor(FakeEstimator(tmp_path, FakeConfig(task_type, 0, cluster)))
    called = []
    for role in ("chief", "worker", "ps", "master", "evaluator", "local"):
        monkeypatch.setattr(executor, f"run_{role}",
                            lambda role=role: called.append(role) or role)
    assert executor.run() == task_type
    assert called == [task_type]


def test_run_without_cluster_is_local(tmp_path, monkeypatch):
    executor = _executor(FakeEstimator(tmp_path, FakeConfig("worker", 0)))
    monkeypatch.setattr(executor, "run_local", lambda: "local")
    assert executor.run() == "local"


@pytest.mark.parametrize("task_type", ["local", "", None, "boss"])
def test_run_rejects_unknown_task_types(tmp_path, task_type):
    executor = _executor(FakeEstimator(tmp_path, FakeConfig(task_type, 0, CLUSTER)))
    with pytest.raises(ValueError, match=ERR_VALID_TYPES):
        executor.run()


def test_only_evaluator_zero(tmp_path):
    estimator = FakeEstimator(tmp_path, FakeConfig("evaluator", 1))
    with pytest.raises(ValueError, match=ERR_ONE_EVALUATOR):
        el.train_and_evaluate(estimator, el.TrainSpec(_input_fn), el.EvalSpec(_input_fn))


def test_train_and_evaluate_checks_argument_types(tmp_path):
    with pytest.raises(TypeError, match=ERR_MISSING_METHODS):
        el.train_and_evaluate(object(), el.TrainSpec(_input_fn), el.EvalSpec(_input_fn))
    estimator = FakeEstimator(tmp_path)
    with pytest.raises(TypeError, match="eval_spec must be an EvalSpec"):
        el.train_and_evaluate(estimator, el.TrainSpec(_input_fn), {"steps": 1})
    with pytest.raises(TypeError, match="train_spec must be a TrainSpec"):
        el.train_and_evaluate(estimator, None, el.EvalSpec(_input_fn))
    with pytest.raises(TypeError, match="continuous_eval_listener"):
        training._TrainingExecutor(estimator, el.TrainSpec(_input_fn),
                                   el.EvalSpec(_input_fn), continuous_eval_listener=1)


# Calls, eval_spec=None, bytes model_dir -------------------------------------------


class KeywordOnlyEstimator(FakeEstimator):
    """An Estimator-like object whose train/evaluate take keywords only."""

    def train(self, *, input_fn, hooks=None, steps=None, max_steps=None,
              saving_listeners=None):
        return super().train(input_fn, hooks, steps, max_steps, saving_listeners)

    def evaluate(self, *, input_fn, steps=None, hooks=None, checkpoint_path=None,
                 name=None):
        return super().evaluate(input_fn, steps, hooks, checkpoint_path, name)


def test_estimator_is_called_with_keywords(tmp_path, clock):
    estimator = KeywordOnlyEstimator(tmp_path)
    metrics, _ = _executor(estimator).run_local()
    assert metrics["global_step"] == 30 and estimator.evaluated[-1] == 30


@requires_oracle
def test_train_and_evaluate_arguments_match_tf_estimator(tmp_path):
    expected = run_oracle_driver(EXECUTOR_DRIVER, tmp_path / "oracle",
                                 timeout_secs=300)["result"]
    driver = load_driver(EXECUTOR_DRIVER, "executor_driver")
    lib = types.SimpleNamespace(Estimator=el.Estimator, training=training,
                                TrainSpec=el.TrainSpec, EvalSpec=el.EvalSpec)
    assert driver.run(lib, str(tmp_path / "lite")) == expected


@requires_oracle
def test_roles_with_a_mocked_estimator_match_tf_estimator(tmp_path):
    # Library tests drive train_and_evaluate's roles with mock.Mock(spec=Estimator)
    # (model_dir a Mock, not a path; a bytes model_dir): the calls, server
    # arguments, sleeps, exports and errors are tf.estimator's (the eval throttle
    # follows TensorFlow's SecondOrStepTimer when a test patches it), and no completion
    # marker is written where model_dir is not a path.
    expected = run_oracle_driver(MOCK_EXECUTOR_DRIVER, str(tmp_path / "oracle"))["result"]
    driver = load_driver(MOCK_EXECUTOR_DRIVER, "mock_executor_driver")
    # What tf.estimator's training path serves (`_StopAtSecsHook` from _compat/).
    training_path = types.SimpleNamespace(
        _TrainingExecutor=training._TrainingExecutor,
        _StopAtSecsHook=training_module._StopAtSecsHook)
    lib = types.SimpleNamespace(Estimator=el.Estimator, training=training_path,
                                RunConfig=el.RunConfig, TrainSpec=el.TrainSpec,
                                EvalSpec=el.EvalSpec, Exporter=el.Exporter)
    os.makedirs(tmp_path / "lite")
    assert driver.run(lib, str(tmp_path / "lite")) == expected


@pytest.mark.parametrize("task_type", ["chief", "worker"])
def test_training_roles_need_no_eval_spec(tmp_path, clock, servers, task_type):
    # tf.estimator's _TrainingExecutor takes eval_spec=None; only the roles that
    # evaluate need one.
    estimator = FakeEstimator(tmp_path, FakeConfig(task_type, 0, CLUSTER))
    executor = training._TrainingExecutor(estimator, el.TrainSpec(_input_fn, 30), None)
    assert executor.run() == (None, None)
    assert estimator.train_calls[0]["max_steps"] == 30
    assert estimator.evaluated == []


def test_ps_needs_no_eval_spec(tmp_path, clock, servers):
    estimator = FakeEstimator(tmp_path, FakeConfig("ps", 0, {"chief": ["127.0.0.1:1"],
                                                             "ps": ["127.0.0.1:4"]}))
    clock.on_sleep = _one_per_sleep(
        lambda: completion.write_training_complete(str(tmp_path), 30, 30, clock.now))
    executor = training._TrainingExecutor(estimator, el.TrainSpec(_input_fn, 30), None)
    assert executor.run() == (None, None)


@pytest.mark.parametrize("task_type, cluster", [
    ("worker", None), ("evaluator", None),
    ("master", {"master": ["127.0.0.1:1"], "ps": ["127.0.0.1:4"]})])
def test_evaluating_roles_need_an_eval_spec(tmp_path, clock, servers, task_type,
                                            cluster):
    estimator = FakeEstimator(tmp_path, FakeConfig(task_type, 0, cluster))
    executor = training._TrainingExecutor(estimator, el.TrainSpec(_input_fn, 30), None)
    with pytest.raises(TypeError, match="eval_spec must be an EvalSpec"):
        executor.run()
    assert estimator.train_calls == [] and servers.created == []
    with pytest.raises(TypeError, match="eval_spec must be an EvalSpec"):
        el.train_and_evaluate(estimator, el.TrainSpec(_input_fn, 30), None)


class BytesModelDirEstimator(FakeEstimator):
    """An Estimator-like object whose model_dir is bytes (tf.estimator allowed it)."""

    def __init__(self, model_dir, *args, **kwargs):
        super().__init__(model_dir, *args, **kwargs)
        self.model_dir = os.fsencode(model_dir)

    def add_checkpoint(self, step):
        path = os.path.join(os.fsdecode(self.model_dir), f"model.ckpt-{step}")
        self.checkpoints.append(path)
        return path


def test_bytes_model_dir_roles_share_the_completion_marker(tmp_path, clock, servers):
    chief = BytesModelDirEstimator(tmp_path, FakeConfig("chief", 0, CLUSTER))
    assert _executor(chief).run_chief() == (None, None)
    assert completion.read_training_complete(str(tmp_path)).global_step == 30
    worker = BytesModelDirEstimator(tmp_path, FakeConfig("worker", 1, CLUSTER))
    assert _executor(worker).run_worker() == (None, None)
    assert completion.workers_done(str(tmp_path)) == {1}
    # Without max_steps the evaluator stops on the chief's marker of a new run.
    completion.clear_markers(str(tmp_path))
    exporter = RecordingExporter()
    evaluator = BytesModelDirEstimator(tmp_path, FakeConfig("evaluator", 0))
    clock.on_sleep = _one_per_sleep(
        lambda: evaluator.add_checkpoint(30),
        lambda: completion.write_training_complete(str(tmp_path), 30, None, clock.now))
    metrics, _ = _executor(evaluator, max_steps=None, exporters=[exporter],
                           throttle_secs=5).run_evaluator()
    assert metrics["global_step"] == 30
    assert exporter.calls[-1][1:] == (True, os.path.join(str(tmp_path), "export", "rec"))


def _checkpoint_with_step(directory, name_step, stored_step):
    """A real checkpoint named model.ckpt-<name_step> holding global_step stored_step."""
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        saver = tf.train.Saver()
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            session.run(step.assign(stored_step))
            return saver.save(session, os.path.join(directory, "model.ckpt"),
                              global_step=name_step)


def test_completion_marker_has_the_step_stored_in_the_checkpoint(tmp_path, clock,
                                                                   servers):
    # An asynchronous chief names its checkpoint after the step it last saw; the
    # global_step variable inside (what tf.estimator reads, and evaluations
    # report) may be ahead: that one marks the end of training.
    class LaggingName(FakeEstimator):
        def train(self, *args, **kwargs):
            super().train(*args, **kwargs)
            self.checkpoints.append(_checkpoint_with_step(self.model_dir, 30, 33))
            return self

    estimator = LaggingName(tmp_path, FakeConfig("chief", 0, CLUSTER))
    assert _executor(estimator).run_chief() == (None, None)
    assert completion.read_training_complete(str(tmp_path)).global_step == 33


# Servers and delays -----------------------------------------------------------------


def test_chief_starts_server_trains_and_marks_completion(tmp_path, clock, servers):
    hook = tf.train.StopAtStepHook(last_step=5)
    estimator = FakeEstimator(tmp_path, FakeConfig("chief", 0, CLUSTER))
    completion.write_training_complete(str(tmp_path), 7, 30, 1.0)  # stale marker
    executor = _executor(estimator, train_hooks=[hook])
    assert executor.run_chief() == (None, None)
    (server,) = servers.created
    # protocol=None (the server then uses grpc), as tf.estimator passes it on.
    assert server.args == ("chief", 0, None) and server.started
    assert estimator.train_calls[0]["max_steps"] == 30
    assert estimator.train_calls[0]["hooks"] == [hook]
    marker = completion.read_training_complete(str(tmp_path))
    assert (marker.global_step, marker.max_steps) == (30, 30)
    assert clock.sleeps == []  # the chief never waits


@pytest.mark.parametrize("task_id, max_delay, expected", [
    (0, None, 5), (1, None, 10), (20, None, 60), (3, 7, 7), (0, 0, None)])
def test_worker_start_delay(tmp_path, clock, servers, task_id, max_delay, expected):
    cluster = dict(CLUSTER, worker=[f"127.0.0.1:{10 + i}" for i in range(21)])
    estimator = FakeEstimator(tmp_path, FakeConfig("worker", task_id, cluster,
                                                   max_delay=max_delay))
    _executor(estimator).run_worker()
    assert clock.sleeps == ([] if expected is None else [expected])
    assert completion.workers_done(str(tmp_path)) == {task_id}
    assert servers.created[0].args[:2] == ("worker", task_id)


def test_no_server_for_single_node_or_google(tmp_path, clock, servers):
    single = FakeEstimator(tmp_path / "a", FakeConfig("chief", 0, {"chief": ["h:1"]}))
    _executor(single).run_chief()
    google = FakeEstimator(tmp_path / "b", FakeConfig("chief", 0, CLUSTER,
                                                      environment="google"))
    _executor(google).run_chief()
    assert servers.created == []
    assert len(single.train_calls) == len(google.train_calls) == 1


def test_server_needs_master_task_and_cluster(tmp_path, clock, servers):
    no_master = FakeEstimator(tmp_path, FakeConfig("chief", 0, CLUSTER, master=""))
    with pytest.raises(RuntimeError, match="no master address"):
        _executor(no_master).run_chief()
    no_task = FakeEstimator(tmp_path, FakeConfig("chief", None, CLUSTER))
    with pytest.raises(RuntimeError, match="no task_id"):
        _executor(no_task)._start_std_server(no_task.config)
    no_type = FakeEstimator(tmp_path, FakeConfig("", 0, CLUSTER))
    with pytest.raises(RuntimeError, match="no task_type"):
        _executor(no_type)._start_std_server(no_type.config)


# Local: checkpoint-listener evaluation --------------------------------------------


def test_local_evaluates_new_checkpoints_and_final_export_once_last(tmp_path, clock):
    exporter = RecordingExporter()
    estimator = FakeEstimator(tmp_path, save_steps=(0, 10, 20, 30))
    metrics, exports = _executor(estimator, exporters=[exporter]).run_local()
    assert estimator.evaluated == [10, 20, 30]  # not the save at session creation
    assert [call[:2] for call in exporter.calls] == [(10, False), (20, False), (30, True)]
    assert exporter.calls[0][2] == os.path.join(str(tmp_path), "export", "rec")
    assert metrics == {"global_step": 30, "loss": 70.0}
    assert exports == ["exported-30"]


def test_local_throttles_evaluations(tmp_path, clock):
    estimator = FakeEstimator(tmp_path, save_steps=(0, 10, 20, 30, 40, 50),
                              clock=clock, secs_per_save=100)
    _executor(estimator, throttle_secs=250).run_local()
    # step 10 (first), then only saves >= 250 s later: 40; the final 50 always.
    assert estimator.evaluated == [10, 40, 50]


def test_final_export_when_last_checkpoint_was_already_evaluated(tmp_path, clock):
    exporter = RecordingExporter()
    estimator = FakeEstimator(tmp_path, save_steps=(0, 10, 20))
    _executor(estimator, max_steps=None, exporters=[exporter]).run_local()
    assert estimator.evaluated == [10, 20]
    # With max_steps None the save at 20 is not known to be final: end() runs the
    # final export on the already-evaluated result instead of evaluating again.
    assert [c[:2] for c in exporter.calls] == [(10, False), (20, False), (20, True)]


def test_listener_before_eval_false_stops_training(tmp_path, clock):
    listener = StoppingListener(stop_before_eval_number=2)
    estimator = FakeEstimator(tmp_path, save_steps=(0, 10, 20, 30))
    metrics, _ = _executor(estimator, listener=listener).run_local()
    assert estimator.checkpoints[-1].endswith("-20")  # training stopped at the save
    assert estimator.evaluated == [10]
    assert metrics["global_step"] == 10


def test_listener_after_eval_false_stops_training(tmp_path, clock):
    listener = StoppingListener(stop_after_eval_number=1)
    estimator = FakeEstimator(tmp_path, save_steps=(0, 10, 20, 30))
    _executor(estimator, listener=listener).run_local()
    assert estimator.checkpoints[-1].endswith("-10")
    assert estimator.evaluated == [10]


def test_rerun_after_max_steps_returns_final_metrics(tmp_path, clock):
    exporter = RecordingExporter()
    estimator = FakeEstimator(tmp_path, save_steps=())  # train() has nothing to do
    estimator.add_checkpoint(30)
    metrics, exports = _executor(estimator, exporters=[exporter]).run_local()
    assert metrics == {"global_step": 30, "loss": 70.0}
    assert exports == ["exported-30"]
    assert [c[:2] for c in exporter.calls] == [(30, True)]


# The evaluator ---------------------------------------------------------------------


def test_evaluator_skips_missing_and_old_checkpoints(tmp_path, clock, caplog):
    estimator = FakeEstimator(tmp_path)
    evaluator = training._Evaluator(estimator, el.EvalSpec(_input_fn), 30)
    with caplog.at_level(std_logging.WARNING):
        statuses = [evaluator.evaluate_and_export()[0].status for _ in range(3)]
        estimator.add_checkpoint(10)
        statuses.append(evaluator.evaluate_and_export()[0].status)
        statuses += [evaluator.evaluate_and_export()[0].status for _ in range(3)]
        clock.now += evaluation._WARNING_INTERVAL_SECS
        statuses.append(evaluator.evaluate_and_export()[0].status)
    status = training._EvalStatus
    assert statuses == [status.MISSING_CHECKPOINT] * 3 + [status.EVALUATED] + [
        status.NO_NEW_CHECKPOINT] * 4
    warnings = [r.getMessage() for r in caplog.records if r.levelno == std_logging.WARNING]
    assert sum("No checkpoint in" in w for w in warnings) == 1  # rate-limited
    assert sum("No new checkpoint" in w for w in warnings) == 2  # again after 60 s
    assert estimator.evaluated == [10]


@pytest.mark.parametrize("error", [
    tf.errors.NotFoundError(None, None, "model.ckpt-10.index: no such file"),
    tf.errors.DataLossError(None, None, "checksum mismatch"),
])
def test_evaluator_survives_vanished_or_corrupt_checkpoint(tmp_path, clock, error):
    exporter = RecordingExporter()
    estimator = FakeEstimator(tmp_path)
    estimator.evaluate_errors[estimator.add_checkpoint(10)] = error
    evaluator = training._Evaluator(estimator, el.EvalSpec(_input_fn,
                                                           exporters=[exporter]), 30)
    result, exports = evaluator.evaluate_and_export()
    assert result.status == training._EvalStatus.MISSING_CHECKPOINT and exports == []
    assert evaluator.evaluate_and_export()[0].status == (
        training._EvalStatus.NO_NEW_CHECKPOINT)  # the broken one is not retried
    estimator.add_checkpoint(20)
    result, _ = evaluator.evaluate_and_export()
    assert result.metrics["global_step"] == 20
    assert exporter.calls == [(20, False, exporter.calls[0][2])]


def test_run_evaluator_loops_until_max_steps(tmp_path, clock):
    exporter = RecordingExporter()
    estimator = FakeEstimator(tmp_path, FakeConfig("evaluator", 0))
    upcoming = iter([10, 20, 30])
    clock.on_sleep = lambda: estimator.add_checkpoint(next(upcoming, 30))
    metrics, exports = _executor(estimator, exporters=[exporter], throttle_secs=60,
                                 start_delay_secs=15).run_evaluator()
    assert clock.sleeps[0] == 15  # start delay
    assert all(s == 60 for s in clock.sleeps[1:])  # throttle minus (zero) elapsed
    assert estimator.evaluated == [10, 20, 30]
    assert [c[:2] for c in exporter.calls] == [(10, False), (20, False), (30, True)]
    assert metrics["global_step"] == 30 and exports == ["exported-30"]


def test_run_evaluator_sleeps_throttle_minus_elapsed(tmp_path, clock, monkeypatch):
    estimator = FakeEstimator(tmp_path, FakeConfig("evaluator", 0))
    estimator.add_checkpoint(30)
    original = estimator.evaluate

    def slow_evaluate(*args, **kwargs):
        clock.now += 25
        return original(*args, **kwargs)

    monkeypatch.setattr(estimator, "evaluate", slow_evaluate)
    upcoming = iter([10, 30])
    estimator.checkpoints = []
    clock.on_sleep = lambda: estimator.add_checkpoint(next(upcoming))
    _executor(estimator, throttle_secs=60, start_delay_secs=1).run_evaluator()
    assert clock.sleeps == [1, 35]  # start delay; then 60 s minus the 25 s evaluation
    assert estimator.evaluated == [10, 30]


def test_run_evaluator_with_zero_throttle_pauses_between_empty_polls(tmp_path, clock,
                                                                     caplog):
    # tf.estimator polls without a pause and warns on every poll; here a poll that
    # finds no new checkpoint waits a second, and the warning is logged once.
    estimator = FakeEstimator(tmp_path, FakeConfig("evaluator", 0))
    clock.on_sleep = _one_per_sleep(
        *[lambda: None] * 5, lambda: estimator.add_checkpoint(30))
    with caplog.at_level(std_logging.WARNING):
        _executor(estimator, throttle_secs=0, start_delay_secs=0).run_evaluator()
    assert clock.sleeps == [training._ZERO_THROTTLE_POLL_SECS] * 6
    assert estimator.evaluated == [30]
    warnings = [r for r in caplog.records if "throttle_secs is set as 0" in r.getMessage()]
    assert len(warnings) == 1


def test_run_evaluator_exits_on_completion_marker_without_max_steps(tmp_path, clock):
    exporter = RecordingExporter()
    estimator = FakeEstimator(tmp_path, FakeConfig("evaluator", 0))
    clock.on_sleep = _one_per_sleep(
        lambda: estimator.add_checkpoint(10), lambda: estimator.add_checkpoint(17),
        lambda: completion.write_training_complete(str(tmp_path), 17, None, clock.now))
    metrics, _ = _executor(estimator, max_steps=None, exporters=[exporter],
                           throttle_secs=5).run_evaluator()
    assert estimator.evaluated == [10, 17]
    assert [c[:2] for c in exporter.calls] == [(10, False), (17, False), (17, True)]
    assert metrics["global_step"] == 17


def test_evaluator_ignores_a_stale_completion_marker(tmp_path, clock):
    completion.write_training_complete(str(tmp_path), 5, None, clock.now - 500)
    estimator = FakeEstimator(tmp_path, FakeConfig("evaluator", 0))
    estimator.add_checkpoint(5)
    clock.on_sleep = _one_per_sleep(
        lambda: completion.clear_markers(str(tmp_path)),
        lambda: estimator.add_checkpoint(9),
        lambda: completion.write_training_complete(str(tmp_path), 9, None, clock.now))
    _executor(estimator, max_steps=None, throttle_secs=1).run_evaluator()
    assert estimator.evaluated == [5, 9]  # did not stop at the old run's marker


def test_run_evaluator_listener_stops(tmp_path, clock):
    estimator = FakeEstimator(tmp_path, FakeConfig("evaluator", 0))
    estimator.add_checkpoint(10)
    clock.on_sleep = lambda: estimator.add_checkpoint(20)
    listener = StoppingListener(stop_after_eval_number=2)
    _executor(estimator, listener=listener, throttle_secs=10).run_evaluator()
    assert estimator.evaluated == [10, 20] and len(listener.after) == 2


# ps --------------------------------------------------------------------------------


def test_ps_serves_until_chief_and_workers_are_done(tmp_path, clock, servers):
    estimator = FakeEstimator(tmp_path, FakeConfig("ps", 0, CLUSTER))
    model_dir = str(tmp_path)
    clock.on_sleep = _one_per_sleep(
        lambda: completion.write_training_complete(model_dir, 30, 30, clock.now),
        lambda: completion.write_worker_done(model_dir, 0, 30),
        lambda: completion.write_worker_done(model_dir, 1, 30))
    assert _executor(estimator).run_ps() == (None, None)
    assert servers.created[0].args[:2] == ("ps", 0) and servers.created[0].started
    assert len(clock.sleeps) == 3  # returned right after the last worker


def test_ps_stops_after_grace_when_a_worker_never_reports(tmp_path, clock, servers):
    estimator = FakeEstimator(tmp_path, FakeConfig("ps", 0, CLUSTER))
    completion.clear_markers(str(tmp_path))
    clock.on_sleep = lambda: completion.write_training_complete(str(tmp_path), 30, 30,
                                                                clock.now)
    _executor(estimator).run_ps()
    assert sum(clock.sleeps) == pytest.approx(training._DEFAULT_GRACE_SECS + 1)


# Real runs --------------------------------------------------------------------------


def test_local_train_and_evaluate_real_estimator(tmp_path):
    est = models.make_estimator(tmp_path, save_checkpoints_steps=10)
    latest = el.LatestExporter("latest", models.raw_serving_input_fn, exports_to_keep=2)
    final = el.FinalExporter("final", models.raw_serving_input_fn)
    train_spec = el.TrainSpec(models.input_fn(), max_steps=22)
    eval_spec = el.EvalSpec(models.input_fn(epochs=1), steps=None, throttle_secs=0,
                            exporters=[latest, final])
    metrics, exports = el.train_and_evaluate(est, train_spec, eval_spec)
    assert metrics["global_step"] == 22
    assert sorted(el.read_eval_metrics(est.eval_dir())) == [10, 20, 22]
    assert len(os.listdir(tmp_path / "export" / "latest")) == 2
    assert len(os.listdir(tmp_path / "export" / "final")) == 1
    x, _ = models.linear_data(6)
    expected = [p["y"] for p in est.predict(lambda: tf.data.Dataset.from_tensor_slices(
        {"x": x}).batch(6))]
    for export_dir in exports:
        served = serve(export_dir, x=x)["outputs"]
        np.testing.assert_allclose(served, expected, rtol=1e-5)
    # Running again after max_steps returns the final metrics, not (None, None).
    again, again_exports = el.train_and_evaluate(est, train_spec, eval_spec)
    assert again["global_step"] == 22
    assert again["loss"] == pytest.approx(metrics["loss"])
    # Read back from the eval summaries, yet typed and ordered as evaluate()'s
    # results (numpy.float32 metrics, numpy.int64 global_step), so `.item()` works.
    assert list(again) == list(metrics)
    assert {k: type(v) for k, v in again.items()} == {
        k: type(v) for k, v in metrics.items()}
    assert type(again["global_step"]) is np.int64
    assert again_exports == []
    assert sorted(el.read_eval_metrics(est.eval_dir())) == [10, 20, 22]


def test_in_process_cluster_every_role_finishes(tmp_path, monkeypatch):
    cluster = cluster_lib.local_cluster_spec(num_ps=1, num_workers=1)
    model_dir = str(tmp_path)
    roles = [("ps", 0), ("chief", 0), ("worker", 0), ("evaluator", 0)]
    executors = {}
    for task_type, index in roles:
        monkeypatch.setenv("TF_CONFIG", cluster_lib.tf_config(cluster, task_type, index))
        config = el.RunConfig(model_dir=model_dir, save_checkpoints_steps=25,
                              experimental_max_worker_delay_secs=0)
        estimator = el.Estimator(models.linear_model_fn, config=config)
        exporter = el.LatestExporter("latest", models.raw_serving_input_fn)
        executors[task_type] = training._TrainingExecutor(
            estimator, el.TrainSpec(models.input_fn(), max_steps=100),
            el.EvalSpec(models.input_fn(epochs=1), steps=None, exporters=[exporter],
                        start_delay_secs=0, throttle_secs=0.2))
    results, errors, running = models.run_in_threads(
        {task_type: executors[task_type].run for task_type, _ in roles})
    assert running == []
    assert errors == []
    assert results["chief"] == results["worker"] == results["ps"] == (None, None)
    metrics, exports = results["evaluator"]
    final_step = completion.read_training_complete(model_dir).global_step
    assert final_step >= 100
    assert metrics["global_step"] == final_step  # the final checkpoint was evaluated
    assert exports and os.path.exists(os.path.join(exports[0].decode(), "saved_model.pb"))


def _truncate(path):
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[: len(data) // 2])


def test_evaluator_skips_checkpoints_it_cannot_restore_real_files(tmp_path):
    """GC'd between listing and restore, truncated data, or gone before the export."""
    est = models.make_estimator(tmp_path, save_checkpoints_steps=10,
                                keep_checkpoint_max=10)
    est.train(models.input_fn(), max_steps=30)
    paths = {step: str(tmp_path / f"model.ckpt-{step}") for step in (10, 20, 30)}
    for name in os.listdir(tmp_path):  # 10: garbage-collected after it was listed
        if name.startswith("model.ckpt-10."):
            os.remove(tmp_path / name)
    (data,) = [n for n in os.listdir(tmp_path) if n.startswith("model.ckpt-20.data")]
    _truncate(tmp_path / data)  # 20: a crash mid-write
    listed = iter([paths[10], paths[20], paths[30]])
    current = {}

    class Vanishing(el.LatestExporter):
        def export(self, estimator, export_path, checkpoint_path, eval_result,
                   is_the_final_export):
            if eval_result["global_step"] == 30 and not current.get("deleted"):
                current["deleted"] = True  # 30 vanishes between evaluation and export
                saved = {n: (tmp_path / n).read_bytes() for n in os.listdir(tmp_path)
                         if n.startswith("model.ckpt-30.")}
                for name in saved:
                    os.remove(tmp_path / name)
                current["saved"] = saved
            return super().export(estimator, export_path, checkpoint_path, eval_result,
                                  is_the_final_export)

    est.latest_checkpoint = lambda: current.setdefault("path", next(listed))
    evaluator = training._Evaluator(est, el.EvalSpec(
        models.input_fn(epochs=1), exporters=[Vanishing(
            "latest", models.raw_serving_input_fn)]), 30)
    for expected in (10, 20):
        result, exports = evaluator.evaluate_and_export()
        assert result.status == training._EvalStatus.MISSING_CHECKPOINT, expected
        assert exports == []
        current.pop("path")
    result, exports = evaluator.evaluate_and_export()
    assert result.metrics["global_step"] == 30 and exports == [None]
    assert not os.path.exists(tmp_path / "export" / "latest") or not [
        n for n in os.listdir(tmp_path / "export" / "latest") if n.isdigit()]


def test_evaluator_still_raises_real_errors_on_a_good_checkpoint(tmp_path):
    est = models.make_estimator(tmp_path)
    est.train(models.input_fn(), max_steps=10)

    def broken_input_fn():
        raise ValueError("the eval data is misconfigured")

    evaluator = training._Evaluator(est, el.EvalSpec(broken_input_fn), 10)
    with pytest.raises(ValueError, match="misconfigured"):
        evaluator.evaluate_and_export()


def test_evaluator_removes_exports_left_half_written(tmp_path):
    est = models.make_estimator(tmp_path)
    stale = tmp_path / "export" / "latest" / "temp-1700000000"
    stale.mkdir(parents=True)
    (stale / "saved_model.pb").write_text("half")
    keep = tmp_path / "export" / "latest" / "notes-temp-1"
    keep.mkdir()
    training._Evaluator(est, el.EvalSpec(_input_fn, exporters=[
        el.LatestExporter("latest", models.raw_serving_input_fn)]), None)
    assert not stale.exists() and keep.exists()


def test_straggler_grace_comes_from_the_environment(monkeypatch):
    assert training._grace_secs() == 60
    monkeypatch.setenv(training.GRACE_ENV, "7.5")
    assert training._grace_secs() == 7.5
    monkeypatch.setenv(training.GRACE_ENV, "-1")
    with pytest.raises(ValueError, match="must be a number of seconds >= 0, got '-1'"):
        training._grace_secs()


@pytest.mark.parametrize("make, error, phrase", [
    (lambda: el.TrainSpec("x"), TypeError, "`input_fn` must be callable"),
    (lambda: el.TrainSpec(_input_fn, max_steps=0), ValueError,
     "Must specify max_steps > 0"),
    (lambda: el.TrainSpec(_input_fn, hooks=[object()]), TypeError,
     "All hooks must be `SessionRunHook` instances"),
    (lambda: el.EvalSpec(_input_fn, steps=0), ValueError, "Must specify steps > 0"),
    (lambda: el.EvalSpec(_input_fn, throttle_secs=-1), ValueError,
     "Must specify throttle_secs >= 0"),
    (lambda: el.EvalSpec(_input_fn, exporters=[RecordingExporter("a")] * 2), ValueError,
     "`exporters` must have unique names."),
    (lambda: el.train_and_evaluate(FakeEstimator("/tmp/x"), el.TrainSpec(_input_fn),
                                   object()),
     TypeError, "`eval_spec` must have type `tf.estimator.EvalSpec`"),
    (lambda: training._TrainingExecutor(object(), el.TrainSpec(_input_fn), None),
     TypeError, "`estimator` must have type `tf.estimator.Estimator`"),
])
def test_errors_carry_tf_estimators_wording(make, error, phrase):
    # tf.estimator 2.15's phrases still match; ours still names argument and value.
    with pytest.raises(error, match=phrase):
        make()


def test_server_errors_carry_tf_estimators_wording(tmp_path, clock, servers):
    no_task = FakeEstimator(tmp_path, FakeConfig("chief", None, CLUSTER))
    with pytest.raises(RuntimeError, match="Could not start server; .*TF_CONFIG"):
        _executor(no_task).run_chief()
    assert no_task.train_calls == []  # checked before training, as tf.estimator


def test_a_second_evaluator_fails_even_with_a_replaced_executor(monkeypatch):
    # tf.estimator's train_and_evaluate refuses an evaluator with index > 0 itself,
    # after building the executor: code that replaces the executor (a mock) still
    # gets the error, and the executor was built (checked on tf.estimator 2.15).
    estimator = mock.Mock(spec=el.Estimator)
    estimator.config = FakeConfig("evaluator", 1, CLUSTER)
    executor = mock.Mock()
    monkeypatch.setattr(training, "_TrainingExecutor", executor)
    with pytest.raises(ValueError, match=ERR_ONE_EVALUATOR):
        training.train_and_evaluate(estimator, el.TrainSpec(_input_fn),
                                    el.EvalSpec(_input_fn))
    assert executor.called and not executor.return_value.run.called
