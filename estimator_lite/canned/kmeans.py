"""KMeansClustering: tf.compat.v1.estimator.experimental.KMeans on current TensorFlow.

An Estimator whose input_fn yields points only (a Tensor [n, d], or a dict of
features read through `feature_columns` or, without them, concatenated in key
order). The model holds the centers in the variable ``clusters``:

- initialization: before the first step a training hook runs the init op (each run
  reads a batch) until ``initialized`` is true; the centers are drawn at random
  from the batch (with replacement; all of it when it has no more points than
  centers are missing), by k-means++ (TensorFlow's ``KmeansPlusPlusInitialization``
  kernel, on one batch holding enough points), by a callable ``f(inputs, k)``, or
  given as an array;
- each training step finds every point's nearest center (``NearestNeighbors``
  kernel) and either moves every center to the mean of its points (full batch,
  plus 1e-6 in the count) or, with ``use_mini_batch``, moves the centers of the
  batch's points towards them at rate 1 / (points seen), in a working copy
  (``clusters_updated``) synced into ``clusters`` every
  ``mini_batch_steps_per_iteration`` steps (counts in ``Variable``);
- the loss is the sum over the batch of the distances to the nearest center
  (``score``); with the cosine distance points and centers are unit vectors.

Variable names, random draws (seeded as tf.estimator seeds them) and updates are
tf.estimator 2.15's, so a model_dir moves between the two libraries.
"""

from __future__ import annotations

import numbers
import os
import secrets
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from estimator_lite._tf import raw_op, tf
from estimator_lite.canned import feature_layers
from estimator_lite.estimator import Estimator
from estimator_lite.export.outputs import PredictOutput
from estimator_lite.model_fn import EstimatorSpec, ModeKeys

if TYPE_CHECKING:
    from estimator_lite.run_config import RunConfig

__all__ = ["KMeansClustering"]

SQUARED_EUCLIDEAN_DISTANCE = "squared_euclidean"
COSINE_DISTANCE = "cosine"
RANDOM_INIT = "random"
KMEANS_PLUS_PLUS_INIT = "kmeans_plus_plus"
CLUSTERS_VAR_NAME = "clusters"
_INIT_ALGORITHMS = (RANDOM_INIT, KMEANS_PLUS_PLUS_INIT)
_DISTANCE_METRICS = (SQUARED_EUCLIDEAN_DISTANCE, COSINE_DISTANCE)
_FULL_BATCH_EPSILON = 1e-6  # keeps an empty cluster's mean finite (at zero)


def _points(features, feature_columns):
    """The input points [n, d]: through the columns, or dict values in key order."""
    if not isinstance(features, dict):
        return features
    if feature_columns:
        return tf.feature_column.input_layer(features, list(feature_columns))
    keys = sorted(features)
    return tf.concat([features[key] for key in keys], axis=1)


def _normalized(tensor):
    return tf.nn.l2_normalize(tensor, axis=1)


def _unknown_shape_variable(name):
    # Centers are chosen at run time: the variable starts empty, of no fixed shape.
    return tf.Variable(tf.placeholder_with_default([], shape=None), name=name,
                       validate_shape=False, use_resource=True)


class _Graph:
    """The k-means variables and ops for one batch of points (tf.estimator's layout)."""

    def __init__(self, params, points, num_clusters):
        self.params = params
        self.points = points
        # What distances are measured between: unit vectors for the cosine distance.
        self.inputs = (_normalized(points) if params.distance_metric == COSINE_DISTANCE
                       else points)
        self.num_clusters = num_clusters
        self.seed = tf.get_seed(params.seed)[0]
        self.clusters = _unknown_shape_variable(CLUSTERS_VAR_NAME)
        self.initialized = tf.Variable(False, dtype=tf.bool, name="initialized",
                                       use_resource=True)
        if params.use_mini_batch and params.mini_batch_steps_per_iteration > 1:
            self.working = _unknown_shape_variable("clusters_updated")
            self.steps_to_sync = tf.Variable(
                params.mini_batch_steps_per_iteration, dtype=tf.int64,
                name="update_in_steps", use_resource=True)
            self.counts = tf.Variable(tf.zeros([num_clusters], tf.int64),
                                      use_resource=True)
        else:
            self.working = self.clusters
            self.steps_to_sync = None
            # Counts start at one per center, as in tf.estimator (see
            # _mini_batch_step for how they set the rate).
            self.counts = (tf.Variable(tf.ones([num_clusters], tf.int64),
                                       use_resource=True)
                           if params.use_mini_batch else None)

    @property
    def _cosine(self):
        return self.params.distance_metric == COSINE_DISTANCE

    @property
    def _centers_kept_unit(self):
        """Whether the variable itself holds unit vectors (cosine, not per-step)."""
        return self._cosine and (not self.params.use_mini_batch or
                                 self.params.mini_batch_steps_per_iteration > 1)

    # Initialization ---------------------------------------------------------------

    def init_op(self):
        """Adds missing centers from this batch; sets `initialized` once all are in."""
        remaining = self.num_clusters - tf.shape(self.clusters)[0]

        def already_done():
            with tf.control_dependencies([tf.assert_equal(self.initialized, True)]):
                return tf.constant(True)
        return tf.cond(tf.equal(remaining, 0), already_done,
                       lambda: self._add_centers(remaining))

    def _add_centers(self, remaining):
        selected = tf.shape(self.clusters)[0]
        with tf.control_dependencies([tf.assert_positive(remaining)]):
            new = self._choose(remaining)
            if self._cosine:
                new = _normalized(new)
            combined = tf.cond(tf.equal(selected, 0), lambda: new,
                               lambda: tf.concat([self.clusters, new], 0))
            assigned = tf.assign(self.clusters, combined, validate_shape=False)
            if self.working is not self.clusters:
                assigned = tf.assign(self.working, assigned, validate_shape=False)
            now_remaining = self.num_clusters - tf.shape(assigned)[0]

        def mark_initialized():
            with tf.control_dependencies([tf.assign(self.initialized, True)]):
                return tf.constant(True)
        return tf.cond(tf.equal(now_remaining, 0), mark_initialized,
                       lambda: tf.constant(False))

    def _choose(self, remaining):
        initial = self.params.initial_clusters
        available = tf.shape(self.points)[0]
        if isinstance(initial, str) and initial == RANDOM_INIT:
            return tf.cond(available <= remaining, lambda: self.points,
                           lambda: self._random_points(remaining, available))
        if isinstance(initial, str):  # KMEANS_PLUS_PLUS_INIT
            with tf.control_dependencies([tf.assert_greater_equal(available, remaining)]):
                return self._kmeans_plus_plus(remaining)
        if callable(initial):
            return initial([self.points], remaining)
        with tf.control_dependencies([tf.assert_equal(remaining, tf.shape(initial)[0])]):
            return tf.identity(initial)

    def _random_points(self, remaining, available):
        picks = tf.random_uniform(tf.reshape(remaining, [-1]), minval=0,
                                  maxval=tf.cast(available, tf.int64), seed=self.seed,
                                  dtype=tf.int64)
        return tf.gather(self.points, picks)

    def _kmeans_plus_plus(self, remaining):
        seed = self.seed
        if seed is None:  # no seed anywhere: a fresh draw, as for the random init
            seed = secrets.randbelow(2**31 - 1)
        return raw_op("KmeansPlusPlusInitialization", "KMeans' k-means++ init")(
            points=self.inputs, num_to_sample=tf.cast(remaining, tf.int64),
            seed=tf.constant(seed, tf.int64),
            num_retries_per_sample=tf.constant(
                self.params.kmeans_plus_plus_num_retries, tf.int64))

    # Inference and training --------------------------------------------------------

    def assign_points(self, after=()):
        """(all distances [n, k], nearest center [n], its distance [n]) of the batch.

        The centers are read after the ops `after` (a due sync of the working copy).
        """
        points = self.inputs
        with tf.control_dependencies(list(after)):
            centers = tf.identity(self.clusters.read_value())
        if self._cosine and not self._centers_kept_unit:
            centers = _normalized(centers)
        if self._cosine:
            all_distances = 1 - tf.matmul(points, centers, transpose_b=True)
            nearest_to = _normalized(centers) if not self._centers_kept_unit else centers
        else:
            all_distances = (
                tf.reduce_sum(tf.square(points), 1, keepdims=True)
                - 2 * tf.matmul(points, centers, transpose_b=True)
                + tf.transpose(tf.reduce_sum(tf.square(centers), 1, keepdims=True)))
            nearest_to = centers
        indices, distances = raw_op("NearestNeighbors", "KMeans")(
            points=points, centers=nearest_to, k=tf.constant(1, tf.int64))
        if self._cosine:  # squared distance of unit vectors = 2 * cosine distance
            distances *= 0.5
        return all_distances, tf.squeeze(indices, [-1]), tf.squeeze(distances, [-1])

    def train_op(self, nearest):
        """One full-batch Lloyd step, or one mini-batch step (after a due sync)."""
        if not self.params.use_mini_batch:
            return self._full_batch_step(nearest)
        return self._mini_batch_step(nearest)

    def _full_batch_step(self, nearest):
        points = self.inputs
        sums = tf.unsorted_segment_sum(points, nearest, self.num_clusters)
        ones = tf.reshape(tf.ones(tf.reshape(tf.shape(points)[0], [-1])), [-1, 1])
        counts = tf.unsorted_segment_sum(ones, nearest, self.num_clusters)
        means = sums / (tf.cast(counts, sums.dtype) +
                        tf.constant(_FULL_BATCH_EPSILON, points.dtype))
        if self._centers_kept_unit:
            means = _normalized(means)
        return tf.assign(self.clusters, means)

    def sync_if_due(self):
        """Every `mini_batch_steps_per_iteration` steps: working copy -> clusters."""
        if self.steps_to_sync is None:
            return tf.no_op()
        period = self.params.mini_batch_steps_per_iteration

        def sync():
            with tf.control_dependencies([tf.assign(self.steps_to_sync, period - 1)]):
                synced = _normalized(self.working) if self._cosine else tf.identity(
                    self.working)
            with tf.control_dependencies([tf.assign(self.clusters, synced)]), \
                    tf.control_dependencies(
                        [tf.assign(self.counts, tf.zeros_like(self.counts))]):
                return tf.identity(self.steps_to_sync.read_value())
        def count_down():
            with tf.control_dependencies([tf.assign_sub(self.steps_to_sync, 1).op]):
                return tf.identity(self.steps_to_sync.read_value())
        return tf.cond(self.steps_to_sync <= 0, sync, count_down)

    def _mini_batch_step(self, nearest):
        points = self.inputs
        ids, position = tf.unique(tf.reshape(nearest, [-1]))
        count = tf.size(ids)
        new_counts = tf.unsorted_segment_sum(tf.ones_like(position, tf.int64), position,
                                             count)
        # tf.estimator's graph leaves the count update and the count read unordered;
        # its executor runs the update first (every single-threaded run, most
        # multi-threaded ones), so the rate divides by the updated count plus the
        # batch's. That order is fixed here.
        count_update = tf.scatter_add(self.counts, ids, new_counts).op
        with tf.control_dependencies([count_update]):
            counts = tf.gather(self.counts, ids) + new_counts
        old_centers = tf.gather(self.working, ids)
        column = tf.stack([count, 1])
        # Each touched center moves by (sum of its points - n * center) / count.
        moves = (tf.unsorted_segment_sum(points, position, count)
                 - tf.cast(tf.reshape(new_counts, column), points.dtype) * old_centers)
        moves *= tf.reshape(tf.reciprocal(tf.cast(counts, points.dtype)), column)
        return tf.group(count_update, tf.scatter_add(self.working, ids, moves))


class _InitializeClustersHook(tf.train.SessionRunHook):
    """Chooses the initial centers right after the session starts (chief only).

    The chief runs the init op, one batch per run, until every center is chosen;
    other workers wait for it.
    """

    def __init__(self, init_op, initialized, is_chief):
        self._init_op = init_op
        self._initialized = initialized
        self._is_chief = is_chief

    def after_create_session(self, session, coord):
        while not session.run(self._initialized):
            if self._is_chief:
                session.run(self._init_op)
            else:
                time.sleep(1)


class _LossRelativeChangeHook(tf.train.SessionRunHook):
    """Stops training once the loss changes by less than `tolerance` (relative)."""

    def __init__(self, loss, tolerance):
        self._loss = loss
        self._tolerance = tolerance
        self._previous = None

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        loss = run_values.results
        # A previous loss of exactly 0 never stops training (as in tf.estimator).
        change = (abs(loss - self._previous) / (1 + abs(self._previous))
                  if self._previous else None)
        if change is not None and change < self._tolerance:
            run_context.request_stop()
        self._previous = loss


class _Params:
    """The checked constructor arguments the model_fn reads."""

    def __init__(self, num_clusters, initial_clusters, distance_metric, seed,
                 use_mini_batch, mini_batch_steps_per_iteration,
                 kmeans_plus_plus_num_retries, relative_tolerance, feature_columns):
        if isinstance(initial_clusters, str) and initial_clusters not in _INIT_ALGORITHMS:
            raise ValueError(f"initial_clusters must be one of {_INIT_ALGORITHMS}, a "
                             f"callable or an array of centers, got {initial_clusters!r}")
        if distance_metric not in _DISTANCE_METRICS:
            raise ValueError(f"distance_metric must be one of {_DISTANCE_METRICS}, got "
                             f"{distance_metric!r}")
        if isinstance(initial_clusters, str) or callable(initial_clusters):
            _check_int("num_clusters", num_clusters, 1)
        else:
            initial_clusters = np.asarray(initial_clusters, np.float32)
            if initial_clusters.ndim != 2 or not initial_clusters.shape[0]:
                raise ValueError("initial_clusters given as centers must be a non-empty "
                                 f"[num_clusters, dimension] array, got shape "
                                 f"{initial_clusters.shape}")
            num_clusters = initial_clusters.shape[0]  # as tf.estimator: the array wins
        if seed is not None:
            _check_int("seed", seed, 0)
        if not isinstance(use_mini_batch, bool):
            raise TypeError(f"use_mini_batch must be a bool, got {use_mini_batch!r}")
        _check_int("mini_batch_steps_per_iteration", mini_batch_steps_per_iteration, 1)
        _check_int("kmeans_plus_plus_num_retries", kmeans_plus_plus_num_retries, None)
        if relative_tolerance is not None and (
                isinstance(relative_tolerance, bool) or
                not isinstance(relative_tolerance, numbers.Real)):
            raise TypeError("relative_tolerance must be a number or None, got "
                            f"{relative_tolerance!r}")
        self.num_clusters = int(num_clusters)
        self.initial_clusters = initial_clusters
        self.distance_metric = distance_metric
        self.seed = seed
        self.use_mini_batch = use_mini_batch
        self.mini_batch_steps_per_iteration = int(mini_batch_steps_per_iteration)
        self.kmeans_plus_plus_num_retries = int(kmeans_plus_plus_num_retries)
        self.relative_tolerance = relative_tolerance
        self.feature_columns = feature_layers.check_feature_columns(
            feature_columns, allow_empty=True)


def _check_int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {value!r} of type "
                        f"{type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")


def _model_fn(params):
    def model_fn(features, mode, config):
        points = _points(features, params.feature_columns)
        graph = _Graph(params, points, params.num_clusters)
        sync = [graph.sync_if_due()] if mode == ModeKeys.TRAIN else []
        all_distances, nearest, distances = graph.assign_points(after=sync)
        loss = tf.reduce_sum(distances)
        tf.summary.scalar("loss/raw", loss)
        predictions = {KMeansClustering.ALL_DISTANCES: all_distances,
                       KMeansClustering.CLUSTER_INDEX: nearest}
        train_op, hooks = None, []
        if mode == ModeKeys.TRAIN:
            step = tf.assign_add(tf.train.get_global_step(), 1)
            with tf.control_dependencies([graph.train_op(nearest), step]):
                train_op = tf.identity(loss)
            hooks.append(_InitializeClustersHook(graph.init_op(), graph.initialized,
                                                 config.is_chief))
            if params.relative_tolerance is not None:
                hooks.append(_LossRelativeChangeHook(loss, params.relative_tolerance))
        return EstimatorSpec(
            mode, predictions=predictions, loss=loss, train_op=train_op,
            eval_metric_ops={KMeansClustering.SCORE: tf.metrics.mean(loss)},
            training_hooks=hooks,
            export_outputs={
                KMeansClustering.ALL_DISTANCES: PredictOutput(all_distances),
                KMeansClustering.CLUSTER_INDEX: PredictOutput(nearest),
                tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                    PredictOutput(nearest)})
    return model_fn


class KMeansClustering(Estimator):
    """K-means clustering (tf.compat.v1.estimator.experimental.KMeans).

    ```python
    kmeans = estimator_lite.compat.v1.experimental.KMeans(num_clusters=5,
                                                          use_mini_batch=False)
    for _ in range(10):
        kmeans.train(input_fn)  # input_fn: the whole data set, once
    centers = kmeans.cluster_centers()
    ```
    """

    SQUARED_EUCLIDEAN_DISTANCE = SQUARED_EUCLIDEAN_DISTANCE
    COSINE_DISTANCE = COSINE_DISTANCE
    RANDOM_INIT = RANDOM_INIT
    KMEANS_PLUS_PLUS_INIT = KMEANS_PLUS_PLUS_INIT
    SCORE = "score"
    CLUSTER_INDEX = "cluster_index"
    ALL_DISTANCES = "all_distances"
    CLUSTER_CENTERS_VAR_NAME = CLUSTERS_VAR_NAME

    def __init__(self, num_clusters: int | tf.Tensor,
                 model_dir: str | os.PathLike[str] | None = None,
                 initial_clusters: str | Any = RANDOM_INIT,
                 distance_metric: str = SQUARED_EUCLIDEAN_DISTANCE, seed: int | None = None,
                 use_mini_batch: bool = True, mini_batch_steps_per_iteration: int = 1,
                 kmeans_plus_plus_num_retries: int = 2,
                 relative_tolerance: float | None = None, config: RunConfig | None = None,
                 feature_columns: Iterable[Any] | None = None) -> None:
        """Checks the arguments (see tf.compat.v1.estimator.experimental.KMeans).

        Args:
          num_clusters: number of centers (ignored when `initial_clusters` is an
            array of centers).
          model_dir, config: as for `Estimator`.
          initial_clusters: RANDOM_INIT, KMEANS_PLUS_PLUS_INIT, a callable
            ``f(inputs, k)`` returning up to k centers from the list `inputs`, or
            an array [num_clusters, dimension].
          distance_metric: SQUARED_EUCLIDEAN_DISTANCE or COSINE_DISTANCE.
          seed: seed of the initial choice, used (as in tf.estimator) only when
            RunConfig sets no tf_random_seed (which then seeds it).
          use_mini_batch: mini-batch k-means (else each step is a full Lloyd
            iteration over the batch, which must be the whole data set).
          mini_batch_steps_per_iteration: steps between syncs of the centers.
          kmeans_plus_plus_num_retries: extra candidates per k-means++ draw
            (negative: a heuristic, O(log k)).
          relative_tolerance: stop when the loss changes by less than this.
          feature_columns: columns reading the points from a feature dict (None:
            every feature, concatenated in key order).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        params = _Params(num_clusters, initial_clusters, distance_metric, seed,
                         use_mini_batch, mini_batch_steps_per_iteration,
                         kmeans_plus_plus_num_retries, relative_tolerance,
                         feature_columns)
        self._distance_metric = distance_metric
        super().__init__(model_fn=_model_fn(params), model_dir=model_dir, config=config)

    def _predict_one_key(self, input_fn, key):
        for result in self.predict(input_fn=input_fn, predict_keys=[key]):
            yield result[key]

    def predict_cluster_index(self, input_fn: Callable[..., Any]) -> Iterator[np.integer]:
        """Yields the index of the nearest center of each input point."""
        yield from self._predict_one_key(input_fn, self.CLUSTER_INDEX)

    def score(self, input_fn: Callable[..., Any]) -> np.floating:
        """The sum of the distances of the first batch's points to their centers."""
        return self.evaluate(input_fn=input_fn, steps=1)[self.SCORE]

    def transform(self, input_fn: Callable[..., Any]) -> Iterator[np.ndarray]:
        """Yields each point's distances to every center.

        Euclidean distances (the square root of the model's squared distances), or
        cosine distances.
        """
        for distances in self._predict_one_key(input_fn, self.ALL_DISTANCES):
            if self._distance_metric == SQUARED_EUCLIDEAN_DISTANCE:
                yield np.sqrt(distances)
            else:
                yield distances

    def cluster_centers(self) -> np.ndarray:
        """The centers [num_clusters, dimension] of the latest checkpoint."""
        return self.get_variable_value(CLUSTERS_VAR_NAME)
