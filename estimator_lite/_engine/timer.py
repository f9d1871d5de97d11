"""One timer for every periodic task: checkpoints, summaries, logs, evals, checks.

A task is due every `every_steps` steps or every `every_secs` seconds. Steps are
whatever the caller counts: the global step (train session) or this worker's own
steps (`start`/`tick`, for hooks that must not fetch the global step every step).
The clock is injectable so tests run instantly.
"""

import time

from estimator_lite._engine import validation

__all__ = ["Timer", "check_schedule", "schedule_timer"]


class Timer:
    """Says when a periodic task is due.

    Rules: never twice at the same step; due at the first step it is asked about
    (unless `start` marked a starting point); then once `every_steps` steps or
    `every_secs` seconds have passed since it was last marked. With neither period
    it is never due.
    """

    def __init__(self, every_steps=None, every_secs=None, clock=time.time):
        """Args: every_steps / every_secs (None or 0 disables); clock: time source."""
        self.every_steps = every_steps or None
        self.every_secs = every_secs or None
        self._clock = clock
        self.last_step = None
        self.last_time = None
        self._marked = False
        self._local_steps = 0

    @property
    def enabled(self):
        """Whether a period is set."""
        return self.every_steps is not None or self.every_secs is not None

    def due(self, step=None):
        """Whether the task is due at `step` (None: a time-only timer)."""
        if not self.enabled or (step is not None and step == self.last_step):
            return False
        if not self._marked:
            return True
        if self.every_steps is not None:
            return step >= self.last_step + self.every_steps
        return self._clock() >= self.last_time + self.every_secs

    def mark(self, step=None):
        """Records that the task ran at `step` (None for a time-only timer), now."""
        self._marked = True
        self.last_step = step
        self.last_time = self._clock()

    def start(self, due_at_first_step=False):
        """Starts counting local steps from zero.

        Args:
          due_at_first_step: False: as if the task had just run (first due after a
            full period); True: as if it never ran (due at the first tick, as
            TensorFlow's SecondOrStepTimer is).
        """
        self._local_steps = 0
        if due_at_first_step:
            self._marked = False
            self.last_step = self.last_time = None
        else:
            self.mark(0)

    def tick(self):
        """Counts one local step; returns True (and marks) when the task is due."""
        self._local_steps += 1
        if self.due(self._local_steps):
            self.mark(self._local_steps)
            return True
        return False


def check_schedule(run_every_secs, run_every_steps):
    """Checks that exactly one of the two periods is given.

    Raises:
      ValueError: both or neither given, or a value out of range.
      TypeError: a value of the wrong type.
    """
    if (run_every_secs is None) == (run_every_steps is None):
        raise ValueError("give exactly one of run_every_secs and run_every_steps; got "
                         f"run_every_secs={run_every_secs!r}, "
                         f"run_every_steps={run_every_steps!r}")
    validation.check_number("run_every_secs", run_every_secs, 0, allow_none=True)
    validation.check_int("run_every_steps", run_every_steps, 1, allow_none=True)


def schedule_timer(run_every_secs, run_every_steps, clock=time.time):
    """A Timer for a hook's check, every so many seconds or local steps (exactly one).

    Raises:
      ValueError / TypeError: as `check_schedule`.
    """
    check_schedule(run_every_secs, run_every_steps)
    return Timer(every_steps=run_every_steps, every_secs=run_every_secs, clock=clock)
