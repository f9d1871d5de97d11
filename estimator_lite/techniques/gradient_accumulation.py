"""Gradient accumulation over micro-batches, with optional clipping.

`GradientAccumulationOptimizer(optimizer, num_micro_batches=N)` adds each
micro-batch's gradients into accumulators and, on every N-th call, applies their
mean with the wrapped optimizer and clears them. The global step counts *applied
updates*: it advances once per N training steps of the Estimator loop, so
`max_steps` and `save_checkpoints_steps` are in updates, not micro-batches.

With mean-reduced losses, one update after N micro-batches of B examples equals one
update on a batch of N*B. Clipping (`clip_norm`: by global norm, `clip_value`: each
element into [-v, v]) applies to that mean gradient, as it would to the big batch.
"""

from estimator_lite._engine import validation
from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import tf
from estimator_lite.techniques.optimizer_wrapper import OptimizerWrapper

__all__ = ["GradientAccumulationOptimizer", "clip_gradients"]


def clip_gradients(grads_and_vars, clip_norm=None, clip_value=None):
    """Clips gradients by global norm and/or element value.

    Args:
      grads_and_vars: list of (gradient or None, variable).
      clip_norm: if set, rescale so the global norm is at most this.
      clip_value: if set, clip every element into [-clip_value, clip_value].

    Returns:
      The clipped list of (gradient, variable); None gradients stay None.
    """
    grads = [g for g, _ in grads_and_vars]
    if clip_norm is not None:
        present = [g for g in grads if g is not None]
        clipped, _ = tf.clip_by_global_norm(present, clip_norm)
        replacements = iter(clipped)
        grads = [None if g is None else next(replacements) for g in grads]
    if clip_value is not None:
        grads = [None if g is None else tf.clip_by_value(
            tf.convert_to_tensor(g), -clip_value, clip_value) for g in grads]
    return list(zip_strict(grads, [v for _, v in grads_and_vars]))


class GradientAccumulationOptimizer(OptimizerWrapper):
    """Applies the mean gradient of every `num_micro_batches` micro-batches."""

    def __init__(self, optimizer, num_micro_batches, clip_norm=None, clip_value=None,
                 name="GradientAccumulation"):
        """Validates the arguments.

        Raises:
          TypeError: optimizer is not a tf.compat.v1.train.Optimizer.
          ValueError: num_micro_batches < 1, clip_norm or clip_value <= 0.
        """
        super().__init__(optimizer, name)
        self._num_micro_batches = validation.check_int("num_micro_batches",
                                                        num_micro_batches, 1)
        for arg, value in (("clip_norm", clip_norm), ("clip_value", clip_value)):
            if value is not None and validation.check_number(arg, value) <= 0:
                raise ValueError(f"{arg} must be > 0 or None, got {value!r}")
        self._clip_norm = clip_norm
        self._clip_value = clip_value

    def _accumulator(self, var):
        with tf.variable_scope(None, default_name=f"{var.op.name}/{self._name}"):
            return tf.get_variable("accumulator", shape=var.shape,
                                   dtype=var.dtype.base_dtype, trainable=False,
                                   initializer=tf.zeros_initializer())

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Accumulates; every num_micro_batches-th call applies the mean and resets.

        Raises:
          ValueError: no variable has a gradient.
        """
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise ValueError("no gradients to accumulate: every gradient is None")
        if self._num_micro_batches == 1:
            clipped = clip_gradients(pairs, self._clip_norm, self._clip_value)
            return self.wrapped.apply_gradients(clipped, global_step, name)
        with tf.variable_scope(None, default_name=self._name):
            counter = tf.get_variable("micro_batches", shape=[], dtype=tf.int64,
                                      trainable=False,
                                      initializer=tf.zeros_initializer())
        accumulators = [self._accumulator(v) for _, v in pairs]
        adds = [acc.assign_add(tf.convert_to_tensor(g))
                for acc, (g, _) in zip_strict(accumulators, pairs)]
        with tf.control_dependencies(adds):
            count = counter.assign_add(1)
        ready = tf.equal(count % self._num_micro_batches, 0)

        def apply_mean():
            mean = [(acc.read_value() / self._num_micro_batches, v)
                    for acc, (_, v) in zip_strict(accumulators, pairs)]
            update = self.wrapped.apply_gradients(
                clip_gradients(mean, self._clip_norm, self._clip_value), global_step)
            with tf.control_dependencies([update]):
                resets = [acc.assign(tf.zeros_like(acc)) for acc in accumulators]
            with tf.control_dependencies(resets):
                return tf.constant(True)

        applied = tf.cond(ready, apply_mean, lambda: tf.constant(False))
        return tf.group(applied, name=name or self._name)
