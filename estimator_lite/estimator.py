"""Estimator: train / evaluate / predict / export a model_fn in graph mode.

API and behaviour follow TF Estimator's Estimator (2.15). Every call builds its own
`tf.Graph` and leaves no global TensorFlow state behind.

This module builds the graphs (input_fn and model_fn calls, devices, warm start,
Keras name isolation) and hands them to the engine that runs them (which module
owns what: docs/architecture.md, "Where a change goes"). Other modules use an
Estimator only through its public API and the package interface at the end of
this module. The private names tf.estimator's tests reach at this module's path
are in docs/compatibility.md's table.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from estimator_lite import model_fn as model_fn_lib
from estimator_lite._engine import (
    eval_loop,
    hook_protocol,
    mixed_precision,
    predict_loop,
    state_updates,
    step_loop,
    topology,
    train_setup,
    validation,
    warm_start,
    xla,
)
from estimator_lite._engine import input_fn as input_fn_lib
from estimator_lite._engine import model_dir as model_dir_lib
from estimator_lite._engine import runner as runner_lib
from estimator_lite._engine.fn_args import call_with_declared_args, declared_args
from estimator_lite._engine.train_session import step_limits
from estimator_lite._engine.warm_start import VocabInfo, WarmStartSettings
from estimator_lite._tf import logging, tf
from estimator_lite.export import saved_model as saved_model_lib
from estimator_lite.model_fn import EstimatorSpec, ModeKeys
from estimator_lite.run_config import maybe_overwrite_model_dir_and_session_config

if TYPE_CHECKING:
    from estimator_lite.run_config import RunConfig

__all__ = ["Estimator", "VocabInfo", "WarmStartSettings",
           "maybe_overwrite_model_dir_and_session_config"]

# What a subclass of Estimator may redefine (tf.estimator's list); every other
# member is the Estimator's own, so train/evaluate/predict/export behave as
# documented whatever the subclass (canned estimators included). TPUEstimator
# (TF's own) may redefine anything.
_OVERRIDABLE = frozenset({
    "model_fn", "_create_and_assert_global_step", "_export_all_saved_models",
    "_tf_api_names", "_tf_api_names_v1", "_estimator_api_names",
    "_estimator_api_names_v1", "_estimator_api_constants",
    "_estimator_api_constants_v1", "latest_checkpoint"})


class Estimator:
    """Trains, evaluates, predicts with and exports a `model_fn`.

    `model_fn(features, labels, mode, params, config)` may declare any subset of
    those arguments (features is required) and returns an EstimatorSpec.
    """

    def __init__(self, model_fn: Callable[..., EstimatorSpec],
                 model_dir: str | os.PathLike[str] | None = None,
                 config: RunConfig | None = None, params: Any = None,
                 warm_start_from: str | os.PathLike[str] | WarmStartSettings | None = None,
                 ) -> None:
        """Validates the arguments.

        Raises:
          TypeError: config is not a RunConfig, params not a dict, model_fn not
            callable, warm_start_from not a path or WarmStartSettings.
          ValueError: model_fn's arguments are wrong, or model_dir conflicts with
            config.model_dir.
        """
        # Through the class, as tf.estimator calls it: code that replaces the
        # method with `staticmethod(lambda _: None)` to override evaluate() (as
        # google/model_search does) gets its replacement called.
        self.__class__._assert_members_are_not_overridden(self)
        self._config = mixed_precision.with_session_rewrite(
            maybe_overwrite_model_dir_and_session_config(config, model_dir))
        self._model_dir = self._config.model_dir
        if model_fn is None:
            raise ValueError("model_fn must be given to the Estimator, got None")
        self._model_fn = model_fn_lib.check_model_fn(model_fn, params)
        # Any object, as tf.estimator (e.g. an HParams); copied, never shared.
        self._params = copy.deepcopy(params or {})
        if isinstance(warm_start_from, (str, bytes, os.PathLike)):
            warm_start_from = warm_start.settings_from_path(warm_start_from)
        if warm_start_from is not None and not isinstance(warm_start_from,
                                                          WarmStartSettings):
            raise TypeError("warm_start_from must be a path or WarmStartSettings, got "
                            f"{warm_start_from!r}")
        self._warm_start = warm_start_from
        self._eval_summaries = eval_loop.EvalSummaries()

    def _assert_members_are_not_overridden(self):
        """Raises ValueError when this object's class redefines an Estimator member.

        tf.estimator's name: `__init__` calls it, and a subclass or a program
        may replace it to lift the rule.
        """
        validation.check_members_not_overridden(self, Estimator, _OVERRIDABLE,
                                                exempt_class_names=("TPUEstimator",))

    model_dir = property(lambda self: self._model_dir, doc="Checkpoint directory.")
    config = property(lambda self: self._config, doc="The RunConfig.")
    params = property(lambda self: copy.deepcopy(self._params), doc="A copy of params.")

    @property
    def model_fn(self) -> Callable[[Any, Any, str, RunConfig], EstimatorSpec]:
        """The model_fn bound to params, as tf.estimator gave it (libraries call it).

        Returns:
          ``model_fn(features, labels, mode, config)`` returning the EstimatorSpec.
        """
        def public_model_fn(features, labels, mode, config):
            return self._call_model_fn(features, labels, mode, config)
        return public_model_fn

    @property
    def _session_config(self):
        # tf.estimator's private attribute, read by libraries that build their own
        # session on the model_fn's graph (tensorflow_hub's module exporter).
        return self._config.session_config

    # Building blocks ------------------------------------------------------------

    def _call_input_fn(self, input_fn, mode):
        return input_fn_lib.split_input(self._input_fn_result(input_fn, mode))

    def _input_fn_result(self, input_fn, mode, input_context=None):
        """What input_fn returns; `input_context` (a tf.distribute.InputContext
        under a strategy) is passed only to an input_fn that names it."""
        validation.check_callable("input_fn", input_fn)
        available = {"mode": mode, "params": self.params, "config": self._config}
        if input_context is not None and "input_context" in (
                declared_args(input_fn) or ()):
            available["input_context"] = input_context
        return call_with_declared_args(input_fn, available)

    def _get_iterator_from_input_fn(self, input_fn, mode, distribution=None):
        """tf.estimator's helper for subclasses: an iterator over the input_fn's
        dataset and the hooks that initialize it.

        Args:
          input_fn: returns a dataset; under `distribution` it may take an
            `input_context`.
          mode: a ModeKeys value, passed to an input_fn that takes `mode`.
          distribution: a tf.distribute strategy, or None.

        Returns:
          (iterator, [a SessionRunHook initializing it in each new session]).
        """
        return input_fn_lib.iterator_with_hook(
            lambda context=None: self._input_fn_result(input_fn, mode, context),
            distribution)

    def _call_model_fn(self, features, labels, mode, config=None):
        declared = declared_args(self._model_fn)
        available = {"features": features, "labels": labels, "mode": mode,
                     "params": self.params, "config": config or self._config}
        if declared is not None and "labels" not in declared and labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returned "
                             "labels")
        spec = model_fn_lib.invoke_model_fn(self._model_fn, available)
        if not isinstance(spec, EstimatorSpec):
            raise validation.WrongTypeError(
                f"model_fn must return an EstimatorSpec, got {spec!r} (model_fn "
                "should return an EstimatorSpec)")
        return spec

    def _new_graph(self):
        graph = tf.Graph()
        with graph.as_default():
            if self._config.tf_random_seed is not None:
                tf.set_random_seed(self._config.tf_random_seed)
        return graph

    def _create_global_step(self, graph):
        """Creates `graph`'s global step (tf.estimator's method): an integer variable
        'global_step' in the GLOBAL_STEP collection; ValueError if it has one."""
        return tf.train.create_global_step(graph)

    def _create_and_assert_global_step(self, graph):
        """Creates the global step of a train, eval, predict or export graph.

        tf.estimator's method, which subclasses may override (adanet does): every
        graph the Estimator builds gets its global step from here, before the
        input_fn is called.

        Args:
          graph: the graph being built (the default graph).

        Returns:
          The global step variable.

        Raises:
          AssertionError: the created step is not `graph`'s global step or not an
            integer (tf.estimator's asserts).
        """
        step = self._create_global_step(graph)
        if step is not tf.train.get_global_step():
            raise AssertionError(f"_create_global_step returned {step!r}, which is not "
                                 "the graph's global step (tf.train.get_global_step())")
        if not step.dtype.is_integer:
            raise AssertionError(f"the global step must be an integer, got {step!r}")
        return step

    def _global_step_for_loop(self):
        """The default graph's global step, created through
        `_create_and_assert_global_step` (train and evaluate need it).

        Raises:
          ValueError: an override returned None (a SavedModelEstimator-style
            subclass whose model_fn creates the global step).
        """
        step = self._create_and_assert_global_step(tf.get_default_graph())
        if step is None:
            raise ValueError(
                f"{type(self).__name__}._create_and_assert_global_step returned None; "
                "estimator_lite's train() and evaluate() need the global step before "
                "the model_fn is called (a model_fn creating it is not supported)")
        return step

    # Checkpoints -------------------------------------------------------------------

    def latest_checkpoint(self) -> str | None:
        """Path of the newest checkpoint in model_dir, or None."""
        return model_dir_lib.latest_checkpoint(self._model_dir)

    def _current_step(self):
        latest = self.latest_checkpoint()
        return model_dir_lib.checkpoint_step(latest) if latest else 0

    def get_variable_names(self) -> list[str]:
        """Names of all variables in the latest checkpoint.

        Raises:
          ValueError: there is no checkpoint in model_dir.
        """
        return [name for name, _ in tf.train.list_variables(self._require_checkpoint())]

    def get_variable_value(self, name: str) -> Any:
        """Value of variable `name` in the latest checkpoint, as a numpy array."""
        return tf.train.load_variable(self._require_checkpoint(), name)

    def _require_checkpoint(self, checkpoint_path=None):
        path = checkpoint_path or self.latest_checkpoint()
        if path is None:
            raise ValueError(f"Could not find trained model: no checkpoint found in "
                             f"model_dir {self._model_dir!r}; train first or pass "
                             "checkpoint_path")
        return path

    def _checkpoint_or_warn(self, checkpoint_path, doing):
        """`checkpoint_path`, else the latest; None (warned about) when there is none."""
        checkpoint_path = checkpoint_path or self.latest_checkpoint()
        if checkpoint_path is None:
            logging.warning("No checkpoint in %s; %s freshly initialised variables.",
                            self._model_dir, doing)
        return checkpoint_path

    def eval_dir(self, name: str | None = None) -> str:
        """Directory of evaluation summaries: model_dir/eval or model_dir/eval_<name>."""
        return model_dir_lib.eval_dir(self._model_dir, name)

    # Train --------------------------------------------------------------------------

    def train(self, input_fn: Callable[..., Any],
              hooks: Iterable[tf.train.SessionRunHook] | None = None,
              steps: int | None = None, max_steps: int | None = None,
              saving_listeners: Iterable[tf.train.CheckpointSaverListener] | None = None,
              ) -> Estimator:
        """Trains until `steps` more steps, `max_steps` in total, or the input ends.

        Args:
          input_fn: returns a Dataset of (features, labels) or such a tuple.
          hooks: SessionRunHooks run on every worker.
          steps: train this many more steps (from the restored global step).
          max_steps: train until the global step reaches this (skips if reached).
          saving_listeners: CheckpointSaverListeners called around each save.

        Returns:
          self.

        Raises:
          ValueError: both steps and max_steps given, or one is <= 0; listeners
            given with checkpointing disabled; the config's task is an evaluator
            or a ps (as tf.estimator).
        """
        config = self._config
        hooks, listeners = train_setup.check_args(config, steps, max_steps, hooks,
                                                  saving_listeners)
        if max_steps is not None and self._current_step() >= max_steps:
            logging.info("Skipping training: max_steps=%d already reached.", max_steps)
            return self
        runner = runner_lib.for_strategy(config.train_distribute)
        graph, session = self._build_train_graph(runner, input_fn, hooks, listeners,
                                                 max_steps)
        if session is None:  # reached while building: no hook has begun
            return self
        with graph.as_default():
            stop_at, target_step = step_limits(steps, max_steps)
            last = session.run(stop_at, target_step_fn=target_step)
        logging.info("Training finished at global step %d.", last)
        return self

    def _build_train_graph(self, runner, input_fn, hooks, listeners, max_steps):
        """(graph, TrainSession or None) of a new training graph.

        A multi-step loop that cannot hold the model_fn (`step_loop.
        LoopUnsupportedError`) is warned about once, and the graph is built again
        with one step per session call (the input_fn and model_fn are called again).
        """
        steps_per_loop = self._config.experimental_steps_per_loop
        while True:
            graph = self._new_graph()
            try:
                with graph.as_default(), runner.placement(
                        topology.device_fn(self._config)):
                    return graph, self._build_train_session(
                        runner, input_fn, hooks, listeners, max_steps, steps_per_loop)
            except step_loop.LoopUnsupportedError as e:
                step_loop.warn_fallback(steps_per_loop, e.reason)
                steps_per_loop = 1

    def _build_train_session(self, runner, input_fn, hooks, listeners, max_steps,
                             steps_per_loop):
        """The TrainSession over a new training graph, or None when a non-chief
        task's max_steps was reached meanwhile (`train_setup.reached_while_building`)."""
        config = self._config
        global_step = self._global_step_for_loop()
        built = runner.build_train(
            lambda ctx: self._input_fn_result(input_fn, ModeKeys.TRAIN, ctx),
            self._call_train_model_fn, global_step, steps_per_loop)
        if train_setup.reached_while_building(config, self._current_step(), max_steps):
            return None
        if self._warm_start is not None and config.is_chief:
            warm_start.apply(self._warm_start, self.latest_checkpoint())
        scaffold = input_fn_lib.scaffold_with_input(built.spec.scaffold,
                                                    built.input.initializer)
        return train_setup.train_session(
            config, self._model_dir, type(self).__name__, runner, global_step=global_step,
            spec=built.spec, scaffold=scaffold, hooks=hooks, listeners=listeners,
            loop=built.loop, examples_per_step=built.examples_per_step)

    def _call_train_model_fn(self, features, labels):
        """The TRAIN spec, its train op also running the layers' state updates.

        Keras layers leave their state updates (seed generators, BatchNorm moving
        statistics) dangling in the graph; see `_engine/state_updates.py`.
        """
        config = self._config
        with state_updates.recording() as created, \
                xla.train_scope(config.experimental_jit_compile), \
                mixed_precision.policy_scope(config.experimental_mixed_precision):
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN)
        train_op = state_updates.with_state_updates(spec.train_op, spec.loss,
                                                    created.ops)
        return spec if train_op is spec.train_op else spec._replace(train_op=train_op)

    # Evaluate --------------------------------------------------------------------------

    def evaluate(self, input_fn: Callable[..., Any], steps: int | None = None,
                 hooks: Iterable[tf.train.SessionRunHook] | None = None,
                 checkpoint_path: str | None = None, name: str | None = None,
                 ) -> dict[str, Any]:
        """Evaluates the model on `steps` batches, or until the input ends.

        Args:
          input_fn: returns a Dataset of (features, labels) or such a tuple.
          steps: number of batches, or None for the whole input.
          hooks: SessionRunHooks for the evaluation.
          checkpoint_path: checkpoint to evaluate (default: latest).
          name: evaluation name; summaries go to `eval_dir(name)` (an empty name
            is no name).

        Returns:
          Dict of metric name to value, including 'loss' and 'global_step', as
          tf.estimator returns it: the values as `Session.run` gives them
          (numpy.float32 for most metrics and the loss, numpy.int64 for
          'global_step', a metric's own dtype otherwise, numpy arrays, bytes);
          the names sorted, then 'global_step'.

        Raises:
          ValueError: steps <= 0.
          TypeError: name is not a str.
        """
        eval_loop.check_evaluate_args(steps, name)
        hooks = hook_protocol.check_hooks("hooks", hooks)
        checkpoint_path = self._checkpoint_or_warn(checkpoint_path, "evaluating")
        return self._evaluate(input_fn, steps, hooks, checkpoint_path, name, None)

    def _evaluate(self, input_fn, steps, hooks, checkpoint_path, name, variable_values):
        """Builds and runs an evaluation graph, logs and writes the metrics."""
        runner = runner_lib.for_strategy(self._config.eval_distribute)
        graph = self._new_graph()
        with graph.as_default(), runner.placement():
            metrics = self._run_evaluation(runner, input_fn, steps, hooks,
                                           checkpoint_path, variable_values)
        # Logged before the summaries are written, in tf.estimator's order.
        eval_loop.log_metrics(metrics)
        self._eval_summaries.write(self.eval_dir(name), metrics, checkpoint_path)
        return metrics

    def _run_evaluation(self, runner, input_fn, steps, hooks, checkpoint_path,
                        variable_values=None):
        """Builds the eval graph with `runner` and runs it; returns the metrics dict.

        `variable_values` ({variable name: value}) evaluates those values instead of
        a checkpoint (the in-memory evaluator hook).
        """
        built = runner.build_eval(
            lambda ctx: self._input_fn_result(input_fn, ModeKeys.EVAL, ctx),
            lambda f, lbl: self._call_model_fn(f, lbl, ModeKeys.EVAL),
            self._global_step_for_loop())
        return eval_loop.run_evaluation(
            update_op=built.update_op, values=built.values,
            scaffold=eval_loop.evaluation_scaffold(built.scaffold, built.initializer,
                                                   variable_values),
            hooks=list(hooks) + list(built.hooks), checkpoint_path=checkpoint_path,
            session_config=runner.session_config(self._local_session_config()),
            master=self._config.evaluation_master, cardinality=built.cardinality,
            steps=steps)

    # Predict -----------------------------------------------------------------------

    def predict(self, input_fn: Callable[..., Any],
                predict_keys: str | Iterable[str] | None = None,
                hooks: Iterable[tf.train.SessionRunHook] | None = None,
                checkpoint_path: str | None = None,
                yield_single_examples: bool = True) -> Iterator[Any]:
        """Yields predictions for every element of the input.

        Args:
          input_fn: returns a Dataset of features (or (features, labels)) or tensors.
          predict_keys: names of the predictions to return (dict predictions only).
          hooks: SessionRunHooks for prediction.
          checkpoint_path: checkpoint to use (default: latest).
          yield_single_examples: yield one example at a time (else whole batches).

        Yields:
          Dicts of prediction name to value when the model_fn returns a dict, else
          the prediction values.

        Raises:
          ValueError: unknown predict_keys, or batch sizes differ.
        """
        hooks = hook_protocol.check_hooks("hooks", hooks)
        checkpoint_path = self._checkpoint_or_warn(checkpoint_path, "predicting with")
        graph = self._new_graph()
        with graph.as_default():
            self._create_and_assert_global_step(graph)
            inputs = self._call_input_fn(input_fn, ModeKeys.PREDICT)
            predict_loop.warn_if_endless(inputs.features)
            spec = self._call_model_fn(inputs.features, None, ModeKeys.PREDICT)
            yield from predict_loop.run_predictions(
                spec, predict_keys=predict_keys, input_initializer=inputs.initializer,
                hooks=hooks, checkpoint_path=checkpoint_path,
                session_config=self._local_session_config(),
                master=self._config.evaluation_master,
                yield_single_examples=yield_single_examples)

    # Export ------------------------------------------------------------------------

    def export_saved_model(self, export_dir_base: str | os.PathLike[str],
                           serving_input_receiver_fn: Callable[[], Any],
                           assets_extra: Mapping[str, str] | None = None,
                           as_text: bool = False, checkpoint_path: str | None = None,
                           experimental_mode: str = ModeKeys.PREDICT) -> bytes:
        """Exports one mode's graph as a SavedModel in a new timestamped directory.

        Written to a temp dir and renamed, so a reader never sees a partial export.

        Args:
          export_dir_base: parent directory of the timestamped export dirs.
          serving_input_receiver_fn: returns a ServingInputReceiver (PREDICT), or a
            SupervisedInputReceiver (TRAIN, EVAL).
          assets_extra: dict of destination path (under assets.extra) to source.
          as_text: write the SavedModel proto as text.
          checkpoint_path: checkpoint to export (default: latest).
          experimental_mode: the mode whose graph is exported (tag `serve` for
            PREDICT, `train`, `eval`).

        Returns:
          The export directory path, as bytes (as tf.estimator returned it).

        Raises:
          ValueError: no checkpoint to export, or an unknown mode.
          TypeError: the receiver fn returns the wrong kind of receiver.
        """
        return self._export(export_dir_base, {experimental_mode: serving_input_receiver_fn},
                            assets_extra, as_text, checkpoint_path, True)

    def experimental_export_all_saved_models(
            self, export_dir_base: str | os.PathLike[str],
            input_receiver_fn_map: Mapping[str, Callable[[], Any]],
            assets_extra: Mapping[str, str] | None = None, as_text: bool = False,
            checkpoint_path: str | None = None) -> bytes:
        """Exports one SavedModel with a MetaGraph for each mode of the map.

        `input_receiver_fn_map` maps ModeKeys to receiver fns (supervised ones for
        TRAIN and EVAL, e.g. experimental.build_raw_supervised_input_receiver_fn).
        The variables are saved once; the MetaGraphs are tagged `train`, `eval`
        and `serve`. Arguments and result otherwise as export_saved_model's.
        """
        return self._export(export_dir_base, input_receiver_fn_map, assets_extra,
                            as_text, checkpoint_path, True)

    def export_savedmodel(self, export_dir_base: str | os.PathLike[str],
                          serving_input_receiver_fn: Callable[[], Any],
                          assets_extra: Mapping[str, str] | None = None,
                          as_text: bool = False, checkpoint_path: str | None = None,
                          strip_default_attrs: bool = False) -> bytes:
        """TF1 name of export_saved_model, with its `strip_default_attrs` switch
        (True leaves default-valued op attributes out, for older TF binaries)."""
        return self._export(export_dir_base, {ModeKeys.PREDICT: serving_input_receiver_fn},
                            assets_extra, as_text, checkpoint_path,
                            bool(strip_default_attrs))

    def _export(self, export_dir_base, receiver_fn_map, assets_extra, as_text,
                checkpoint_path, strip_default_attrs):
        def new_mode_graph():
            # The global step comes first, before the receiver fn, as in tf.estimator.
            graph = self._new_graph()
            with graph.as_default():
                self._create_and_assert_global_step(graph)
            return graph

        def mode_graph(mode, receiver):
            labels = getattr(receiver, "labels", None)
            return (self._call_train_model_fn(receiver.features, labels)
                    if mode == ModeKeys.TRAIN else
                    self._call_model_fn(receiver.features, labels, mode))

        return saved_model_lib.export_saved_model(
            export_dir_base, receiver_fn_map, mode_graph, new_mode_graph,
            self._require_checkpoint(checkpoint_path), self._local_session_config(),
            assets_extra, as_text, strip_default_attrs)

    def _local_session_config(self):
        """The session config for evaluation, prediction and export."""
        return runner_lib.local_session_config(self._config.session_config)


# Package interface ----------------------------------------------------------------------
# What extenders.py and hooks.py need of an Estimator beyond tf.estimator's public API.
# Functions rather than methods, so an Estimator's attributes stay tf.estimator's.


def call_model_fn(estimator, features, labels, mode):
    """Calls `estimator`'s model_fn (with its params and config); returns the checked
    EstimatorSpec (see Estimator._call_model_fn)."""
    return estimator._call_model_fn(features, labels, mode)


def warm_start_settings(estimator):
    """The WarmStartSettings `estimator` was built with, or None."""
    return estimator._warm_start


def evaluate_values(estimator, input_fn, steps, hooks, name, variable_values):
    """Evaluates variable values ({variable name: value}) instead of a checkpoint.

    Used by hooks.InMemoryEvaluatorHook during training; results are written to
    `estimator.eval_dir(name)` like evaluate()'s.

    Returns:
      The metrics dict, with 'global_step'.
    """
    return estimator._evaluate(input_fn, steps, hooks, None, name, variable_values)


def eval_scaffold(estimator, input_fn):
    """The Scaffold the estimator's model_fn returns in EVAL mode.

    Built in a throw-away graph; hooks.InMemoryEvaluatorHook checks it when training
    begins, so what it cannot copy fails early (as tf.estimator's hook, which builds
    its evaluation graph in `begin`).
    """
    graph = estimator._new_graph()
    with graph.as_default():
        estimator._create_and_assert_global_step(graph)
        inputs = estimator._call_input_fn(input_fn, ModeKeys.EVAL)
        return estimator._call_model_fn(inputs.features, inputs.labels,
                                        ModeKeys.EVAL).scaffold
