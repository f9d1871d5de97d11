"""train_and_evaluate: specs, the executor for every TF_CONFIG role, evaluation.

Names and behaviour follow TF Estimator 2.15's training.py, with improvements
(clean termination of every role, a robust evaluator, final metrics on re-runs;
see README's "Where it does better"). Test seams: this module reads the clock
only through its attribute `time` (``time.time()``, ``time.sleep()``) and starts
servers only through its attribute `server_lib` (``server_lib.Server(...)``). The
private names tf.estimator's tests reach at this module's path, and where each comes
from, are in docs/compatibility.md's table.

Who owns what:
| TrainSpec / EvalSpec, and what it  | `_training_specs.py` (imported here, the     |
| needs of an estimator              | names users know)                            |
| which role this process runs       | `_TrainingExecutor.run`; role names and      |
|                                    | facts in `_engine/roles.py`                  |
| chief / worker / master / ps       | `run_chief` ... `run_ps`; servers and worker |
|                                    | delays in `_start_distributed_training`, as  |
|                                    | the task's `_engine/topology` record says    |
| the evaluator role                 | `_start_continuous_evaluation` (the loop),   |
|                                    | `_execute_evaluator_once` (one iteration)    |
| evaluate the latest checkpoint,    | `_evaluation._Evaluator`                     |
| then run the exporters             |                                              |
| evaluation during local training   | `_evaluation._NewCheckpointListenerForEvaluate` |
| "training is over" markers         | `_engine/completion.py`                      |
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import numpy as np

from estimator_lite._engine import (
    completion,
    distribute,
    event_files,
    roles,
    topology,
    validation,
)
from estimator_lite._engine import model_dir as model_dir_lib
from estimator_lite._evaluation import (
    _checkpoint_step,
    _ContinuousEvalListener,
    _EvalStatus,
    _Evaluator,
    _model_dir,
    _NewCheckpointListenerForEvaluate,
)
from estimator_lite._tf import logging, tf
from estimator_lite._training_specs import (
    EstimatorLike,
    EvalSpec,
    TrainSpec,
    _check_estimator,
    _check_eval_spec,
    _check_hooks,
)

__all__ = ["TrainSpec", "EvalSpec", "EstimatorLike", "train_and_evaluate"]

server_lib = tf.train

_DELAY_SECS_PER_WORKER = 5
_MAX_DELAY_SECS = 60
_MARKER_POLL_SECS = 1
# How often an evaluator with throttle_secs=0 looks for a new checkpoint.
_ZERO_THROTTLE_POLL_SECS = 1
# How long a role waits for news that may never come: after the chief's marker, a
# ps task waits this long for workers that have not marked themselves done (a
# crashed worker must not keep it alive forever), and a marker older than the role
# must stay this long before the role believes it (a new run's chief clears it).
GRACE_ENV = "ESTIMATOR_LITE_STRAGGLER_GRACE_SECS"
_DEFAULT_GRACE_SECS = 60


def _now():
    return time.time()


def _grace_secs():
    """The straggler grace period, from the environment (default 60 s).

    Raises:
      ValueError: the variable is not a number >= 0.
    """
    return validation.seconds_from_env(GRACE_ENV, _DEFAULT_GRACE_SECS, allow_zero=True)


# The executor -------------------------------------------------------------------------


def _num_tasks(cluster_spec, job):
    return cluster_spec.num_tasks(job) if job in cluster_spec.jobs else 0


def _server_class():
    """The class that starts servers: this module's `server_lib.Server`.

    Unless a test replaced `server_lib`, it is read from TensorFlow's own server
    module at call time, so code that patches that module's `Server` (as
    tf.estimator's tests do) reaches this executor too.
    """
    if server_lib is not tf.train:
        return server_lib.Server
    module = sys.modules.get(getattr(tf.train.Server, "__module__", ""))
    return getattr(module, "Server", tf.train.Server)


class _NoMarkers:
    """Stands in for a CompletionWatcher when model_dir is not a path."""

    def poll(self):
        """There never is a marker."""


def _completion_watcher(estimator, max_steps):
    model_dir = _model_dir(estimator)
    if model_dir is None:
        return _NoMarkers()
    return completion.CompletionWatcher(model_dir, max_steps, _now, _grace_secs())


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
            raise TypeError(f"`train_spec` must have type `tf.estimator.TrainSpec`: "
                            f"train_spec must be a TrainSpec, got {train_spec!r}")
        # None is fine for the chief, workers and ps (they only train or serve); the
        # roles that evaluate check it when they run.
        if eval_spec is not None and not isinstance(eval_spec, EvalSpec):
            raise TypeError(f"`eval_spec` must be either `None` or have type "
                            f"`tf.estimator.EvalSpec`: eval_spec must be an EvalSpec "
                            f"or None, got {eval_spec!r}")
        if continuous_eval_listener is not None and not isinstance(
                continuous_eval_listener, _ContinuousEvalListener):
            raise TypeError("continuous_eval_listener must have type "
                            f"`_ContinuousEvalListener`, got {continuous_eval_listener!r}")
        self._estimator = estimator
        self._train_spec = train_spec
        self._eval_spec = eval_spec
        self._train_hooks = _check_hooks("train_hooks", train_hooks)
        self._continuous_eval_listener = (continuous_eval_listener or
                                          _ContinuousEvalListener())
        self._server = None
        self._topology = None

    estimator = property(lambda self: self._estimator)

    def _cluster(self):
        """This task's `topology.Topology`, read from the estimator's config once
        (when a role first needs it)."""
        if self._topology is None:
            self._topology = topology.for_config(self._estimator.config)
        return self._topology

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
        if not topology.has_cluster(config) and task_type != roles.EVALUATOR:
            logging.info("No cluster in the config: training and evaluating locally.")
            return self.run_local()
        runners = self._role_runners()
        if not task_type:
            raise ValueError(f"`estimator.config` must have task_type set (TF_CONFIG's "
                             f"task type) to run in a cluster; got {task_type!r}; valid "
                             f"task types: {', '.join(sorted(runners))}")
        if task_type == "local":
            raise ValueError("`task.type` in TF_CONFIG cannot be `local` in a cluster: "
                             "leave out 'cluster' and 'task' to train locally; valid "
                             f"task types: {', '.join(sorted(runners))}")
        if task_type not in runners:
            raise ValueError(f"Task type {task_type!r} is not supported. Supported task "
                             f"types are {sorted(runners)}; valid task types: "
                             f"{', '.join(sorted(runners))}")
        roles.check_evaluator_index(task_type, config.task_id)
        if task_type == roles.WORKER and getattr(config, "is_chief", False):
            # Worker 0 of a chief-less MultiWorkerMirroredStrategy cluster leads.
            return self.run_chief()
        return runners[task_type]()

    # Roles --------------------------------------------------------------------------

    def _train(self, saving_listeners):
        spec = self._train_spec
        # Keywords, as tf.estimator calls it (an Estimator-like object may rely on it).
        self._estimator.train(input_fn=spec.input_fn, max_steps=spec.max_steps,
                              hooks=list(spec.hooks) + list(self._train_hooks),
                              saving_listeners=saving_listeners)

    def _make_evaluator(self):
        return _Evaluator(self._estimator, _check_eval_spec(self._eval_spec),
                          self._train_spec.max_steps)

    def _make_eval_listener(self, evaluator):
        return _NewCheckpointListenerForEvaluate(
            evaluator, self._eval_spec.throttle_secs, self._continuous_eval_listener)

    def _mark_training_complete(self, latest=None):
        """Writes the completion marker with the step of the last checkpoint.

        Args:
          latest: the last checkpoint when the caller knows it (the master's
            evaluator looked after the final save); else the estimator is asked.
        """
        model_dir = _model_dir(self._estimator)
        if model_dir is None:
            return
        # None (the step is unknown) still ends the other roles.
        step = _checkpoint_step(latest or self._estimator.latest_checkpoint())
        completion.write_training_complete(model_dir, step, self._train_spec.max_steps,
                                           _now())
        logging.info("Training complete at global step %s.", step)

    def run_local(self):
        """Trains in this process, evaluating after checkpoints (throttled)."""
        evaluator = self._make_evaluator()
        listener = self._make_eval_listener(evaluator)
        self._train(tuple(self._train_spec.saving_listeners) + (listener,))
        if listener.eval_result is not None:
            return listener.eval_result.metrics, listener.export_results
        if listener.stopped:  # the continuous-eval listener said: no evaluation
            return None, None
        return self._final_metrics_without_training(evaluator)

    def _final_metrics_without_training(self, evaluator):
        """Metrics of the last checkpoint when train() had nothing to do.

        Reads them from the eval dir when that checkpoint was evaluated before,
        otherwise evaluates (and runs the final export) now.
        """
        latest = self._estimator.latest_checkpoint()
        if not latest:
            return None, None
        step = _checkpoint_step(latest)
        eval_dir = self._eval_dir()
        history = event_files.read_eval_metrics(eval_dir) if eval_dir else {}
        if step is not None and step in history:
            logging.info("max_steps already reached; returning the metrics of the "
                         "evaluation at step %d.", step)
            return _logged_metrics(history[step], step), []
        result, exports = evaluator.evaluate_and_export(is_final=True)
        if result.status != _EvalStatus.EVALUATED:
            return None, None
        return result.metrics, exports

    def _eval_dir(self):
        eval_dir = getattr(self._estimator, "eval_dir", None)
        if callable(eval_dir):
            eval_dir = eval_dir(self._eval_spec.name)
            return eval_dir if isinstance(eval_dir, (str, bytes, os.PathLike)) else None
        model_dir = _model_dir(self._estimator)
        if model_dir is None:
            return None
        return model_dir_lib.eval_dir(model_dir, self._eval_spec.name)

    def _clear_markers(self):
        model_dir = _model_dir(self._estimator)
        if model_dir is not None:
            completion.clear_markers(model_dir)

    def run_chief(self):
        """Trains as the chief, then marks training complete in model_dir."""
        self._clear_markers()
        self._start_distributed_training()
        self._train(self._train_spec.saving_listeners)
        self._mark_training_complete()
        return None, None

    def run_worker(self):
        """Trains as a (non-chief) worker after its start delay."""
        # Watching from the start: the chief clears an old marker when it starts.
        watcher = (_completion_watcher(self._estimator, self._train_spec.max_steps)
                   if self._cluster().worker_wait == topology.WITH_CHIEF else None)
        self._start_distributed_training()
        # No saving listeners: only the chief saves checkpoints (as tf.estimator).
        self._train(None)
        if watcher is not None:
            self._wait_for_chief(watcher)
        model_dir = _model_dir(self._estimator)
        if model_dir is not None:
            step = _checkpoint_step(self._estimator.latest_checkpoint())
            completion.write_worker_done(model_dir, self._estimator.config.task_id,
                                         step if step is not None else 0)
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
        evaluator = self._make_evaluator()
        self._clear_markers()
        # The master's evaluations do not stop training (tf.estimator's master ignores
        # the continuous-eval listener).
        listener = _NewCheckpointListenerForEvaluate(
            evaluator, self._eval_spec.throttle_secs, _ContinuousEvalListener())
        self._start_distributed_training()
        self._train(tuple(self._train_spec.saving_listeners) + (listener,))
        self._mark_training_complete(evaluator.latest_seen)
        if listener.eval_result is None:
            return None, None
        return listener.eval_result.metrics, listener.export_results

    def run_ps(self):
        """Serves variables until the chief (and the workers) finished, then returns.

        Without a model_dir path there are no markers to wait for: the ps then
        joins its server (serves until it is stopped), as tf.estimator's does.
        """
        self._start_distributed_training()
        config = self._estimator.config
        if _model_dir(self._estimator) is None:
            if self._server is not None:
                self._server.join()
            return None, None
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
        watcher = _completion_watcher(self._estimator, self._train_spec.max_steps)
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
        elif self._eval_spec.throttle_secs == 0 and result.status != _EvalStatus.EVALUATED:
            # tf.estimator polls without any pause here and logs this on every poll:
            # tens of thousands of lines a second that starve the trainers sharing
            # the machine (a CI cluster hung on it). The warning is logged as the
            # evaluator's others are (at most every 10 minutes), and the next poll
            # waits _ZERO_THROTTLE_POLL_SECS: a new checkpoint is still evaluated
            # within a second of appearing.
            evaluator.warn("EvalSpec.throttle_secs is set as 0: the evaluator polls "
                           "for a new checkpoint every %s s. Please consider to "
                           "increase it.", _ZERO_THROTTLE_POLL_SECS)
            time.sleep(_ZERO_THROTTLE_POLL_SECS)
        return True

    # Servers ---------------------------------------------------------------------------

    def _start_distributed_training(self):
        """Starts this task's server when needed, then delays workers."""
        config = self._estimator.config
        cluster = self._cluster()
        if cluster.server_started_by == topology.PLATFORM:
            logging.info("environment 'google': the platform runs the servers.")
        elif cluster.server_started_by == topology.STRATEGY:
            logging.info("The distribution strategy started this task's server.")
        else:
            self._start_std_server(config)
        # Collective strategies step all workers together: no staggered start.
        if (config.task_type == roles.WORKER
                and cluster.worker_wait == topology.STAGGERED_START):
            max_delay = getattr(config, "experimental_max_worker_delay_secs", None)
            max_delay = _MAX_DELAY_SECS if max_delay is None else int(max_delay)
            delay = min(max_delay, _DELAY_SECS_PER_WORKER * (config.task_id + 1))
            if delay > 0:
                logging.info("Waiting %d secs before starting worker %d.", delay,
                             config.task_id)
                time.sleep(delay)

    def _start_std_server(self, config):
        """Starts and returns this task's server; None for a one-task cluster.

        Raises:
          RuntimeError: the config lacks the cluster, the task type or index, or
            (in a cluster of several tasks) the master address.
        """
        for missing, what in ((not topology.has_cluster(config), "cluster_spec"),
                              (not config.task_type, "task_type"),
                              (config.task_id is None, "task_id")):
            if missing:
                raise RuntimeError(f"Could not start server; the config has no {what}: "
                                   "set it in RunConfig or the TF_CONFIG environment "
                                   "variable")
        num_tasks = sum(_num_tasks(config.cluster_spec, j)
                        for j in config.cluster_spec.jobs)
        if num_tasks <= 1 and roles.trains(config.task_type):
            logging.info("One task in the cluster: no server to start.")
            return None
        if not config.master:
            raise RuntimeError(f"Could not start server; cannot train as "
                               f"{config.task_type!r}: the config has no master address "
                               "(set it in RunConfig or the TF_CONFIG environment "
                               "variable)")
        logging.info("Starting server for %s:%d.", config.task_type, config.task_id)
        self._server = _server_class()(
            config.cluster_spec, job_name=config.task_type, task_index=config.task_id,
            config=distribute.session_config(topology.train_strategy(config),
                                             config.session_config), start=False,
            protocol=getattr(config, "protocol", None))
        self._server.start()
        return self._server


def train_and_evaluate(estimator: EstimatorLike, train_spec: TrainSpec, eval_spec: EvalSpec,
                       ) -> tuple[dict[str, Any] | None, list[Any] | None]:
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
    executor = _TrainingExecutor(estimator=estimator, train_spec=train_spec,
                                 eval_spec=eval_spec)
    # Here too, in tf.estimator's order: code that replaces the executor (a test's
    # mock) still gets the error for a second evaluator.
    config = estimator.config
    roles.check_evaluator_index(config.task_type, config.task_id)
    return executor.run()


def _logged_metrics(summary_values, step):
    """An earlier evaluation's metrics, read back from its summaries, typed as
    evaluate() returns them.

    Summaries hold float32 simple values: each becomes a numpy.float32 and the
    step a numpy.int64, in evaluate()'s order (names sorted, then 'global_step'),
    so code calling `.item()` on the values, as it may on evaluate()'s results,
    works on these too.

    Args:
      summary_values: {tag: float} of one step's eval summaries.
      step: the global step they were written at.

    Returns:
      The metrics dict, with 'global_step'.
    """
    metrics = {name: np.float32(summary_values[name]) for name in sorted(summary_values)}
    metrics["global_step"] = np.int64(step)
    return metrics
