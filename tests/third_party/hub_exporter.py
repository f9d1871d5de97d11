"""tensorflow_hub 0.15's estimator path, unchanged, under the runner.

`tensorflow_hub.estimator` does `from tensorflow.compat.v1 import estimator` and
defines `LatestModuleExporter(tf_estimator.Exporter)`, which after each evaluation
rebuilds the model_fn's PREDICT graph through `estimator.model_fn` and
`estimator._session_config`, restores the checkpoint and exports every module the
model_fn registered. A model_fn wraps a TF1 hub module; train_and_evaluate runs
with the exporter; the exported module is loaded back and served. Prints
`RESULT {json}`.
"""

import json
import os
import sys

import tensorflow as tf
import tensorflow_hub as hub


def module_fn():
    x = tf.compat.v1.placeholder(tf.float32, [None, 2])
    w = tf.compat.v1.get_variable("w", [2, 1],
                                  initializer=tf.compat.v1.zeros_initializer())
    hub.add_signature(inputs=x, outputs=tf.matmul(x, w))


SPEC = hub.create_module_spec(module_fn)


def model_fn(features, labels, mode):
    module = hub.Module(SPEC, trainable=True, name="linear")
    hub.register_module_for_export(module, "linear")
    predictions = module(features["x"])
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": predictions})
    loss = tf.reduce_mean(tf.square(predictions - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn():
    return tf.data.Dataset.from_tensors(({"x": [[1.0, 2.0]]}, [[3.0]])).repeat(20)


def serving_input_receiver_fn():
    x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
    return tf.estimator.export.ServingInputReceiver({"x": x}, {"x": x})


def main(model_dir):
    estimator = tf.estimator.Estimator(model_fn, config=tf.estimator.RunConfig(
        model_dir=model_dir, save_checkpoints_steps=10))
    exporter = hub.LatestModuleExporter("tf_hub", serving_input_receiver_fn)
    metrics, exports = tf.estimator.train_and_evaluate(
        estimator, tf.estimator.TrainSpec(input_fn, max_steps=20),
        tf.estimator.EvalSpec(input_fn, steps=2, throttle_secs=0, exporters=[exporter]))
    module_dir = os.path.join(exports[0].decode("utf-8"), "linear")
    with tf.Graph().as_default():
        served = hub.Module(module_dir)(tf.constant([[1.0, 2.0]]))
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            value = float(session.run(served)[0][0])
    print("RESULT " + json.dumps({
        "hub_version": hub.__version__, "global_step": int(metrics["global_step"]),
        "exported": sorted(os.listdir(os.path.dirname(module_dir))),
        "served": value,
        "w": [float(v) for v in estimator.get_variable_value("linear/w").ravel()]}))


if __name__ == "__main__":
    main(sys.argv[1])
