"""Stand-ins shared by tests (not a test file): an estimator as the early-stopping
and learning-rate hooks see it, and the eval events an evaluator would have written.

A fake one test file alone uses stays in that file (training_test.py's clock,
servers and executor estimators).
"""

import os

from estimator_lite._engine.event_files import new_summary_writer
from estimator_lite._tf import tf


class FakeConfig:
    """A RunConfig as the hooks read it: only `is_chief`."""

    def __init__(self, is_chief):
        self.is_chief = is_chief


class FakeEstimator:
    """An Estimator as the hooks read it: its model_dir, config and eval dirs."""

    def __init__(self, model_dir, is_chief=True):
        self.model_dir = str(model_dir)
        self.config = FakeConfig(is_chief)

    def eval_dir(self, name=None):
        return os.path.join(self.model_dir, "eval" if not name else f"eval_{name}")


def write_evals(eval_dir, metrics_by_step):
    """Writes {step: {metric: value}} to `eval_dir` as an evaluator's scalar events."""
    writer = new_summary_writer(eval_dir)
    for step, metrics in metrics_by_step.items():
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag=k, simple_value=v)
                                             for k, v in metrics.items()]), step)
    writer.close()
