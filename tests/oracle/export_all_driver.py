"""Exports train, eval and serving graphs with one library; prints what they hold.

`python export_all_driver.py lite|oracle`: `experimental_export_all_saved_models`
with `experimental.build_raw_supervised_input_receiver_fn`, then, for each
MetaGraph, its tags, and for each signature its method, input and output tensor
names. tests/export/export_all_test.py compares the two libraries' lines.
"""

import json
import os
import sys
import tempfile

import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

if sys.argv[1] == "lite":
    import estimator_lite as tf_estimator
else:
    from tensorflow import estimator as tf_estimator


def model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [2, 1],
                                  initializer=tf.compat.v1.zeros_initializer())
    pred = tf.matmul(features["x"], w)
    if mode == tf_estimator.ModeKeys.PREDICT:
        return tf_estimator.EstimatorSpec(mode, predictions={"y": pred}, export_outputs={
            "serving_default": tf_estimator.export.PredictOutput({"y": pred})})
    loss = tf.reduce_mean(tf.square(pred - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    metrics = {"mae": tf.compat.v1.metrics.mean_absolute_error(labels, pred)}
    return tf_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      predictions={"y": pred}, eval_metric_ops=metrics)


def serving_input_receiver_fn():
    x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
    return tf_estimator.export.ServingInputReceiver({"x": x}, {"x": x})


def describe(export_dir):
    """[(tags, {signature: (method, inputs, outputs)})] of a SavedModel."""
    proto = saved_model_pb2.SavedModel()
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
        proto.ParseFromString(f.read())
    return [{"tags": sorted(meta.meta_info_def.tags), "signatures": {
        key: {"method": sig.method_name,
              "inputs": {k: v.name for k, v in sig.inputs.items()},
              "outputs": {k: v.name for k, v in sig.outputs.items()}}
        for key, sig in meta.signature_def.items()},
        "train_op": "saved_model_train_op" in meta.collection_def}
        for meta in proto.meta_graphs]


def main():
    estimator = tf_estimator.Estimator(model_fn, model_dir=tempfile.mkdtemp())
    estimator.train(lambda: tf.data.Dataset.from_tensors(
        ({"x": [[1.0, 2.0]]}, [[1.0]])).repeat(), steps=3)
    supervised = tf_estimator.experimental.build_raw_supervised_input_receiver_fn(
        {"x": tf.constant([[1.0, 2.0]])}, tf.constant([[1.0]]))
    modes = tf_estimator.ModeKeys
    path = estimator.experimental_export_all_saved_models(tempfile.mkdtemp(), {
        modes.TRAIN: supervised, modes.EVAL: supervised,
        modes.PREDICT: serving_input_receiver_fn})
    # Every MetaGraph restores the trained variables.
    values = {}
    for tag in ("train", "eval", "serve"):
        with tf.compat.v1.Session(graph=tf.Graph()) as session:
            tf.compat.v1.saved_model.load(session, [tag], path.decode("utf-8"))
            w = [v for v in tf.compat.v1.global_variables() if v.op.name == "w"][0]
            values[tag] = [float(v) for v in session.run(w).ravel()]
    print(json.dumps({"path_type": type(path).__name__,
                      "meta_graphs": describe(path.decode("utf-8")),
                      "w": values,
                      "w_trained": [float(v) for v in
                                    estimator.get_variable_value("w").ravel()]}))


if __name__ == "__main__":
    main()
