"""tf.estimator's ``canned.optimizers`` path: the optimizers of the canned estimators.

The implementation is the `estimator_lite.optimizers` package (graph versions of
the Keras optimizers, the strategy merge step, adapters, and the mapping from a
Keras optimizer to a graph one); this module keeps its public names under the
path tf.estimator 2.15 had them (libraries such as tensorflow_lattice import
``get_optimizer_instance_v2`` from here).
"""

from estimator_lite.optimizers import (
    OPTIMIZER_NAMES,
    SGD,
    Adagrad,
    Adam,
    Ftrl,
    GraphOptimizer,
    RMSprop,
    get_optimizer_instance_v2,
    graph_optimizer,
    optimizer_factory,
)

__all__ = [
    "Adagrad", "Adam", "Ftrl", "GraphOptimizer", "OPTIMIZER_NAMES", "RMSprop", "SGD",
    "get_optimizer_instance_v2", "graph_optimizer", "optimizer_factory",
]
