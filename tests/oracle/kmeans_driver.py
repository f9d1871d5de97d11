"""KMeans (KMeansClustering) of tf.compat.v1.estimator 2.15 and estimator_lite.

tests/canned/kmeans_test.py imports this module for the estimator_lite side and runs
it as a script with the TF 2.15 interpreter (ESTIMATOR_LITE_TF215_PYTHON):

    python kmeans_driver.py run <workdir>

For each kind it trains ``<workdir>/<kind>/tf`` for FIRST_STEPS, reads the results
(`results`), continues a copy (``tf_more``) for MORE_STEPS more, and prints one JSON
line. tf.estimator runs with one thread per session: its mini-batch graph leaves a
count read and update unordered, so only then is its result reproducible.
"""

import sys

import driver_tools
import numpy as np
import tensorflow as tf
from driver_tools import checkpoint_variables

KINDS = ("full_random", "mini_kmeans_plus_plus_cosine", "mini_sync_columns",
         "array_init_tolerance")
EXPORTED_KINDS = ("full_random",)
FIRST_STEPS = 6
MORE_STEPS = 4
_N = 30


def points():
    """Three blobs in 2-D, shuffled (fixed)."""
    rng = np.random.RandomState(0)
    data = np.concatenate([rng.randn(10, 2) + center
                           for center in ([0, 0], [5, 5], [0, 6])]).astype(np.float32)
    rng.shuffle(data)
    return data


def input_fn(kind, epochs=None, batch_size=None):
    """Points as a dict of two features, or (array_init_tolerance) as one Tensor."""
    full = kind in ("full_random", "array_init_tolerance")
    batch_size = batch_size or (_N if full else 6)

    def fn():
        data = points()
        features = data if kind == "array_init_tolerance" else {
            "a": data[:, :1], "b": data[:, 1:]}
        return tf.data.Dataset.from_tensor_slices(features).repeat(epochs).batch(
            batch_size)
    return fn


def build(v1, kind, model_dir, single_thread=True):
    """The kind's KMeans; `v1` is tf.compat.v1.estimator or estimator_lite.compat.v1."""
    session_config = (tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1,
                                               inter_op_parallelism_threads=1)
                      if single_thread else None)
    config = v1.RunConfig(tf_random_seed=11, session_config=session_config)
    kmeans = v1.experimental.KMeans
    if kind == "full_random":
        return kmeans(3, model_dir=model_dir, use_mini_batch=False, config=config)
    if kind == "mini_kmeans_plus_plus_cosine":
        return kmeans(3, model_dir=model_dir, config=config, seed=4,
                      initial_clusters=kmeans.KMEANS_PLUS_PLUS_INIT,
                      distance_metric=kmeans.COSINE_DISTANCE)
    if kind == "mini_sync_columns":
        columns = [tf.feature_column.numeric_column("a"),
                   tf.feature_column.numeric_column("b")]
        return kmeans(3, model_dir=model_dir, config=config,
                      mini_batch_steps_per_iteration=3, feature_columns=columns)
    if kind == "array_init_tolerance":
        return kmeans(5, model_dir=model_dir, config=config, use_mini_batch=False,
                      initial_clusters=np.array([[0.0, 1.0], [1.0, 0.0], [4.0, 4.0]],
                                                np.float32),
                      relative_tolerance=1e-3)
    raise ValueError(f"unknown kind {kind!r}")


def results(kmeans, kind):
    """Centers, score, step, cluster indices and distances, as JSON-able data."""
    return {
        "centers": kmeans.cluster_centers().tolist(),
        "score": float(kmeans.score(input_fn(kind, 1, _N))),
        "global_step": int(kmeans.get_variable_value("global_step")),
        "cluster_index": [int(i) for i in kmeans.predict_cluster_index(
            input_fn(kind, 1))],
        "transform": [np.asarray(d).tolist() for d in kmeans.transform(
            input_fn(kind, 1))][:8],
        "variables": checkpoint_variables(kmeans.model_dir)}


def serving_input_receiver_fn(export_lib):
    """Raw points [n, 2] under the feature names the model reads."""
    def fn():
        data = tf.compat.v1.placeholder(tf.float32, [None, 2], name="points")
        return export_lib.ServingInputReceiver(
            {"a": data[:, :1], "b": data[:, 1:]}, {"points": data})
    return fn


def run(workdir):
    """Trains, reads and continues each kind with tf.estimator (see module doc)."""
    v1 = tf.compat.v1.estimator
    report = {"tf_version": tf.__version__}
    for kind in KINDS:
        tf_dir = driver_tools.model_dir(workdir, kind, "tf")
        kmeans = build(v1, kind, tf_dir)
        kmeans.train(input_fn(kind), steps=FIRST_STEPS)
        entry = results(kmeans, kind)
        if kind in EXPORTED_KINDS:
            entry["export_dir"] = driver_tools.export(
                kmeans, workdir, kind, serving_input_receiver_fn(tf.estimator.export))
        more = build(v1, kind, driver_tools.copy_model_dir(workdir, kind, "tf", "tf_more"))
        more.train(input_fn(kind), steps=MORE_STEPS)
        entry["more_centers"] = more.cluster_centers().tolist()
        entry["more_global_step"] = int(more.get_variable_value("global_step"))
        report[kind] = entry
    return report


if __name__ == "__main__":
    driver_tools.main(sys.argv, run)
