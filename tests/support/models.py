"""Small models and inputs shared by the tests (not a test file)."""

import numpy as np
import tensorflow as tf2

import estimator_lite as el
from estimator_lite._tf import tf

NUM_FEATURES = 4
TRUE_WEIGHTS = np.array([[1.0], [2.0], [-1.0], [0.5]], np.float32)
TRUE_BIAS = 0.3


def linear_data(n=256, seed=0):
    """Returns (x [n, 4] float32, y [n, 1] float32) from a fixed linear model."""
    x = np.random.RandomState(seed).randn(n, NUM_FEATURES).astype(np.float32)
    return x, x @ TRUE_WEIGHTS + TRUE_BIAS


def input_fn(n=256, batch_size=32, epochs=None):
    """input_fn over linear_data returning a Dataset of ({'x': ...}, y).

    Written the way users write it: the TF2 `tf.data.Dataset`.
    """
    def fn():
        x, y = linear_data(n)
        return tf2.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat(epochs).batch(
            batch_size)
    return fn


def linear_model_fn(features, labels, mode, params):
    """Linear regression; params: learning_rate (default 0.1), optimizer."""
    w = tf.get_variable("w", [NUM_FEATURES, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    predictions = tf.matmul(features["x"], w) + b
    if mode == el.ModeKeys.PREDICT:
        return el.EstimatorSpec(mode, predictions={"y": predictions}, export_outputs={
            "regress": el.export.PredictOutput({"outputs": predictions})})
    loss = tf.reduce_mean(tf.square(predictions - labels))
    optimizer = tf.train.GradientDescentOptimizer(params.get("learning_rate", 0.1))
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    metrics = {"mae": tf.metrics.mean_absolute_error(labels, predictions)}
    return el.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics,
                            predictions={"y": predictions})


def squared_error_spec(mode, predictions, labels, learning_rate=0.1, metrics_fn=None):
    """The EstimatorSpec of a small regression model_fn.

    Args:
      mode: the model_fn's mode.
      predictions: the model's output.
      labels: the model_fn's labels.
      learning_rate: of the SGD step that minimizes the loss.
      metrics_fn: builds the eval_metric_ops (after the loss and the train op), or
        None.

    Returns:
      In PREDICT, predictions {"y": predictions}; otherwise the mean squared error as
      the loss and its SGD minimization (on the global step) as the train op.
    """
    if mode == el.ModeKeys.PREDICT:
        return el.EstimatorSpec(mode, predictions={"y": predictions})
    loss = tf.reduce_mean(tf.square(predictions - labels))
    train_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(
        loss, global_step=tf.train.get_global_step())
    return el.EstimatorSpec(mode, loss=loss, train_op=train_op,
                            eval_metric_ops=metrics_fn() if metrics_fn else None)


def read_batches(input_fn, max_batches=50):
    """Runs input_fn in a fresh graph; returns its batches until the input ends."""
    batches = []
    with tf.Graph().as_default():
        tensors = input_fn()
        with tf.Session() as session:
            for _ in range(max_batches):
                try:
                    batches.append(session.run(tensors))
                except tf.errors.OutOfRangeError:
                    break
    return batches


def raw_serving_input_fn():
    return el.export.build_raw_serving_input_receiver_fn(
        {"x": tf.TensorSpec([None, NUM_FEATURES], tf.float32)})()


def make_estimator(model_dir, params=None, **config_kwargs):
    """A linear Estimator; checkpoints every 10 steps unless told otherwise."""
    config_kwargs.setdefault("save_checkpoints_steps", 10)
    config = el.RunConfig(model_dir=str(model_dir), **config_kwargs)
    return el.Estimator(linear_model_fn, config=config, params=params)


def run_in_threads(functions, timeout_secs=180):
    """Runs {name: fn} concurrently (e.g. one cluster role each) and waits.

    Returns:
      (results {name: return value}, errors [(name, repr)], names still running).
    """
    import threading  # noqa: PLC0415 - only the cluster tests need it

    results, errors = {}, []

    def run(name, fn):
        try:
            results[name] = fn()
        except Exception as e:  # noqa: BLE001 - reported to the calling test
            errors.append((name, repr(e)))

    threads = {name: threading.Thread(target=run, args=(name, fn), daemon=True)
               for name, fn in functions.items()}
    for thread in threads.values():
        thread.start()
    for thread in threads.values():
        thread.join(timeout=timeout_secs)
    return results, errors, [name for name, t in threads.items() if t.is_alive()]
