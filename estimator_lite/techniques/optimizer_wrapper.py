"""The base of optimizers that wrap another one (towers, accumulation, averaging).

A wrapper changes how gradients are applied; everything else (computing
gradients, slots, the optimizer's variables) is the wrapped optimizer's, so
checkpoints and code that asks for slots see the real optimizer.
"""

from estimator_lite._tf import tf

__all__ = ["OptimizerWrapper"]


class OptimizerWrapper(tf.train.Optimizer):
    """Delegates compute_gradients, get_slot, get_slot_names and variables."""

    def __init__(self, optimizer, name, use_locking=False, arg_name="optimizer"):
        """Checks and stores the wrapped optimizer.

        Args:
          optimizer: a tf.compat.v1 Optimizer, or None when a subclass resolves it
            later (it then overrides `wrapped`).
          name: this optimizer's name.
          use_locking: passed to tf.compat.v1.train.Optimizer.
          arg_name: the argument name used in error messages.

        Raises:
          TypeError: optimizer is not a tf.compat.v1.train.Optimizer.
        """
        if optimizer is not None and not isinstance(optimizer, tf.train.Optimizer):
            raise TypeError(f"{arg_name} must be a tf.compat.v1.train.Optimizer, got "
                            f"{optimizer!r}")
        super().__init__(use_locking, name)
        self._wrapped_optimizer = optimizer

    @property
    def wrapped(self):
        """The optimizer that really applies the updates."""
        return self._wrapped_optimizer

    def compute_gradients(self, *args, **kwargs):
        return self.wrapped.compute_gradients(*args, **kwargs)

    def get_slot(self, *args, **kwargs):
        return self.wrapped.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self.wrapped.get_slot_names(*args, **kwargs)

    def variables(self):
        return self.wrapped.variables()
