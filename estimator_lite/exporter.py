"""Exporters: write SavedModels after evaluations (latest, best, final), with GC.

An exporter is called by the evaluation loop with
``export(estimator, export_path, checkpoint_path, eval_result, is_the_final_export)``
where ``export_path`` is ``<model_dir>/export/<exporter name>``. Exports land in
timestamp-named subdirectories, written atomically by `Estimator.export_saved_model`.
Garbage collection only ever removes timestamp-named (all-digit) directories.
"""

from __future__ import annotations

import abc
import inspect
import numbers
import os
from collections.abc import Callable, Mapping
from typing import Any

from estimator_lite._engine import event_files, validation
from estimator_lite._engine import model_dir as model_dir_lib
from estimator_lite._engine.json_file import read_json, write_json
from estimator_lite._tf import logging, tf

__all__ = ["Exporter", "LatestExporter", "BestExporter", "FinalExporter",
           "gc_exports"]


class Exporter:
    """Base class of exporters: a `name` and an `export` method.

    As tf.estimator's, a plain class whose methods are marked abstract without
    being enforced: a subclass without `export` (or `Exporter()` itself) can be
    built, and its `export` exports nothing.
    """

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Directory name under ``<model_dir>/export`` (or an absolute path: the
        export path is ``os.path.join(model_dir, "export", name)``); unique within
        an EvalSpec, which checks it is a non-empty string."""

    @abc.abstractmethod
    def export(self, estimator: Any, export_path: str,
               checkpoint_path: str | None, eval_result: dict[str, Any] | None,
               is_the_final_export: bool) -> bytes | str | None:
        """Exports the model, or decides not to.

        Args:
          estimator: the estimator being trained.
          export_path: ``<model_dir>/export/<name>``.
          checkpoint_path: the checkpoint that was just evaluated.
          eval_result: the metrics dict of that evaluation.
          is_the_final_export: True exactly once, for the last evaluation.

        Returns:
          The export directory, or None when nothing was exported.
        """

    def bind_eval_dir(self, eval_dir_name: str) -> None:
        """Tells the exporter which eval dir its evaluations are written to.

        The evaluator calls this once, before the first export, with ``eval`` or
        ``eval_<name>`` (relative to model_dir). Exporters that read past
        evaluations (BestExporter) keep it; the default ignores it.
        """
        del eval_dir_name


def _check_exports_to_keep(exports_to_keep):
    """How many exports to keep: None (all) or an int >= 1.

    A float or bool equal to 1 is 1: tf.estimator's garbage collection keeps one
    export for them (other floats fail there, at the first export).

    Raises:
      TypeError: not an int or None.
      ValueError: < 1.
    """
    not_int = not isinstance(exports_to_keep, numbers.Integral) or isinstance(
        exports_to_keep, bool)
    if not_int and isinstance(exports_to_keep, numbers.Real) and exports_to_keep == 1:
        return 1
    value = validation.check_int("exports_to_keep", exports_to_keep, allow_none=True)
    if value is not None and value < 1:
        raise ValueError("exports_to_keep must be >= 1 (a positive number) or None, "
                         f"got {value!r}")
    return value


def gc_exports(export_path: str, exports_to_keep: int | None) -> list[str]:
    """Deletes all but the newest `exports_to_keep` timestamp-named export dirs.

    Only directories whose names are all digits are considered: temp dirs, files
    and anything else a user put there are never touched.

    Args:
      export_path: the directory holding the timestamped exports.
      exports_to_keep: how many to keep; None keeps all.

    Returns:
      The list of deleted paths.
    """
    if exports_to_keep is None or not tf.io.gfile.isdir(export_path):
        return []
    stamps = sorted(int(name.rstrip("/")) for name in tf.io.gfile.listdir(export_path)
                    if model_dir_lib.is_export_timestamp(name)
                    and tf.io.gfile.isdir(os.path.join(export_path, name.rstrip("/"))))
    doomed = [os.path.join(export_path, str(s)) for s in stamps[:-exports_to_keep]] if (
        len(stamps) > exports_to_keep) else []
    for path in doomed:
        logging.info("Removing old export %s", path)
        tf.io.gfile.rmtree(path)
    return doomed


class _SavedModelExporter(Exporter):
    """Shared part of the exporters: arguments and the SavedModel write."""

    def __init__(self, name: str, serving_input_receiver_fn: Callable[[], Any] | None,
                 assets_extra: Mapping[str, str] | None = None, as_text: bool = False,
                 exports_to_keep: int | None = 5) -> None:
        # Any name, as tf.estimator: 'mnist/' exports under model_dir/export/mnist,
        # an absolute path there; EvalSpec refuses None, '' and non-strings.
        self._name = name
        self._serving_input_receiver_fn = validation.check_callable(
            "serving_input_receiver_fn", serving_input_receiver_fn)
        if assets_extra is not None and not isinstance(assets_extra, dict):
            raise TypeError(f"assets_extra must be a dict or None, got {assets_extra!r}")
        self._assets_extra = assets_extra
        self._as_text = bool(as_text)
        self._exports_to_keep = _check_exports_to_keep(exports_to_keep)

    @property
    def name(self) -> str:
        return self._name

    def _write(self, estimator, export_path, checkpoint_path):
        export_dir = estimator.export_saved_model(
            export_path, self._serving_input_receiver_fn,
            assets_extra=self._assets_extra, as_text=self._as_text,
            checkpoint_path=checkpoint_path)
        # What the estimator returned, as tf.estimator's exporters do (bytes from
        # an Estimator, whatever a duck-typed one gives).
        return export_dir


class LatestExporter(_SavedModelExporter):
    """Exports after every evaluation and keeps the newest `exports_to_keep`."""

    def export(self, estimator: Any, export_path: str,
               checkpoint_path: str | None, eval_result: dict[str, Any] | None,
               is_the_final_export: bool) -> bytes | str | None:
        export_dir = self._write(estimator, export_path, checkpoint_path)
        gc_exports(export_path, self._exports_to_keep)
        return export_dir


class FinalExporter(_SavedModelExporter):
    """Exports once, after the final evaluation."""

    def __init__(self, name: str, serving_input_receiver_fn: Callable[[], Any],
                 assets_extra: Mapping[str, str] | None = None,
                 as_text: bool = False) -> None:
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text,
                         exports_to_keep=None)

    def export(self, estimator: Any, export_path: str,
               checkpoint_path: str | None, eval_result: dict[str, Any] | None,
               is_the_final_export: bool) -> bytes | str | None:
        if not is_the_final_export:
            return None
        return self._write(estimator, export_path, checkpoint_path)


def _loss_smaller(best_eval_result, current_eval_result):
    """Default BestExporter comparison: True when the current loss is smaller."""
    for name, result in (("best_eval_result", best_eval_result),
                         ("current_eval_result", current_eval_result)):
        if not result or "loss" not in result:
            raise ValueError(f"{name} must contain 'loss' to compare by loss, got "
                             f"{result!r}")
    return current_eval_result["loss"] < best_eval_result["loss"]


def _same_metrics(metrics, eval_result):
    """Whether logged `metrics` hold `eval_result`'s numbers (the same evaluation).

    Only real scalars are compared: arrays and bytes never reach the event
    files as numbers.
    """
    try:
        return all(name in metrics and float(metrics[name]) == float(value)
                   for name, value in eval_result.items()
                   if event_files.is_real_scalar(value))
    except (TypeError, ValueError):
        return False


def _json_safe(eval_result):
    """The real-number metrics of a result as floats (arrays and bytes left out:
    evaluate() returns them as numpy arrays and bytes, as tf.estimator does)."""
    return {k: float(v) for k, v in eval_result.items()
            if event_files.is_real_scalar(v)}


class BestExporter(_SavedModelExporter):
    """Exports only when the evaluation beats every earlier one.

    The best result so far survives restarts: it is kept beside the exports in
    ``best_eval_result.json`` after each export, and without that file (exports
    made by tf.estimator) it is read from earlier evaluations' event files. So a
    restarted job never exports a model worse than one already exported (TF
    Estimator's BestExporter does after a restart: tensorflow/tensorflow#47396).
    While nothing is exported yet, the first evaluation is, as in tf.estimator.
    The current evaluation is never compared with itself.

    `event_file_pattern` (relative to model_dir, or absolute) defaults to the eval
    dir of the EvalSpec the exporter is given to: ``eval`` or ``eval_<name>``.
    """

    def __init__(self, name: str = "best_exporter",
                 serving_input_receiver_fn: Callable[[], Any] | None = None,
                 event_file_pattern: str | None = None,
                 compare_fn: Callable[..., bool] = _loss_smaller,
                 assets_extra: Mapping[str, str] | None = None, as_text: bool = False,
                 exports_to_keep: int | None = 5) -> None:
        """Validates the arguments.

        Raises:
          TypeError: serving_input_receiver_fn or compare_fn is not callable.
          ValueError: compare_fn is None or does not take (best_eval_result,
            current_eval_result), or a bad name/exports_to_keep.
        """
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text,
                         exports_to_keep)
        if compare_fn is None:
            raise ValueError("compare_fn must not be None; give a function of "
                             "(best_eval_result, current_eval_result)")
        validation.check_callable("compare_fn", compare_fn)
        _check_compare_fn_args(compare_fn)
        if event_file_pattern is not None and not isinstance(event_file_pattern, str):
            raise TypeError(f"event_file_pattern must be a str or None, got "
                            f"{event_file_pattern!r}")
        self._compare_fn = compare_fn
        self._event_file_pattern = event_file_pattern
        self._eval_dir_name: str | None = None
        self._best_eval_result: dict[str, Any] | None = None
        self._loaded = False

    def bind_eval_dir(self, eval_dir_name: str) -> None:
        """Remembers the eval dir this exporter's evaluations are written to.

        Raises:
          ValueError: the exporter is already bound to another eval dir (one
            BestExporter cannot follow two evaluations).
        """
        if self._eval_dir_name not in (None, eval_dir_name):
            raise ValueError(f"BestExporter {self.name!r} is already used with eval dir "
                             f"{self._eval_dir_name!r}; cannot also use it with "
                             f"{eval_dir_name!r}")
        self._eval_dir_name = eval_dir_name

    def _pattern(self, model_dir):
        if self._event_file_pattern is None:
            eval_dir = os.path.join(model_dir,
                                    self._eval_dir_name or model_dir_lib.eval_dir_name())
            return model_dir_lib.event_file_pattern(eval_dir)
        return os.path.join(model_dir, self._event_file_pattern)

    def _load_best(self, estimator, export_path, eval_result):
        """Best earlier result: the saved one, else the best earlier eval event.

        With neither a saved result nor any export in `export_path`, there is
        none: the first export happens whatever the evaluation history holds, as in
        tf.estimator (a job preempted between its best evaluation and that
        evaluation's export must not end with no export at all).

        The current evaluation is already in the event files: it is the event at
        its global step (and newer ones are skipped), or, for a result without a
        global step, the events holding exactly its metrics.
        """
        saved = read_json(os.path.join(export_path, model_dir_lib.BEST_EVAL_RESULT_FILE))
        if saved is not None:
            return saved
        if not _has_exports(export_path):
            return None
        current = eval_result or {}
        current_step = current.get("global_step")
        best = None
        history = event_files.read_event_file_metrics(self._pattern(estimator.model_dir))
        for step, metrics in history.items():
            if current_step is not None and step >= current_step:
                continue  # the current evaluation (already written) or newer
            if current_step is None and current and _same_metrics(metrics, current):
                continue
            candidate = dict(metrics, global_step=step)
            if best is None or self._compare_fn(best_eval_result=best,
                                                 current_eval_result=candidate):
                best = candidate
        return best

    def _save_best(self, export_path, eval_result):
        tf.io.gfile.makedirs(export_path)
        write_json(os.path.join(export_path, model_dir_lib.BEST_EVAL_RESULT_FILE),
                   _json_safe(eval_result))

    def export(self, estimator: Any, export_path: str,
               checkpoint_path: str | None, eval_result: dict[str, Any] | None,
               is_the_final_export: bool) -> bytes | str | None:
        if not self._loaded:
            self._best_eval_result = self._load_best(estimator, export_path, eval_result)
            self._loaded = True
        if self._best_eval_result is not None and not self._compare_fn(
                best_eval_result=self._best_eval_result, current_eval_result=eval_result):
            return None
        logging.info("BestExporter %s: new best result %s", self.name, eval_result)
        export_dir = self._write(estimator, export_path, checkpoint_path)
        if eval_result is not None:  # A caller without an evaluation gives None.
            self._best_eval_result = dict(eval_result)
            self._save_best(export_path, eval_result)
        gc_exports(export_path, self._exports_to_keep)
        return export_dir


def _has_exports(export_path):
    """Whether `export_path` holds a finished (timestamp-named) export."""
    if not tf.io.gfile.isdir(export_path):
        return False
    return any(model_dir_lib.is_export_timestamp(name)
               for name in tf.io.gfile.listdir(export_path))


def _check_compare_fn_args(compare_fn):
    try:
        params = inspect.signature(compare_fn).parameters
    except (TypeError, ValueError):
        return  # builtins without a signature: trust the caller
    # tf.estimator calls compare_fn by keyword, so the names are the contract.
    missing = [n for n in ("best_eval_result", "current_eval_result") if n not in params]
    if missing:
        raise ValueError("compare_fn must take arguments named best_eval_result and "
                         f"current_eval_result; got a function taking {list(params)} "
                         f"(missing {missing})")
