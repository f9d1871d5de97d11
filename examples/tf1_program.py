"""A TF1-era program, unchanged on TF 1.15 (Python 3.7) and on TF 2.16+.

The digits classifier as TF 1.x code wrote it: a `tf.layers` model_fn, data-parallel
towers over two CPU devices (`replicate_model_fn` + `TowerOptimizer`, what
tf.contrib.estimator had), `train_and_evaluate` with a LatestExporter, then the
export reloaded with TF1's `tf.saved_model.loader.load` into a Session and served.

    python examples/tf1_program.py [--model-dir DIR] [--max-steps 600] [--towers 2]

The same script runs as a cluster (chief, worker, ps and evaluator on 127.0.0.1):

    python -m estimator_lite.launch --ps 1 --workers 1 --evaluator -- \\
        python examples/tf1_program.py --model-dir /tmp/tf1_cluster

On TF 2.16+, `tf.layers` needs Keras 2: `pip install tf-keras` (the script sets
TF_USE_LEGACY_KERAS=1 itself, before TensorFlow is imported).
"""

import argparse
import json
import os
import sys
import tempfile

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.layers on TF >= 2.16

import numpy as np  # noqa: E402 - after TF_USE_LEGACY_KERAS
import tensorflow.compat.v1 as tf  # noqa: E402

import estimator_lite as tf_estimator  # noqa: E402 - was: tf.estimator, tf.contrib.estimator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import digits  # noqa: E402 - the sibling example's data (numpy only)


def input_fn(x, y, batch_size=64, epochs=None, shuffle=True):
    """An input_fn yielding ({'pixels': [batch, 64]}, labels)."""
    def fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"pixels": x}, y))
        if shuffle:
            dataset = dataset.shuffle(len(x), seed=1)
        return dataset.repeat(epochs).batch(batch_size)
    return fn


def model_fn(features, labels, mode, params):
    """A 64-128-10 tf.layers network; Adam wrapped in TowerOptimizer."""
    training = mode == tf_estimator.ModeKeys.TRAIN
    hidden = tf.layers.dense(features["pixels"], 128, activation=tf.nn.relu,
                             name="hidden")
    hidden = tf.layers.dropout(hidden, rate=0.1, training=training, seed=7)
    logits = tf.layers.dense(hidden, digits.NUM_CLASSES, name="logits")
    class_ids = tf.argmax(logits, axis=1)
    predictions = {"class_ids": class_ids, "probabilities": tf.nn.softmax(logits)}
    if mode == tf_estimator.ModeKeys.PREDICT:
        return tf_estimator.EstimatorSpec(mode, predictions=predictions, export_outputs={
            "serving_default": tf_estimator.export.PredictOutput(predictions)})
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    optimizer = tf_estimator.TowerOptimizer(
        tf.train.AdamOptimizer(params["learning_rate"]))
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    metrics = {"accuracy": tf.metrics.accuracy(labels, class_ids)}
    return tf_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      eval_metric_ops=metrics)


def serving_input_receiver_fn():
    """Clients send float32 rows of 64 pixels under the name 'pixels'."""
    pixels = tf.placeholder(tf.float32, [None, digits.NUM_PIXELS], name="pixels")
    return tf_estimator.export.ServingInputReceiver({"pixels": pixels},
                                                    {"pixels": pixels})


def serve(export_dir, x):
    """Reloads the SavedModel the TF1 way and runs its serving signature on x."""
    with tf.Graph().as_default(), tf.Session() as session:
        meta_graph = tf.saved_model.loader.load(
            session, [tf.saved_model.tag_constants.SERVING], export_dir)
        signature = meta_graph.signature_def["serving_default"]
        return session.run(signature.outputs["class_ids"].name,
                           {signature.inputs["pixels"].name: x})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--max-steps", type=int, default=600)
    parser.add_argument("--towers", type=int, default=2)
    args = parser.parse_args(argv)
    tf.logging.set_verbosity(tf.logging.INFO)
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="tf1_program_")
    x_train, y_train, x_test, y_test = digits.load_digits()
    devices = [f"/device:CPU:{i}" for i in range(args.towers)]
    config = tf_estimator.RunConfig(
        model_dir=model_dir, save_checkpoints_steps=200, log_step_count_steps=100,
        tf_random_seed=42, experimental_max_worker_delay_secs=1,
        session_config=tf.ConfigProto(device_count={"CPU": args.towers}))
    estimator = tf_estimator.Estimator(
        tf_estimator.replicate_model_fn(model_fn, devices=devices), config=config,
        params={"learning_rate": 0.01})
    train_spec = tf_estimator.TrainSpec(input_fn(x_train, y_train),
                                        max_steps=args.max_steps)
    eval_spec = tf_estimator.EvalSpec(
        input_fn(x_test, y_test, epochs=1, shuffle=False), steps=None, throttle_secs=0,
        start_delay_secs=0,  # a cluster's evaluator starts at once (default: 120 s)
        exporters=[tf_estimator.LatestExporter("latest", serving_input_receiver_fn,
                                               exports_to_keep=2)])
    metrics, export_dirs = tf_estimator.train_and_evaluate(estimator, train_spec,
                                                           eval_spec)
    if not export_dirs:  # a cluster's chief, worker or ps: the evaluator reports
        task = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {})
        print(f"tf1 program: {task.get('type')} {task.get('index')} done")
        return
    export_dir = export_dirs[-1].decode("utf-8")
    class_ids = serve(export_dir, x_test)
    print(f"tf1 program on TF {tf.VERSION}, {len(devices)} towers: test accuracy "
          f"{metrics['accuracy']:.4f} (evaluate), "
          f"{float(np.mean(class_ids == y_test)):.4f} (reloaded SavedModel "
          f"{export_dir}) at step {metrics['global_step']}; first test image: "
          f"served {class_ids[0]}, label {y_test[0]}")


if __name__ == "__main__":
    main()
