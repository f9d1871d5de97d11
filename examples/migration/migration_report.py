"""What every migration program prints last: one `MIGRATION_RESULT {json}` line.

Shared by the programs in this folder; it uses only TensorFlow, so it runs the
same under estimator_lite (TF >= 2.16) and under tf.estimator (TF 2.15).
tests/migration/ compares the two runs' lines.
"""

import glob
import json
import os

import numpy as np
import tensorflow as tf

__all__ = ["export_signatures", "find_export_dir", "print_result"]

RESULT_PREFIX = "MIGRATION_RESULT "


def find_export_dir(root):
    """The newest directory under `root` holding a saved_model.pb, or None."""
    found = glob.glob(os.path.join(root, "**", "saved_model.pb"), recursive=True)
    if not found:
        return None
    return os.path.dirname(max(found, key=lambda path: (os.path.getmtime(path), path)))


def export_signatures(export_dir):
    """Signature key -> {"inputs": {key: tensor}, "outputs": {key: tensor}}.

    Read by loading the SavedModel's "serve" MetaGraph in a fresh graph, which
    also proves it loads.

    Args:
      export_dir: a SavedModel directory.

    Returns:
      A dict, JSON-ready.
    """
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        meta_graph = tf.compat.v1.saved_model.loader.load(session, ["serve"], export_dir)
    return {
        key: {"inputs": {name: info.name for name, info in sig.inputs.items()},
              "outputs": {name: info.name for name, info in sig.outputs.items()}}
        for key, sig in meta_graph.signature_def.items()}


def _plain(value):
    """A JSON-ready copy of a metric value (numpy scalars become Python numbers)."""
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return value


def print_result(metrics, export_dir=None, **extra):
    """Prints the MIGRATION_RESULT line.

    Args:
      metrics: the final evaluation's metrics dict.
      export_dir: a SavedModel directory whose signatures to report, or None.
      **extra: more JSON-ready facts the program wants compared.
    """
    result = {"tf_version": tf.__version__,
              "metrics": {key: _plain(value) for key, value in metrics.items()}}
    if export_dir is not None:
        result["signatures"] = export_signatures(export_dir)
    result.update({key: _plain(value) for key, value in extra.items()})
    print(RESULT_PREFIX + json.dumps(result, sort_keys=True), flush=True)
