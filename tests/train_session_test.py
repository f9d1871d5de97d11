"""Unit tests for the training loop's pieces: the step guard, timers, hook merging."""

import numpy as np
import pytest

from estimator_lite import train_session
from estimator_lite._tf import tf


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


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


def test_periodic_by_steps():
    timer = train_session._Periodic(every_steps=10)
    assert timer.due(0)  # never ran: due
    timer.mark(0)
    assert not timer.due(0) and not timer.due(9)
    assert timer.due(10) and timer.due(13)  # jumps (other workers) still trigger
    timer.mark(13)
    assert not timer.due(22) and timer.due(23)


def test_periodic_by_seconds_uses_the_clock():
    clock = FakeClock()
    timer = train_session._Periodic(every_secs=60, clock=clock)
    timer.mark(5)
    clock.now += 59
    assert not timer.due(100)
    clock.now += 1
    assert timer.due(100)
    assert not timer.due(5)  # never twice for the same step


def test_periodic_disabled():
    timer = train_session._Periodic(every_steps=0)
    assert not timer.enabled and not timer.due(1)


def test_checkpoint_policy_enabled():
    assert not train_session.CheckpointPolicy("/d").enabled
    assert train_session.CheckpointPolicy("/d", save_secs=600).enabled


def test_merge_run_args():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32)
        b = tf.constant(1.0)
        slow = tf.RunOptions(timeout_in_ms=5000)
        fast = tf.RunOptions(timeout_in_ms=100, trace_level=tf.RunOptions.FULL_TRACE)
        fetches, feeds, options = train_session.merge_run_args([
            tf.train.SessionRunArgs(b, feed_dict={a: 1.0}, options=slow), None,
            tf.train.SessionRunArgs(None, options=fast)])
        assert fetches == {0: b}
        assert feeds == {a: 1.0}
        assert options.timeout_in_ms == 100
        assert options.trace_level == tf.RunOptions.FULL_TRACE
        with pytest.raises(RuntimeError, match="feed the same tensor"):
            train_session.merge_run_args([tf.train.SessionRunArgs(b, {a: 1.0}),
                                           tf.train.SessionRunArgs(b, {a: 2.0})])
