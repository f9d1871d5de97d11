"""A canned classifier, its SavedModels and its own predictions, for both libraries.

tests/predictor_test.py imports this module for the data, the model and the
receivers (built with estimator_lite there), and runs it as a script with the TF 2.15
interpreter (ESTIMATOR_LITE_TF215_PYTHON) for tf.estimator's side:

    python predictor_driver.py <workdir>

trains the DNNClassifier with tf.estimator 2.15, exports it with a parsing and a raw
serving receiver, and prints one JSON line: the TF version, both export dirs, and
tf.estimator's own `predict` outputs for `predict_features()`.
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf

N_CLASSES = 3
COLORS = ("red", "green", "blue")
TRAIN_STEPS = 30
_N = 40
_PREDICT_N = 7


def data(n=_N, seed=0):
    """(features {'x': [n, 2] float32, 'color': [n] str}, labels [n] int64)."""
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 2).astype(np.float32)
    color = np.array(COLORS)[rng.randint(0, len(COLORS), n)]
    score = x[:, 0] - x[:, 1] + (color == "red")
    labels = np.digitize(score, [-0.5, 0.7]).astype(np.int64)
    return {"x": x, "color": color}, labels


def predict_features():
    """Features never seen in training."""
    return data(_PREDICT_N, seed=1)[0]


def input_fn(epochs=None, batch_size=8):
    """Training input: a tf.data.Dataset of (features, labels)."""
    def fn():
        return tf.data.Dataset.from_tensor_slices(data()).repeat(epochs).batch(batch_size)
    return fn


def predict_input_fn():
    """predict() input: predict_features() in one batch."""
    return tf.data.Dataset.from_tensor_slices(predict_features()).batch(_PREDICT_N)


def columns():
    """Feature columns in TF2 spelling (a numeric and a vocabulary column)."""
    fc = tf.feature_column
    color = fc.categorical_column_with_vocabulary_list("color", COLORS)
    return [fc.numeric_column("x", shape=(2,)), fc.indicator_column(color)]


def build(lib, model_dir):
    """The DNNClassifier; `lib` is tf.estimator or estimator_lite."""
    return lib.DNNClassifier([5], columns(), model_dir=model_dir, n_classes=N_CLASSES,
                             config=lib.RunConfig(tf_random_seed=7))


def serialized_examples(features):
    """One serialized tf.Example per row of `features`."""
    examples = []
    for x, color in zip(features["x"], features["color"], strict=True):
        example = tf.train.Example(features=tf.train.Features(feature={
            "x": tf.train.Feature(float_list=tf.train.FloatList(value=x.tolist())),
            "color": tf.train.Feature(bytes_list=tf.train.BytesList(
                value=[color.encode()]))}))
        examples.append(example.SerializeToString())
    return examples


def parsing_receiver_fn(lib_export):
    """Serialized tf.Examples in (input 'examples')."""
    spec = tf.feature_column.make_parse_example_spec(columns())
    return lib_export.build_parsing_serving_input_receiver_fn(spec)


def raw_receiver_fn(lib_export):
    """Raw tensors in: 'x' [None, 2] float32 and 'color' [None] string."""
    def receiver_fn():
        inputs = {"x": tf.compat.v1.placeholder(tf.float32, [None, 2], name="x"),
                  "color": tf.compat.v1.placeholder(tf.string, [None], name="color")}
        return lib_export.ServingInputReceiver(inputs, inputs)
    return receiver_fn


def predictions(estimator):
    """{key: list per example} of estimator.predict over predict_features()."""
    keys = ("logits", "probabilities", "class_ids")
    rows = list(estimator.predict(predict_input_fn))
    return {key: [np.asarray(row[key]).tolist() for row in rows] for key in keys}


def run(workdir):
    """Trains, exports (parsing and raw receivers) and predicts with tf.estimator."""
    estimator = build(tf.estimator, os.path.join(workdir, "model"))
    estimator.train(input_fn(), max_steps=TRAIN_STEPS)
    export_base = os.path.join(workdir, "export")
    return {
        "tf_version": tf.__version__,
        "parsing_export": estimator.export_saved_model(
            export_base, parsing_receiver_fn(tf.estimator.export)).decode(),
        "raw_export": estimator.export_saved_model(
            export_base, raw_receiver_fn(tf.estimator.export)).decode(),
        "predictions": predictions(estimator)}


def main(argv):
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    if len(argv) != 2:
        raise SystemExit("usage: predictor_driver.py <workdir>")
    print(json.dumps(run(argv[1])))


if __name__ == "__main__":
    main(sys.argv)
