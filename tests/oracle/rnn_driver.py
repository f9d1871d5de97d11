"""RNN estimators of tf.estimator 2.15 and estimator_lite, built the same way.

tests/canned/rnn_test.py imports this module for the estimator_lite side and runs
it as a script with the TF 2.15 interpreter (ESTIMATOR_LITE_TF215_PYTHON):

    python rnn_driver.py run <workdir> <first_steps> <more_steps>

For each kind it trains ``<workdir>/<kind>/tf`` to `first_steps`, evaluates it
(and predicts or exports, for PREDICTED_KINDS and EXPORTED_KINDS), continues a
copy (``tf_more``) to `more_steps`, and prints one JSON line.
"""

import sys

import driver_tools
import numpy as np
import tensorflow as tf
from driver_tools import checkpoint_variables, plain_metrics

KINDS = ("lstm", "gru_stack", "sequences")
# Kinds whose predictions are compared (return_sequences adds the sequence mask),
# and whose SavedModel signatures are (one graph more each, so not every kind).
PREDICTED_KINDS = ("sequences",)
EXPORTED_KINDS = ("lstm",)
BATCH_SIZE = 8
MAX_STEPS_IN_SEQUENCE = 5
_N = 24
_TOKENS = ["a", "b", "c", "d"]


def _lengths(rng):
    """1..5 steps; every batch holds a full-length sequence (tf.estimator needs it)."""
    lengths = rng.randint(1, MAX_STEPS_IN_SEQUENCE + 1, _N)
    lengths[::BATCH_SIZE] = MAX_STEPS_IN_SEQUENCE
    return lengths


def data():
    """Sparse sequences (numbers, tokens), a context number, weights and labels."""
    rng = np.random.RandomState(0)
    lengths = _lengths(rng)
    indices, values, tokens = [], [], []
    labels_per_step = np.zeros([_N, MAX_STEPS_IN_SEQUENCE], np.int64)
    score = np.zeros(_N, np.float32)
    for row, length in enumerate(lengths):
        for step in range(length):
            value = rng.randn()
            token = _TOKENS[rng.randint(0, len(_TOKENS) + 1) % len(_TOKENS)]
            indices.append([row, step])
            values.append(value)
            tokens.append(token if rng.rand() > 0.1 else "zz")  # Some OOV.
            score[row] += value + (token == "a")
            labels_per_step[row, step] = int(score[row] > 0)
    shape = [_N, MAX_STEPS_IN_SEQUENCE]
    index_array = np.array(indices, np.int64)
    features = {
        "x": tf.compat.v1.SparseTensorValue(index_array, np.array(values, np.float32),
                                            shape),
        "tok": tf.compat.v1.SparseTensorValue(index_array, np.array(tokens), shape),
        "ctx": rng.randn(_N, 1).astype(np.float32),
        "w": rng.uniform(5.0, 20.0, (_N, 1)).astype(np.float32)}
    labels = {"multi": np.array(["lo", "mid", "hi"])[np.digitize(score, [-0.5, 0.5])],
              "real": score.reshape(-1, 1),
              "steps": labels_per_step}
    return features, labels


def input_fn(label_key, epochs=None):
    """An input_fn over the table, in order (both libraries see the same)."""
    def fn():
        features, labels = data()
        return driver_tools.table_dataset(features, labels[label_key], epochs, BATCH_SIZE)
    return fn


def columns():
    """Sequence and context columns (TF2 spelling, usable by both libraries)."""
    fc = tf.feature_column
    tok = fc.sequence_categorical_column_with_vocabulary_list("tok", _TOKENS,
                                                              num_oov_buckets=1)
    return {"x": fc.sequence_numeric_column("x"),
            "tok_emb": fc.embedding_column(tok, 3),
            "ctx": fc.numeric_column("ctx")}


def build(experimental, heads, kind, model_dir):
    """Returns (estimator, label key) for `kind`.

    `experimental` is tf.estimator.experimental or estimator_lite.experimental;
    `heads` the module holding RegressionHead.
    """
    c = columns()
    if kind == "lstm":  # By name: lr 0.05, clipnorm 5 (SUM loss, weights 5-20: clips).
        return experimental.RNNClassifier(
            [c["x"], c["tok_emb"]], context_feature_columns=[c["ctx"]], units=4,
            cell_type="lstm", model_dir=model_dir, n_classes=3, weight_column="w",
            label_vocabulary=["lo", "mid", "hi"], loss_reduction="sum"), "multi"
    if kind == "gru_stack":
        return experimental.RNNEstimator(
            heads.RegressionHead(), [c["x"], c["tok_emb"]], units=[4, 3],
            cell_type="gru", model_dir=model_dir, optimizer="Adam"), "real"
    if kind == "sequences":
        return experimental.RNNClassifier(
            [c["tok_emb"]], units=[3], return_sequences=True, model_dir=model_dir,
            optimizer="RMSProp"), "steps"
    raise ValueError(f"unknown kind {kind!r}")


def serving_input_receiver_fn(export_lib):
    """Parses tf.Examples holding the sequence, context and weight features."""
    spec = tf.feature_column.make_parse_example_spec(
        list(columns().values()) + [tf.feature_column.numeric_column("w")])
    return export_lib.build_parsing_serving_input_receiver_fn(spec)


def _first_predictions(estimator, label_key):
    """The predictions of the first batch, as lists (JSON)."""
    result = next(estimator.predict(input_fn(label_key, 1), yield_single_examples=False))
    return {k: np.asarray(v).tolist() for k, v in result.items()
            if np.asarray(v).dtype.kind in "fiub"}


def run(workdir, first_steps, more_steps):
    """Trains, evaluates and continues each kind with tf.estimator (see module doc)."""
    report = {"tf_version": tf.__version__}
    for kind in KINDS:
        tf_dir = driver_tools.model_dir(workdir, kind, "tf")
        estimator, label_key = build(tf.estimator.experimental, tf.estimator, kind,
                                     tf_dir)
        estimator.train(input_fn(label_key), max_steps=first_steps)
        entry = {"variables": checkpoint_variables(tf_dir),
                 "metrics": plain_metrics(estimator.evaluate(input_fn(label_key, 1)))}
        if kind in PREDICTED_KINDS:  # One graph more each: only where predict differs.
            entry["predictions"] = _first_predictions(estimator, label_key)
        if kind in EXPORTED_KINDS:
            entry["export_dir"] = driver_tools.export(
                estimator, workdir, kind, serving_input_receiver_fn(tf.estimator.export))
        more_dir = driver_tools.copy_model_dir(workdir, kind, "tf", "tf_more")
        build(tf.estimator.experimental, tf.estimator, kind, more_dir)[0].train(
            input_fn(label_key), max_steps=more_steps)
        report[kind] = entry
    return report


if __name__ == "__main__":
    driver_tools.main(sys.argv, run, first_steps=int, more_steps=int)
