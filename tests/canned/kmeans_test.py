"""compat.v1.experimental.KMeans clusters as tf.compat.v1.estimator's KMeans (2.15).

tests/oracle/kmeans_driver.py builds the same four models for both libraries:
full-batch Lloyd steps from random centers; mini-batch k-means from k-means++
centers with the cosine distance; mini-batch with a synced working copy
(``mini_batch_steps_per_iteration=3``) reading feature columns; full batch from an
array of centers, stopped by ``relative_tolerance``, fed a plain Tensor. The TF 2.15
interpreter trains each (then continues a copy); estimator_lite must reach the same
centers, score, steps, cluster indices and distances, with the same checkpoint
variables, and continue tf.estimator's model_dirs to the same centers.
"""

import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

from estimator_lite.canned import kmeans as kmeans_lib
from estimator_lite.compat import v1
from tests.oracle import driver_path, load_driver, requires_oracle, run_oracle_driver

DRIVER_PATH = driver_path("kmeans_driver.py")
TOLERANCE = 1e-5

driver = load_driver(DRIVER_PATH, "kmeans_driver")


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    """tf.estimator's model_dirs and results (one TF 2.15 subprocess)."""
    workdir = str(tmp_path_factory.mktemp("kmeans_oracle"))
    report = run_oracle_driver(DRIVER_PATH, "run", workdir)
    return workdir, report


def _signatures(export_dir):
    """{signature key: (method, inputs, {output: dtype})} of a SavedModel."""
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        meta_graph = tf.compat.v1.saved_model.loader.load(session, ["serve"], export_dir)
    return {key: (sig.method_name, sorted(sig.inputs),
                  {name: info.dtype for name, info in sig.outputs.items()})
            for key, sig in meta_graph.signature_def.items()}


@pytest.mark.slow
@requires_oracle
@pytest.mark.parametrize("kind", driver.KINDS)
def test_clusters_as_tf_estimator(kind, oracle, tmp_path):
    workdir, report = oracle
    expected = report[kind]
    # Several threads here: the result must not depend on scheduling.
    kmeans = driver.build(v1, kind, str(tmp_path / "lite"), single_thread=False)
    kmeans.train(driver.input_fn(kind), steps=driver.FIRST_STEPS)
    actual = driver.results(kmeans, kind)
    assert actual["variables"] == expected["variables"]
    assert actual["global_step"] == expected["global_step"]
    np.testing.assert_allclose(actual["centers"], expected["centers"], rtol=TOLERANCE,
                               atol=TOLERANCE)
    assert actual["score"] == pytest.approx(expected["score"], rel=TOLERANCE)
    assert actual["cluster_index"] == expected["cluster_index"]
    np.testing.assert_allclose(actual["transform"], expected["transform"],
                               rtol=TOLERANCE, atol=TOLERANCE)
    if kind in driver.EXPORTED_KINDS:
        export_dir = kmeans.export_saved_model(
            str(tmp_path / "export"),
            driver.serving_input_receiver_fn(v1.export)).decode()
        assert _signatures(export_dir) == _signatures(expected["export_dir"])
    more_dir = str(tmp_path / "more")
    shutil.copytree(os.path.join(workdir, kind, "tf"), more_dir)
    more = driver.build(v1, kind, more_dir, single_thread=False)
    more.train(driver.input_fn(kind), steps=driver.MORE_STEPS)
    assert int(more.get_variable_value("global_step")) == expected["more_global_step"]
    np.testing.assert_allclose(more.cluster_centers(), expected["more_centers"],
                               rtol=TOLERANCE, atol=TOLERANCE)


def test_is_tf_estimators_class_under_both_names():
    assert v1.experimental.KMeans is kmeans_lib.KMeansClustering
    assert v1.experimental.KMeans.CLUSTER_CENTERS_VAR_NAME == "clusters"
    assert (v1.experimental.KMeans.SCORE, v1.experimental.KMeans.ALL_DISTANCES) == (
        "score", "all_distances")


def test_full_batch_finds_the_blobs_and_callable_init_is_used(tmp_path):
    chosen = []
    blobs = np.array([[0, 0], [5, 5], [0, 6]], np.float32)
    # One point of each blob (the data set is one batch, in order).
    picks = [int(np.argmin(np.linalg.norm(driver.points() - blob, axis=1)))
             for blob in blobs]

    def one_point_per_blob(inputs, k):
        chosen.append(len(inputs))
        return tf.gather(inputs[0], picks)

    kmeans = v1.experimental.KMeans(3, model_dir=str(tmp_path), use_mini_batch=False,
                                    initial_clusters=one_point_per_blob)
    kmeans.train(driver.input_fn("full_random", 1))
    kmeans.train(driver.input_fn("full_random", 5))  # Lloyd steps: one per epoch
    centers = kmeans.cluster_centers()
    assert chosen == [1, 1]  # each train() graph builds the init op on [batch]
    # Converged: each center is the mean of the points nearest to it, one per blob.
    points = driver.points()
    owner = np.linalg.norm(points[:, None] - centers[None], axis=2).argmin(axis=1)
    np.testing.assert_allclose(centers, [points[owner == i].mean(axis=0)
                                         for i in range(3)], rtol=1e-4, atol=1e-4)
    assert sorted(np.linalg.norm(centers[:, None] - blobs[None], axis=2).argmin(
        axis=1)) == [0, 1, 2]
    indices = list(kmeans.predict_cluster_index(driver.input_fn("full_random", 1)))
    distances = np.stack(list(kmeans.transform(driver.input_fn("full_random", 1))))
    assert indices == list(distances.argmin(axis=1))
    np.testing.assert_allclose(
        distances, np.linalg.norm(driver.points()[:, None] - centers[None], axis=2),
        rtol=1e-4, atol=1e-3)  # transform: Euclidean (not squared) distances


def test_kmeans_plus_plus_needs_a_batch_with_enough_points(tmp_path):
    kmeans = v1.experimental.KMeans(
        8, model_dir=str(tmp_path), initial_clusters="kmeans_plus_plus",
        config=v1.RunConfig(tf_random_seed=1))
    with pytest.raises(tf.errors.InvalidArgumentError):
        kmeans.train(driver.input_fn("full_random", batch_size=6), steps=1)


@pytest.mark.parametrize("kwargs,error,message", [
    ({"initial_clusters": "kmc2"}, ValueError, "initial_clusters must be one of"),
    ({"distance_metric": "manhattan"}, ValueError, "distance_metric must be one of"),
    ({"num_clusters": 2.5}, TypeError, "num_clusters must be an int"),
    ({"num_clusters": 0}, ValueError, "num_clusters must be >= 1"),
    ({"use_mini_batch": "yes"}, TypeError, "use_mini_batch must be a bool"),
    ({"mini_batch_steps_per_iteration": 0}, ValueError,
     "mini_batch_steps_per_iteration must be >= 1"),
    ({"relative_tolerance": "small"}, TypeError, "relative_tolerance must be a number"),
    ({"initial_clusters": np.zeros([3])}, ValueError,
     r"non-empty \[num_clusters, dimension\] array"),
    ({"feature_columns": ["a"]}, TypeError, "feature_columns must contain only"),
])
def test_bad_arguments_are_named(kwargs, error, message):
    kwargs = {"num_clusters": 3, **kwargs}
    with pytest.raises(error, match=message):
        v1.experimental.KMeans(**kwargs)
