"""train_and_evaluate's specs: TrainSpec, EvalSpec, and what it needs of an estimator.

The specs are immutable and validated; `EstimatorLike` is the protocol an estimator
fits. `training` (the executor) uses these and keeps their names
(`training.TrainSpec`, `training.EstimatorLike`, ...).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from estimator_lite import exporter as exporter_lib
from estimator_lite._engine import validation
from estimator_lite._pycompat import Protocol
from estimator_lite._tf import tf

__all__ = ["TrainSpec", "EvalSpec", "EstimatorLike"]


# The estimator ------------------------------------------------------------------------


class EstimatorLike(Protocol):
    """What train_and_evaluate needs of an estimator (duck typing).

    estimator_lite's Estimator and TF Estimator's (TF <= 2.15) both fit. `eval_dir`
    is optional: without it, evaluations are read from ``eval``/``eval_<name>``.
    """

    @property
    def config(self) -> Any:
        """A RunConfig-like object (cluster_spec, task_type, task_id, is_chief...)."""

    @property
    def model_dir(self) -> str:
        """The checkpoint directory."""

    def train(self, input_fn: Callable[..., Any], hooks: Iterable[Any] | None = None,
              steps: int | None = None, max_steps: int | None = None,
              saving_listeners: Iterable[Any] | None = None) -> Any:
        """Trains (see Estimator.train)."""

    def evaluate(self, input_fn: Callable[..., Any], steps: int | None = None,
                 hooks: Iterable[Any] | None = None, checkpoint_path: str | None = None,
                 name: str | None = None) -> dict[str, Any]:
        """Evaluates a checkpoint; returns metrics with 'global_step'."""

    def latest_checkpoint(self) -> str | None:
        """The newest checkpoint path, or None."""

    def export_saved_model(self, export_dir_base: str,
                           serving_input_receiver_fn: Callable[[], Any],
                           assets_extra: Mapping[str, str] | None = None,
                           as_text: bool = False, checkpoint_path: str | None = None,
                           ) -> bytes | str:
        """Writes a SavedModel; returns its directory."""


_ESTIMATOR_ATTRIBUTES = tuple(name for name in vars(EstimatorLike)
                              if not name.startswith("_"))


def _check_estimator(estimator):
    missing = [a for a in _ESTIMATOR_ATTRIBUTES if not hasattr(estimator, a)]
    if missing:
        raise TypeError(f"`estimator` must have type `tf.estimator.Estimator` (or be "
                        f"an Estimator-like object with "
                        f"{', '.join(_ESTIMATOR_ATTRIBUTES)}); {estimator!r} lacks "
                        f"{missing}")


# The specs --------------------------------------------------------------------------


def _checked(lead, check, *args):
    """Runs a validation check; an error keeps its type and message, led by
    tf.estimator's wording (code that matches those messages keeps working)."""
    try:
        return check(*args)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{lead}: {e}") from None


_HOOKS_LEAD = "All hooks must be `SessionRunHook` instances"


def _check_hooks(name, hooks):
    return _checked(_HOOKS_LEAD, validation.check_instances, name, hooks,
                    tf.train.SessionRunHook, "SessionRunHook")


class TrainSpec(collections.namedtuple(
        "TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"])):
    """What to train on and for how long (immutable, validated)."""

    def __new__(cls, input_fn: Callable[..., Any], max_steps: int | None = None,
                hooks: Iterable[tf.train.SessionRunHook] | None = None,
                saving_listeners: Iterable[tf.train.CheckpointSaverListener] | None = None,
                ) -> TrainSpec:
        """Validates the fields.

        Raises:
          TypeError: input_fn not callable, hooks not SessionRunHooks, listeners not
            CheckpointSaverListeners, max_steps not a number (a float such as 1e6
            is fine, as on tf.estimator).
          ValueError: max_steps <= 0.
        """
        return super().__new__(
            cls, _checked("`input_fn` must be callable", validation.check_callable,
                          "input_fn", input_fn),
            _checked("Must specify max_steps > 0", validation.check_step_count,
                     "max_steps", max_steps),
            _check_hooks("hooks", hooks),
            _checked("All saving_listeners must be `CheckpointSaverListener` "
                     "instances", validation.check_instances, "saving_listeners",
                     saving_listeners, tf.train.CheckpointSaverListener,
                     "CheckpointSaverListener"))


def _check_exporters(exporters):
    if exporters is None:
        return ()
    if isinstance(exporters, exporter_lib.Exporter):
        exporters = (exporters,)
    lead = "`exporters` must be an Exporter, an iterable of Exporters or None"
    if isinstance(exporters, (str, bytes)):
        raise TypeError(f"{lead}; got the string {exporters!r}")
    exporters = _checked(lead, validation.check_instances, "exporters", exporters,
                         exporter_lib.Exporter, "Exporter")
    names = []
    for exporter in exporters:
        name = exporter.name
        if name is None or name == "":
            raise ValueError("An Exporter cannot have a name that is `None` or empty: "
                             f"exporter names must be non-empty strings, got {name!r}")
        if not isinstance(name, str):
            raise ValueError("An Exporter must have a string name: exporter names "
                             f"must be non-empty strings, got {name!r}")
        names.append(name)
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"`exporters` must have unique names: exporter names must be "
                         f"unique, got {names} (repeated: {duplicates})")
    return exporters


class EvalSpec(collections.namedtuple("EvalSpec", [
        "input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs",
        "throttle_secs"])):
    """What to evaluate on, how often, and what to export (immutable, validated)."""

    def __new__(cls, input_fn: Callable[..., Any], steps: int | None = 100,
                name: str | None = None,
                hooks: Iterable[tf.train.SessionRunHook] | None = None,
                exporters: (exporter_lib.Exporter | Iterable[exporter_lib.Exporter]
                            | None) = None,
                start_delay_secs: float = 120, throttle_secs: float = 600) -> EvalSpec:
        """Validates the fields.

        Raises:
          TypeError: a field has the wrong type.
          ValueError: steps <= 0, delays < 0, exporter names empty or repeated.
          An empty name means no name (evaluations go to ``eval``).
        """
        if name is not None and not isinstance(name, str):
            raise TypeError(f"`name` must be string: name must be a str or None, got "
                            f"{name!r} of type {type(name).__name__}")
        input_fn = _checked("`input_fn` must be callable", validation.check_callable,
                            "input_fn", input_fn)
        steps = _checked("Must specify steps > 0", validation.check_step_count,
                         "steps", steps)
        hooks = _check_hooks("hooks", hooks)
        exporters = _check_exporters(exporters)
        return super().__new__(
            cls, input_fn, steps, name, hooks, exporters,
            _checked("Must specify start_delay_secs >= 0", validation.check_number,
                     "start_delay_secs", start_delay_secs, 0),
            _checked("Must specify throttle_secs >= 0", validation.check_number,
                     "throttle_secs", throttle_secs, 0))


def _check_eval_spec(eval_spec, allow_none=False):
    """Checks `eval_spec`; None is allowed for roles that do not evaluate.

    Raises:
      TypeError: it is not an EvalSpec (or None where allowed), as tf.estimator.
    """
    if eval_spec is None and allow_none:
        return None
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec`: "
                        f"eval_spec must be an EvalSpec to evaluate (locally, as the "
                        f"master or as the evaluator), got {eval_spec!r}")
    return eval_spec
