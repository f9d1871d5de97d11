"""tf.estimator's hook names work in estimator_lite's loops; its two own hooks too."""

import json
import os
import time
from unittest import mock

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from tests.support import models

ERR_PS = "needs the variables in this process"


def _input_fn():
    x, y = models.linear_data(128)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(16)


def _counting_model_fn(features, labels, mode, params):
    spec = models.linear_model_fn(features, labels, mode, {})
    if mode != el.ModeKeys.TRAIN:
        return spec
    summaries = el.SummarySaverHook(  # built in the model_fn, as users did
        save_steps=5, output_dir=params["summary_dir"],
        summary_op=tf.compat.v1.summary.scalar("double_loss", 2 * spec.loss))
    # ProfilerHook opens a FileWriter when built: like tf.estimator users, build it
    # in the graph (eagerly it fails under TF2 with tf.estimator too).
    profiler = el.ProfilerHook(save_steps=10, output_dir=params["profile_dir"])
    counter = tf.compat.v1.get_variable("fed", [], tf.float32,
                                        initializer=tf.zeros_initializer())
    feed = tf.compat.v1.placeholder_with_default(0.0, [], name="feed")
    return spec._replace(train_op=tf.group(spec.train_op,
                                           tf.compat.v1.assign_add(counter, feed)),
                         training_hooks=[summaries, profiler,
                                         el.NanTensorHook(spec.loss),
                                         params["final_hook_fn"]()])


def test_reexported_hooks_are_tensorflows_own():
    assert el.LoggingTensorHook is tf.compat.v1.train.LoggingTensorHook
    assert el.SessionRunHook is tf.compat.v1.train.SessionRunHook
    assert el.CheckpointSaverListener is tf.compat.v1.train.CheckpointSaverListener
    assert el.VocabInfo is tf.compat.v1.train.VocabInfo


def test_tf_estimator_hooks_run_in_train(tmp_path):
    final = {}

    class Final(el.FinalOpsHook):
        def end(self, session):
            super().end(session)
            final["value"] = self.final_ops_values

    def final_hook_fn():
        step = tf.compat.v1.train.get_global_step()
        return Final({"step": tf.identity(step)})

    est = el.Estimator(_counting_model_fn, model_dir=str(tmp_path / "m"),
                       config=el.RunConfig(save_checkpoints_steps=1000),
                       params={"summary_dir": str(tmp_path / "summaries"),
                               "profile_dir": str(tmp_path / "profile"),
                               "final_hook_fn": final_hook_fn})
    hooks = [
        el.LoggingTensorHook({"step": "global_step"}, every_n_iter=5),
        el.StepCounterHook(every_n_steps=5, output_dir=str(tmp_path / "counter")),
        el.FeedFnHook(lambda: {"feed:0": 1.0}),
        el.GlobalStepWaiterHook(wait_until_step=0),
        el.StopAtStepHook(last_step=12),
        el.CheckpointSaverHook(str(tmp_path / "extra"), save_steps=4),
    ]

    est.train(_input_fn, hooks=hooks, steps=100)
    # The caller's CheckpointSaverHook saves instead of the Estimator (as
    # tf.estimator 2.15: model_dir gets no checkpoint then).
    extra = tf.train.latest_checkpoint(str(tmp_path / "extra"))
    assert extra.endswith("-12") and est.latest_checkpoint() is None
    assert tf.train.load_variable(extra, "global_step") == 12  # StopAtStepHook
    assert tf.train.load_variable(extra, "fed") == 12.0  # FeedFnHook fed every step
    assert final["value"]["step"] == 12
    assert os.listdir(tmp_path / "counter") and os.listdir(tmp_path / "profile")
    # Every 5 steps from the first. TF's SummarySaverHook reads the global step in
    # the same session.run as the train op that increments it, so each step it
    # records is the step before or after that run's increment (CI saw [1, 5, 10]).
    steps = sorted(el.read_eval_metrics(str(tmp_path / "summaries")))
    assert len(steps) == 3, steps
    assert steps[0] in (0, 1) and steps[1] in (5, 6) and steps[2] in (10, 11), steps


def test_in_memory_evaluator_hook_refuses_what_tf_estimator_refuses(tmp_path):
    est = models.make_estimator(tmp_path, save_checkpoints_steps=1000)
    with pytest.raises(ValueError, match="every_n_iter"):
        el.experimental.InMemoryEvaluatorHook(est, models.input_fn(), every_n_iter=None)
    cluster = {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]}
    with mock.patch.dict(os.environ, {"TF_CONFIG": json.dumps(
            {"cluster": cluster, "task": {"type": "chief", "index": 0}})}):
        distributed = el.Estimator(models.linear_model_fn, model_dir=str(tmp_path / "d"))
    with pytest.raises(ValueError, match="single machine"):
        el.experimental.InMemoryEvaluatorHook(distributed, models.input_fn())

    def model_fn_with_init_fn(features, labels, mode, params):
        spec = models.linear_model_fn(features, labels, mode, params)
        return spec._replace(scaffold=tf.compat.v1.train.Scaffold(init_fn=lambda *_: None))

    custom = el.Estimator(model_fn_with_init_fn, model_dir=str(tmp_path / "c"))
    hook = el.experimental.InMemoryEvaluatorHook(custom, models.input_fn(epochs=1))
    with pytest.raises(ValueError, match="custom init_fn"):
        custom.train(models.input_fn(), hooks=[hook], max_steps=2)


def test_in_memory_evaluator_hook_evaluates_current_variables(tmp_path):
    est = models.make_estimator(tmp_path, save_checkpoints_steps=1000)
    hook = el.experimental.InMemoryEvaluatorHook(est, models.input_fn(epochs=1),
                                                 name="inmem", every_n_iter=10)
    est.train(models.input_fn(), hooks=[hook], max_steps=25)
    history = el.read_eval_metrics(est.eval_dir("inmem"))
    # As tf.estimator: before training, every 10 local steps, then at the end.
    assert sorted(history) == [0, 10, 20, 25]
    assert history[25]["loss"] < history[10]["loss"]
    assert hook.last_metrics["global_step"] == 25
    # Same numbers as evaluating the final checkpoint.
    assert est.evaluate(models.input_fn(epochs=1))["loss"] == pytest.approx(
        hook.last_metrics["loss"], rel=1e-5)


def test_in_memory_evaluator_needs_local_variables(monkeypatch, tmp_path):
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"chief": ["127.0.0.1:1"], '
                       '"ps": ["127.0.0.1:2"]}, "task": {"type": "chief", "index": 0}}')
    est = models.make_estimator(tmp_path)
    with pytest.raises(ValueError, match=ERR_PS):
        el.experimental.InMemoryEvaluatorHook(est, models.input_fn())


def test_stop_at_checkpoint_step_hook(tmp_path, monkeypatch):
    chief_est = models.make_estimator(tmp_path)
    chief_hook = el.experimental.make_stop_at_checkpoint_step_hook(chief_est, 15)
    assert isinstance(chief_hook, el.StopAtStepHook)
    chief_est.train(models.input_fn(), hooks=[chief_hook], steps=100)
    assert chief_est.get_variable_value("global_step") == 15
    # A non-chief stops as soon as it sees the chief's checkpoint at >= last_step.
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"chief": ["127.0.0.1:1"], '
                       '"worker": ["127.0.0.1:2"]}, "task": {"type": "worker", '
                       '"index": 0}}')
    worker_est = models.make_estimator(tmp_path)
    worker_hook = el.experimental.make_stop_at_checkpoint_step_hook(
        worker_est, 15, wait_after_file_check_secs=7)
    assert not isinstance(worker_hook, el.StopAtStepHook)
    with tf.Graph().as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        increment = tf.compat.v1.assign_add(step, 1)
        set_14 = tf.compat.v1.assign(step, 14)
        with tf.compat.v1.train.SingularMonitoredSession(hooks=[worker_hook]) as session, \
                mock.patch.object(time, "sleep") as sleep:
            # As tf.estimator: before its own step reaches last_step, a worker does
            # not read the checkpoint (and does not wait).
            session.run(increment)
            assert not session.should_stop() and not sleep.called
            session.raw_session().run(set_14)
            session.run(increment)
            assert session.should_stop() and not sleep.called


def test_stop_at_checkpoint_step_hook_waits_for_the_chief(tmp_path, monkeypatch):
    # The chief's checkpoint is at step 5 < last_step: a worker past last_step
    # waits `wait_after_file_check_secs` after each read and keeps going.
    chief_est = models.make_estimator(tmp_path)
    chief_est.train(models.input_fn(), max_steps=5)
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"chief": ["127.0.0.1:1"], '
                       '"worker": ["127.0.0.1:2"]}, "task": {"type": "worker", '
                       '"index": 0}}')
    worker_hook = el.experimental.make_stop_at_checkpoint_step_hook(
        models.make_estimator(tmp_path), 10, wait_after_file_check_secs=3)
    with tf.Graph().as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        jump = tf.compat.v1.assign(step, 20)
        no_op = tf.no_op()
        with tf.compat.v1.train.SingularMonitoredSession(hooks=[worker_hook]) as session:
            session.raw_session().run(jump)
            with mock.patch.object(time, "sleep") as sleep:
                session.run(no_op)
                session.run(no_op)
                assert not session.should_stop()
                assert [c[0] for c in sleep.call_args_list] == [(3,), (3,)]


def test_stop_at_checkpoint_step_hook_validates():
    est = models.make_estimator("/tmp/unused-model-dir")
    with pytest.raises(ValueError, match="last_step must be >= 0"):
        el.experimental.make_stop_at_checkpoint_step_hook(est, -1)
    with pytest.raises(TypeError, match="last_step must be an int"):
        el.experimental.make_stop_at_checkpoint_step_hook(est, np.float32(3))


def test_call_logit_fn_passes_declared_arguments():
    with tf.Graph().as_default():
        x = tf.constant([[1.0]])
        logits = el.experimental.call_logit_fn(
            lambda features, params: features["x"] * params["k"], {"x": x}, "train",
            {"k": 2.0}, None)
        assert isinstance(logits, tf.Tensor)
        with pytest.raises(ValueError, match="logit_fn should return a Tensor"):
            el.experimental.call_logit_fn(lambda features: 3, {}, "train", {}, None)


def test_in_memory_evaluator_rejects_a_custom_eval_scaffold_at_begin(tmp_path):
    # As tf.estimator's hook, which builds its evaluation graph in begin(): the
    # error comes before any training step.
    def model_fn_with_saver(features, labels, mode, params):
        spec = models.linear_model_fn(features, labels, mode, params)
        if mode != "eval":
            return spec
        saver = tf.compat.v1.train.Saver(sharded=True)
        return spec._replace(scaffold=tf.compat.v1.train.Scaffold(saver=saver))

    est = el.Estimator(model_fn_with_saver, model_dir=str(tmp_path))
    hook = el.experimental.InMemoryEvaluatorHook(est, models.input_fn(epochs=1))
    with tf.Graph().as_default(), pytest.raises(
            ValueError, match="InMemoryEvaluator does not support custom saver"):
        hook.begin()
    assert not os.path.exists(tmp_path / "checkpoint")
