"""Keras `Metric` objects as evaluation metrics (either Keras stack).

tf.estimator 2.x accepted a `tf.keras.metrics.Metric` after `update_state(...)`
wherever it accepted a `(value, update_op)` pair: the value is the metric's result
after every evaluation batch, and its variables are local variables of the
evaluation (initialised by the local init op, so each `evaluate` starts from zero,
and never saved or restored).

Keras 2 (tf-keras) metrics keep their update ops in `metric.updates` and their
variables in no collection. Keras 3 metrics have no `updates` and put their
variables in GLOBAL_VARIABLES, where the evaluation Saver would look for them in
the checkpoint; their update ops are left dangling in the graph, so they are found
there (`state_updates.variable_writes`).
"""

from estimator_lite._engine import state_updates
from estimator_lite._keras import is_keras_metric
from estimator_lite._tf import tf

__all__ = ["is_keras_metric", "metric_pair"]

def _tf_variable_ops(variables):
    """Names of the ops producing the given variables (Keras 3 or tf)."""
    return {state_updates.variable_op(v).name for v in variables}


def _make_local(variables):
    """Moves the metric's variables from GLOBAL to LOCAL (and METRIC) variables.

    Collections hold the tf.Variables; a Keras 3 variable is matched to its
    tf.Variable by the op that produces their common handle.
    """
    ops = _tf_variable_ops(variables)
    global_vars = tf.get_collection_ref(tf.GraphKeys.GLOBAL_VARIABLES)
    found = [v for v in global_vars if state_updates.variable_op(v).name in ops]
    global_vars[:] = [v for v in global_vars
                      if state_updates.variable_op(v).name not in ops]
    # tf-keras metric variables are in no collection: the metric's own (tf
    # variables, with an initializer op) are added.
    moved = {state_updates.variable_op(v).name for v in found}
    found += [v for v in variables if state_updates.variable_op(v).name not in moved
              and isinstance(getattr(v, "initializer", None), tf.Operation)]
    for key in (tf.GraphKeys.LOCAL_VARIABLES, tf.GraphKeys.METRIC_VARIABLES):
        present = {state_updates.variable_op(v).name for v in tf.get_collection(key)}
        for variable in found:
            if state_updates.variable_op(variable).name not in present:
                tf.add_to_collection(key, variable)


def _check_same_graph(name, metric, variables):
    """A metric updated in another graph is refused as tf.estimator does.

    Raises:
      ValueError: the metric's variables belong to another graph and it was
        updated there (tf-keras lists its updates; Keras 3 keeps no list, so its
        writes are looked for in that graph).
    """
    graph = tf.get_default_graph()
    foreign = [state_updates.variable_op(v) for v in variables]
    foreign = [op for op in foreign if op.graph is not graph]
    if not foreign:
        return
    if getattr(metric, "updates", None) or state_updates.variable_writes(
            variables, graph=foreign[0].graph):
        raise ValueError(f'eval_metric_ops with "{name}: {foreign[0].name}" must be '
                         "from the default graph. (the Keras metric "
                         f"{getattr(metric, 'name', metric)!r} was built outside the "
                         "model_fn, or by an earlier call of it)")


def metric_pair(name, metric):
    """Turns a Keras Metric into the `(value, update_op)` pair evaluation runs.

    Args:
      name: the metric's key in eval_metric_ops (for messages).
      metric: a Keras Metric on which `update_state` was called in this graph.

    Returns:
      (the metric's result tensor, an op running every update of this graph).

    Raises:
      ValueError: `update_state` was never called on the metric in this graph,
        or the metric was built in another graph.
    """
    variables = list(metric.variables)
    updates = [u for u in (getattr(metric, "updates", None) or [])
               if getattr(u, "graph", None) is tf.get_default_graph()]
    if not updates and variables:
        updates = state_updates.in_order(state_updates.variable_writes(variables))
    if not updates:
        # As tf.estimator: one updated in another graph is from the wrong graph;
        # one never updated is told to call update_state.
        _check_same_graph(name, metric, variables)
        raise ValueError("Please call update_state(...) on the "
                         f'"{getattr(metric, "name", metric)}" metric (eval_metric_ops'
                         f"[{name!r}]: call it in the model_fn before returning it)")
    _make_local(variables)
    return metric.result(), tf.group(*updates, name=f"{_op_name(name)}_update")


def _op_name(name):
    """A graph-name-safe version of a metric key."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name) or "metric"
