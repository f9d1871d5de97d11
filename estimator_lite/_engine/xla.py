"""XLA compilation of the training step (RunConfig(experimental_jit_compile=True)).

tf.estimator had no switch for XLA: its users patched `Session.__init__` to turn
on global auto-clustering (tensorflow#7794), which on CPU does nothing without a
TF_XLA_FLAGS flag. Here the ops the TRAIN model_fn builds (forward pass,
gradients, optimizer updates) are created inside `tf.xla.experimental.jit_scope`,
so TensorFlow compiles them into XLA clusters on any device; ops XLA cannot
compile (summaries, string lookups, py_funcs) stay outside the clusters.
Evaluation and prediction are not compiled: they run each graph a few times,
less than XLA's compile time.
"""

import contextlib

from estimator_lite._tf import tf

__all__ = ["check_available", "train_scope"]

_AVAILABLE = {}  # TF version -> None (compiles) or the reason it does not.


def _probe():
    """Why XLA does not compile a jit-scoped op in this TensorFlow, or None."""
    with tf.Graph().as_default():
        value = tf.placeholder(tf.float32, [2])
        with tf.xla.experimental.jit_scope():
            doubled = value * 2.0 + 1.0
        metadata = tf.RunMetadata()
        try:
            with tf.Session() as session:
                session.run(doubled, {value: [1.0, 2.0]},
                            options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                            run_metadata=metadata)
        except tf.errors.OpError as error:
            return f"running a jit-scoped op failed: {error.message.splitlines()[0]}"
    names = [node.node_name for device in metadata.step_stats.dev_stats
             for node in device.node_stats]
    if not any("xla" in name.lower() or "cluster" in name.lower() for name in names):
        return "a jit-scoped op ran without an XLA cluster"
    return None


def check_available():
    """Raises unless this TensorFlow compiles jit-scoped ops with XLA (checked once).

    Raises:
      ValueError: TensorFlow was built without XLA's JIT for this machine's
        devices; the message names the TensorFlow version and what was seen.
    """
    version = tf.VERSION
    if version not in _AVAILABLE:
        _AVAILABLE[version] = _probe()
    if _AVAILABLE[version] is not None:
        raise ValueError(
            f"RunConfig(experimental_jit_compile=True) needs TensorFlow with XLA's JIT, "
            f"but TensorFlow {version} does not compile here ({_AVAILABLE[version]}); "
            "use experimental_jit_compile=False or a TensorFlow build with XLA")


def train_scope(enabled):
    """The context the TRAIN model_fn runs in: a jit scope when `enabled`.

    Args:
      enabled: RunConfig.experimental_jit_compile.

    Returns:
      A context manager.

    Raises:
      ValueError: `enabled` and TensorFlow has no XLA JIT (see `check_available`).
    """
    if not enabled:
        return contextlib.nullcontext()
    check_available()
    return tf.xla.experimental.jit_scope()
