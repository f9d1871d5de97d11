"""train_and_evaluate: specs, the executor for every TF_CONFIG role, evaluation.

Names and behaviour follow TF Estimator 2.15's training.py, with improvements
(clean termination of every role, a robust evaluator, final metrics on re-runs;
see README's "Where it does better"). Test seams: this module reads the clock
only through its attribute `time` (``time.time()``, ``time.sleep()``) and starts
servers only through its attribute `server_lib` (``server_lib.Server(...)``).

Who owns what:
| TrainSpec / EvalSpec               | here (immutable, validated)                  |
| which role this process runs       | `_TrainingExecutor.run`; role names and      |
|                                    | facts in `_engine/roles.py`                  |
| chief / worker / master / ps       | `run_chief` ... `run_ps`; servers and worker |
|                                    | delays in `_start_distributed_training`      |
| the evaluator role                 | `_start_continuous_evaluation` (the loop),   |
|                                    | `_execute_evaluator_once` (one iteration)    |
| evaluate the latest checkpoint,    | `_Evaluator`                                 |
| then run the exporters             |                                              |
| evaluation during local training   | `_NewCheckpointListenerForEvaluate`          |
| "training is over" markers         | `_engine/completion.py`                      |
"""

import collections
import os
import time

from estimator_lite import exporter as exporter_lib
from estimator_lite._engine import completion, distribute, event_files, roles, validation
from estimator_lite._engine import model_dir as model_dir_lib
from estimator_lite._engine.timer import Timer
from estimator_lite._pycompat import Protocol
from estimator_lite._tf import logging, tf
from estimator_lite.export import saved_model as saved_model_lib

__all__ = ["TrainSpec", "EvalSpec", "EstimatorLike", "train_and_evaluate"]

server_lib = tf.train

_DELAY_SECS_PER_WORKER = 5
_MAX_DELAY_SECS = 60
_WARNING_INTERVAL_SECS = 60
_MARKER_POLL_SECS = 1
# How long a role waits for news that may never come: after the chief's marker, a
# ps task waits this long for workers that have not marked themselves done (a
# crashed worker must not keep it alive forever), and a marker older than the role
# must stay this long before the role believes it (a new run's chief clears it).
GRACE_ENV = "ESTIMATOR_LITE_STRAGGLER_GRACE_SECS"
_DEFAULT_GRACE_SECS = 60
# What restoring a vanished (GC'd), truncated or corrupt checkpoint raises; such an
# error is skipped only once the checkpoint is shown to be unreadable.
_RESTORE_ERRORS = (tf.errors.OpError, ValueError)


def _now():
    return time.time()


def _grace_secs():
    """The straggler grace period, from the environment (default 60 s).

    Raises:
      ValueError: the variable is not a number >= 0.
    """
    return validation.seconds_from_env(GRACE_ENV, _DEFAULT_GRACE_SECS, allow_zero=True)


class EstimatorLike(Protocol):
    """What train_and_evaluate needs of an estimator (duck typing).

    estimator_lite's Estimator and TF Estimator's (TF <= 2.15) both fit. `eval_dir`
    is optional: without it, evaluations are read from ``eval``/``eval_<name>``.
    """

    @property
    def config(self):
        """A RunConfig-like object (cluster_spec, task_type, task_id, is_chief...)."""

    @property
    def model_dir(self):
        """The checkpoint directory."""

    def train(self, input_fn, hooks=None, steps=None, max_steps=None,
              saving_listeners=None):
        """Trains (see Estimator.train)."""

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None,
                 name=None):
        """Evaluates a checkpoint; returns metrics with 'global_step'."""

    def latest_checkpoint(self):
        """The newest checkpoint path, or None."""

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                           assets_extra=None, as_text=False, checkpoint_path=None):
        """Writes a SavedModel; returns its directory."""


_ESTIMATOR_ATTRIBUTES = tuple(name for name in vars(EstimatorLike)
                              if not name.startswith("_"))


# Specs ------------------------------------------------------------------------------


class TrainSpec(collections.namedtuple(
        "TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"])):
    """What to train on and for how long (immutable, validated)."""

    def __new__(cls, input_fn, max_steps=None, hooks=None, saving_listeners=None):
        """Validates the fields.

        Raises:
          TypeError: input_fn not callable, hooks not SessionRunHooks, listeners not
            CheckpointSaverListeners, max_steps not a number (a float such as 1e6
            is fine, as on tf.estimator).
          ValueError: max_steps <= 0.
        """
        return super().__new__(
            cls, validation.check_callable("input_fn", input_fn),
            validation.check_step_count("max_steps", max_steps),
            validation.check_instances("hooks", hooks, tf.train.SessionRunHook,
                                        "SessionRunHook"),
            validation.check_instances("saving_listeners", saving_listeners,
                                        tf.train.CheckpointSaverListener,
                                        "CheckpointSaverListener"))


def _check_exporters(exporters):
    if exporters is None:
        return ()
    if isinstance(exporters, exporter_lib.Exporter):
        exporters = (exporters,)
    if isinstance(exporters, (str, bytes)):
        raise TypeError("exporters must be an Exporter, an iterable of Exporters or "
                        f"None; got the string {exporters!r}")
    exporters = validation.check_instances("exporters", exporters,
                                            exporter_lib.Exporter, "Exporter")
    names = []
    for exporter in exporters:
        name = exporter.name
        if not isinstance(name, str) or not name:
            raise ValueError(f"exporter names must be non-empty strings, got {name!r}")
        names.append(name)
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"exporter names must be unique, got {names} "
                         f"(repeated: {duplicates})")
    return exporters


class EvalSpec(collections.namedtuple("EvalSpec", [
        "input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs",
        "throttle_secs"])):
    """What to evaluate on, how often, and what to export (immutable, validated)."""

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None,
                start_delay_secs=120, throttle_secs=600):
        """Validates the fields.

        Raises:
          TypeError: a field has the wrong type.
          ValueError: steps <= 0, delays < 0, exporter names empty or repeated.
          An empty name means no name (evaluations go to ``eval``).
        """
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a str or None, got {name!r} of type "
                            f"{type(name).__name__}")
        exporters = _check_exporters(exporters)
        return super().__new__(
            cls, validation.check_callable("input_fn", input_fn),
            validation.check_step_count("steps", steps), name,
            validation.check_instances("hooks", hooks, tf.train.SessionRunHook,
                                        "SessionRunHook"),
            exporters,
            validation.check_number("start_delay_secs", start_delay_secs, 0),
            validation.check_number("throttle_secs", throttle_secs, 0))


# Evaluation results -------------------------------------------------------------


class _EvalStatus:
    """What one evaluation attempt did."""

    EVALUATED = "evaluated"
    MISSING_CHECKPOINT = "missing checkpoint"
    NO_NEW_CHECKPOINT = "no new checkpoint"

    ALL = (EVALUATED, MISSING_CHECKPOINT, NO_NEW_CHECKPOINT)


class _EvalResult:
    """The outcome of one evaluation attempt: status, metrics, checkpoint path."""

    def __init__(self, status, metrics=None, checkpoint_path=None):
        """Validates that the fields fit the status.

        Raises:
          TypeError: EVALUATED metrics that are not a dict.
          ValueError: unknown status; EVALUATED without metrics (with global_step)
            or checkpoint_path; another status with metrics or a checkpoint_path.
        """
        if status not in _EvalStatus.ALL:
            raise ValueError(f"status must be one of {_EvalStatus.ALL}, got {status!r}")
        if status == _EvalStatus.EVALUATED:
            if metrics is not None and not isinstance(metrics, dict):
                raise TypeError("Estimator.evaluate must return a dict of metrics, got "
                                f"{metrics!r} of type {type(metrics).__name__}")
            if not metrics:
                raise ValueError("an EVALUATED result needs metrics, got "
                                 f"{metrics!r}")
            if "global_step" not in metrics:
                raise ValueError("the metrics of an EVALUATED result must contain "
                                 f"'global_step', got keys {sorted(metrics)}")
            if not checkpoint_path:
                raise ValueError("an EVALUATED result needs a checkpoint_path, got "
                                 f"{checkpoint_path!r}")
        elif metrics is not None or checkpoint_path is not None:
            raise ValueError(f"a {status!r} result takes no metrics or checkpoint_path; "
                             f"got metrics={metrics!r}, checkpoint_path="
                             f"{checkpoint_path!r}")
        self.status = status
        self.metrics = metrics
        self.checkpoint_path = checkpoint_path

    def __repr__(self):
        return f"_EvalResult({self.status!r}, {self.metrics!r}, {self.checkpoint_path!r})"


class _ContinuousEvalListener:
    """Hears about each evaluation; returning False from a method stops the loop."""

    def before_eval(self):
        """Called before each evaluation; False stops evaluation (and training)."""
        return True

    def after_eval(self, eval_result):
        """Called with each _EvalResult; False stops evaluation (and training)."""
        del eval_result
        return True


class _Evaluator:
    """Evaluates the latest new checkpoint and runs the exporters."""

    def __init__(self, estimator, eval_spec, max_training_steps):
        self._estimator = estimator
        self._eval_spec = eval_spec
        self._max_training_steps = max_training_steps
        self._previous_ckpt_path = None
        self._warning_timers = {}
        self._final_export_done = False
        eval_dir_name = model_dir_lib.eval_dir_name(eval_spec.name)
        for exporter in eval_spec.exporters:
            exporter.bind_eval_dir(eval_dir_name)
            saved_model_lib.remove_stale_temp_dirs(
                model_dir_lib.export_dir(_model_dir(estimator), exporter.name))
        self.last_result = None
        self.last_export_results = []

    @property
    def final_export_done(self):
        """Whether the exporters already ran with is_the_final_export=True."""
        return self._final_export_done

    def _warn(self, message, *args):
        """Logs a warning at most once per _WARNING_INTERVAL_SECS per message."""
        timer = self._warning_timers.setdefault(
            message, Timer(every_secs=_WARNING_INTERVAL_SECS, clock=_now))
        if timer.due():
            timer.mark()
            logging.warning(message, *args)

    def evaluate_and_export(self, is_final=False, final_step=None):
        """Evaluates the latest checkpoint if it is new, then exports.

        Args:
          is_final: this is the last evaluation of the run.
          final_step: the final global step if known; a checkpoint at or past it
            (or past max_steps) makes this the final export.

        Returns:
          (an _EvalResult, the list of export results).
        """
        latest = self._estimator.latest_checkpoint()
        if not latest:
            self._warn("No checkpoint in %s yet; skipping evaluation.",
                       _model_dir(self._estimator))
            return _EvalResult(_EvalStatus.MISSING_CHECKPOINT), []
        if latest == self._previous_ckpt_path:
            self._warn("No new checkpoint since %s; skipping evaluation.", latest)
            return _EvalResult(_EvalStatus.NO_NEW_CHECKPOINT), []
        self._previous_ckpt_path = latest  # Never retry a checkpoint that failed.
        spec = self._eval_spec
        try:
            # Keywords, as tf.estimator calls it.
            metrics = self._estimator.evaluate(input_fn=spec.input_fn, steps=spec.steps,
                                               checkpoint_path=latest, name=spec.name,
                                               hooks=list(spec.hooks))
        except _RESTORE_ERRORS as e:
            _skip_or_raise(latest, e, "evaluating")
            return _EvalResult(_EvalStatus.MISSING_CHECKPOINT), []
        if not isinstance(metrics, dict):
            raise TypeError(f"estimator.evaluate must return a dict of metrics, got "
                            f"{metrics!r} of type {type(metrics).__name__}")
        result = _EvalResult(_EvalStatus.EVALUATED, metrics, latest)
        step = metrics["global_step"]
        final = (is_final or (final_step is not None and step >= final_step) or
                 (self._max_training_steps is not None
                  and step >= self._max_training_steps))
        self.last_result = result
        self.last_export_results = self._export(result, final)
        return result, self.last_export_results

    def evaluated_latest(self):
        """Whether the newest checkpoint is the one evaluated last."""
        latest = self._estimator.latest_checkpoint()
        return latest is not None and latest == self._previous_ckpt_path

    def export_final_if_needed(self):
        """Runs the final export on the last result if it has not run yet."""
        if self._final_export_done or self.last_result is None:
            return self.last_export_results
        self.last_export_results = self._export(self.last_result, True)
        return self.last_export_results

    def _export(self, result, is_final):
        is_final = is_final and not self._final_export_done
        export_results = []
        for exporter in self._eval_spec.exporters:
            export_path = model_dir_lib.export_dir(_model_dir(self._estimator),
                                                   exporter.name)
            try:
                export_results.append(exporter.export(
                    self._estimator, export_path, result.checkpoint_path,
                    result.metrics, is_final))
            except _RESTORE_ERRORS as e:
                _skip_or_raise(result.checkpoint_path, e, f"exporting ({exporter.name})")
                export_results.append(None)
        if is_final:
            self._final_export_done = True
        return export_results


def _skip_or_raise(checkpoint_path, error, doing):
    """Skips a checkpoint that became unreadable; re-raises any other failure.

    The chief garbage-collects old checkpoints and a crash can leave a truncated
    one: neither is the evaluator's fault, so it logs and moves on. An error on a
    checkpoint that still reads back is a real failure and propagates.
    """
    if model_dir_lib.checkpoint_is_readable(checkpoint_path):
        raise error
    logging.warning("Skipping checkpoint %s while %s: it vanished or cannot be read "
                    "(%s: %s). The next checkpoint will be used.", checkpoint_path,
                    doing, type(error).__name__, str(error).splitlines()[0])


class _NewCheckpointListenerForEvaluate(tf.train.CheckpointSaverListener):
    """Evaluates after checkpoint saves during training, throttled by time.

    The save at session creation is skipped (nothing new was trained); the final
    checkpoint is always evaluated in `end()`. A continuous-eval listener returning
    False stops training.
    """

    def __init__(self, evaluator, eval_throttle_secs, continuous_eval_listener):
        self._evaluator = evaluator
        self._throttle = Timer(every_secs=eval_throttle_secs, clock=_now)
        self._listener = continuous_eval_listener
        self._is_first_save = True
        self._stopped = False
        self.eval_result = None
        self.export_results = None

    def begin(self):
        self._is_first_save = True
        self._stopped = False

    def after_save(self, session, global_step_value):
        del session
        if self._is_first_save:
            self._is_first_save = False
            return False
        # A zero throttle evaluates after every save.
        if self._throttle.enabled and not self._throttle.due():
            return False
        self._throttle.mark()
        logging.info("Evaluating the checkpoint of step %d.", global_step_value)
        return not self._evaluate(is_final=False)

    def end(self, session, global_step_value):
        del session, global_step_value
        if self._stopped:
            return
        # Compare checkpoint paths, not step numbers: with asynchronous workers a
        # file name's step can lag the step stored in it.
        if self._evaluator.evaluated_latest():
            self.export_results = self._evaluator.export_final_if_needed()
        else:
            self._evaluate(is_final=True)

    def _evaluate(self, is_final):
        """Evaluates and exports; returns False when the listener stops training."""
        if not self._listener.before_eval():
            logging.info("Continuous-eval listener stopped training before evaluation.")
            self._stopped = True
            return False
        result, exports = self._evaluator.evaluate_and_export(is_final=is_final)
        if result.status == _EvalStatus.EVALUATED:
            self.eval_result, self.export_results = result, exports
        if not self._listener.after_eval(result):
            logging.info("Continuous-eval listener stopped training after evaluation.")
            self._stopped = True
            return False
        return True


# The executor -------------------------------------------------------------------------


def _check_estimator(estimator):
    missing = [a for a in _ESTIMATOR_ATTRIBUTES if not hasattr(estimator, a)]
    if missing:
        raise TypeError(f"estimator must be an Estimator-like object with "
                        f"{', '.join(_ESTIMATOR_ATTRIBUTES)}; {estimator!r} lacks "
                        f"{missing}")


def _has_cluster(config):
    spec = config.cluster_spec
    return bool(spec) and bool(getattr(spec, "jobs", spec))


def _num_tasks(cluster_spec, job):
    return cluster_spec.num_tasks(job) if job in cluster_spec.jobs else 0


def _model_dir(estimator):
    """The estimator's model_dir as a str (an Estimator-like object may hold bytes)."""
    return os.fsdecode(estimator.model_dir)


def _check_eval_spec(eval_spec, allow_none=False):
    """Checks `eval_spec`; None is allowed for roles that do not evaluate.

    Raises:
      TypeError: it is not an EvalSpec (or None where allowed), as tf.estimator.
    """
    if eval_spec is None and allow_none:
        return None
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"eval_spec must be an EvalSpec to evaluate (locally, as the "
                        f"master or as the evaluator), got {eval_spec!r}")
    return eval_spec


class _TrainingExecutor:
    """Runs the role of this process (from TF_CONFIG): train, evaluate or serve."""

    def __init__(self, estimator, train_spec, eval_spec, train_hooks=None,
                 continuous_eval_listener=None):
        """Validates the arguments.

        Raises:
          TypeError: estimator lacks Estimator methods, specs have the wrong type,
            train_hooks are not SessionRunHooks, or the listener has the wrong type.
        """
        _check_estimator(estimator)
        if not isinstance(train_spec, TrainSpec):
            raise TypeError(f"train_spec must be a TrainSpec, got {train_spec!r}")
        # None is fine for the chief, workers and ps (they only train or serve); the
        # roles that evaluate check it when they run.
        if eval_spec is not None and not isinstance(eval_spec, EvalSpec):
            raise TypeError(f"eval_spec must be an EvalSpec or None, got {eval_spec!r}")
        if continuous_eval_listener is not None and not isinstance(
                continuous_eval_listener, _ContinuousEvalListener):
            raise TypeError("continuous_eval_listener must be a _ContinuousEvalListener, "
                            f"got {continuous_eval_listener!r}")
        self._estimator = estimator
        self._train_spec = train_spec
        self._eval_spec = eval_spec
        self._train_hooks = validation.check_instances(
            "train_hooks", train_hooks, tf.train.SessionRunHook, "SessionRunHook")
        self._continuous_eval_listener = (continuous_eval_listener or
                                          _ContinuousEvalListener())
        self._server = None

    estimator = property(lambda self: self._estimator)

    def _role_runners(self):
        return {roles.CHIEF: self.run_chief, roles.WORKER: self.run_worker,
                roles.MASTER: self.run_master, roles.PS: self.run_ps,
                roles.EVALUATOR: self.run_evaluator}

    def run(self):
        """Runs this process's role; local training when there is no cluster.

        Returns:
          (metrics, export_results) locally, for the master and the evaluator;
          (None, None) for chief, worker and ps.

        Raises:
          ValueError: the task type is unknown, or an evaluator index > 0.
        """
        config = self._estimator.config
        task_type = config.task_type
        if not _has_cluster(config) and task_type != roles.EVALUATOR:
            logging.info("No cluster in the config: training and evaluating locally.")
            return self.run_local()
        runners = self._role_runners()
        if task_type not in runners:
            raise ValueError(f"task type {task_type!r} cannot run in a cluster; valid "
                             f"task types: {', '.join(sorted(runners))}")
        roles.check_evaluator_index(task_type, config.task_id)
        if task_type == roles.WORKER and getattr(config, "is_chief", False):
            # Worker 0 of a chief-less MultiWorkerMirroredStrategy cluster leads.
            return self.run_chief()
        return runners[task_type]()

    # Roles --------------------------------------------------------------------------

    def _train(self, extra_listeners=()):
        spec = self._train_spec
        # Keywords, as tf.estimator calls it (an Estimator-like object may rely on it).
        self._estimator.train(input_fn=spec.input_fn, max_steps=spec.max_steps,
                              hooks=list(spec.hooks) + list(self._train_hooks),
                              saving_listeners=list(spec.saving_listeners) +
                              list(extra_listeners))

    def _make_evaluator(self):
        return _Evaluator(self._estimator, _check_eval_spec(self._eval_spec),
                          self._train_spec.max_steps)

    def _make_eval_listener(self, evaluator):
        return _NewCheckpointListenerForEvaluate(
            evaluator, self._eval_spec.throttle_secs, self._continuous_eval_listener)

    def _mark_training_complete(self):
        latest = self._estimator.latest_checkpoint()
        step = model_dir_lib.checkpoint_step(latest) if latest else 0
        completion.write_training_complete(_model_dir(self._estimator), step,
                                           self._train_spec.max_steps, _now())
        logging.info("Training complete at global step %d.", step)

    def run_local(self):
        """Trains in this process, evaluating after checkpoints (throttled)."""
        evaluator = self._make_evaluator()
        listener = self._make_eval_listener(evaluator)
        self._train([listener])
        if listener.eval_result is not None:
            return listener.eval_result.metrics, listener.export_results
        return self._final_metrics_without_training(evaluator)

    def _final_metrics_without_training(self, evaluator):
        """Metrics of the last checkpoint when train() had nothing to do.

        Reads them from the eval dir when that checkpoint was evaluated before,
        otherwise evaluates (and runs the final export) now.
        """
        latest = self._estimator.latest_checkpoint()
        if latest is None:
            return None, None
        step = model_dir_lib.checkpoint_step(latest)
        history = event_files.read_eval_metrics(self._eval_dir())
        if step in history:
            logging.info("max_steps already reached; returning the metrics of the "
                         "evaluation at step %d.", step)
            return dict(history[step], global_step=step), []
        result, exports = evaluator.evaluate_and_export(is_final=True)
        if result.status != _EvalStatus.EVALUATED:
            return None, None
        return result.metrics, exports

    def _eval_dir(self):
        eval_dir = getattr(self._estimator, "eval_dir", None)
        if eval_dir is not None:
            return eval_dir(self._eval_spec.name)
        return model_dir_lib.eval_dir(_model_dir(self._estimator), self._eval_spec.name)

    def run_chief(self):
        """Trains as the chief, then marks training complete in model_dir."""
        completion.clear_markers(_model_dir(self._estimator))
        self._start_distributed_training()
        self._train()
        self._mark_training_complete()
        return None, None

    def run_worker(self):
        """Trains as a (non-chief) worker after its start delay."""
        strategy = getattr(self._estimator.config, "train_distribute", None)
        # Watching from the start: the chief clears an old marker when it starts.
        watcher = (completion.CompletionWatcher(
            _model_dir(self._estimator), self._train_spec.max_steps, _now, _grace_secs())
            if distribute.is_collective(strategy) else None)
        self._start_distributed_training()
        self._train()
        if watcher is not None:
            self._wait_for_chief(watcher)
        latest = self._estimator.latest_checkpoint()
        completion.write_worker_done(_model_dir(self._estimator),
                                     self._estimator.config.task_id,
                                     model_dir_lib.checkpoint_step(latest) if latest else 0)
        return None, None

    def _wait_for_chief(self, watcher):
        """A synchronous (collective) worker ends with the chief, after its final
        checkpoint, as tf.estimator's workers did; at most the grace period."""
        deadline = _now() + _grace_secs()
        while watcher.poll() is None:
            if _now() >= deadline:
                logging.warning("The chief did not mark training complete within %d s "
                                "of this worker's last step; exiting anyway.",
                                _grace_secs())
                return
            time.sleep(_MARKER_POLL_SECS)

    def run_master(self):
        """Trains as the legacy master, evaluating through the checkpoint listener."""
        _check_eval_spec(self._eval_spec)
        completion.clear_markers(_model_dir(self._estimator))
        self._start_distributed_training()
        listener = self._make_eval_listener(self._make_evaluator())
        self._train([listener])
        self._mark_training_complete()
        if listener.eval_result is None:
            return None, None
        return listener.eval_result.metrics, listener.export_results

    def run_ps(self):
        """Serves variables until the chief (and the workers) finished, then returns."""
        self._start_distributed_training()
        config = self._estimator.config
        grace_secs = _grace_secs()
        watcher = completion.CompletionWatcher(_model_dir(self._estimator),
                                               self._train_spec.max_steps, _now,
                                               grace_secs)
        num_workers = _num_tasks(config.cluster_spec, roles.WORKER)
        marker_secs = None
        while True:
            if watcher.poll() is not None:
                marker_secs = marker_secs if marker_secs is not None else _now()
                done = completion.workers_done(_model_dir(self._estimator))
                if done >= set(range(num_workers)):
                    break
                if _now() - marker_secs >= grace_secs:
                    logging.warning("Workers %s did not report done within %d s of the "
                                    "chief; stopping the ps anyway.",
                                    sorted(set(range(num_workers)) - done),
                                    grace_secs)
                    break
            time.sleep(_MARKER_POLL_SECS)
        logging.info("Training is over; ps task %d exits.", config.task_id)
        return None, None

    def run_evaluator(self):
        """Evaluates each new checkpoint until the final one, then returns.

        Returns:
          (metrics, export_results) of the last evaluation, or (None, None).
        """
        return self._start_continuous_evaluation()

    def _start_continuous_evaluation(self):
        """The evaluator's loop: start delay, then one iteration until one says stop."""
        spec = _check_eval_spec(self._eval_spec)
        # Watch before the start delay: it counts towards an old marker's grace.
        watcher = completion.CompletionWatcher(_model_dir(self._estimator),
                                               self._train_spec.max_steps, _now,
                                               _grace_secs())
        if spec.start_delay_secs:
            logging.info("Waiting %s secs before the first evaluation.",
                         spec.start_delay_secs)
            time.sleep(spec.start_delay_secs)
        evaluator = self._make_evaluator()
        while self._execute_evaluator_once(evaluator, watcher):
            pass
        if evaluator.last_result is None:
            return None, None
        return evaluator.last_result.metrics, evaluator.last_export_results

    def _execute_evaluator_once(self, evaluator, watcher):
        """One evaluator iteration: evaluate the latest new checkpoint and export,
        then sleep out the rest of `throttle_secs`.

        Returns:
          False once evaluation is over (final checkpoint evaluated and exported,
          or the continuous-eval listener said stop), else True.
        """
        start = _now()
        marker = watcher.poll()  # read first: a marker means the latest is final
        listener = self._continuous_eval_listener
        if not listener.before_eval():
            logging.info("Continuous-eval listener stopped the evaluator.")
            return False
        final_step = marker.global_step if marker is not None else None
        result, _ = evaluator.evaluate_and_export(final_step=final_step)
        if not listener.after_eval(result):
            logging.info("Continuous-eval listener stopped the evaluator.")
            return False
        if evaluator.final_export_done:
            return False
        if marker is not None and result.status != _EvalStatus.EVALUATED:
            evaluator.export_final_if_needed()
            return False
        remaining = self._eval_spec.throttle_secs - (_now() - start)
        if remaining > 0:
            time.sleep(remaining)
        return True

    # Servers ---------------------------------------------------------------------------

    def _start_distributed_training(self):
        """Starts this task's server when needed, then delays workers."""
        config = self._estimator.config
        strategy = getattr(config, "train_distribute", None)
        if getattr(config, "environment", "cloud") == "google":
            logging.info("environment 'google': the platform runs the servers.")
        elif distribute.server_started(strategy):
            logging.info("The distribution strategy started this task's server.")
        elif sum(_num_tasks(config.cluster_spec, j) for j in config.cluster_spec.jobs) > 1:
            self._start_std_server(config)
        # Collective strategies step all workers together: no staggered start.
        if config.task_type == roles.WORKER and not distribute.is_collective(strategy):
            max_delay = getattr(config, "experimental_max_worker_delay_secs", None)
            max_delay = _MAX_DELAY_SECS if max_delay is None else int(max_delay)
            delay = min(max_delay, _DELAY_SECS_PER_WORKER * (config.task_id + 1))
            if delay > 0:
                logging.info("Waiting %d secs before starting worker %d.", delay,
                             config.task_id)
                time.sleep(delay)

    def _start_std_server(self, config):
        if not _has_cluster(config):
            raise RuntimeError("cannot start a server: the config has no cluster_spec")
        if not config.task_type:
            raise RuntimeError("cannot start a server: the config has no task_type")
        if config.task_id is None:
            raise RuntimeError("cannot start a server: the config has no task_id")
        if config.task_type != roles.PS and not config.master:
            raise RuntimeError(f"cannot train as {config.task_type!r}: the config has "
                               "no master address")
        logging.info("Starting server for %s:%d.", config.task_type, config.task_id)
        self._server = server_lib.Server(
            config.cluster_spec, job_name=config.task_type, task_index=config.task_id,
            config=distribute.session_config(getattr(config, "train_distribute", None),
                                             config.session_config), start=False,
            protocol=getattr(config, "protocol", None) or "grpc")
        self._server.start()
        return self._server


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains and evaluates the estimator, as this process's TF_CONFIG role says.

    Locally (no cluster): trains, evaluating after checkpoint saves at most every
    `eval_spec.throttle_secs` and always on the final checkpoint, and returns
    `(metrics, export_results)` of the last evaluation. In a cluster, runs the
    chief, worker, ps, master or evaluator role; every role returns when training
    is over.

    `estimator` may be any object with `config`, `model_dir`, `train`, `evaluate`,
    `latest_checkpoint` and `export_saved_model` (e.g. TF Estimator's Estimator).

    Returns:
      (metrics, export_results), or (None, None) for chief, worker and ps.

    Raises:
      TypeError: wrong estimator or spec types.
      ValueError: an evaluator with index > 0, or an unknown task type.
    """
    # Every role needs the EvalSpec here (tf.estimator checks it first too); run()
    # checks the role (an unknown type, a second evaluator) before doing anything.
    _check_eval_spec(eval_spec)
    return _TrainingExecutor(estimator, train_spec, eval_spec).run()
