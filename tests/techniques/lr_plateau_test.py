"""ReduceLearningRateOnPlateau: cuts exactly after `patience` non-improving evals."""

import os

import numpy as np
import pytest

import estimator_lite as el
from estimator_lite._tf import tf
from tests.support.fakes import FakeEstimator, write_evals


class FakeRunContext:
    def __init__(self, session):
        self.session = session


def _graph_with_plateau(plateau, estimator):
    graph = tf.Graph()
    with graph.as_default():
        tf.train.get_or_create_global_step()
        w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
        rate = plateau.learning_rate(0.1)
        hook = plateau.make_hook(estimator)
        hook.begin()
        init = tf.global_variables_initializer()
        saver = tf.train.Saver()
    return graph, w, rate, hook, init, saver


def test_cuts_exactly_after_patience_bad_evaluations(tmp_path):
    estimator = FakeEstimator(tmp_path)
    plateau = el.ReduceLearningRateOnPlateau("loss", factor=0.5, patience=2,
                                             run_every_steps=1)
    graph, _, rate, hook, init, _ = _graph_with_plateau(plateau, estimator)
    losses = [(10, 1.0), (20, 0.9), (30, 0.95), (40, 0.92), (50, 0.91), (60, 0.85),
              (70, 0.9), (80, 0.9)]
    expected_rates = [0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05, 0.025]
    with tf.Session(graph=graph) as session:
        session.run(init)
        hook.after_create_session(session, None)
        rates = []
        for step, loss in losses:
            write_evals(estimator.eval_dir(), {step: {"loss": loss}})
            hook.after_run(FakeRunContext(session), None)
            rates.append(session.run(rate))
    np.testing.assert_allclose(rates, expected_rates, rtol=1e-6)
    assert hook.cuts == [(40, 0.5), (80, 0.25)]


def test_restart_replays_history_without_cutting_again(tmp_path):
    estimator = FakeEstimator(tmp_path)
    write_evals(estimator.eval_dir(), {10: {"acc": 0.5}, 20: {"acc": 0.4}})
    plateau = el.ReduceLearningRateOnPlateau("acc", mode="max", patience=2,
                                             run_every_steps=1)
    graph, _, rate, hook, init, _ = _graph_with_plateau(plateau, estimator)
    with tf.Session(graph=graph) as session:
        session.run(init)
        hook.after_create_session(session, None)  # one bad eval already in history
        hook.after_run(FakeRunContext(session), None)
        assert session.run(rate) == pytest.approx(0.1)
        write_evals(estimator.eval_dir(), {30: {"acc": 0.45}})  # second bad one
        hook.after_run(FakeRunContext(session), None)
        assert session.run(rate) == pytest.approx(0.05)


def test_restore_best_checkpoint_keeps_global_step(tmp_path):
    estimator = FakeEstimator(tmp_path)
    plateau = el.ReduceLearningRateOnPlateau("loss", patience=1, restore_best=True,
                                             run_every_steps=1)
    graph, w, _, hook, init, saver = _graph_with_plateau(plateau, estimator)
    with graph.as_default():
        step = tf.train.get_global_step()
        set_w = tf.placeholder(tf.float32, [])
        assign_w, assign_step = tf.assign(w, set_w), tf.assign(step, 30)
    with tf.Session(graph=graph) as session:
        session.run(init)
        for ckpt_step, value in ((10, 1.0), (20, 2.0)):
            session.run(assign_w, {set_w: value})
            saver.save(session, os.path.join(estimator.model_dir, "model.ckpt"),
                       global_step=ckpt_step)
        session.run(assign_step)
        hook.after_create_session(session, None)
        write_evals(estimator.eval_dir(), {10: {"loss": 0.5}, 20: {"loss": 0.9}})
        hook.after_run(FakeRunContext(session), None)
        assert session.run(w) == pytest.approx(1.0)  # the best checkpoint's value
        assert session.run(step) == 30  # training does not go back in steps
        assert hook.cuts == [(20, 0.5)]


def test_non_chief_gets_an_inert_hook(tmp_path):
    plateau = el.ReduceLearningRateOnPlateau()
    hook = plateau.make_hook(FakeEstimator(tmp_path, is_chief=False))
    assert type(hook) is tf.train.SessionRunHook


@pytest.mark.parametrize("kwargs, message", [
    ({"mode": "up"}, "mode must be one of"),
    ({"factor": 1.5}, r"factor must be in \(0, 1\)"),
    ({"patience": 0}, "patience must be >= 1"),
    ({"min_delta": -1}, "min_delta must be >= 0"),
    ({"run_every_secs": 5}, "give exactly one of run_every_secs and run_every_steps"),
])
def test_argument_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        el.ReduceLearningRateOnPlateau(**kwargs)
