"""Keras layers and Keras metrics inside a model_fn, written the way users write it.

One program for three runs, compared by tests/_engine/state_updates_test.py:
tf.estimator 2.15 (the oracle interpreter, whose tf.keras is Keras 2), and
estimator_lite on current TensorFlow with Keras 3 (imported by the test) and with
tf-keras (`TF_USE_LEGACY_KERAS=1`, a subprocess). The model is a Dense layer,
BatchNormalization, optionally Dropout, and a Dense logit, with constant initial
weights and fixed data, so the numbers are comparable across the runs. Where
`layer.updates` exists (Keras 2) the program groups it into the train op as the
tf.estimator guides said; Keras 3 layers have none.

Two programs. With Dropout it trains and dumps the dropout masks drawn at each
training step (how many are distinct) and the BatchNorm moving statistics. Without
Dropout (comparable numbers) it also dumps the evaluation metrics (Keras `Metric`
objects in `eval_metric_ops` and from `add_metrics`) of two evaluations (metric
variables start from zero each time), the predictions, the outputs of the exported
SavedModel, and the checkpoint's variable names.

Usage: keras_driver.py oracle|lite WORK_DIR   (prints one JSON line)
"""

import json
import os
import sys
import types

import numpy as np
import tensorflow as tf

TRAIN_STEPS = 10
BATCH_SIZE = 8
NUM_ROWS = 16
NUM_FEATURES = 4
HIDDEN = 3
KERNEL = np.linspace(-0.6, 0.9, NUM_FEATURES * HIDDEN, dtype=np.float32).reshape(
    NUM_FEATURES, HIDDEN)
LOGIT_KERNEL = np.array([[0.7], [-0.4], [0.5]], np.float32)


def make_data():
    """Fixed features (not centred, so the moving mean has somewhere to go)."""
    rng = np.random.RandomState(7)
    x = (rng.randn(NUM_ROWS, NUM_FEATURES) * 1.5 + 2.0).astype(np.float32)
    y = (x[:, :1] - x[:, 1:2] + 0.3 * x[:, 2:3] > 0.3).astype(np.float32)
    return x, y


def input_fn(epochs=None):
    x, y = make_data()
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat(epochs).batch(
        BATCH_SIZE)


class MaskHook(tf.compat.v1.train.SessionRunHook):
    """Records which units the Dropout layer dropped at each training step."""

    def __init__(self):
        self.masks = []

    def before_run(self, run_context):
        graph = tf.compat.v1.get_default_graph()
        return tf.compat.v1.train.SessionRunArgs(
            [graph.get_tensor_by_name("before_dropout:0"),
             graph.get_tensor_by_name("after_dropout:0")])

    def after_run(self, run_context, run_values):
        before, after = run_values.results
        self.masks.append(((after == 0) & (before != 0)).tobytes())


def make_model_fn(lib):
    def model_fn(features, labels, mode, params):
        training = mode == lib.ModeKeys.TRAIN
        net = tf.keras.layers.Dense(
            HIDDEN, kernel_initializer=tf.keras.initializers.Constant(KERNEL))(
                features["x"])
        batch_norm = tf.keras.layers.BatchNormalization()
        net = batch_norm(net, training=training)
        if params["dropout"]:
            # Dropout before the ReLU (the same function: relu(mask * x / keep) is
            # mask * relu(x) / keep), so that every unit's draw shows in the mask:
            # after the ReLU about half the units are 0 whatever the draw, and two
            # steps' masks then collided by chance (about 1 run in 200).
            net = tf.identity(net, name="before_dropout")
            net = tf.keras.layers.Dropout(params["dropout"])(net, training=training)
            net = tf.identity(net, name="after_dropout")
        net = tf.nn.relu(net)
        logits = tf.keras.layers.Dense(
            1, kernel_initializer=tf.keras.initializers.Constant(LOGIT_KERNEL))(net)
        predictions = {"logits": logits, "probabilities": tf.sigmoid(logits)}
        if mode == lib.ModeKeys.PREDICT:
            return lib.EstimatorSpec(mode, predictions=predictions)
        loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
        if mode == lib.ModeKeys.EVAL:
            accuracy = tf.keras.metrics.BinaryAccuracy()
            accuracy.update_state(labels, predictions["probabilities"])
            mean = tf.keras.metrics.Mean()
            mean.update_state(predictions["probabilities"])
            return lib.EstimatorSpec(
                mode, loss=loss, predictions=predictions,
                eval_metric_ops={"accuracy": accuracy, "mean_probability": mean})
        # Keras 2 layers list their updates; Keras 3 layers have no `updates`.
        update_ops = getattr(batch_norm, "updates", [])
        with tf.control_dependencies(update_ops):
            train_op = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(
                loss, global_step=tf.compat.v1.train.get_global_step())
        return lib.EstimatorSpec(mode, loss=loss, train_op=train_op)
    return model_fn


def extra_metrics(labels, predictions):
    auc = tf.keras.metrics.AUC()
    auc.update_state(labels, predictions["probabilities"])
    precision = tf.keras.metrics.Precision()
    precision.update_state(labels, predictions["probabilities"])
    return {"auc": auc, "precision": precision}


def serving_input_receiver_fn(lib):
    x = tf.compat.v1.placeholder(tf.float32, [None, NUM_FEATURES], name="x")
    return lib.export.ServingInputReceiver({"x": x}, {"x": x})


def _floats(array):
    return [float(v) for v in np.asarray(array).ravel()]


def _serve(export_dir):
    """The exported model's serving outputs on the data (run eagerly)."""
    loaded = tf.saved_model.load(export_dir)
    outputs = loaded.signatures["serving_default"](x=tf.constant(make_data()[0]))
    return {key: _floats(value.numpy()) for key, value in sorted(outputs.items())}


def run_program(lib, work_dir, dropout):
    """Trains, then (without dropout) evaluates, predicts and exports; the dump."""
    model_dir = os.path.join(work_dir, f"dropout_{dropout}")
    estimator = lib.Estimator(make_model_fn(lib), model_dir=model_dir,
                              params={"dropout": dropout},
                              config=lib.RunConfig(tf_random_seed=3))
    hook = MaskHook()
    estimator.train(input_fn, steps=TRAIN_STEPS, hooks=[hook] if dropout else [])
    names = estimator.get_variable_names()
    statistics = {key: _floats(estimator.get_variable_value(name))
                  for name in names for key in ("moving_mean", "moving_variance")
                  if name.endswith("/" + key)}
    dump = {"distinct_masks": len(set(hook.masks)), "steps_seen": len(hook.masks),
            "statistics": statistics, "variable_names": sorted(names)}
    if dropout:
        return dump
    with_metrics = lib.add_metrics(estimator, extra_metrics)
    evaluations = [with_metrics.evaluate(lambda: input_fn(1)) for _ in range(2)]
    predictions = list(estimator.predict(lambda: input_fn(1)))
    export_dir = estimator.export_saved_model(
        os.path.join(model_dir, "export"), lambda: serving_input_receiver_fn(lib))
    return dict(
        dump, metrics=[{k: float(v) for k, v in e.items()} for e in evaluations],
        predictions=[float(p["logits"][0]) for p in predictions],
        serving=_serve(os.fsdecode(export_dir)))


def run_all(lib, work_dir):
    return {"no_dropout": run_program(lib, work_dir, 0.0),
            "dropout": run_program(lib, work_dir, 0.5)}


def tf_estimator_lib():
    """tf.estimator 2.15 as the `lib` namespace."""
    est = tf.estimator
    return types.SimpleNamespace(
        Estimator=est.Estimator, EstimatorSpec=est.EstimatorSpec, ModeKeys=est.ModeKeys,
        RunConfig=est.RunConfig, add_metrics=est.add_metrics, export=est.export)


def main(which, work_dir):
    if which == "oracle":
        lib = tf_estimator_lib()
    else:
        import estimator_lite as lib
    report = {"tf_version": tf.__version__,
              "layers_have_updates": hasattr(tf.keras.layers.Dense(1), "updates"),
              "programs": run_all(lib, work_dir)}
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
