"""Main job: train a digit classifier with train_and_evaluate, export and reload it.

Uses the bundled UCI handwritten-digits data (examples/data, CC BY 4.0): 1,797 8x8
images, split 80/20 into train and test with a fixed seed. A two-layer network
reaches about 98% test accuracy in a few seconds on a laptop CPU. The test set is
evaluated after every checkpoint; a LatestExporter keeps the last three exports and
a BestExporter the ones with the lowest eval loss. The latest export is reloaded in
TF2 eager mode and scored again.

    python examples/digits.py [--model-dir DIR] [--max-steps 1500]
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
NUM_PIXELS = 64
NUM_CLASSES = 10


def load_digits(test_fraction=0.2, seed=0):
    """Returns (x_train, y_train, x_test, y_test); pixels scaled to [0, 1]."""
    with gzip.open(DATA_PATH, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    x = table[:, :NUM_PIXELS] / 16.0
    y = table[:, NUM_PIXELS].astype(np.int64)
    order = np.random.RandomState(seed).permutation(len(x))
    n_test = int(len(x) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def make_input_fn(x, y, batch_size=64, epochs=None, shuffle=True):
    """Returns an input_fn yielding ({'pixels': [batch, 64]}, labels)."""
    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"pixels": x}, y))
        if shuffle:
            dataset = dataset.shuffle(len(x), seed=1)
        return dataset.repeat(epochs).batch(batch_size)
    return input_fn


def _dense(inputs, units, name, activation=None):
    """A fully connected layer from tf.get_variable (tf.layers needs Keras 2)."""
    with tf.compat.v1.variable_scope(name):
        kernel = tf.compat.v1.get_variable(
            "kernel", [inputs.shape[-1], units],
            initializer=tf.compat.v1.glorot_uniform_initializer())
        bias = tf.compat.v1.get_variable(
            "bias", [units], initializer=tf.compat.v1.zeros_initializer())
        outputs = tf.matmul(inputs, kernel) + bias
        return activation(outputs) if activation else outputs


def model_fn(features, labels, mode, params):
    """A 64-128-10 network with a softmax cross-entropy loss.

    params: learning_rate, hidden_units, and optionally wrap_optimizer, a function
    applied to the Adam optimizer (examples/multi_tower.py passes TowerOptimizer).
    """
    hidden = _dense(features["pixels"], params.get("hidden_units", 128), "hidden",
                    tf.nn.relu)
    logits = _dense(hidden, NUM_CLASSES, "logits")
    class_ids = tf.argmax(logits, axis=1)
    predictions = {"class_ids": class_ids, "probabilities": tf.nn.softmax(logits)}
    if mode == el.ModeKeys.PREDICT:
        return el.EstimatorSpec(mode, predictions=predictions, export_outputs={
            "serving_default": el.export.PredictOutput(predictions)})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    optimizer = tf.compat.v1.train.AdamOptimizer(params.get("learning_rate", 0.01))
    optimizer = params.get("wrap_optimizer", lambda opt: opt)(optimizer)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    metrics = {"accuracy": tf.compat.v1.metrics.accuracy(labels, class_ids)}
    return el.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def serving_input_receiver_fn():
    """Clients send a float32 batch of 64-pixel rows under the name 'pixels'."""
    return el.export.build_raw_serving_input_receiver_fn(
        {"pixels": tf.TensorSpec([None, NUM_PIXELS], tf.float32)})()


def saved_model_accuracy(export_dir, x, y):
    """Reloads the SavedModel in TF2 eager mode and scores it on (x, y)."""
    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    class_ids = serve(pixels=tf.constant(x))["class_ids"].numpy()
    return float(np.mean(class_ids == y))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", default=None,
                        help="checkpoints and exports (default: a new temp dir)")
    parser.add_argument("--max-steps", type=int, default=1500)
    args = parser.parse_args(argv)
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="digits_")
    x_train, y_train, x_test, y_test = load_digits()
    print(f"digits: {len(x_train)} train / {len(x_test)} test images; model_dir "
          f"{model_dir}")
    config = el.RunConfig(model_dir=model_dir, save_checkpoints_steps=500,
                          log_step_count_steps=250, tf_random_seed=42)
    estimator = el.Estimator(model_fn, config=config, params={"learning_rate": 0.01})
    train_spec = el.TrainSpec(make_input_fn(x_train, y_train), max_steps=args.max_steps)
    eval_spec = el.EvalSpec(
        make_input_fn(x_test, y_test, epochs=1, shuffle=False), steps=None,
        exporters=[el.LatestExporter("latest", serving_input_receiver_fn,
                                     exports_to_keep=3),
                   el.BestExporter("best", serving_input_receiver_fn)],
        throttle_secs=0)
    metrics, export_dirs = el.train_and_evaluate(estimator, train_spec, eval_spec)
    # The LatestExporter's export of the final checkpoint (a bytes path, as in
    # tf.estimator).
    export_dir = export_dirs[0].decode("utf-8")
    reloaded = saved_model_accuracy(export_dir, x_test, y_test)
    print(f"test accuracy {metrics['accuracy']:.4f} (Estimator.evaluate), "
          f"{reloaded:.4f} (reloaded SavedModel {export_dir}) at step "
          f"{metrics['global_step']}")
    return metrics, reloaded


if __name__ == "__main__":
    main()
