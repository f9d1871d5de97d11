"""Distribution strategies: one model_fn call per replica, on TF's tf.distribute runtime.

`RunConfig(train_distribute=..., eval_distribute=...)` takes a tf.distribute
strategy, as tf.estimator 2.15 did. A strategy over one device only places the
graph on that device (`Replicated.device`); a strategy over several replicas
(MirroredStrategy and CentralStorageStrategy over several GPUs or logical CPUs,
MultiWorkerMirroredStrategy) builds the graph inside ``strategy.scope()``:

* the input_fn is called once per input pipeline (once per worker) with a
  `tf.distribute.InputContext` when it declares ``input_context``; each replica
  takes its own batches from the dataset, so the input_fn's batch is the
  per-replica batch (the global batch is that times the number of replicas);
* the model_fn runs once per replica (`call_for_each_replica`); the
  tf.compat.v1 optimizers (and the canned estimators' graph optimizers) sum the
  replicas' gradients through the strategy's `merge_call` and update the
  mirrored variables once per step, so the global step advances once;
* losses that are means are divided by the number of replicas before their
  gradients are summed (TF's loss-reduction bookkeeping, which tf.estimator
  switched on with ``_scale_loss_for_estimator_enabled``), so a step equals one
  step on the global batch;
* the reported training loss is the strategy's reduction of the replicas'
  losses (`reporting_reduce_op`), the eval metrics are aggregated over replicas
  by the metric variables themselves, and hooks come from the first replica.

Everything private to TensorFlow that this needs is touched here and only here,
with a clear error when a TensorFlow release lacks it.
"""

import collections
import contextlib

from estimator_lite._engine import eval_loop, validation
from estimator_lite._engine.input_fn import Input, static_batch_size
from estimator_lite._tf import DATASET_TYPES, tf

__all__ = [
    "SUPPORTED_STRATEGIES", "Replicated", "TrainSpecParts", "build_eval", "build_train",
    "check_strategy", "is_between_graph", "is_collective", "is_parameter_server",
    "note_loss_reduction", "replicated", "reporting_reduce_op", "scale_loss_for_replicas",
    "server_started", "session_config",
]

# Strategy class names (V2 and V1 spellings) this module runs.
_ONE_DEVICE = ("OneDeviceStrategy", "OneDeviceStrategyV1")
_IN_GRAPH = ("MirroredStrategy", "MirroredStrategyV1", "CentralStorageStrategy",
             "CentralStorageStrategyV1")
_MULTI_WORKER = ("MultiWorkerMirroredStrategy", "CollectiveAllReduceStrategy",
                 "CollectiveAllReduceStrategyV1",
                 "_CollectiveAllReduceStrategyExperimental",
                 "MultiWorkerMirroredStrategyV1")
_PARAMETER_SERVER = ("ParameterServerStrategyV1",)
SUPPORTED_STRATEGIES = _ONE_DEVICE + _IN_GRAPH + _MULTI_WORKER + _PARAMETER_SERVER
_MISSING_RUNTIME = (
    "this TensorFlow release lacks the tf.distribute graph-mode API that "
    "estimator_lite's strategies use ({what}); run without train_distribute/"
    "eval_distribute or use a TensorFlow release that has it")


def _kind(strategy):
    return type(strategy).__name__


def check_strategy(name, strategy):
    """Checks a `train_distribute`/`eval_distribute` argument.

    Args:
      name: the argument name, for messages.
      strategy: a tf.distribute strategy or None.

    Returns:
      `strategy`.

    Raises:
      TypeError: not a tf.distribute strategy.
      ValueError: a strategy estimator_lite does not run (TPUStrategy, the TF2
        ParameterServerStrategy), naming the ones it does.
    """
    if strategy is None:
        return None
    if not hasattr(strategy, "extended") or not hasattr(strategy, "scope"):
        raise validation.WrongTypeError(
            f"{name} must be a tf.distribute strategy or None, got {strategy!r} of "
            f"type {_kind(strategy)}")
    if _kind(strategy) not in SUPPORTED_STRATEGIES:
        raise ValueError(
            f"{name}={_kind(strategy)} is not supported; supported: MirroredStrategy, "
            "CentralStorageStrategy, OneDeviceStrategy, MultiWorkerMirroredStrategy "
            "and tf.compat.v1.distribute.experimental.ParameterServerStrategy (their "
            f"tf.compat.v1 spellings too); got {strategy!r}")
    return strategy


def is_between_graph(strategy):
    """True for strategies whose workers each build their own graph (multi-worker)."""
    return strategy is not None and _kind(strategy) in _MULTI_WORKER + _PARAMETER_SERVER


def is_collective(strategy):
    """True for MultiWorkerMirroredStrategy (collective all-reduce across workers).

    Only `topology` asks this: every other module reads its answer there.
    """
    return strategy is not None and _kind(strategy) in _MULTI_WORKER


def server_started(strategy):
    """True when the strategy already started this task's server (TF's
    MultiWorkerMirroredStrategy does, when built eagerly with a cluster)."""
    return bool(strategy is not None and
                getattr(strategy.extended, "_std_server_started", False))


def is_parameter_server(strategy):
    """True for the v1 ParameterServerStrategy."""
    return strategy is not None and _kind(strategy) in _PARAMETER_SERVER


def replicated(strategy):
    """The `Replicated` runner for a strategy, or None without one.

    Raises:
      ValueError: a strategy this module does not run. RunConfig.replace() takes
        TF2's ParameterServerStrategy, as tf.estimator's did; a model fails here.
    """
    if strategy is None:
        return None
    if _kind(strategy) not in SUPPORTED_STRATEGIES:
        raise ValueError(
            f"cannot train or evaluate with {_kind(strategy)} (the RunConfig's "
            "train_distribute or eval_distribute, set by replace()): estimator_lite "
            "runs MirroredStrategy, CentralStorageStrategy, OneDeviceStrategy, "
            "MultiWorkerMirroredStrategy and "
            "tf.compat.v1.distribute.experimental.ParameterServerStrategy (use it for "
            "parameter server training)")
    return Replicated(strategy)


def reporting_reduce_op():
    """How the replicas' training losses add up to the reported loss.

    As tf.estimator 2.15 reported it: when a tf.compat.v1 optimizer scaled each
    replica's mean loss by 1/N (it marks the graph), the reduction of the last
    loss (MEAN for mean losses, SUM for a SUM-reduced one); otherwise (Keras-style
    optimizers, as in the canned estimators) the SUM of the replicas' losses.
    """
    graph = tf.get_default_graph()
    if getattr(graph, "_is_loss_scaled_by_optimizer", False):
        return tf.distribute.get_loss_reduction()
    return tf.distribute.ReduceOp.SUM


class Replicated:
    """Builds a train or eval graph with a strategy: input, per-replica model_fn,
    and the reductions that make the replicas one model."""

    def __init__(self, strategy):
        self._strategy = strategy
        self._devices = tuple(strategy.extended.worker_devices)

    strategy = property(lambda self: self._strategy)

    @property
    def num_replicas(self):
        """Replicas kept in sync by one step (all workers)."""
        return int(self._strategy.num_replicas_in_sync)

    @property
    def device(self):
        """The one device of a single-device strategy, or None."""
        if _kind(self._strategy) in _ONE_DEVICE or (
                _kind(self._strategy) in _IN_GRAPH and len(self._devices) == 1):
            return self._devices[0]
        return None

    @property
    def is_replicated(self):
        """True when the graph is built once per replica inside the strategy."""
        return self.device is None and not is_parameter_server(self._strategy)

    @contextlib.contextmanager
    def scope(self):
        """The strategy's scope, with TF's estimator loss scaling switched on."""
        scale = getattr(self._strategy, "_scale_loss_for_estimator_enabled", None)
        if scale is None:
            raise RuntimeError(_MISSING_RUNTIME.format(
                what="Strategy._scale_loss_for_estimator_enabled"))
        with self._strategy.scope(), scale():
            yield

    def make_input(self, dataset_fn):
        """Distributes an input_fn's dataset over the replicas.

        Args:
          dataset_fn: called once per input pipeline with a
            tf.distribute.InputContext; returns a tf.data dataset.

        Returns:
          (next element, with PerReplica values; the iterator's initializer op).

        Raises:
          RuntimeError: the TensorFlow release lacks the graph-mode input API.
        """
        make = getattr(self._strategy.extended, "_make_input_fn_iterator", None)
        if make is None:
            raise RuntimeError(_MISSING_RUNTIME.format(
                what="StrategyExtended._make_input_fn_iterator"))
        iterator = make(dataset_fn)
        initializer = iterator.initializer
        return iterator.get_next(), initializer

    def call_for_each_replica(self, fn, args):
        """Calls fn(*args) once per replica; returns the regrouped results.

        Raises:
          What the model_fn raised, with its own message first: TensorFlow runs
          each replica through AutoGraph, whose error begins "in user code:" and
          lists library frames; its innermost frame (the user's line) is kept as
          a note (Python >= 3.11).
        """
        try:
            return self._strategy.extended.call_for_each_replica(fn, args=args)
        except Exception as error:
            original = _autograph_source(error)
            if original is None:
                raise
            frames = [line.strip().rstrip(" *") for line in str(error).splitlines()
                      if line.strip().startswith("File ")]
            if frames and hasattr(original, "add_note"):
                original.add_note(f"(raised in a replica, at {frames[-1]})")
            raise original from None

    def first(self, value):
        """Replica 0's part of a per-replica value (the value itself otherwise)."""
        return self._strategy.experimental_local_results(value)[0]

    def reduce_loss(self, per_replica_loss):
        """The reported training loss: the replicas' losses reduced as tf.estimator
        reported them (see `reporting_reduce_op`)."""
        return self._strategy.reduce(reporting_reduce_op(), per_replica_loss, axis=None)

    def group(self, per_replica_ops):
        """One op running every replica's op."""
        return self._strategy.group(per_replica_ops)

    def first_hooks(self, per_replica_hooks):
        """The hooks of replica 0 (tf.estimator ran the first replica's hooks)."""
        return [self.first(hook) for hook in per_replica_hooks]

    def first_scaffold(self, per_replica_scaffold):
        """Replica 0's scaffold; the init and saver parts are shared across replicas."""
        return self.first(per_replica_scaffold)

    def local_results(self, value):
        """Every local replica's part of a value, as a tuple."""
        return tuple(self._strategy.experimental_local_results(value))


def _autograph_source(error):
    """What the model_fn raised, when `error` is AutoGraph's report of it; else None.

    AutoGraph re-raises a replica's exception as a new one carrying the same
    ``ag_error_metadata``: of the same class when it can build one from a message,
    a MultilineMessageKeyError for a KeyError, a StagingError for a class it cannot
    build (a custom __init__). The original is in the new one's context.
    """
    metadata = getattr(error, "ag_error_metadata", None)
    source = error.__context__
    if metadata is None or getattr(source, "ag_error_metadata", None) is not metadata:
        return None
    return source


def note_loss_reduction(is_sum):
    """Records in the graph how the last loss was reduced, as tf.compat.v1.losses do.

    A tf.compat.v1.train optimizer under a strategy reads it to decide whether to
    divide each replica's loss by the number of replicas (a mean) or not (a
    sum); the heads reduce their losses themselves, so they say it here.
    """
    graph = tf.get_default_graph()
    graph._last_loss_reduction = (tf.losses.Reduction.SUM if is_sum
                                  else tf.losses.Reduction.SUM_BY_NONZERO_WEIGHTS)


def scale_loss_for_replicas(loss):
    """Divides a mean loss by the replicas in sync, for gradients that get summed.

    Called from a replica context (inside the model_fn under a strategy): the
    replicas' gradients are summed by the optimizer's merge, so each replica's
    mean loss must count 1/N for a step to equal one on the global batch.
    Outside a strategy, returns `loss` unchanged.
    """
    if not tf.distribute.has_strategy() or tf.distribute.in_cross_replica_context():
        return loss
    replicas = tf.distribute.get_replica_context().num_replicas_in_sync
    if replicas == 1:
        return loss
    return loss * (1.0 / replicas)


class TrainSpecParts(collections.namedtuple("TrainSpecParts", [
        "loss", "train_op", "training_hooks", "training_chief_hooks", "scaffold"])):
    """The parts of a TRAIN EstimatorSpec that training uses, for all replicas."""


def _dataset_fn(input_fn_result):
    """Wraps `input_fn_result(input_context)` so it must give a dataset."""
    def dataset_fn(input_context):
        result = input_fn_result(input_context)
        if not isinstance(result, DATASET_TYPES):
            raise ValueError("under a distribution strategy the input_fn must return "
                             "a tf.data.Dataset (each replica takes its own batches "
                             f"from it); got {result!r}")
        return result
    return dataset_fn


def _split_element(element):
    if isinstance(element, (tuple, list)):
        if len(element) != 2:
            raise ValueError("input_fn must return a Dataset of features or of "
                             f"(features, labels); got elements of length {len(element)}")
        return element[0], element[1]
    return element, None


def build_train(runner, input_fn_result, train_model_fn, after_input=None):
    """Builds the replicated training graph (inside `runner.scope()`).

    Args:
      runner: a replicating `Replicated`.
      input_fn_result: callable(input_context) returning the input_fn's dataset.
      train_model_fn: callable(features, labels) returning one replica's TRAIN
        EstimatorSpec.
      after_input: called with no arguments once the input pipeline is built,
        before the model_fn, or None.

    Returns:
      (an `input_fn.Input` with replica 0's features, the spec to train with: its
      loss the reported reduction, its train op every replica's, its hooks and
      scaffold replica 0's; the examples per step over all replicas, or None).
    """
    element, initializer = runner.make_input(_dataset_fn(input_fn_result))
    features, labels = _split_element(element)
    if after_input is not None:
        after_input()

    def replica_fn(replica_features, replica_labels):
        spec = train_model_fn(replica_features, replica_labels)
        return (spec.loss, spec.train_op, list(spec.training_hooks),
                list(spec.training_chief_hooks), spec.scaffold)

    loss, train_op, hooks, chief_hooks, scaffold = runner.call_for_each_replica(
        replica_fn, (features, labels))
    spec = TrainSpecParts(
        loss=runner.reduce_loss(loss), train_op=runner.group(train_op),
        training_hooks=tuple(runner.first_hooks(hooks)),
        training_chief_hooks=tuple(runner.first_hooks(chief_hooks)),
        scaffold=runner.first(scaffold))
    first_features = runner.first(features) if features is not None else None
    per_replica = static_batch_size(first_features) if first_features is not None else None
    examples = per_replica * runner.num_replicas if per_replica is not None else None
    return Input(first_features, None, initializer, None), spec, examples


def build_eval(runner, input_fn_result, eval_model_fn, global_step):
    """Builds the replicated evaluation graph (inside `runner.scope()`).

    The metrics are created in each replica; TF's metric variables aggregate the
    replicas (sums of totals and counts), so the values read at the end cover
    every replica's batches.

    Args:
      runner: a replicating `Replicated`.
      input_fn_result: callable(input_context) returning the input_fn's dataset.
      eval_model_fn: callable(features, labels) returning one replica's EVAL
        EstimatorSpec.
      global_step: the global step variable.

    Returns:
      (update op of every replica, dict of metric name to value, replica 0's
      scaffold, replica 0's evaluation hooks, the iterator initializer).
    """
    element, initializer = runner.make_input(_dataset_fn(input_fn_result))
    features, labels = _split_element(element)

    def replica_fn(replica_features, replica_labels):
        spec = eval_model_fn(replica_features, replica_labels)
        update_op, values = eval_loop.metric_fetches(spec.eval_metric_ops, spec.loss,
                                                     global_step)
        return update_op, values, spec.scaffold, list(spec.evaluation_hooks)

    update_op, values, scaffold, hooks = runner.call_for_each_replica(
        replica_fn, (features, labels))
    values = {name: runner.first(value) for name, value in values.items()}
    return (runner.group(update_op), values, runner.first(scaffold),
            runner.first_hooks(hooks), initializer)


def session_config(strategy, config):
    """The session config for a graph built with `strategy`.

    A ConfigProto without ``device_count`` gives a graph session one CPU device
    even when the program configured several logical CPUs (TF 2.x's
    `tf.config.set_logical_device_configuration`), and a MirroredStrategy over
    them then hangs (tf.estimator 2.15 did). So the CPU count is raised to cover
    the strategy's devices; multi-worker strategies add their own options
    (collective ops) through `update_config_proto`.

    Args:
      strategy: the tf.distribute strategy, or None.
      config: the user's tf.ConfigProto (not modified), or None.

    Returns:
      A tf.ConfigProto (`config` itself without a strategy).
    """
    if strategy is None:
        return config
    result = tf.ConfigProto()
    if config is not None:
        result.CopyFrom(config)
    cpus = [tf.DeviceSpec.from_string(d).device_index or 0
            for d in strategy.extended.worker_devices
            if (tf.DeviceSpec.from_string(d).device_type or "").upper() == "CPU"]
    if cpus and result.device_count.get("CPU", 1) < max(cpus) + 1:
        result.device_count["CPU"] = max(cpus) + 1
    update = getattr(strategy.extended, "_update_config_proto", None)
    return update(result) if update is not None else result
