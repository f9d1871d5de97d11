"""The v1 canned estimators of tf.compat.v1.estimator 2.15 and estimator_lite.compat.v1.

tests/canned/v1_compat_test.py imports this module for the estimator_lite side and
runs it as a script with the TF 2.15 interpreter (ESTIMATOR_LITE_TF215_PYTHON) for
the tf.estimator side, so both build every model from the same code (data and
feature columns are canned_driver's):

    python canned_v1_driver.py run <workdir> <first_steps> <more_steps>

trains ``<workdir>/<kind>/tf`` to `first_steps` with tf.compat.v1.estimator,
evaluates and exports it, continues copies of it and of ``<kind>/lite`` (written by
estimator_lite) to `more_steps`, evaluates ``<kind>/lite``, and prints one JSON
line with the results (see `run`).
"""

import sys

import canned_driver as base  # data and columns shared with v2's driver
import driver_tools
import tensorflow as tf
from driver_tools import model_dir, plain_metrics

# One estimator per v1 class, each with other arguments than its neighbours.
KINDS = ("dnn", "dnn_regressor", "linear", "linear_regressor", "combined",
         "combined_regressor", "baseline", "baseline_regressor")
# To keep the test short, only these are exported (one per head: multi-class,
# binary, regression) and only these continue the estimator_lite model_dir on
# both sides (every kind continues tf.estimator's).
EXPORTED = ("dnn", "combined", "dnn_regressor")
REVERSE_CONTINUED = ("dnn", "linear", "combined_regressor", "baseline_regressor")


def build(lib, kind, model_dir):
    """Returns (estimator, label key); `lib` is tf.compat.v1.estimator or compat.v1."""
    c = base.columns()
    if kind == "dnn":
        return lib.DNNClassifier([6, 4], [c["x"], c["color_emb"], c["city_ind"], c["z"]],
                                 model_dir=model_dir, n_classes=3, weight_column="w",
                                 label_vocabulary=["lo", "mid", "hi"],
                                 batch_norm=True), "multi"
    if kind == "dnn_regressor":
        return lib.DNNRegressor([4], [c["x"], c["z"], c["color_emb"]], model_dir=model_dir,
                                optimizer="Adam", weight_column="w"), "real"
    if kind == "linear":
        return lib.LinearClassifier([c["x"], c["color"], c["city"], c["z"], c["cross"]],
                                    model_dir=model_dir, sparse_combiner="mean"), "binary"
    if kind == "linear_regressor":
        return lib.LinearRegressor(
            [c["x"], c["color"], c["z"]], model_dir=model_dir, weight_column="w",
            optimizer=tf.compat.v1.train.FtrlOptimizer(
                0.1, l1_regularization_strength=0.01)), "real"
    if kind == "combined":
        return lib.DNNLinearCombinedClassifier(
            model_dir=model_dir, linear_feature_columns=[c["color"], c["cross"], c["z"]],
            dnn_feature_columns=[c["x"], c["color_emb"]], dnn_hidden_units=[4]), "binary"
    if kind == "combined_regressor":
        return lib.DNNLinearCombinedRegressor(
            model_dir=model_dir, linear_feature_columns=[c["color"]],
            linear_optimizer="Adam", dnn_feature_columns=[c["x"], c["z"]],
            dnn_optimizer="RMSProp", dnn_hidden_units=[3]), "real"
    if kind == "baseline":
        return lib.BaselineClassifier(model_dir=model_dir, n_classes=3,
                                      label_vocabulary=["lo", "mid", "hi"]), "multi"
    if kind == "baseline_regressor":
        return lib.BaselineRegressor(model_dir=model_dir, weight_column="w"), "real"
    raise ValueError(f"unknown kind {kind!r}")


def continue_copy(lib, workdir, kind, source, target, max_steps):
    """Copies <kind>/<source> to <kind>/<target> and trains the copy to max_steps."""
    estimator, label_key = build(
        lib, kind, driver_tools.copy_model_dir(workdir, kind, source, target))
    estimator.train(base.input_fn(label_key), max_steps=max_steps)


def run(workdir, first_steps, more_steps):
    """The tf.compat.v1.estimator side, per kind.

    Returns:
      Per kind: variables (name -> [shape, dtype]) of ``tf``, its metrics and
      export_dir (EXPORTED kinds), lite_metrics (tf.estimator's evaluation of
      ``lite``); the copies ``tf_by_tf`` and ``lite_by_tf`` (REVERSE_CONTINUED
      kinds) are left trained to `more_steps`.
    """
    report = {"tf_version": tf.__version__}
    lib = tf.compat.v1.estimator
    for kind in KINDS:
        estimator, label_key = build(lib, kind, model_dir(workdir, kind, "tf"))
        estimator.train(base.input_fn(label_key), max_steps=first_steps)
        entry = {"variables": driver_tools.checkpoint_variables(estimator.model_dir),
                 "metrics": plain_metrics(estimator.evaluate(base.input_fn(label_key, 1)))}
        if kind in EXPORTED:
            entry["export_dir"] = driver_tools.export(
                estimator, workdir, kind,
                base.serving_input_receiver_fn(tf.estimator.export))
        lite, _ = build(lib, kind, model_dir(workdir, kind, "lite"))
        entry["lite_metrics"] = plain_metrics(lite.evaluate(base.input_fn(label_key, 1)))
        continue_copy(lib, workdir, kind, "tf", "tf_by_tf", more_steps)
        if kind in REVERSE_CONTINUED:
            continue_copy(lib, workdir, kind, "lite", "lite_by_tf", more_steps)
        report[kind] = entry
    return report


if __name__ == "__main__":
    driver_tools.main(sys.argv, run, first_steps=int, more_steps=int)
