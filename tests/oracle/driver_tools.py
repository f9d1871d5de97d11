"""What the oracle drivers share: plain JSON values, a checkpoint's variables, the
model_dirs of a run, and the `run <workdir> ...` command line. Not a test file.

A driver imports it by name (`import driver_tools`): run as a script, a driver's
folder is on its path, and `tests.oracle.load_driver` puts it there too. It
imports only the standard library and TensorFlow (2.15 or this one).
"""

import json
import os
import shutil

import numpy as np
import tensorflow as tf


def plain_metrics(metrics):
    """{name: float} of what `evaluate()` returned (numpy values are not JSON)."""
    return {k: float(v) for k, v in metrics.items()}


def checkpoint_variables(model_dir):
    """{name: [shape, dtype name]} of the latest checkpoint in model_dir."""
    reader = tf.train.load_checkpoint(model_dir)
    dtypes = reader.get_variable_to_dtype_map()
    return {name: [list(shape), dtypes[name].name]
            for name, shape in reader.get_variable_to_shape_map().items()}


def regression_input_fn(epochs=None):
    """64 rows of 4 features ("x") and their linear label, in batches of 16."""
    x = np.random.RandomState(0).randn(64, 4).astype(np.float32)
    y = x @ np.array([[1.0], [2.0], [-1.0], [0.5]], np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat(epochs).batch(16)


def regression_serving_input_receiver_fn():
    """tf.estimator's receiver of `regression_input_fn`'s features (TF 2.15 only)."""
    x = tf.compat.v1.placeholder(tf.float32, [None, 4], name="x")
    return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})


def table_dataset(features, labels, epochs, batch_size):
    """A tf.data.Dataset over a table's rows, repeated and batched.

    Args:
      features: {name: column}; a sparse column is a tf.compat.v1.SparseTensorValue.
      labels: the label column.
      epochs: passes over the rows (None: forever).
      batch_size: rows per batch.
    """
    features = {k: tf.SparseTensor(*v) if isinstance(
        v, tf.compat.v1.SparseTensorValue) else v for k, v in features.items()}
    return tf.data.Dataset.from_tensor_slices((features, labels)).repeat(epochs).batch(
        batch_size)


def model_dir(workdir, kind, subdir):
    """`<workdir>/<kind>/<subdir>`: where a run keeps each kind's model_dirs."""
    return os.path.join(workdir, kind, subdir)


def copy_model_dir(workdir, kind, source, target):
    """Copies `<kind>/<source>` to `<kind>/<target>` (to train on); returns the copy."""
    copy = model_dir(workdir, kind, target)
    shutil.copytree(model_dir(workdir, kind, source), copy)
    return copy


def export(estimator, workdir, kind, serving_input_receiver_fn):
    """Exports `estimator` under `<kind>/export_tf`; returns the export's path."""
    return estimator.export_saved_model(model_dir(workdir, kind, "export_tf"),
                                        serving_input_receiver_fn).decode()


def main(argv, run, **arguments):
    """Runs `<driver> run <workdir> <argument>...` and prints the report (one JSON line).

    Args:
      argv: sys.argv.
      run: `run(workdir, *arguments)` returns the report (JSON-able).
      **arguments: each argument's name and type, in order (e.g. `first_steps=int`).

    Raises:
      SystemExit: the command line is not `run <workdir> <argument>...`.
    """
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    if len(argv) != 3 + len(arguments) or argv[1] != "run":
        names = " ".join(f"<{name}>" for name in ("workdir", *arguments))
        raise SystemExit(f"usage: {os.path.basename(argv[0])} run {names}")
    values = [convert(argv[3 + i]) for i, convert in enumerate(arguments.values())]
    print(json.dumps(run(argv[2], *values)))
