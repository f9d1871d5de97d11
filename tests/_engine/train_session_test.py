"""Unit tests for the training loop's own pieces: the step guard, the step limits, and
what an error at the session's close does."""

import numpy as np
import pytest

import estimator_lite as el
from estimator_lite._engine import session_creation, train_session
from estimator_lite._tf import tf
from tests.support import models


def test_step_guard_returns_new_step_or_minus_one_on_nan():
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        loss_value = tf.placeholder(tf.float32, [])
        train_op = tf.assign_add(step, 1)
        guard = train_session.build_step_guard(step, train_op, loss_value)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            assert session.run(guard, {loss_value: 1.0}) == 1
            assert session.run(guard, {loss_value: 2.0}) == 2
            assert session.run(guard, {loss_value: np.nan}) == -1
            assert session.run(guard, {loss_value: np.inf}) == -1
            assert session.run(step) == 4  # the step still ran


def test_step_limits_count_from_the_first_step_or_stop_at_max_steps():
    stop_at, target = train_session.step_limits(steps=5, max_steps=None)
    assert target(10) == 15
    assert [stop_at(s) for s in (10, 14, 15)] == [False, False, True]
    stop_at, target = train_session.step_limits(steps=None, max_steps=7)
    assert target(3) == 7 and not stop_at(6) and stop_at(7)
    stop_at, target = train_session.step_limits(steps=None, max_steps=None)
    assert target(3) is None and not stop_at(10 ** 9)


def _closing_with(session, error, closes):
    """`session` (a real one), its close() closing it and then raising `error`: what a
    remote task too slow to release the session's state (or gone) gives at the end."""
    close = session.close

    def close_then_raise():
        close()
        closes.append(type(error).__name__)
        raise error

    session.close = close_then_raise
    return session


def _train_with_close_error(tmp_path, monkeypatch, error):
    """Trains 3 steps whose session's close raises `error`; returns (the estimator,
    the closes seen, the warnings logged)."""
    closes, warnings = [], []
    create = session_creation.SessionCreator.create
    monkeypatch.setattr(session_creation.SessionCreator, "create", lambda self: (
        _closing_with(create(self), error, closes)))
    monkeypatch.setattr(train_session.logging, "warning",
                        lambda message, *args: warnings.append(message % args))

    estimator = el.Estimator(models.linear_model_fn, model_dir=str(tmp_path / "model"))
    estimator.train(models.input_fn(), max_steps=3)
    return estimator, closes, warnings


def test_a_close_past_the_operation_timeout_does_not_fail_a_finished_training(
        tmp_path, monkeypatch):
    timed_out = tf.errors.DeadlineExceededError(None, None, "Operation timed out.")
    estimator, closes, warnings = _train_with_close_error(tmp_path, monkeypatch,
                                                          timed_out)
    assert closes == ["DeadlineExceededError"]
    assert estimator.latest_checkpoint().endswith("model.ckpt-3")
    assert [w for w in warnings if "Error while closing the session" in w] == [
        "Error while closing the session (its remote tasks may still hold its state; "
        "nothing saved is lost): DeadlineExceededError: Operation timed out."]


def test_any_other_error_at_close_still_fails_the_training(tmp_path, monkeypatch):
    internal = tf.errors.InternalError(None, None, "the runtime broke")
    with pytest.raises(tf.errors.InternalError, match="the runtime broke"):
        _train_with_close_error(tmp_path, monkeypatch, internal)
