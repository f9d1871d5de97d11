"""The merge step: where a graph optimizer's updates run under a distribution strategy.

Inside a strategy's replica context (a MirroredStrategy replica calling the
model_fn), the replicas' gradients are summed and each (mirrored) variable is
updated once, in the strategy's cross-replica merge step (`merge_call`); without
a strategy, or in cross-replica context, the updates are made where they are
asked for. New optimizer variables (slots) are placed with their variable, or by
the strategy (`colocated_with`).
"""

import functools

from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import tf

__all__ = ["apply_updates", "colocated_with"]


def apply_updates(apply, pairs, iterations, name):
    """Runs ``apply(pairs, iterations, name, update)`` in the context that owns updates.

    Args:
      apply: the optimizer's function creating its variables and applying every
        (gradient, variable) pair through ``update(var, fn, args)``.
      pairs: (gradient, variable) pairs, none of the gradients None.
      iterations: the counter `apply` increments (or None).
      name: the name of the returned op.

    Returns:
      What `apply` returns: under a strategy's replica, the op of the merge step
      that applies the summed gradients once.
    """
    if tf.distribute.has_strategy() and not tf.distribute.in_cross_replica_context():
        # Every replica's call meets in the merge step; the first replica's `apply`
        # runs there (merge_call takes the merge function of the first replica).
        return tf.distribute.get_replica_context().merge_call(
            functools.partial(_apply_merged, apply), args=(pairs, iterations, name))
    return apply(pairs, iterations, name, _update_here)


def _apply_merged(apply, strategy, pairs, iterations, name):
    """The cross-replica part of apply_updates: sums the replicas' gradients."""
    grads = strategy.extended.batch_reduce_to(tf.distribute.ReduceOp.SUM, pairs)
    pairs = list(zip_strict(grads, [v for _, v in pairs]))

    def update(var, fn, args):
        return strategy.extended.update(var, fn, args=args, group=True)
    return apply(pairs, iterations, name, update)


def colocated_with(var):
    """Places new variables with `var` (a strategy's mirrored variable has no one
    op to colocate with: the strategy places them)."""
    if tf.distribute.has_strategy():
        return tf.distribute.get_strategy().extended.colocate_vars_with(var)
    return tf.colocate_with(var)


def _update_here(var, fn, args):
    """`update` without a strategy: fn(var, *args)."""
    return fn(var, *args)
