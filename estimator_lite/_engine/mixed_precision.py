"""Mixed precision, opt-in with RunConfig(experimental_mixed_precision=POLICY).

The variables stay float32, so checkpoints and exports are interchangeable with
full-precision runs: TensorFlow's graph rewrite (Grappler) casts the compute to
the half type on the devices that gain from it and keeps each variable's update
in float32.

- "mixed_bfloat16": the oneDNN bfloat16 rewrite, on CPUs (fast on CPUs with
  AVX512-BF16 or AMX, emulated and slower elsewhere). bfloat16 keeps float32's
  exponent range: no loss scaling.
- "mixed_float16": the float16 rewrite, on GPUs (the CPU is left in float32).
  float16 gradients underflow, so the optimizers the library applies (a head's
  `optimizer`, the canned estimators') get dynamic loss scaling; a model_fn
  that calls `optimizer.minimize` itself wraps its optimizer in
  `tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer`. The loss
  scale is a local variable (not checkpointed: a restart starts it again at
  2**15), so float32 and float16 runs read each other's model_dirs.

tf.estimator's graph rewrite broke canned wide & deep models (tensorflow#37666)
because it applied float16 to every device, sparse ops included; the rewrite
here is per device type and leaves ops without a half kernel alone.
"""

from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import tf

__all__ = ["POLICIES", "apply_gradients", "check_policy", "current_policy",
           "minimize", "policy_scope", "session_config_with_rewrite",
           "with_session_rewrite"]

POLICIES = ("mixed_float16", "mixed_bfloat16")

# The rewrite option each policy turns on (a RewriterConfig field).
_REWRITE_FIELD = {"mixed_float16": "auto_mixed_precision",
                  "mixed_bfloat16": "auto_mixed_precision_onednn_bfloat16"}
_COLLECTION = "estimator_lite_mixed_precision_policy"
# Dynamic loss scaling, as TF's DynamicLossScale: start at 2**15, halve on a
# non-finite gradient (that step is skipped), double after 2000 finite steps.
_INITIAL_LOSS_SCALE = 2.0 ** 15
_GROWTH_STEPS = 2000
# RewriterConfig, reached through a ConfigProto (TF is imported only in _tf.py).
_REWRITER_CONFIG = type(tf.ConfigProto().graph_options.rewrite_options)


def check_policy(policy):
    """Validates RunConfig's experimental_mixed_precision.

    Args:
      policy: None, "mixed_float16" or "mixed_bfloat16".

    Returns:
      `policy`.

    Raises:
      TypeError: not a str or None.
      ValueError: an unknown policy, or one this TensorFlow cannot rewrite to
        (naming the TensorFlow version).
    """
    if policy is None:
        return None
    if not isinstance(policy, str):
        raise TypeError("experimental_mixed_precision must be a str or None, got "
                        f"{policy!r} of type {type(policy).__name__}")
    if policy not in POLICIES:
        raise ValueError(f"experimental_mixed_precision must be one of {POLICIES} or "
                         f"None, got {policy!r}")
    field = _REWRITE_FIELD[policy]
    if field not in _REWRITER_CONFIG.DESCRIPTOR.fields_by_name:
        raise ValueError(
            f"experimental_mixed_precision={policy!r} needs TensorFlow's {field} graph "
            f"rewrite, which TensorFlow {tf.VERSION} lacks (it came in TF 2.9)")
    return policy


def session_config_with_rewrite(session_config, policy):
    """A copy of `session_config` with the policy's graph rewrite turned on.

    Args:
      session_config: a tf.compat.v1.ConfigProto, or None for an empty one.
      policy: a validated policy, or None.

    Returns:
      `session_config` itself when `policy` is None, else a new ConfigProto.
    """
    if policy is None:
        return session_config
    config = tf.ConfigProto()
    if session_config is not None:
        config.CopyFrom(session_config)
    setattr(config.graph_options.rewrite_options, _REWRITE_FIELD[policy],
            _REWRITER_CONFIG.ON)
    return config


def with_session_rewrite(config):
    """`config`, its session_config turning on its policy's graph rewrite.

    Every session of an Estimator (train, evaluate, predict, export) reads
    `config.session_config`, so the rewrite applies to all of them.

    Args:
      config: a RunConfig.

    Returns:
      `config` without a policy, else a copy (`config.replace`).
    """
    policy = config.experimental_mixed_precision
    if policy is None:
        return config
    return config.replace(session_config=session_config_with_rewrite(
        config.session_config, policy))


class policy_scope:  # noqa: N801 (a context manager, named as one is used)
    """Records the policy in the current graph while a model_fn builds it.

    Heads and canned estimators read it (`current_policy`) to add loss scaling;
    a graph keeps the policy it was built with.
    """

    def __init__(self, policy):
        self._policy = policy

    def __enter__(self):
        if self._policy is not None:
            graph = tf.get_default_graph()
            graph.clear_collection(_COLLECTION)
            graph.add_to_collection(_COLLECTION, self._policy)
        return self

    def __exit__(self, *exc_info):
        return False


def current_policy():
    """The policy the default graph's model_fn is built under, or None."""
    found = tf.get_collection(_COLLECTION)
    return found[0] if found else None


def _unscale(grad, scale):
    """`grad` / `scale`, for dense and IndexedSlices gradients (None stays)."""
    if grad is None:
        return None
    if isinstance(grad, tf.IndexedSlices):
        return tf.IndexedSlices(grad.values / scale, grad.indices, grad.dense_shape)
    return grad / scale


def _all_finite(grads):
    values = [g.values if isinstance(g, tf.IndexedSlices) else g
              for g in grads if g is not None]
    if not values:
        return tf.constant(True)
    return tf.reduce_all([tf.reduce_all(tf.is_finite(v)) for v in values])


def _scale_variables():
    """The loss scale and its count of good steps: local, never checkpointed."""
    local = [tf.GraphKeys.LOCAL_VARIABLES]
    with tf.variable_scope("loss_scale", reuse=tf.AUTO_REUSE):
        scale = tf.get_variable("current_loss_scale", initializer=_INITIAL_LOSS_SCALE,
                                trainable=False, use_resource=True, collections=local)
        good_steps = tf.get_variable("good_steps", initializer=tf.constant(0, tf.int64),
                                     trainable=False, use_resource=True,
                                     collections=local)
    return scale, good_steps


def _update_scale(scale, good_steps, finite):
    """Halves the scale on overflow; doubles it after _GROWTH_STEPS good steps."""
    grown = good_steps + 1 >= _GROWTH_STEPS

    def on_finite():
        return tf.group(
            scale.assign(tf.where(grown, scale * 2.0, scale)),
            good_steps.assign(tf.where(grown, tf.constant(0, tf.int64), good_steps + 1)))

    def on_overflow():
        return tf.group(scale.assign(tf.maximum(scale / 2.0, 1.0)),
                        good_steps.assign(tf.constant(0, tf.int64)))

    return tf.cond(finite, on_finite, on_overflow)


def _create_v1_variables(optimizer, pairs):
    """Builds (and drops) one update so a v1 optimizer creates its variables here.

    Built inside the loss-scaling `tf.cond`, a tf.compat.v1 optimizer would name
    its non-slot variables (Adam's `beta1_power`) under the caller's name scope,
    so a float16 checkpoint would not fit a float32 graph; the second build in
    the cond reuses the variables created here. The dropped op never runs.
    """
    optimizer.apply_gradients(pairs)


def apply_gradients(loss, variables, apply_fn, v1_optimizers=()):
    """Differentiates `loss` and applies the gradients, loss-scaled under float16.

    Args:
      loss: the scalar loss.
      variables: the variables to differentiate with respect to.
      apply_fn: callable(grads) -> the update op; `grads` in `variables`' order.
      v1_optimizers: (tf.compat.v1.train.Optimizer, its variables) pairs among
        those `apply_fn` applies, whose variables must exist before the cond.

    Returns:
      The update op. Without "mixed_float16": `apply_fn(tf.gradients(loss,
      variables))`. Under it, the gradients of the scaled loss are unscaled and
      applied only when all are finite (a step with an overflow changes no
      variable, the global step included, as TF's LossScaleOptimizer); the
      scale adapts, kept in float32 variables under ``loss_scale/``.
    """
    if current_policy() != "mixed_float16":
        return apply_fn(tf.gradients(loss, variables))
    scale, good_steps = _scale_variables()
    scaled = tf.gradients(loss * tf.cast(scale, loss.dtype), variables)
    grads = [_unscale(g, tf.cast(scale, g.dtype)) if g is not None else None
             for g in scaled]
    finite = _all_finite(grads)
    by_variable = dict(zip_strict(variables, grads))
    for optimizer, its_variables in v1_optimizers:
        _create_v1_variables(optimizer, [(by_variable[v], v) for v in its_variables
                                         if by_variable[v] is not None])
    applied = tf.cond(finite, lambda: tf.group(apply_fn(grads)), tf.no_op)
    return tf.group(applied, _update_scale(scale, good_steps, finite))


def minimize(optimizer, loss, global_step, var_list=None):
    """`optimizer.minimize(loss, global_step, var_list)`, loss-scaled under float16.

    Args:
      optimizer: a tf.compat.v1.train.Optimizer (its own compute_gradients is
        used, so a TowerOptimizer still sums its towers).
      loss: the scalar loss.
      global_step: the global step variable.
      var_list: the variables to train, or None for the trainable ones.

    Returns:
      The train op; see `apply_gradients` for what float16 changes.
    """
    if current_policy() != "mixed_float16":
        return optimizer.minimize(loss, global_step=global_step, var_list=var_list)
    scale, good_steps = _scale_variables()
    pairs = [(g, v) for g, v in optimizer.compute_gradients(
        loss * tf.cast(scale, loss.dtype), var_list=var_list) if g is not None]
    grads = [_unscale(g, tf.cast(scale, g.dtype)) for g, _ in pairs]
    finite = _all_finite(grads)
    _create_v1_variables(optimizer, list(zip_strict(grads, [v for _, v in pairs])))
    applied = tf.cond(finite, lambda: tf.group(optimizer.apply_gradients(
        list(zip_strict(grads, [v for _, v in pairs])), global_step=global_step)),
                      tf.no_op)
    return tf.group(applied, _update_scale(scale, good_steps, finite))
