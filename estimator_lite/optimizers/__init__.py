"""Optimizers that train in a tf.compat.v1 graph: what canned estimators and heads use.

One module per concern:
  * `graph`: graph versions of the Keras optimizers (`GraphOptimizer`: SGD,
    Adagrad, Adam, RMSprop, Ftrl), checkpoint-compatible with tf.estimator 2.15's
    Keras optimizers;
  * `merge`: where their updates run under a distribution strategy (the
    strategy's merge step);
  * `adapters`: optimizers run as they are (tf.compat.v1.train, tf-keras legacy,
    a user's Keras class with its own ``get_updates``);
  * `mapping`: from what users pass as an optimizer (a name, a Keras optimizer,
    a callable) to one of the above (`graph_optimizer`, `optimizer_factory`,
    `get_optimizer_instance_v2`);
  * `v1`: the v1 canned estimators' tf.compat.v1.train optimizers.
Keras' internals are read only through `estimator_lite._keras`. The package
imports nothing from `canned/` or `head/`: both build on it.
`estimator_lite.canned.optimizers` (tf.estimator's module path) re-exports the
names below.
"""

from estimator_lite.optimizers.graph import (
    OPTIMIZER_NAMES,
    SGD,
    Adagrad,
    Adam,
    Ftrl,
    GraphOptimizer,
    RMSprop,
)
from estimator_lite.optimizers.mapping import (
    get_optimizer_instance_v2,
    graph_optimizer,
    optimizer_factory,
)

__all__ = [
    "Adagrad", "Adam", "Ftrl", "GraphOptimizer", "OPTIMIZER_NAMES", "RMSprop", "SGD",
    "get_optimizer_instance_v2", "graph_optimizer", "optimizer_factory",
]
