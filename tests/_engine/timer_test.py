"""The one Timer: global-step periods, second periods, local-step ticks."""

import pytest

from estimator_lite._engine.timer import Timer, check_schedule, schedule_timer

SCHEDULE_ERROR = "give exactly one of run_every_secs and run_every_steps"


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_by_steps():
    timer = Timer(every_steps=10)
    assert timer.due(0)  # never ran: due
    timer.mark(0)
    assert not timer.due(0) and not timer.due(9)
    assert timer.due(10) and timer.due(13)  # jumps (other workers) still trigger
    timer.mark(13)
    assert not timer.due(22) and timer.due(23)


def test_by_seconds_uses_the_clock():
    clock = FakeClock()
    timer = Timer(every_secs=60, clock=clock)
    timer.mark(5)
    clock.now += 59
    assert not timer.due(100)
    clock.now += 1
    assert timer.due(100)
    assert not timer.due(5)  # never twice for the same step


def test_time_only_timer_without_steps():
    clock = FakeClock()
    timer = Timer(every_secs=10, clock=clock)
    assert timer.due()
    timer.mark()
    clock.now += 9.5
    assert not timer.due()
    clock.now += 0.5
    assert timer.due()


def test_disabled():
    timer = Timer(every_steps=0)
    assert not timer.enabled and not timer.due(1) and not timer.due()


def test_local_ticks_by_steps():
    timer = Timer(every_steps=3)
    timer.start()
    assert [timer.tick() for _ in range(7)] == [False, False, True, False, False,
                                                True, False]


def test_local_ticks_by_seconds():
    clock = FakeClock()
    timer = schedule_timer(run_every_secs=5, run_every_steps=None, clock=clock)
    timer.start()
    assert not timer.tick()
    clock.now += 5
    assert timer.tick()
    assert not timer.tick()  # the period restarts when it fired


def test_start_due_at_first_step_checks_at_once_then_every_period():
    timer = Timer(every_steps=3)
    timer.start(due_at_first_step=True)
    assert [timer.tick() for _ in range(7)] == [True, False, False, True, False,
                                                False, True]


def test_start_restarts_the_count():
    timer = Timer(every_steps=2)
    timer.start()
    timer.tick()
    timer.start()
    assert [timer.tick(), timer.tick()] == [False, True]


@pytest.mark.parametrize("secs,steps", [(None, None), (10, 5)])
def test_schedule_needs_exactly_one_period(secs, steps):
    with pytest.raises(ValueError, match=SCHEDULE_ERROR):
        check_schedule(secs, steps)


def test_schedule_checks_types_and_ranges():
    with pytest.raises(ValueError, match="run_every_steps must be >= 1"):
        check_schedule(None, 0)
    with pytest.raises(TypeError, match="run_every_secs must be a number"):
        check_schedule("10", None)
