"""What tests need to run on both stacks: TF 2.16+ and TF 1.15 (Python 3.7).

`.ci/tf115` runs the core test files on TF 1.15 with ``-m "not tf2"``: a test in
those files that needs TensorFlow 2 (Keras 3 state, eager reload, TF2 summaries,
tf-keras) carries `tf2_only(reason)` and is deselected there; run on TF 1.15
without the marker filter, it skips with its reason. `serve` reloads a SavedModel
and runs one signature, the TF2 way on TF 2 and the TF1 way
(`tf.compat.v1.saved_model.loader.load`) on TF 1.15. Not a test file.
"""

import numpy as np
import pytest
import tensorflow as tf

TF1 = tf.__version__.startswith("1.")


def tf2_only(reason):
    """Marks a test as needing TensorFlow 2 (deselected by .ci/tf115; skips on TF 1)."""
    def mark(test):
        return pytest.mark.tf2(pytest.mark.skipif(
            TF1, reason=f"needs TensorFlow 2: {reason}")(test))
    return mark


def serve(export_dir, signature="serving_default", **inputs):
    """Reloads the SavedModel in `export_dir` and runs `signature` on `inputs`.

    Args:
      export_dir: a SavedModel directory (str or bytes).
      signature: the signature key.
      **inputs: numpy arrays by the signature's input names.

    Returns:
      A dict of the signature's outputs as numpy arrays.
    """
    if isinstance(export_dir, bytes):
        export_dir = export_dir.decode("utf-8")
    if not TF1:
        function = tf.saved_model.load(export_dir).signatures[signature]
        outputs = function(**{name: tf.constant(value) for name, value in inputs.items()})
        return {name: value.numpy() for name, value in outputs.items()}
    v1 = tf.compat.v1
    with tf.Graph().as_default(), v1.Session() as session:
        meta_graph = v1.saved_model.loader.load(session, ["serve"], export_dir)
        signature_def = meta_graph.signature_def[signature]
        feed = {signature_def.inputs[name].name: np.asarray(value)
                for name, value in inputs.items()}
        fetches = {name: info.name for name, info in signature_def.outputs.items()}
        return session.run(fetches, feed)


def signature_keys(export_dir):
    """The signature keys of the `serve` meta graph in `export_dir`."""
    if isinstance(export_dir, bytes):
        export_dir = export_dir.decode("utf-8")
    if not TF1:
        return set(tf.saved_model.load(export_dir).signatures)
    v1 = tf.compat.v1
    with tf.Graph().as_default(), v1.Session() as session:
        return set(v1.saved_model.loader.load(session, ["serve"], export_dir).signature_def)
