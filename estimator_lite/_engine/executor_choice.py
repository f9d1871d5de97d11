"""Which TensorFlow executor runs an in-process session: small graphs run on the
calling thread.

TensorFlow's default executor hands ops to a thread pool and tracks them with
per-op bookkeeping: on a graph of a few hundred cheap ops that bookkeeping is most
of a step (a linear model's training step: about 100 us, against about 30 us on
TensorFlow's `SINGLE_THREADED_EXECUTOR`, which runs the same kernels in order on the
calling thread). The kernels are the same, so the numbers are too; what is given up
is running independent ops at once, which only pays when a graph has many of them.

A small graph gets one of two settings in a copy of the session config:

* without control flow, the single-threaded executor;
* with control flow (a multi-step loop's `tf.while_loop`, a `tf.cond`), the default
  executor on the calling thread (`inter_op_parallelism_threads = -1`). The
  single-threaded executor would run an If or While op as a function call, and a
  function's body gets none of the graph rewrites the session's graph gets (oneDNN's
  kernels among them), so a multi-step loop would differ from K single steps in the
  last bit. On the calling thread the loop stays inline and only the thread hand-offs
  go: a 100-step loop of the linear model ran 16,400 steps/s on the thread pool and
  27,400 on the calling thread.

Either is chosen only where it is known to run the graph as the thread pool would:

| condition                                   | why                                     |
| ------------------------------------------- | --------------------------------------- |
| TensorFlow 2, an in-process session         | a cluster's graphs are partitioned      |
| the config leaves the executor and threads  | a user who set them keeps them          |
| at most `MAX_OPS` ops                       | big graphs can use inter-op parallelism |
| no reference-typed tensors                  | unsupported (TF1 `Variable`s)           |
| every op on this process's one CPU, and no  | several devices mean a partitioned      |
| GPU or TPU                                  | graph                                   |
| no hook that traces steps (`ProfilerHook`)  | the single-threaded executor records no |
|                                             | step stats                              |
| every op that changes state in a step       | the step that meets the input's end     |
| depends on the input (the input_fn's own    | fails at its first failing op, so ops   |
| iterator reads; the eval step's counting    | that could run before the read would    |
| aside), and every hook is TensorFlow's or   | run or not by executor (a metric of a   |
| the library's or fetches nothing            | constant would count one batch more)    |
| no XLA (a jit scope, or auto-clustering in  | XLA's launch ops bring a Switch op      |
| the config or TF_XLA_FLAGS)                 |                                         |
| no op, here or in a function it runs, that  | on one thread an op waiting for another |
| may wait on another op of its step: no      | op of its step (a dequeue before its    |
| Python op, and only the stateful ops of     | enqueue, a py_function waiting for      |
| `_KNOWN_STATEFUL` (variables, random draws, | another) can wait forever; an op this   |
| tables, iterators, checkpoints, checks)     | list does not know is taken to wait     |

"The input" is only what the input_fn returned (the iterator reads its features
and labels come from, `input_fn.is_input_op`): a side dataset a model_fn reads
itself does not end a step, so a metric of it would count one batch more on one
executor than on the other.

A user opts out with `session_config.experimental.executor_type = "DEFAULT"`.
"""

import os

from estimator_lite._engine import input_fn
from estimator_lite._tf import function_graph, tf

__all__ = ["CALLER_THREAD", "MAX_OPS", "RANDOM_OP_PREFIXES", "SINGLE_THREADED",
           "scaffold_setup", "session_config"]

SINGLE_THREADED = "SINGLE_THREADED_EXECUTOR"
# inter_op_parallelism_threads below 0: the session runs ops on the calling thread.
CALLER_THREAD = -1
# Graphs up to this size (a small model's whole training graph, with its input
# pipeline, saver and init ops, is about 200) have little work to spread over threads.
MAX_OPS = 500
_CONTROL_FLOW_OPS = frozenset({
    "Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit",
    "RefExit", "NextIteration", "RefNextIteration", "LoopCond", "ControlTrigger",
    "If", "StatelessIf", "While", "StatelessWhile", "Case", "StatelessCase"})
# What `_graph_shape` finds in a graph that may leave the thread pool.
_STRAIGHT, _CONTROL_FLOW = "straight", "control_flow"
_TRACING_HOOKS = frozenset({"ProfilerHook"})
# Hooks of these modules fetch only reads (ProfilerHook aside, above).
_KNOWN_HOOK_MODULES = ("tensorflow.python.training.basic_session_run_hooks",
                       "estimator_lite.")
# Stateful ops known not to wait on another op of their step: variables and their
# updates, random draws, lookups of tables, iterators and datasets, checkpoint
# files, checks and prints. Any other stateful op (a queue, a barrier, a stage, a
# collective, a send or receive, a summary writer, an op this list does not know)
# keeps the thread pool: on one thread an op that waits for another op of the same
# step (a dequeue before the enqueue that feeds it) would wait forever.
_KNOWN_STATEFUL = frozenset({
    "VarHandleOp", "ReadVariableOp", "VarIsInitializedOp", "DestroyResourceOp",
    "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
    "ResourceGather", "ResourceGatherNd", "ResourceStridedSliceAssign",
    "Assert", "Print", "PrintV2",
    "HashTableV2", "MutableHashTableV2", "MutableHashTableOfTensorsV2",
    "MutableDenseHashTableV2", "LookupTableFindV2", "LookupTableSizeV2",
    "InitializeTableV2", "InitializeTableFromTextFileV2",
    "SaveV2", "RestoreV2", "MergeV2Checkpoints",
    "IteratorV2", "AnonymousIteratorV2", "AnonymousIteratorV3", "OneShotIterator",
    "MakeIterator", "DeleteIterator", "IteratorToStringHandle", "IteratorGetNext"})
# Ops that draw from a random generator of their own (seeded by their op seed).
RANDOM_OP_PREFIXES = ("Random", "TruncatedNormal", "ParameterizedTruncatedNormal",
                      "Multinomial")
_KNOWN_STATEFUL_PREFIXES = (
    "ResourceApply", "ResourceSparseApply", "ResourceScatter", *RANDOM_OP_PREFIXES,
    "StatefulStandardNormal", "StatefulUniform", "StatefulTruncatedNormal",
    "StatefulRandomBinomial")
# Python ops run user code that may wait on anything (even a "stateless" one).
_PYTHON_OPS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})
# Stateful ops that change no state a later step or the user sees: reads, handles,
# the input's own reads, random draws (at the input's end nothing draws after them).
_READS = frozenset({"ReadVariableOp", "VarHandleOp", "VarIsInitializedOp",
                    "ResourceGather", "ResourceGatherNd", "Assert", "HashTableV2",
                    "MutableHashTableV2", "MutableHashTableOfTensorsV2",
                    "MutableDenseHashTableV2", "LookupTableFindV2", "LookupTableSizeV2",
                    "IteratorV2", "AnonymousIteratorV2", "AnonymousIteratorV3",
                    "OneShotIterator", "IteratorToStringHandle"})
# Ops that run functions of the graph's library, and which of their inputs feed
# each function's arguments (from this input on; an If's or Case's first input
# picks the branch).
_FUNCTIONAL_OPS = {"If": 1, "StatelessIf": 1, "Case": 1, "StatelessCase": 1,
                   "While": 0, "StatelessWhile": 0, "PartitionedCall": 0,
                   "StatefulPartitionedCall": 0}
# Functions calling functions deeper than this keep the thread pool (unseen).
_MAX_FUNCTION_DEPTH = 8
# Node attributes of ops XLA compiles (tf.xla.experimental.jit_scope sets them).
_XLA_ATTRS = ("_XlaCompile", "_XlaScope")


def session_config(graph, config, master, hooks=(), setup=()):
    """The config an in-process session of `graph` is created with.

    Args:
      graph: the finalized tf.Graph the session runs.
      config: the tf.ConfigProto asked for, or None (not modified).
      master: the session target; only '' (in-process) qualifies.
      hooks: the SessionRunHooks of the session's runs.
      setup: ops (or tensors, or Savers) run only to set the session up (init ops,
        restores); they and what they need may change state without the input.
        The graph's init collections and Savers count too. (Variable initializers
        are reached through the init ops: asking a distributed variable for its
        `initializer` would build an op in the finalized graph.)

    Returns:
      `config` itself, or, when every condition of the module docstring holds, a
      copy of it that picks the single-threaded executor (a graph without control
      flow) or the calling thread (a graph with control flow).
    """
    if not (_runtime_qualifies(master, config) and _hooks_qualify(hooks)):
        return config
    shape = _graph_shape(graph)
    if shape is None or not _state_follows_input(graph, setup):
        return config
    result = tf.ConfigProto()
    if config is not None:
        result.CopyFrom(config)
    if shape == _STRAIGHT:
        result.experimental.executor_type = SINGLE_THREADED
    else:
        result.inter_op_parallelism_threads = CALLER_THREAD
    return result


def scaffold_setup(scaffold):
    """The setup ops of a finalized Scaffold, for `session_config`'s `setup`."""
    return (scaffold.init_op, scaffold.local_init_op, scaffold.ready_op,
            scaffold.ready_for_local_init_op, scaffold.saver)


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
    return all(_hook_qualifies(h) for h in hooks)


def _hook_qualifies(hook):
    """TensorFlow's and the library's hooks fetch reads only; another hook
    qualifies when it fetches nothing (keeps SessionRunHook.before_run). A hook
    whose class has no before_run of its own (a `mock.MagicMock(spec=...)`,
    which answers per instance) does not qualify."""
    cls = type(hook)
    if any(c.__name__ in _TRACING_HOOKS for c in cls.__mro__):
        return False
    return (cls.__module__.startswith(_KNOWN_HOOK_MODULES)
            or getattr(cls, "before_run", None) is tf.train.SessionRunHook.before_run)


def _state_follows_input(graph, setup):
    """Whether every op that changes state, except the setup's and the eval step's
    counting, needs the input.

    A step that meets the end of its input fails at the input op. The default
    executor has by then run every op that did not need the input (they are ready
    at once); the single-threaded one only those it ordered before the input op.
    """
    roots = _setup_roots(graph, setup)
    if roots is None:
        return False
    exempt = _ancestors(roots) | _eval_step_writes(graph)
    return _ops_follow_input(
        [op for op in graph.get_operations() if op not in exempt], {})


def _eval_step_writes(graph):
    """The ops that write the graph's eval step (GraphKeys.EVAL_STEP).

    tf.estimator's evaluation adds one to it in every step, the step that meets the
    input's end too (checked on both executors, and on tf.estimator 2.15); nothing
    evaluate() returns depends on it, and the batches are counted apart.
    """
    steps = {getattr(s, "op", None) for s in graph.get_collection(tf.GraphKeys.EVAL_STEP)}
    return {op for op in graph.get_operations()
            if op.inputs and op.inputs[0].op in steps and _changes_state(op)}


def _ops_follow_input(operations, memo):
    """Whether each op of `operations` that changes state needs an input op.

    An op that runs functions (If, While, a function call) is looked into: each
    state change in its functions must need an input op there, or an argument fed
    by a tensor that needs one, or the branch choice of an If or Case that does.
    memo: op -> whether it needs an input op (function arguments come seeded).
    """
    for op in operations:
        if op.type in _FUNCTIONAL_OPS:
            if not _functions_follow_input(op, memo):
                return False
        elif _changes_state(op) and not _needs_input(op, memo):
            return False
    return True


def _functions_follow_input(op, memo):
    """Whether the state changes inside the functions `op` runs need the input."""
    first_argument = _FUNCTIONAL_OPS[op.type]
    if first_argument and _needs_input(op.inputs[0].op, memo):
        return True  # no branch runs before the input has been read
    arguments = [_needs_input(t.op, memo) for t in op.inputs[first_argument:]]
    for body in _function_graphs(op):
        if body is None:
            return not _changes_state(op)  # unseen: only a stateless op passes
        # By position; a function's arguments are its op's inputs in order.
        inner = {p.op: arguments[i] for i, p in enumerate(body.inputs[:len(arguments)])}
        if not _ops_follow_input(body.get_operations(), inner):
            return False
    return True


def _function_graphs(op):
    """The graphs of the functions `op` runs (None for one it cannot see)."""
    names = []
    for value in op.node_def.attr.values():
        if value.HasField("func"):
            names.append(value.func.name)
        names += [f.name for f in value.list.func]
    return [function_graph(op.graph, name) for name in names]


def _pulls_input(op):
    """Whether `op` is an input op, or runs a function that contains one."""
    if input_fn.is_input_op(op):
        return True
    if op.type not in _FUNCTIONAL_OPS:
        return False
    return any(body is not None and any(_pulls_input(o) for o in body.get_operations())
               for body in _function_graphs(op))


def _setup_roots(graph, setup):
    """The ops of `setup` and of the graph's init collections and Savers; None
    when one of them is neither an op, a tensor nor a Saver."""
    roots = list(setup)
    for key in (tf.GraphKeys.INIT_OP, tf.GraphKeys.LOCAL_INIT_OP,
                tf.GraphKeys.READY_OP, tf.GraphKeys.READY_FOR_LOCAL_INIT_OP,
                tf.GraphKeys.TABLE_INITIALIZERS, tf.GraphKeys.SAVERS):
        roots += graph.get_collection(key)
    ops = []
    for root in roots:
        if root is None:
            continue
        op = root if isinstance(root, tf.Operation) else getattr(root, "op", None)
        if isinstance(op, tf.Operation):
            ops.append(op)
        elif hasattr(root, "saver_def"):
            # A Saver, or what stands for one (a mock wrapping a Saver in a
            # library's tests): its restore and save ops, once built.
            if root.saver_def is not None:  # None: not built (defer_build)
                ops += [graph.as_graph_element(name).op if ":" in name
                        else graph.as_graph_element(name) for name in (
                            root.saver_def.restore_op_name,
                            root.saver_def.save_tensor_name)]
        else:
            return None  # something unknown: what it runs cannot be judged
    return ops


def _ancestors(ops):
    """`ops` and every op they need (data and control inputs)."""
    seen, stack = set(), list(ops)
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        stack += [t.op for t in op.inputs] + list(op.control_inputs)
    return seen


def _changes_state(op):
    """Whether `op` changes state a later step or the user sees (an iterator
    read other than the input's own advances a side iterator)."""
    if not _is_stateful(op) or op.type in _READS or "Dataset" in op.type:
        return False  # a dataset op builds a dataset (its state is the iterator's)
    if input_fn.is_input_op(op):
        return False
    return not op.type.startswith(RANDOM_OP_PREFIXES)


def _is_stateful(op):
    """op_def.is_stateful; a call of a library function has no registered op_def,
    and counts as stateful (what it runs is checked apart)."""
    try:
        return op.op_def.is_stateful
    except (KeyError, ValueError, AttributeError):
        return True


def _may_wait(op):
    """Whether `op` may wait on another op of its step (or is unknown): a Python
    op, or a stateful op outside `_KNOWN_STATEFUL`."""
    if op.type in _PYTHON_OPS:
        return True
    if op.type in _FUNCTIONAL_OPS or not _is_stateful(op):
        return False
    return not (op.type in _KNOWN_STATEFUL or "Dataset" in op.type
                or op.type.startswith(_KNOWN_STATEFUL_PREFIXES))


def _needs_input(op, memo):
    """Whether `op` needs an input op (iterative; memo: op -> bool)."""
    stack = [op]
    while stack:
        current = stack[-1]
        if current in memo:
            stack.pop()
            continue
        if _pulls_input(current):
            memo[current] = True
            stack.pop()
            continue
        needed = [t.op for t in current.inputs] + list(current.control_inputs)
        pending = [n for n in needed if n not in memo]
        if pending:
            stack += pending
            continue
        memo[current] = any(memo[n] for n in needed)
        stack.pop()
    return memo[op]


def _graph_shape(graph):
    """_STRAIGHT, _CONTROL_FLOW, or None for a graph that keeps the thread pool."""
    operations = graph.get_operations()
    if len(operations) > MAX_OPS:
        return None
    shape = _STRAIGHT
    for op in operations:
        if not _on_the_one_cpu(op.device):
            return None
        if any(name in op.node_def.attr for name in _XLA_ATTRS):
            return None
        if any(t.dtype.base_dtype != t.dtype for t in op.outputs):  # a ref dtype
            return None
        if op.type in _CONTROL_FLOW_OPS:
            shape = _CONTROL_FLOW
        if not _runs_on_one_thread(op):
            return None
    return shape


def _runs_on_one_thread(op, depth=0):
    """Whether `op`, and every op of the functions it runs, cannot wait on
    another op of its step (`_may_wait`); a function that cannot be seen fails."""
    if _may_wait(op):
        return False
    if op.type not in _FUNCTIONAL_OPS:
        return True
    bodies = _function_graphs(op)
    if depth > _MAX_FUNCTION_DEPTH or any(body is None for body in bodies):
        return False
    return all(_runs_on_one_thread(inner, depth + 1)
               for body in bodies for inner in body.get_operations())


def _on_the_one_cpu(device):
    """Whether an op's device string is unset or this process's CPU:0."""
    if not device:
        return True
    spec = tf.DeviceSpec.from_string(device)
    return (spec.device_type in (None, "CPU") and spec.device_index in (None, 0)
            and spec.job in (None, "localhost") and spec.task in (None, 0))
