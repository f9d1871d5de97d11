"""Adapters: optimizers that run as they are, behind GraphOptimizer's interface.

Besides the graph versions of the Keras optimizers (`graph`), three kinds of
optimizer train as the user gave them, each wrapped to offer
``apply_gradients(grads_and_vars, iterations=None, name=None)``:
  * `V1Optimizer`: a ``tf.compat.v1.train.Optimizer`` (its ``global_step`` is the
    iterations counter);
  * `LegacyKerasOptimizer`: a tf-keras legacy optimizer (``tf.keras.optimizers.
    legacy.*`` with TF_USE_LEGACY_KERAS=1), run as tf.estimator 2.15 ran it, its
    ``iterations`` tied to the global step unless the user tied it;
  * `UserUpdatesOptimizer`: a user's Keras optimizer class that defines
    ``get_updates(loss, params)`` (or, on a legacy OptimizerV2,
    ``get_gradients``), which tf.estimator 2.15 trained through: it takes the
    loss (``trains_from_loss``), not gradients.
"""

from estimator_lite import _keras
from estimator_lite._tf import logging, tf
from estimator_lite.optimizers.graph import SCOPE, is_number

__all__ = ["LegacyKerasOptimizer", "UserUpdatesOptimizer", "V1Optimizer"]


class V1Optimizer:
    """Adapts a tf.compat.v1.train.Optimizer to GraphOptimizer.apply_gradients."""

    def __init__(self, optimizer):
        self._optimizer = optimizer

    def apply_gradients(self, grads_and_vars, iterations=None, name=None):
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        return self._optimizer.apply_gradients(pairs, global_step=iterations, name=name)

    @property
    def v1_optimizer(self):
        """The tf.compat.v1.train.Optimizer this adapts."""
        return self._optimizer


class LegacyKerasOptimizer:
    """Runs a tf-keras legacy optimizer (OptimizerV2) as it is, in the graph.

    tf.estimator 2.15 ran these itself; users tied ``optimizer.iterations`` to the
    global step in their model_fn, or training never advanced. Here the global
    step is tied for them when they did not tie it.
    """

    def __init__(self, optimizer):
        self.optimizer = optimizer

    def __repr__(self):
        return f"{type(self.optimizer).__name__}(legacy, run as it is)"

    def _tie_iterations(self, iterations):
        """Makes `iterations` the optimizer's counter; returns extra ops to run."""
        # None until the optimizer made or was given a counter.
        own = _keras.optimizer_counter(self.optimizer)
        if own is None:
            self.optimizer.iterations = iterations
            return []
        if own is iterations or (own.name == iterations.name and
                                 own.graph is iterations.graph):
            return []
        # The user gave it another counter: keep it, but still advance the step.
        logging.warning("%s: the optimizer's iterations (%s) is not the global step; "
                        "incrementing the global step beside it", self, own.name)
        return [iterations]

    def apply_gradients(self, grads_and_vars, iterations=None, name=None):
        """Applies the gradients with the Keras optimizer; see GraphOptimizer's."""
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise ValueError("no gradients to apply: none of the variables "
                             f"{[v.op.name for _, v in grads_and_vars]} affects the loss")
        counters = [] if iterations is None else self._tie_iterations(iterations)
        # As tf.estimator 2.15's heads: variables under training/<Name>/.
        with tf.name_scope(SCOPE + "/"):
            train_op = self.optimizer.apply_gradients(pairs, name=name)
        if not counters:
            return train_op
        with tf.control_dependencies([train_op]):
            return tf.group(*[c.assign_add(1, read_value=False) for c in counters])

    def fresh_copy(self):
        """A copy for a new graph when the optimizer can be rebuilt from its config."""
        lr = _keras.legacy_hyperparameter(self.optimizer, "learning_rate")
        if is_number(lr) or _keras.is_learning_rate_schedule(lr):
            try:
                copy = type(self.optimizer).from_config(self.optimizer.get_config())
            except TypeError:  # A subclass whose constructor takes other arguments.
                return self
            return LegacyKerasOptimizer(copy)
        return self  # A tensor or callable rate belongs to the graph it was built in.


class UserUpdatesOptimizer:
    """A user's Keras optimizer that makes its own updates from the loss.

    Its class defines ``get_updates(loss, params)`` (see
    `_keras.trains_through_get_updates`), which tf.estimator 2.15 called to train:
    it is called here too, with the (replica-scaled) loss and the part's
    variables, under the ``training/`` name scope. The user's instance itself
    is used in every graph (tests and hooks read ``optimizer.iterations``), its
    ``iterations`` tied to the global step as tf.estimator's canned estimators
    tied it.
    """

    trains_from_loss = True  # canned.core hands it the loss, not gradients.

    def __init__(self, optimizer):
        self.optimizer = optimizer

    def __repr__(self):
        return f"{type(self.optimizer).__name__}(its own get_updates)"

    def get_updates(self, loss, variables, iterations=None):
        """The update ops of the user's get_updates for `loss` over `variables`.

        Args:
          loss: the scalar training loss.
          variables: the variables to train (the `params` of get_updates).
          iterations: the global step, made the optimizer's ``iterations`` when
            it is a legacy Keras optimizer without a counter of this graph (as
            tf.estimator's canned estimators set it). None: the optimizer keeps
            its own counter (one of an earlier graph is dropped).

        Returns:
          The list get_updates returned.
        """
        if iterations is None:
            _keras.forget_stale_counter(self.optimizer)
        else:
            _keras.tie_optimizer_counter(self.optimizer, iterations)
        with tf.name_scope(SCOPE + "/"):  # As tf.estimator 2.15's heads.
            return list(self.optimizer.get_updates(loss, list(variables)))

    def updates_from_loss(self, loss, variables, iterations=None, name=None):
        """One op running every update of `get_updates` (see there).

        When `iterations` (the global step) could not become the optimizer's
        counter (not a legacy Keras optimizer, or one the user gave another
        counter), it is incremented after the updates, so training advances.
        """
        updates = self.get_updates(loss, variables, iterations)
        if iterations is None or _keras.optimizer_counter(self.optimizer) is iterations:
            return tf.group(*updates, name=name)
        with tf.control_dependencies(updates):
            return tf.group(iterations.assign_add(1, read_value=False), name=name)

    def apply_gradients(self, grads_and_vars, iterations=None, name=None):
        """Refused: this optimizer trains from the loss (its get_updates).

        Raises:
          TypeError: always; the message says what to do.
        """
        del grads_and_vars, iterations, name
        raise TypeError(f"optimizer {type(self.optimizer).__name__} defines its own "
                        "get_updates(loss, params), which needs the loss; it cannot be "
                        "given gradients here. Pass it to a head's create_estimator_spec "
                        "or a canned estimator, or call its get_updates yourself")

