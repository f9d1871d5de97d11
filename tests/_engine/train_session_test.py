"""Unit tests for the training loop's own pieces: the step guard, the step limits."""

import numpy as np

from estimator_lite._engine import train_session
from estimator_lite._tf import tf


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
