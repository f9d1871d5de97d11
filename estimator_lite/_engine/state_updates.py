"""State updates that Keras layers create in a graph and nothing runs.

Called in graph mode, Keras 3 layers change their own non-trainable state with
variable assignments made while the layer is called: Dropout and other random
layers advance a seed generator, BatchNormalization moves its statistics. Nothing
in the graph depends on these assignments (Keras 3 layers have no `.updates` to
group), so a train op built from the loss never runs them: every step would draw the
same dropout mask and the moving statistics would never move. tf-keras creates the
same kind of dangling assignments and leaves grouping them (`layer.updates`) to the
user. Keras 3 metrics' `update_state` does the same with the metric's variables.

This module finds them from the graph and from who created each variable:

- `recording()` remembers which operations a piece of code (the model_fn) created,
  and which variables Keras layer code created there (a Keras layer's own state,
  not a metric's or an optimizer's) with the initializer each had at creation;
- `pending_updates()` picks, among the operations, the assignments to such Keras
  layer state that is non-trainable and global, whose result nothing uses (only
  reads nobody consumes may follow them), that are no variable's initializer (not
  even one `init_from_checkpoint` replaced) and that the train op does not run
  already (an update the user grouped into the train op is left alone);
- `with_state_updates()` returns a train op that runs them once per step, after
  that step's train op, one after another in creation order;
- `variable_writes()` finds the dangling writes to given variables (a Keras
  metric's update), and `in_order()` makes such writes run one after another.

Assignments to variables the model_fn created itself (a counter a hook resets, a
`local_init_op`) are never picked: tf.estimator never ran them either.
"""

import contextlib
import sys

from estimator_lite._keras import called_from_keras_layer
from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import add_control_inputs, tf

__all__ = ["ASSIGN_OP_TYPES", "RecordedOps", "in_order", "pending_updates", "recording",
           "variable_op", "variable_writes", "with_state_updates"]

# Operations that write a variable given as their first input.
ASSIGN_OP_TYPES = frozenset([
    "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
    "Assign", "AssignAdd", "AssignSub",
    "ResourceScatterUpdate", "ResourceScatterAdd", "ResourceScatterSub",
    "ResourceScatterMul", "ResourceScatterDiv", "ResourceScatterMin",
    "ResourceScatterMax", "ResourceScatterNdUpdate", "ResourceScatterNdAdd",
    "ResourceScatterNdSub"])

# What may follow a dangling assignment: `variable.assign()` reads the new value
# back (a read with a control input on the assignment) even when nobody uses it.
_READ_OP_TYPES = frozenset(["ReadVariableOp", "Identity"])

_PASS_THROUGH_OP_TYPES = frozenset(["Identity"])


def _created_by_keras_layer():
    """Whether the variable being created comes from Keras layer code (Keras 3 or
    tf-keras), judged from the calling modules: a layer, a random seed generator,
    not a metric or an optimizer."""
    return called_from_keras_layer(sys._getframe(2))


class RecordedOps(list):
    """The operations a `recording()` block created, in creation order.

    Attributes:
      keras_state: names of the variable ops Keras layer code created in the block.
      creation_initializers: names of the initializer ops every variable created
        in the block had at creation (`init_from_checkpoint` may replace them
        later, leaving the first one dangling).
    """

    def __init__(self, ops, keras_state, creation_initializers):
        super().__init__(ops)
        self.keras_state = frozenset(keras_state)
        self.creation_initializers = frozenset(creation_initializers)


class _Recording:
    """The operations and variables created in a graph inside a `recording()` block."""

    def __init__(self, graph):
        self._graph = graph
        self._before = {op.name for op in graph.get_operations()}
        self._ops = None
        self._keras_state = set()
        self._initializers = set()

    def creator(self, next_creator, **kwargs):
        """A variable creator (tf.variable_creator_scope) noting who created what."""
        variable = next_creator(**kwargs)
        initializer = getattr(variable, "initializer", None)
        if isinstance(initializer, tf.Operation):
            self._initializers.add(initializer.name)
        if _created_by_keras_layer():
            self._keras_state.add(variable_op(variable).name)
        return variable

    def _close(self):
        self._ops = RecordedOps([op for op in self._graph.get_operations()
                                 if op.name not in self._before],
                                self._keras_state, self._initializers)
        self._before = None

    @property
    def ops(self):
        """The new operations in creation order (available after the block)."""
        if self._ops is None:
            raise RuntimeError("recording.ops is available once the block has ended")
        return self._ops


@contextlib.contextmanager
def recording(graph=None):
    """Records the operations created in `graph` (default graph) inside the block.

    Yields:
      An object whose `ops` (after the block) lists the new operations in
      creation order.
    """
    graph = graph or tf.get_default_graph()
    record = _Recording(graph)
    try:
        with graph.as_default(), tf.variable_creator_scope(record.creator):
            yield record
    finally:
        record._close()


def _control_outputs(ops):
    """Maps each op's name to the ops among `ops` that have it as a control input."""
    outputs = {}
    for op in ops:
        for control in op.control_inputs:
            outputs.setdefault(control.name, []).append(op)
    return outputs


def _is_dangling(op, control_outputs):
    """True when nothing uses `op`: no consumer but reads that nothing uses either."""
    pending, seen = [op], set()
    while pending:
        current = pending.pop()
        if current.name in seen:
            continue
        seen.add(current.name)
        followers = [c for out in current.outputs for c in out.consumers()]
        followers += control_outputs.get(current.name, [])
        for follower in followers:
            if follower.type not in _READ_OP_TYPES:
                return False
            pending.append(follower)
    return True


def _target_op(assign_op):
    """The op that produces the variable (handle or ref) `assign_op` writes.

    Inside a function's graph (a multi-step loop's body) a variable created
    outside is a captured placeholder: the op is the captured tensor's, outside.
    """
    source = assign_op.inputs[0].op
    while True:
        while source.type in _PASS_THROUGH_OP_TYPES and source.inputs:
            source = source.inputs[0].op
        outer = _captured(source)
        if outer is None:
            return source
        source = outer.op


def _captured(op):
    """The outer tensor a function graph's placeholder `op` captures, or None."""
    if op.type != "Placeholder":
        return None
    for outer, inner in getattr(op.graph, "captures", ()):
        if getattr(inner, "op", None) is op:
            return outer
    return None


def variable_op(variable):
    """The op producing a variable's handle (resource) or ref (legacy variable)."""
    handle = getattr(variable, "handle", None)
    if isinstance(handle, tf.Tensor):
        return handle.op
    return variable.op


def _initializer_names(graph):
    with graph.as_default():
        variables = tf.global_variables() + tf.local_variables()
    return {v.initializer.name for v in variables if v.initializer is not None}


def _ancestors(fetches, stop_names=frozenset()):
    """Names of every op the fetches need (data and control inputs), themselves
    included; the walk does not go past ops named in `stop_names`."""
    pending = [f.op if isinstance(f, tf.Tensor) else f for f in fetches if f is not None]
    seen = set()
    ops = {}
    while pending:
        op = pending.pop()
        if op.name in seen or op.name in stop_names:
            continue
        seen.add(op.name)
        ops[op.name] = op
        pending.extend(t.op for t in op.inputs)
        pending.extend(op.control_inputs)
    return ops


def pending_updates(created_ops, running):
    """The state updates among `created_ops` that running `running` would skip.

    Args:
      created_ops: operations created by the model_fn: `recording().ops` (a
        RecordedOps), or a plain list (then any variable may be the target).
      running: the tensors/ops run every step (train op, loss); updates they
        already run (e.g. `layer.updates` grouped by the user) are not returned.

    Returns:
      The assignment ops, in creation order, that write a non-trainable global
      variable (not the global step) that Keras layer code created, are no
      initializer, and that nothing uses.
    """
    candidates = [op for op in created_ops if op.type in ASSIGN_OP_TYPES]
    if not candidates:
        return []
    graph = candidates[0].graph
    with graph.as_default():
        trainable = {variable_op(v).name for v in tf.trainable_variables()}
        global_vars = {variable_op(v).name for v in tf.global_variables()}
        step = tf.train.get_global_step()
    state = global_vars - trainable - ({variable_op(step).name} if step is not None
                                       else set())
    initializers = _initializer_names(graph)
    if isinstance(created_ops, RecordedOps):
        state &= created_ops.keras_state
        initializers |= created_ops.creation_initializers
    control_outputs = _control_outputs(created_ops)
    dangling = [op for op in candidates
                if op.name not in initializers and _target_op(op).name in state
                and _is_dangling(op, control_outputs)]
    if not dangling:  # e.g. only the optimizer's own assignments: no graph walk
        return []
    already_run = _ancestors(running)
    return [op for op in dangling if op.name not in already_run]


def _run_after(update, after, settled):
    """Makes `update` and the variable reads it alone needs wait for `after`.

    `settled` holds the names of ops that run before (the step's own ops and the
    updates already ordered); they are left untouched, so no cycle can form.
    """
    own = _ancestors([update], stop_names=settled)
    for op in own.values():
        # Ordering the ops that touch state is enough: the rest is pure.
        if op is update or any(t.dtype == tf.resource for t in op.inputs):
            add_control_inputs(op, [after])
    settled.update(own)


def with_state_updates(train_op, loss, created_ops):
    """Returns a train op that also runs the model_fn's pending state updates.

    Each update runs once per step, after `train_op` (so after that step's forward
    pass), and the updates run one after another in the order they were created,
    each reading the state its predecessor wrote. Without updates `train_op` is
    returned unchanged.

    Args:
      train_op: the model_fn's train op (Tensor or Operation).
      loss: the model_fn's loss tensor.
      created_ops: the operations the model_fn created.
    """
    updates = pending_updates(created_ops, [train_op, loss])
    if not updates:
        return train_op
    settled = set(_ancestors([train_op, loss]))
    after = train_op.op if isinstance(train_op, tf.Tensor) else train_op
    for update in updates:
        _run_after(update, after, settled)
        after = update
    return tf.group(train_op, *updates, name="train_op_with_state_updates")


def in_order(updates):
    """Makes each update (and the reads it alone needs) wait for the one before.

    Two writes to one variable (a metric updated twice) then add up instead of
    racing. Returns `updates`.
    """
    if len(updates) > 1:
        settled = set(_ancestors(updates[:1]))
        for before, update in zip_strict(updates[:-1], updates[1:]):
            _run_after(update, before, settled)
    return updates


def variable_writes(variables, graph=None):
    """The dangling writes to `variables` (e.g. a Keras metric's `update_state`).

    Args:
      variables: variables (tf or Keras 3) whose writes to find.
      graph: the graph to search (default graph).

    Returns:
      The assignment ops writing them that nothing uses and that are not their
      initializers, in creation order.
    """
    graph = graph or tf.get_default_graph()
    targets = {variable_op(v).name for v in variables}
    initializers = _initializer_names(graph) | {
        v.initializer.name for v in variables
        if isinstance(getattr(v, "initializer", None), tf.Operation)}
    ops = graph.get_operations()
    writes = [op for op in ops if op.type in ASSIGN_OP_TYPES
              and op.name not in initializers and _target_op(op).name in targets]
    if not writes:
        return []
    control_outputs = _control_outputs(ops)
    return [op for op in writes if _is_dangling(op, control_outputs)]
