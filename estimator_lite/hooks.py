"""Small SessionRunHook / listener building blocks shared by the training techniques."""

import os
import time

from absl import logging

from estimator_lite import _validation
from estimator_lite import exporter as exporter_lib
from estimator_lite._tf import tf

__all__ = ["Schedule", "check_schedule", "ExportListener"]


def check_schedule(run_every_secs, run_every_steps):
    """Exactly one of the two must be given.

    Raises:
      ValueError: both or neither given, or a value out of range.
      TypeError: a value of the wrong type.
    """
    if (run_every_secs is None) == (run_every_steps is None):
        raise ValueError("give exactly one of run_every_secs and run_every_steps; got "
                         f"run_every_secs={run_every_secs!r}, "
                         f"run_every_steps={run_every_steps!r}")
    _validation.check_number("run_every_secs", run_every_secs, 0, allow_none=True)
    _validation.check_int("run_every_steps", run_every_steps, 1, allow_none=True)


class Schedule:
    """Due every `every_secs` seconds or every `every_steps` steps of this worker.

    Counting local steps (not the global step) keeps the check free of per-step
    fetches.
    """

    def __init__(self, every_secs=None, every_steps=None, clock=time.time):
        check_schedule(every_secs, every_steps)
        self._every_secs = every_secs
        self._every_steps = every_steps
        self._clock = clock
        self._steps = 0
        self._last_secs = None

    def start(self):
        """Restarts the period (call at session creation)."""
        self._steps = 0
        self._last_secs = self._clock()

    def tick(self):
        """Counts one step; returns whether the task is due now."""
        self._steps += 1
        if self._every_steps is not None:
            if self._steps >= self._every_steps:
                self._steps = 0
                return True
            return False
        now = self._clock()
        if now - self._last_secs >= self._every_secs:
            self._last_secs = now
            return True
        return False


class ExportListener(tf.train.CheckpointSaverListener):
    """Exports the just-saved checkpoint during training, every `every_n_steps`.

    Use with a LatestExporter or FinalExporter (a BestExporter needs eval metrics).
    The save at session creation is skipped; the last checkpoint is exported in
    `end()` with is_the_final_export=True.
    """

    def __init__(self, estimator, exporter, every_n_steps=None):
        """Raises TypeError for a non-Exporter, ValueError for every_n_steps < 1."""
        if not isinstance(exporter, exporter_lib.Exporter):
            raise TypeError(f"exporter must be an Exporter, got {exporter!r}")
        self._estimator = estimator
        self._exporter = exporter
        self._every_n_steps = _validation.check_int("every_n_steps", every_n_steps, 1,
                                                    allow_none=True)
        self._first_save = True
        self._last_export_step = None
        self.export_results = []

    def begin(self):
        self._first_save = True

    def _export(self, step, is_final):
        path = os.path.join(self._estimator.model_dir, "export", self._exporter.name)
        result = self._exporter.export(self._estimator, path,
                                       self._estimator.latest_checkpoint(),
                                       {"global_step": step}, is_final)
        self._last_export_step = step
        if result is not None:
            logging.info("Exported checkpoint of step %d to %s", step, result)
            self.export_results.append(result)

    def after_save(self, session, global_step_value):
        if self._first_save:
            self._first_save = False
            return False
        last = self._last_export_step
        if (self._every_n_steps is None or last is None or
                global_step_value - last >= self._every_n_steps):
            self._export(global_step_value, is_final=False)
        return False

    def end(self, session, global_step_value):
        if self._last_export_step != global_step_value:
            self._export(global_step_value, is_final=True)
