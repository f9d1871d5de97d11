"""Canned estimators of tf.estimator 2.15 and estimator_lite, built the same way.

tests/canned/canned_compat_test.py imports this module for the estimator_lite side
and runs it as a script with the TF 2.15 interpreter (ESTIMATOR_LITE_TF215_PYTHON)
for the tf.estimator side, so both build every model from the same code:

    python canned_driver.py run <workdir> <first_steps> <more_steps> <lite_subdir>

(see `run`) prints one JSON line: per kind, the checkpoint variables
(name -> [shape, dtype]), metrics, export dir, and tf.estimator's metrics of the
model_dir estimator_lite trained.
"""

import sys

import driver_tools
import numpy as np
import tensorflow as tf
from driver_tools import checkpoint_variables, plain_metrics

KINDS = ("dnn", "linear", "combined", "regressor")
BATCH_SIZE = 8
_N = 48


def data():
    """A small deterministic table: numeric, categorical, bucketized, weight, labels."""
    rng = np.random.RandomState(0)
    x = rng.randn(_N, 2).astype(np.float32)
    colors = np.array(["red", "green", "blue", "grey"])[rng.randint(0, 4, _N)]
    city = np.array(["a", "b", "c", "d", "e", "f"])[rng.randint(0, 6, _N)]
    z = rng.randn(_N).astype(np.float32)
    features = {"x": x, "color": colors, "city": city, "z": z,
                "w": rng.uniform(0.5, 2.0, _N).astype(np.float32)}
    score = x[:, 0] - 0.5 * x[:, 1] + (colors == "red") - 0.3 * z
    labels = {"binary": (score > 0).astype(np.int64),
              "multi": np.array(["lo", "mid", "hi"])[np.digitize(score, [-0.5, 0.5])],
              "real": score.astype(np.float32).reshape(-1, 1)}
    return features, labels


def input_fn(label_key, epochs=None):
    """Returns an input_fn over the table, in order (both libraries see the same)."""
    def fn():
        features, labels = data()
        return tf.data.Dataset.from_tensor_slices(
            (features, labels[label_key])).repeat(epochs).batch(BATCH_SIZE)
    return fn


def columns():
    """The feature columns (TF2 spelling, usable by both libraries)."""
    fc = tf.feature_column
    x = fc.numeric_column("x", shape=(2,))
    color = fc.categorical_column_with_vocabulary_list(
        "color", ["red", "green", "blue"], num_oov_buckets=1)
    city = fc.categorical_column_with_hash_bucket("city", 5)
    z = fc.bucketized_column(fc.numeric_column("z"), [-0.5, 0.0, 0.5])
    return {"x": x, "color": color, "city": city, "z": z,
            "cross": fc.crossed_column([color, "city"], 7),
            "color_emb": fc.embedding_column(color, 3),
            "city_ind": fc.indicator_column(city)}


def build(lib, kind, model_dir):
    """Returns (estimator, label key) for `kind`; `lib` is tf.estimator or el.canned."""
    c = columns()
    if kind == "dnn":
        return lib.DNNClassifier([6, 4], [c["x"], c["color_emb"], c["city_ind"], c["z"]],
                                 model_dir=model_dir, n_classes=3,
                                 label_vocabulary=["lo", "mid", "hi"], weight_column="w",
                                 optimizer="RMSProp", batch_norm=True), "multi"
    if kind == "linear":
        return lib.LinearClassifier([c["x"], c["color"], c["city"], c["z"], c["cross"]],
                                    model_dir=model_dir, sparse_combiner="mean"), "binary"
    if kind == "combined":
        return lib.DNNLinearCombinedClassifier(
            model_dir=model_dir, linear_feature_columns=[c["color"], c["cross"]],
            linear_optimizer="Adam", dnn_feature_columns=[c["x"], c["color_emb"]],
            dnn_hidden_units=[4]), "binary"
    if kind == "regressor":
        return lib.DNNRegressor([4], [c["x"], c["z"], c["color_emb"]], model_dir=model_dir,
                                optimizer="Adam", weight_column="w"), "real"
    raise ValueError(f"unknown kind {kind!r}")


def serving_input_receiver_fn(lib_export):
    """A parsing serving input fn over every column the models use."""
    spec = tf.compat.v1.feature_column.make_parse_example_spec(
        list(columns().values()))
    return lib_export.build_parsing_serving_input_receiver_fn(spec)


def run(workdir, first_steps, more_steps, lite_subdir):
    """Trains, evaluates, exports and continues each kind with tf.estimator.

    For each kind: trains ``<workdir>/<kind>/tf`` to `first_steps`, evaluates and
    exports it, copies it to ``tf_more`` and continues that copy to `more_steps`,
    and evaluates ``<workdir>/<kind>/<lite_subdir>`` (written by estimator_lite).

    Returns:
      Per kind: variables (name -> [shape, dtype]), metrics, export_dir,
      lite_metrics (tf.estimator's evaluation of the estimator_lite model_dir).
    """
    report = {"tf_version": tf.__version__}
    for kind in KINDS:
        tf_dir = driver_tools.model_dir(workdir, kind, "tf")
        estimator, label_key = build(tf.estimator, kind, tf_dir)
        estimator.train(input_fn(label_key), max_steps=first_steps)
        entry = {"variables": checkpoint_variables(tf_dir),
                 "metrics": plain_metrics(estimator.evaluate(input_fn(label_key, 1))),
                 "export_dir": driver_tools.export(
                     estimator, workdir, kind,
                     serving_input_receiver_fn(tf.estimator.export))}
        more_dir = driver_tools.copy_model_dir(workdir, kind, "tf", "tf_more")
        build(tf.estimator, kind, more_dir)[0].train(input_fn(label_key),
                                                     max_steps=more_steps)
        lite, _ = build(tf.estimator, kind,
                        driver_tools.model_dir(workdir, kind, lite_subdir))
        entry["lite_metrics"] = plain_metrics(lite.evaluate(input_fn(label_key, 1)))
        report[kind] = entry
    return report


if __name__ == "__main__":
    driver_tools.main(sys.argv, run, first_steps=int, more_steps=int, lite_subdir=str)
