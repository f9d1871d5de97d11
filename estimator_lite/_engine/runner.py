"""The runner: how an Estimator builds a train or eval graph, plainly or per replica.

(Not `estimator_lite.run`, which runs unchanged programs: this one runs one graph.)

An Estimator call chooses its runner once (`for_strategy`, from the RunConfig's
train_distribute or eval_distribute) and then asks it, never the strategy, what
to do: where the graph goes (`placement`), how the input_fn and the model_fn are
called (`build_train`, `build_eval`) and which session options the graph needs
(`session_config`). The two runners have one interface:

* `PlainRunner`: no strategy, a strategy over one device (the graph only goes on
  that device), or the v1 ParameterServerStrategy (placement is the RunConfig's
  device function). One input_fn call, one model_fn call; the only extra is
  the opt-in multi-step loop (`step_loop`). The one-callable fast path of the
  train session is unaffected: the runner only builds graphs.
* `ReplicaRunner`: a strategy over several replicas builds the graph inside
  ``strategy.scope()``, the model_fn once per replica (`distribute.build_train`,
  `distribute.build_eval`).
"""

import collections

from estimator_lite._engine import distribute, eval_loop, step_loop
from estimator_lite._engine import input_fn as input_fn_lib
from estimator_lite._tf import tf

__all__ = ["GLOBAL_STEP_READ_KEY", "EvalGraph", "PlainRunner", "ReplicaRunner",
           "TrainGraph", "cache_global_step_read", "for_strategy", "local_session_config"]

# TensorFlow's collection of the global step's cached read (training_util's key):
# its hooks (StepCounterHook, SummarySaverHook, ...) fetch the step through it, and
# tf.estimator's training graphs (so their .meta files) always hold it.
GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"


class TrainGraph(collections.namedtuple(
        "TrainGraph", ["input", "spec", "examples_per_step", "loop"])):
    """A built training graph.

    Fields:
      input: an `input_fn.Input` (replica 0's features under a strategy).
      spec: the TRAIN spec to run (its loss, train op, hooks and scaffold).
      examples_per_step: examples one step trains on (all replicas), or None.
      loop: the `step_loop.TrainLoop` of a multi-step loop, or None.
    """


class EvalGraph(collections.namedtuple(
        "EvalGraph", ["update_op", "values", "scaffold", "hooks", "initializer",
                      "cardinality"])):
    """A built evaluation graph.

    Fields:
      update_op: the op updating every metric for one batch.
      values: {metric name: value tensor}, 'loss' and 'global_step' included.
      scaffold: the model_fn's Scaffold (replica 0's).
      hooks: the model_fn's evaluation hooks (replica 0's).
      initializer: the input iterator's initializer op, or None.
      cardinality: the dataset's cardinality tensor, or None when unknown.
    """


def for_strategy(strategy):
    """The runner for a RunConfig's train_distribute or eval_distribute.

    Args:
      strategy: a tf.distribute strategy, or None.

    Returns:
      A `ReplicaRunner` for a strategy over several replicas, else a `PlainRunner`.

    Raises:
      ValueError: a strategy estimator_lite does not run (see `distribute.replicated`).
    """
    replicated = distribute.replicated(strategy)
    if replicated is not None and replicated.is_replicated:
        return ReplicaRunner(replicated)
    return PlainRunner(strategy, replicated.device if replicated is not None else None)


def cache_global_step_read(global_step, read_var=None):
    """Creates the global step's cached read unless the graph has one, as tf.estimator
    does in a training graph before the model_fn.

    Args:
      global_step: the global step variable.
      read_var: a strategy's `extended.read_var`, or None: the value plus 0 (a
        copy), as TensorFlow's hooks read it once the variable is initialised.

    Returns:
      The cached read tensor.
    """
    graph = global_step.graph
    cached = graph.get_collection(GLOBAL_STEP_READ_KEY)
    if cached:
        return cached[0]
    if read_var is not None:
        read = read_var(global_step)
    else:
        # TensorFlow's own read picks the initial value by a tf.cond while the
        # variable is uninitialised; every fetch here comes after initialisation,
        # and a graph without control flow keeps the single-threaded executor
        # (executor_choice).
        with graph.name_scope(None), graph.name_scope(global_step.op.name + "/"):
            read = tf.identity(global_step) + 0
    graph.add_to_collection(GLOBAL_STEP_READ_KEY, read)
    return read


class PlainRunner:
    """Builds a graph with one input_fn call and one model_fn call."""

    def __init__(self, strategy=None, device=None):
        """Args:
          strategy: the single-device (or parameter server) strategy, or None.
          device: the single device to build on, or None.
        """
        self._strategy = strategy
        self._device = device

    def placement(self, device_fn=None):
        """A context placing the graph: on `device_fn` when given, else on the
        strategy's one device (None places nothing)."""
        if device_fn is None and self._device is not None:
            return tf.device(self._device)
        return tf.device(device_fn)

    def build_train(self, input_fn_result, train_model_fn, global_step, steps_per_loop):
        """Builds the training graph.

        Args:
          input_fn_result: callable(input_context) returning the input_fn's result
            (called once, with None).
          train_model_fn: callable(features, labels) returning the TRAIN spec.
          global_step: the global step variable.
          steps_per_loop: K of RunConfig.experimental_steps_per_loop (1: no loop).

        Returns:
          A `TrainGraph`.
        """
        cache_global_step_read(global_step)  # before the input_fn, as tf.estimator
        result = input_fn_result(None)
        loop = step_loop.maybe_build_train_loop(steps_per_loop, result, train_model_fn,
                                                global_step)
        if loop is None:
            inputs = input_fn_lib.split_input(result)
            spec = train_model_fn(inputs.features, inputs.labels)
        else:
            inputs, spec = loop.input, loop.spec
        return TrainGraph(inputs, spec, input_fn_lib.static_batch_size(inputs.features),
                          loop)

    def build_eval(self, input_fn_result, eval_model_fn, global_step):
        """Builds the evaluation graph.

        Args:
          input_fn_result: callable(input_context) returning the input_fn's result
            (called once, with None).
          eval_model_fn: callable(features, labels) returning the EVAL spec.
          global_step: the global step variable.

        Returns:
          An `EvalGraph`.
        """
        inputs = input_fn_lib.split_input(input_fn_result(None))
        spec = eval_model_fn(inputs.features, inputs.labels)
        update_op, values = eval_loop.metric_fetches(spec.eval_metric_ops, spec.loss,
                                                     global_step)
        return EvalGraph(update_op, values, spec.scaffold, list(spec.evaluation_hooks),
                         inputs.initializer, inputs.cardinality)

    def session_config(self, config):
        """The session config the graph needs (see `distribute.session_config`)."""
        return distribute.session_config(self._strategy, config)


class ReplicaRunner(PlainRunner):
    """Builds a graph inside a strategy's scope, the model_fn once per replica."""

    def __init__(self, replicated):
        """Args:
          replicated: the replicating `distribute.Replicated` of the strategy.
        """
        super().__init__(replicated.strategy)
        self._replicated = replicated

    def placement(self, device_fn=None):
        """The strategy's scope: it places the variables and replicas itself, so
        `device_fn` is not used."""
        del device_fn
        return self._replicated.scope()

    def build_train(self, input_fn_result, train_model_fn, global_step, steps_per_loop):
        """As `PlainRunner.build_train`; the input_fn is called once per input
        pipeline with its InputContext, and there is no multi-step loop (a
        warning says so when one was asked for)."""
        step_loop.check_replicated(steps_per_loop)
        # The replicas' optimizers step the global step once per step; tf.estimator
        # reads it through the strategy once the input pipeline is built.
        read_var = self._replicated.strategy.extended.read_var
        inputs, spec, examples_per_step = distribute.build_train(
            self._replicated, input_fn_result, train_model_fn,
            after_input=lambda: cache_global_step_read(global_step, read_var))
        return TrainGraph(inputs, spec, examples_per_step, None)

    def build_eval(self, input_fn_result, eval_model_fn, global_step):
        """As `PlainRunner.build_eval`; the metrics aggregate every replica's
        batches, and the cardinality is unknown (None)."""
        update_op, values, scaffold, hooks, initializer = distribute.build_eval(
            self._replicated, input_fn_result, eval_model_fn, global_step)
        return EvalGraph(update_op, values, scaffold, hooks, initializer, None)


def local_session_config(config):
    """A copy of `config` without device filters: evaluation, prediction and export
    run on this machine only.

    Args:
      config: the RunConfig's tf.ConfigProto (not modified).

    Returns:
      A new tf.ConfigProto.
    """
    result = tf.ConfigProto()
    result.CopyFrom(config)
    del result.device_filters[:]
    return result
