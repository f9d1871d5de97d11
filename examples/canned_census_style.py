"""Wide & deep on tabular data, the way the Cloud census sample does it.

A canned DNNLinearCombinedClassifier on a table with numeric and categorical
columns, trained with train_and_evaluate and exported by a FinalExporter through a
parsing serving input fn (clients send serialized tf.train.Example protos, as to
a census model). The table is built from the bundled UCI digits (examples/data,
CC BY 4.0), so nothing is downloaded:
  * ``pixels``: 64 numbers in [0, 1] (a numeric column; the deep part),
  * ``row0`` .. ``row7``: the column with the most ink in each pixel row, "c0".."c7"
    or "blank" (categorical columns: one-hot in the wide part, embedded in the deep
    part, and one crossed pair),
  * the label: "high" for digits 5-9, "low" for 0-4 (a label vocabulary).
The export is reloaded in TF2 eager mode and scored on serialized Examples.

    python examples/canned_census_style.py [--model-dir DIR] [--max-steps 1000]

With tf.estimator 2.15 the same program ran with ``tf.estimator`` in place of
``el`` (and tf.keras.optimizers.legacy for the optimizer instance).
"""

import argparse
import gzip
import os
import tempfile

import numpy as np
import tensorflow as tf

import estimator_lite as el

DATA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                         "digits.csv.gz")
ROWS = 8
VOCABULARY = [f"c{i}" for i in range(8)] + ["blank"]


def load_table(test_fraction=0.2, seed=0):
    """Returns (train_features, train_labels, test_features, test_labels)."""
    with gzip.open(DATA_PATH, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    pixels = table[:, :64] / 16.0
    labels = np.where(table[:, 64] >= 5, "high", "low")
    features = {"pixels": pixels}
    for row in range(ROWS):
        ink = pixels.reshape(-1, ROWS, 8)[:, row, :]
        names = np.array([f"c{i}" for i in np.argmax(ink, axis=1)])
        features[f"row{row}"] = np.where(ink.max(axis=1) > 0, names, "blank")
    order = np.random.RandomState(seed).permutation(len(labels))
    n_test = int(len(labels) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return ({k: v[train] for k, v in features.items()}, labels[train],
            {k: v[test] for k, v in features.items()}, labels[test])


def feature_columns():
    """(wide columns, deep columns), as a census model would define them."""
    rows = [tf.feature_column.categorical_column_with_vocabulary_list(f"row{i}",
                                                                      VOCABULARY)
            for i in range(ROWS)]
    wide = rows + [tf.feature_column.crossed_column([rows[2], rows[5]], 50)]
    deep = [tf.feature_column.numeric_column("pixels", shape=(64,))]
    deep += [tf.feature_column.embedding_column(r, 4) for r in rows]
    return wide, deep


def make_input_fn(features, labels, epochs=None, shuffle=True):
    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices((features, labels))
        if shuffle:
            dataset = dataset.shuffle(len(labels), seed=1)
        return dataset.repeat(epochs).batch(64)
    return input_fn


def serialized_examples(features):
    """The rows of `features` as serialized tf.train.Example protos (client side)."""
    out = []
    for i in range(len(features["pixels"])):
        feature = {"pixels": tf.train.Feature(
            float_list=tf.train.FloatList(value=features["pixels"][i]))}
        for row in range(ROWS):
            value = features[f"row{row}"][i].encode()
            feature[f"row{row}"] = tf.train.Feature(
                bytes_list=tf.train.BytesList(value=[value]))
        example = tf.train.Example(features=tf.train.Features(feature=feature))
        out.append(example.SerializeToString())
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", default=None,
                        help="checkpoints and exports (default: a new temp dir)")
    parser.add_argument("--max-steps", type=int, default=1000)
    args = parser.parse_args(argv)
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="census_style_")
    x_train, y_train, x_test, y_test = load_table()
    wide, deep = feature_columns()
    estimator = el.DNNLinearCombinedClassifier(
        linear_feature_columns=wide, dnn_feature_columns=deep,
        dnn_hidden_units=[64, 32], dnn_optimizer=tf.keras.optimizers.Adagrad(0.05),
        label_vocabulary=["low", "high"],
        config=el.RunConfig(model_dir=model_dir, save_checkpoints_steps=500,
                            log_step_count_steps=250, tf_random_seed=42))
    parse_spec = tf.compat.v1.feature_column.make_parse_example_spec(wide + deep)
    exporter = el.FinalExporter(
        "census", el.export.build_parsing_serving_input_receiver_fn(parse_spec))
    train_spec = el.TrainSpec(make_input_fn(x_train, y_train), max_steps=args.max_steps)
    eval_spec = el.EvalSpec(make_input_fn(x_test, y_test, epochs=1, shuffle=False),
                            steps=None, exporters=[exporter], throttle_secs=0)
    metrics, export_dirs = el.train_and_evaluate(estimator, train_spec, eval_spec)
    export_dir = export_dirs[-1].decode("utf-8")
    served = tf.saved_model.load(export_dir).signatures["predict"](
        examples=tf.constant(serialized_examples(x_test)))
    classes = np.array([c.decode() for c in served["classes"].numpy()[:, 0]])
    reloaded = float(np.mean(classes == y_test))
    print(f"test accuracy {metrics['accuracy']:.4f} (evaluate), {reloaded:.4f} "
          f"(reloaded SavedModel {export_dir}), auc {metrics['auc']:.4f} at step "
          f"{metrics['global_step']}")
    return metrics, reloaded


if __name__ == "__main__":
    main()
