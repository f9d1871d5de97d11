"""Early-stopping hooks: each rule on written eval events, and a cluster-wide stop."""

import json
import os
import subprocess
import threading
import types
from unittest import mock

import pytest

import estimator_lite as el
from estimator_lite import early_stopping
from estimator_lite._engine import local_cluster as cluster_lib
from estimator_lite._engine import periodic_actions
from estimator_lite._tf import tf
from tests.oracle import (
    TF215_PYTHON,
    driver_path,
    load_driver,
    requires_oracle,
    run_oracle_driver,
)
from tests.support import models
from tests.support.fakes import FakeEstimator, write_evals

ERR_ONE_SCHEDULE = "give exactly one of run_every_secs and run_every_steps"
_DRIVER = driver_path("checkpoint_files_driver.py")


def _should_stop(hook):
    assert isinstance(hook, early_stopping._StopOnPredicateHook)
    return hook._should_stop_fn()


@pytest.fixture
def estimator(tmp_path):
    est = FakeEstimator(tmp_path)
    write_evals(est.eval_dir(), {10: {"acc": 0.5, "loss": 1.0},
                                 20: {"acc": 0.9, "loss": 0.5},
                                 30: {"acc": 0.8, "loss": 0.6},
                                 40: {"acc": 0.85, "loss": 0.7}})
    return est


def test_read_eval_metrics(estimator):
    history = el.read_eval_metrics(estimator.eval_dir())
    assert list(history) == [10, 20, 30, 40]
    assert history[20] == pytest.approx({"acc": 0.9, "loss": 0.5})


@pytest.mark.parametrize("threshold, min_steps, expected", [
    (0.8, 0, True), (0.95, 0, False), (0.8, 25, True), (0.86, 25, False)])
def test_stop_if_higher(estimator, threshold, min_steps, expected):
    hook = el.stop_if_higher_hook(estimator, "acc", threshold, min_steps=min_steps,
                                  run_every_secs=None, run_every_steps=1)
    assert _should_stop(hook) is expected


@pytest.mark.parametrize("threshold, expected", [(0.55, True), (0.5, False)])
def test_stop_if_lower(estimator, threshold, expected):
    hook = el.stop_if_lower_hook(estimator, "loss", threshold)
    assert _should_stop(hook) is expected


@pytest.mark.parametrize("max_steps, min_steps, expected", [
    (20, 0, True), (25, 0, False), (10, 35, False), (0, 0, True), (0, 45, False)])
def test_stop_if_no_decrease(estimator, max_steps, min_steps, expected):
    hook = el.stop_if_no_decrease_hook(estimator, "loss", max_steps, min_steps=min_steps)
    assert _should_stop(hook) is expected


@pytest.mark.parametrize("max_steps, expected", [(20, True), (21, False)])
def test_stop_if_no_increase(estimator, max_steps, expected):
    hook = el.experimental.stop_if_no_increase_hook(estimator, "acc", max_steps)
    assert _should_stop(hook) is expected


def test_rule_errors(estimator):
    hook = el.stop_if_higher_hook(estimator, "auc", 0.5)
    # KeyError, as tf.estimator raises for a metric the evaluations lack.
    with pytest.raises(KeyError, match="metric 'auc' is not in the evaluation"):
        _should_stop(hook)
    with pytest.raises(ValueError, match=ERR_ONE_SCHEDULE):
        el.stop_if_higher_hook(estimator, "acc", 0.5, run_every_secs=10,
                               run_every_steps=10)
    with pytest.raises(ValueError, match=ERR_ONE_SCHEDULE):
        el.make_early_stopping_hook(estimator, lambda: True, run_every_secs=None)
    with pytest.raises(ValueError, match="max_steps_without_decrease must be >= 0"):
        el.stop_if_no_decrease_hook(estimator, "loss", -1)
    with pytest.raises(TypeError, match="should_stop_fn must be callable"):
        el.make_early_stopping_hook(estimator, None)
    with pytest.raises(TypeError, match="estimator must be an Estimator"):
        el.make_early_stopping_hook(object(), lambda: True, run_every_secs=None,
                                    run_every_steps=1)


def test_non_chief_gets_the_flag_reader(tmp_path):
    hook = el.make_early_stopping_hook(FakeEstimator(tmp_path, is_chief=False),
                                       lambda: True)
    assert isinstance(hook, early_stopping._CheckForStoppingHook)


def test_schedule_by_seconds_checks_only_when_due(tmp_path):
    now = [0.0]
    calls = []
    hook = early_stopping.make_early_stopping_hook(
        FakeEstimator(tmp_path), lambda: calls.append(now[0]) or False,
        run_every_secs=10, clock=lambda: now[0])
    hook.after_create_session(None, None)
    for _ in range(25):
        now[0] += 1
        hook.after_run(None, None)
    # As tf.estimator's: the first check after the first step, then every 10 s.
    assert calls == [1.0, 11.0, 21.0]


def test_local_training_stops_and_the_flag_is_saved_but_not_restored(tmp_path):
    est = models.make_estimator(tmp_path)
    calls = []
    hook = el.make_early_stopping_hook(est, lambda: calls.append(1) or len(calls) >= 3,
                                       run_every_secs=None, run_every_steps=5)
    est.train(models.input_fn(), hooks=[hook], max_steps=1000)
    # Checks after steps 1, 6 and 11 (tf.estimator's cadence): the third stops.
    assert est.get_variable_value("global_step") == 11
    # The checkpoint holds the flag as tf.estimator's does: a bool scalar, set.
    assert est.get_variable_value("signal_early_stopping/STOP").item() is True
    reader = tf.train.load_checkpoint(est.latest_checkpoint())
    assert reader.get_variable_to_dtype_map()["signal_early_stopping/STOP"] == tf.bool
    assert reader.get_variable_to_shape_map()["signal_early_stopping/STOP"] == []
    # A resumed run is not stopped by the restored flag, even where a worker's hook
    # reads it after every step; the chief's hook resumes too.
    est.train(models.input_fn(), hooks=[early_stopping._CheckForStoppingHook()],
              max_steps=20)
    assert est.get_variable_value("global_step") == 20
    assert est.get_variable_value("signal_early_stopping/STOP").item() is False
    est.train(models.input_fn(), max_steps=30)
    assert "signal_early_stopping/STOP" not in est.get_variable_names()
    # A checkpoint without the flag restores with the hook (tf.estimator's fails).
    est.train(models.input_fn(), max_steps=40, hooks=[el.make_early_stopping_hook(
        est, lambda: False, run_every_secs=None, run_every_steps=5)])
    assert est.get_variable_value("global_step") == 40


def test_the_flag_is_reset_before_other_tasks_see_a_restored_model(tmp_path):
    """The flag is left out of the restore and initialised after it, so a worker
    waiting for the chief never sees the model ready with the restored True."""
    est = models.make_estimator(tmp_path)
    est.train(models.input_fn(), max_steps=5, hooks=[el.make_early_stopping_hook(
        est, lambda: True, run_every_secs=0)])
    assert est.get_variable_value("signal_early_stopping/STOP").item() is True
    with tf.Graph().as_default():
        stop = early_stopping._stop_variable()
        weight = tf.get_variable("w", [4, 1])
        scaffold = tf.train.Scaffold()
        periodic_actions.add_default_saver(scaffold, 5, 10000)
        scaffold.finalize()
        restorer = periodic_actions.restoring_saver(scaffold.saver)
        assert restorer is not scaffold.saver
        with tf.Session() as session:
            restorer._restore_saver.restore(session, est.latest_checkpoint())
            # Restored, but the flag is not: a worker's ready_op would wait.
            assert session.run(scaffold.ready_op).tolist() == [
                b"signal_early_stopping/STOP"]
        with tf.Session() as session:
            restorer.restore(session, est.latest_checkpoint())
            assert session.run(scaffold.ready_op).tolist() == []
            assert session.run(stop).item() is False
            assert session.run(weight).shape == (4, 1)


@requires_oracle
def test_checkpoint_variables_and_resumed_runs_match_tf_estimator(tmp_path):
    """The same checkpoint variables (the flag a bool scalar, True after the stop)
    and resumed runs; two deliberate differences, both about the restored flag:
    a worker's hook does not stop at once on it (tf.estimator's stops after one
    step), and a checkpoint without it restores (tf.estimator's raises
    NotFoundError). Checkpoints saved after a resume hold this run's flag (False)."""
    (tmp_path / "oracle").mkdir()
    oracle = run_oracle_driver(_DRIVER, tmp_path / "oracle", "early_stopping")["results"]
    driver = load_driver(_DRIVER, "checkpoint_files_driver")
    lite = json.loads(json.dumps(driver.run(
        types.SimpleNamespace(estimator=el, early_stopping=early_stopping),
        str(tmp_path / "lite"), "early_stopping")))
    for key in ("variables", "stop"):
        assert lite[key] == oracle[key], key
    # tf.estimator's chief hook fetches the global step beside the train op, so
    # it reads it before or after the step's increment (either happens).
    assert lite["stopped_at"] == 11
    assert oracle["stopped_at"] in (11, 12)
    assert oracle["variables"]["signal_early_stopping/STOP"] == ["bool", []]
    assert lite["resumed"]["without_hook"] == oracle["resumed"]["without_hook"]
    assert oracle["resumed"]["without_hook"] == [30, None]
    assert oracle["resumed"]["chief_hook"] == [30, True]
    assert lite["resumed"]["chief_hook"] == [30, False]
    assert oracle["resumed"]["worker_hook"] == [oracle["stopped_at"] + 1, True]
    assert lite["resumed"]["worker_hook"] == [30, False]
    assert oracle["resumed"]["hook_after_a_run_without"] == "NotFoundError"
    assert lite["resumed"]["hook_after_a_run_without"] == [30, False]


def test_chief_decision_stops_the_other_worker(tmp_path, monkeypatch):
    cluster = cluster_lib.local_cluster_spec(num_ps=1, num_workers=1)
    spec = tf.train.ClusterSpec(cluster)
    servers = [tf.train.Server(spec, job_name=job, task_index=i)
               for job, addresses in cluster.items() for i in range(len(addresses))]
    estimators = {}
    for task_type in ("chief", "worker"):
        monkeypatch.setenv("TF_CONFIG", cluster_lib.tf_config(cluster, task_type, 0))
        estimators[task_type] = models.make_estimator(tmp_path, save_checkpoints_steps=50)
    chief_checks = []
    worker_started = threading.Event()

    def chief_should_stop():
        chief_checks.append(1)
        return worker_started.is_set() and len(chief_checks) >= 20

    class Started(tf.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            worker_started.set()

    hooks = {
        "chief": [el.make_early_stopping_hook(estimators["chief"], chief_should_stop,
                                              run_every_secs=None, run_every_steps=1)],
        "worker": [Started(), el.make_early_stopping_hook(
            estimators["worker"], lambda: pytest.fail("only the chief decides"),
            run_every_secs=None, run_every_steps=1)],
    }
    _, errors, running = models.run_in_threads({
        task_type: lambda t=task_type: estimators[t].train(
            models.input_fn(), hooks=hooks[t], max_steps=10**7)
        for task_type in ("chief", "worker")}, timeout_secs=120)
    assert running == [], "a worker did not stop"
    assert errors == []
    assert len(chief_checks) >= 20
    assert estimators["chief"].get_variable_value("global_step") < 10**5
    assert len(servers) == 3


def test_early_stop_ends_every_role_of_train_and_evaluate(tmp_path, monkeypatch):
    from estimator_lite import training  # noqa: PLC0415 - local to this test
    from estimator_lite._engine import completion  # noqa: PLC0415

    cluster = cluster_lib.local_cluster_spec(num_ps=1, num_workers=1)
    executors = {}
    checks = []
    for task_type in ("ps", "chief", "worker", "evaluator"):
        monkeypatch.setenv("TF_CONFIG", cluster_lib.tf_config(cluster, task_type, 0))
        est = models.make_estimator(tmp_path, save_checkpoints_steps=20,
                                    experimental_max_worker_delay_secs=0)
        hook = el.make_early_stopping_hook(
            est, lambda: checks.append(1) or len(checks) >= 50, run_every_secs=None,
            run_every_steps=1)
        executors[task_type] = training._TrainingExecutor(
            est, el.TrainSpec(models.input_fn(), max_steps=10**6, hooks=[hook]),
            el.EvalSpec(models.input_fn(epochs=1), steps=None, start_delay_secs=0,
                        throttle_secs=0.2))
    results, errors, running = models.run_in_threads(
        {task_type: executor.run for task_type, executor in executors.items()})
    assert running == []
    assert errors == []
    final_step = completion.read_training_complete(str(tmp_path)).global_step
    assert final_step < 10**4  # stopped early, not at max_steps
    assert results["evaluator"][0]["global_step"] == final_step


def test_run_every_secs_zero_checks_after_every_step(tmp_path):
    # tf.estimator 2.15 (checked on the oracle): run_every_secs=0 asks the stop rule
    # after every step, so a rule true at its third call stops at global step 3.
    est = models.make_estimator(tmp_path)
    calls = []

    def should_stop():
        calls.append(1)
        return len(calls) >= 3

    hook = el.experimental.make_early_stopping_hook(est, should_stop, run_every_secs=0)
    est.train(models.input_fn(), hooks=[hook], max_steps=100)
    assert est.get_variable_value("global_step") == 3
    assert len(calls) == 3


def test_the_chief_hook_exposes_the_stop_flag_it_sets():
    # tf.estimator's _StopOnPredicateHook keeps the flag as `_stop_var`;
    # `_stop_variable` (tf.estimator's `_get_or_create_stop_var`, served at its
    # path) gives the same graph's flag to other code.
    hook = early_stopping._StopOnPredicateHook(lambda: True, run_every_secs=0)
    with tf.Graph().as_default():
        tf.train.create_global_step()
        no_op = tf.no_op()
        with tf.train.SingularMonitoredSession(hooks=[hook]) as session:
            session.run(no_op)
            assert session.should_stop()
            assert session.raw_session().run(hook._stop_var)
            assert early_stopping._stop_variable() is hook._stop_var


_ORACLE_READ = """
import json, sys
from tensorflow_estimator.python.estimator.early_stopping import read_eval_metrics
print(json.dumps({str(k): v for k, v in read_eval_metrics(sys.argv[1]).items()}))
"""


def _damage(path, how):
    """Flips a byte of the last record's payload (a CRC mismatch) or cuts it short."""
    with open(path, "rb") as f:
        data = bytearray(f.read())
    if how == "corrupt":
        data[-8] ^= 0xFF
    else:
        del data[-6:]
    with open(path, "wb") as f:
        f.write(bytes(data))


def _damaged_eval_dir(eval_dir):
    """Two event files, each with its last record damaged a different way."""
    write_evals(eval_dir, {10: {"loss": 1.0}, 20: {"loss": 0.5}})
    write_evals(eval_dir, {30: {"loss": 0.25, "acc": 0.75}, 40: {"loss": 0.125}})
    files = sorted(tf.io.gfile.glob(os.path.join(eval_dir, "events.out.tfevents.*")))
    assert len(files) == 2
    _damage(files[0], "corrupt")
    _damage(files[1], "truncate")


def test_a_damaged_event_file_is_read_up_to_the_damage(tmp_path, caplog):
    """Like tf.estimator: a record failing its checks (DataLossError) ends its file."""
    eval_dir = str(tmp_path / "eval")
    _damaged_eval_dir(eval_dir)
    history = el.read_eval_metrics(eval_dir)
    assert dict(history) == {10: {"loss": 1.0}, 30: {"loss": 0.25, "acc": 0.75}}
    assert "Skipping the rest of event file" in caplog.text


@requires_oracle
def test_a_damaged_event_file_reads_as_on_tf_estimator(tmp_path):
    eval_dir = str(tmp_path / "eval")
    _damaged_eval_dir(eval_dir)
    ran = subprocess.run([TF215_PYTHON, "-c", _ORACLE_READ, eval_dir],
                         capture_output=True, text=True, timeout=300, check=False,
                         env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert ran.returncode == 0, ran.stderr[-3000:]
    oracle = {int(k): v for k, v in json.loads(ran.stdout.splitlines()[-1]).items()}
    assert dict(el.read_eval_metrics(eval_dir)) == oracle


def test_read_eval_metrics_uses_summary_iterator_at_call_time(tmp_path):
    """Tests written for tf.estimator replace tf.compat.v1.train.summary_iterator."""
    eval_dir = str(tmp_path / "eval")
    write_evals(eval_dir, {1000: {"loss": 1.0}, 2000: {"loss": 3.0}})
    real = tf.train.summary_iterator

    def lose_data_after_first_summary(path):
        for event in real(path):
            yield event
            if event.HasField("summary"):
                raise tf.errors.DataLossError(None, None, "testing data loss")

    with mock.patch.object(tf.train, "summary_iterator",
                           side_effect=lose_data_after_first_summary):
        assert dict(el.read_eval_metrics(eval_dir)) == {1000: {"loss": 1.0}}
