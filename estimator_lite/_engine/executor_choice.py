"""Which TensorFlow executor runs an in-process session: the single-threaded one for
small graphs.

TensorFlow's default executor hands ops to a thread pool and tracks them with
per-op bookkeeping: on a graph of a few hundred cheap ops that bookkeeping is most
of a step (a linear model's training step: about 100 us, against about 30 us on
TensorFlow's `SINGLE_THREADED_EXECUTOR`, which runs the same kernels in order on the
calling thread). The kernels are the same, so the numbers are too; what is given up
is running independent ops at once, which only pays when a graph has many of them.

The single-threaded executor is chosen only where it is known to run the graph as
the default one would:

| condition                                   | why                                     |
| ------------------------------------------- | --------------------------------------- |
| TensorFlow 2, an in-process session         | a cluster's graphs are partitioned      |
| the config leaves the executor and threads  | a user who set them keeps them          |
| at most `MAX_OPS` ops                       | big graphs can use inter-op parallelism |
| no control flow ops (v1 or functional)      | v1 is unsupported; If/While would run   |
|                                             | as function calls instead of inline:    |
|                                             | a multi-step loop's body, optimized on  |
|                                             | its own, then differs from K single     |
|                                             | steps in the last bit                   |
| no reference-typed tensors                  | unsupported (TF1 `Variable`s)           |
| every op on this process's one CPU, and no  | several devices mean a partitioned      |
| GPU or TPU                                  | graph                                   |
| no hook that traces steps (`ProfilerHook`)  | it records no step stats                |
| no XLA (a jit scope, or auto-clustering in  | XLA's launch ops bring a Switch op      |
| the config or TF_XLA_FLAGS)                 |                                         |

A user opts out with `session_config.experimental.executor_type = "DEFAULT"`.
"""

import os

from estimator_lite._tf import tf

__all__ = ["MAX_OPS", "SINGLE_THREADED", "session_config"]

SINGLE_THREADED = "SINGLE_THREADED_EXECUTOR"
# Graphs up to this size (a small model's whole training graph, with its input
# pipeline, saver and init ops, is about 200) have little work to spread over threads.
MAX_OPS = 500
_CONTROL_FLOW_OPS = frozenset({
    "Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit",
    "RefExit", "NextIteration", "RefNextIteration", "LoopCond", "ControlTrigger",
    "If", "StatelessIf", "While", "StatelessWhile", "Case", "StatelessCase"})
_TRACING_HOOKS = frozenset({"ProfilerHook"})
# Node attributes of ops XLA compiles (tf.xla.experimental.jit_scope sets them).
_XLA_ATTRS = ("_XlaCompile", "_XlaScope")


def session_config(graph, config, master, hooks=()):
    """The config an in-process session of `graph` is created with.

    Args:
      graph: the finalized tf.Graph the session runs.
      config: the tf.ConfigProto asked for, or None (not modified).
      master: the session target; only '' (in-process) qualifies.
      hooks: the SessionRunHooks of the session's runs.

    Returns:
      `config` itself, or a copy of it that picks the single-threaded executor
      when every condition of the module docstring holds.
    """
    if not (_runtime_qualifies(master, config) and _hooks_qualify(hooks)
            and _graph_qualifies(graph)):
        return config
    result = tf.ConfigProto()
    if config is not None:
        result.CopyFrom(config)
    result.experimental.executor_type = SINGLE_THREADED
    return result


def _runtime_qualifies(master, config):
    """TF 2, in-process, and a config that leaves executor and threads alone."""
    if master or not tf.VERSION.startswith("2."):
        return False
    if config is not None and (
            config.experimental.executor_type or config.inter_op_parallelism_threads
            or config.use_per_session_threads or len(config.session_inter_op_thread_pool)
            or config.graph_options.optimizer_options.global_jit_level > 0):
        return False
    if "jit" in os.environ.get("TF_XLA_FLAGS", ""):  # --tf_xla_auto_jit, cpu_global_jit
        return False
    # Any accelerator would receive ops, and the graph would be partitioned.
    devices = tf.config.experimental.list_physical_devices()
    return all(d.device_type == "CPU" for d in devices)


def _hooks_qualify(hooks):
    return not any(c.__name__ in _TRACING_HOOKS for h in hooks for c in type(h).__mro__)


def _graph_qualifies(graph):
    operations = graph.get_operations()
    if len(operations) > MAX_OPS:
        return False
    for op in operations:
        if op.type in _CONTROL_FLOW_OPS or not _on_the_one_cpu(op.device):
            return False
        if any(name in op.node_def.attr for name in _XLA_ATTRS):
            return False
        if any(t.dtype.base_dtype != t.dtype for t in op.outputs):  # a ref dtype
            return False
    return True


def _on_the_one_cpu(device):
    """Whether an op's device string is unset or this process's CPU:0."""
    if not device:
        return True
    spec = tf.DeviceSpec.from_string(device)
    return (spec.device_type in (None, "CPU") and spec.device_index in (None, 0)
            and spec.job in (None, "localhost") and spec.task in (None, 0))
