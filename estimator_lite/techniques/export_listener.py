"""Periodic export during training: a CheckpointSaverListener that runs an exporter."""

from estimator_lite import exporter as exporter_lib
from estimator_lite._engine import model_dir, validation
from estimator_lite._engine.timer import Timer
from estimator_lite._tf import logging, tf

__all__ = ["ExportListener"]


class ExportListener(tf.train.CheckpointSaverListener):
    """Exports the just-saved checkpoint during training, every `every_n_steps`.

    Use with a LatestExporter or FinalExporter (a BestExporter needs eval metrics).
    The save at session creation is skipped; the last checkpoint is exported in
    `end()` with is_the_final_export=True.
    """

    def __init__(self, estimator, exporter, every_n_steps=None):
        """Validates the arguments.

        Args:
          estimator: the estimator being trained (gives model_dir and checkpoints).
          exporter: an Exporter; it writes to ``<model_dir>/export/<name>``.
          every_n_steps: export at most every this many global steps; None exports
            after every checkpoint save.

        Raises:
          TypeError: exporter is not an Exporter.
          ValueError: every_n_steps < 1.
        """
        if not isinstance(exporter, exporter_lib.Exporter):
            raise TypeError(f"exporter must be an Exporter, got {exporter!r}")
        every_n_steps = validation.check_int("every_n_steps", every_n_steps, 1,
                                             allow_none=True)
        self._estimator = estimator
        self._exporter = exporter
        # Every save is a new step, so a 1-step period means "after every save".
        self._timer = Timer(every_steps=every_n_steps or 1)
        self._first_save = True
        self.export_results = []

    def begin(self):
        self._first_save = True

    def _export(self, step, is_final):
        path = model_dir.export_dir(self._estimator.model_dir, self._exporter.name)
        result = self._exporter.export(self._estimator, path,
                                       self._estimator.latest_checkpoint(),
                                       {"global_step": step}, is_final)
        self._timer.mark(step)
        if result is not None:
            logging.info("Exported checkpoint of step %d to %s", step, result)
            self.export_results.append(result)

    def after_save(self, session, global_step_value):
        if self._first_save:
            self._first_save = False
            return False
        if self._timer.due(global_step_value):
            self._export(global_step_value, is_final=False)
        return False

    def end(self, session, global_step_value):
        if self._timer.last_step != global_step_value:
            self._export(global_step_value, is_final=True)
