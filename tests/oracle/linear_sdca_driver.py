"""Linear estimators trained with LinearSDCA, by tf.estimator 2.15 and estimator_lite.

tests/canned/linear_sdca_test.py imports this module for the estimator_lite side and
runs it as a script with the TF 2.15 interpreter (ESTIMATOR_LITE_TF215_PYTHON):

    python linear_sdca_driver.py run <workdir> <first_steps> <more_steps>

For each kind it trains ``<workdir>/<kind>/tf`` to `first_steps`, evaluates it,
continues a copy (``tf_more``) to `more_steps`, and prints one JSON line with the
checkpoints' contents (`checkpoint_state`) and the metrics.

Batches hold one example: TensorFlow's SDCA kernel visits a batch's examples in
an order drawn from std::random_device (and updates the weights from several
threads), so only one-example batches give the same numbers on every run.
"""

import sys

import driver_tools
import numpy as np
import tensorflow as tf

KINDS = ("classifier", "regressor", "classifier_v1")
_N = 10
_EMPTY_KEYS = ((0, 0), (1, 1))  # the table's free and deleted buckets


def data():
    """Dense, vocabulary (with OOV), multi-valued hashed and weighted-id features."""
    rng = np.random.RandomState(3)
    x = rng.randn(_N, 2).astype(np.float32)
    z = rng.uniform(-2.0, 2.0, (_N, 1)).astype(np.float32)
    tag = np.array(["a", "b", "c", "zz"])[rng.randint(0, 4, _N)]  # "zz": OOV
    indices, words = [], []
    for row in range(_N):
        # Some rows repeat a word (one weight, summed) and one row has none.
        row_words = [["u", "v", "w", "s"][(row + j) % 4] for j in range(row % 3)]
        if row % 4 == 1 and row_words:
            row_words.append(row_words[0])
        for j, word in enumerate(row_words):
            indices.append([row, j])
            words.append(word)
    words_sparse = tf.compat.v1.SparseTensorValue(
        np.array(indices, np.int64).reshape(-1, 2), np.array(words), [_N, 3])
    k_indices = [[row, j] for row in range(_N) for j in range(1 + row % 2)]
    ids = [(row * 3 + j) % 4 for row, j in k_indices]
    id_weights = rng.uniform(0.5, 2.0, len(k_indices)).astype(np.float32)
    shape = [_N, 2]
    features = {
        "id": np.array([f"example-{i}".encode() for i in range(_N)]),
        "x": x, "z": z, "tag": tag, "words": words_sparse,
        "k": tf.compat.v1.SparseTensorValue(np.array(k_indices, np.int64),
                                            np.array(ids, np.int64), shape),
        "kw": tf.compat.v1.SparseTensorValue(np.array(k_indices, np.int64), id_weights,
                                             shape),
        "w": rng.uniform(0.5, 3.0, (_N, 1)).astype(np.float32)}
    score = x[:, 0] - 2.0 * x[:, 1] + (tag == "b") - 0.5
    labels = {"class": (score > 0).astype(np.int64).reshape(-1, 1),
              "real": (score + 0.3 * z[:, 0]).astype(np.float32).reshape(-1, 1)}
    return features, labels


def input_fn(kind, epochs=None, batch_size=1):
    """The table in order, one example per batch unless told (both libraries)."""
    label_key = "real" if kind == "regressor" else "class"

    def fn():
        features, labels = data()
        return driver_tools.table_dataset(features, labels[label_key], epochs, batch_size)
    return fn


def columns(kind):
    """The kind's feature columns (TF2 spelling, usable by both libraries)."""
    fc = tf.feature_column
    x = fc.numeric_column("x", shape=(2,))
    if kind == "regressor":
        k = fc.weighted_categorical_column(
            fc.categorical_column_with_identity("k", num_buckets=4), "kw")
        return [x, fc.bucketized_column(fc.numeric_column("z"), [-1.0, 0.0, 1.0]), k]
    return [x, fc.categorical_column_with_vocabulary_list("tag", ["a", "b", "c"]),
            fc.categorical_column_with_hash_bucket("words", 5)]


def build(v2, v1, kind, model_dir):
    """The kind's estimator; `v2`/`v1` are tf.estimator/tf.compat.v1.estimator or
    estimator_lite/estimator_lite.compat.v1."""
    if kind == "regressor":
        sdca = v2.experimental.LinearSDCA(example_id_column="id",
                                          symmetric_l2_regularization=1.5)
        return v2.LinearRegressor(columns(kind), model_dir=model_dir, optimizer=sdca)
    if kind == "classifier":
        sdca = v2.experimental.LinearSDCA(
            example_id_column="id", num_loss_partitions=2, num_table_shards=3,
            symmetric_l1_regularization=0.05, symmetric_l2_regularization=2.0)
        return v2.LinearClassifier(columns(kind), model_dir=model_dir, weight_column="w",
                                   optimizer=sdca)
    if kind == "classifier_v1":
        sdca = v1.experimental.LinearSDCA(example_id_column="id",
                                          symmetric_l1_regularization=0.1,
                                          symmetric_l2_regularization=1.0)
        return v1.LinearClassifier(columns(kind), model_dir=model_dir, optimizer=sdca)
    raise ValueError(f"unknown kind {kind!r}")


def checkpoint_state(model_dir):
    """The latest checkpoint's contents as JSON-able data.

    Returns {"variables": {name: [shape, dtype, values]}, "table": sorted
    [shard name, key pair, state] of the occupied buckets of every shard}; the raw
    table tensors (131072 buckets) are listed in variables without values.
    """
    reader = tf.train.load_checkpoint(model_dir)
    dtypes = reader.get_variable_to_dtype_map()
    variables, rows = {}, []
    for name, shape in sorted(reader.get_variable_to_shape_map().items()):
        values = reader.get_tensor(name)
        entry = [list(shape), dtypes[name].name]
        if name.endswith("-keys"):
            states = reader.get_tensor(name[:-len("-keys")] + "-values")
            occupied = [i for i, key in enumerate(values.tolist())
                        if tuple(key) not in _EMPTY_KEYS]
            table = name[:-len("-keys")]
            rows += [[table, values[i].tolist(), states[i].tolist()] for i in occupied]
        elif not name.endswith("-values"):
            entry.append(np.asarray(values).tolist())
        variables[name] = entry
    return {"variables": variables, "table": sorted(rows)}


def run(workdir, first_steps, more_steps):
    """Trains, evaluates and continues each kind with tf.estimator (see module doc)."""
    v2, v1 = tf.estimator, tf.compat.v1.estimator
    report = {"tf_version": tf.__version__}
    for kind in KINDS:
        tf_dir = driver_tools.model_dir(workdir, kind, "tf")
        estimator = build(v2, v1, kind, tf_dir)
        estimator.train(input_fn(kind), max_steps=first_steps)
        entry = {"state": checkpoint_state(tf_dir),
                 "metrics": driver_tools.plain_metrics(
                     estimator.evaluate(input_fn(kind, 1, 5)))}
        more_dir = driver_tools.copy_model_dir(workdir, kind, "tf", "tf_more")
        build(v2, v1, kind, more_dir).train(input_fn(kind), max_steps=more_steps)
        entry["more_state"] = checkpoint_state(more_dir)
        report[kind] = entry
    return report


if __name__ == "__main__":
    driver_tools.main(sys.argv, run, first_steps=int, more_steps=int)
