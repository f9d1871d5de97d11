"""The TF docs' model_to_estimator tutorial shape, run on both libraries.

A compiled Sequential model (Dense 16 relu, Dropout 0.2, Dense 3; Adam; sparse
categorical cross-entropy from logits; 'accuracy') on iris-like data (3 classes,
4 features, made here from a fixed seed), with `{'dense_input': features}` as the
tutorial's input_fn gives; the model's weights are set from a fixed seed before
the conversion, so both libraries start from the same point.

    python keras_estimator_driver.py {lite|oracle} WORK_DIR   # prints one JSON line

`lite` uses estimator_lite.model_to_estimator with `tf.keras` (Keras 3, or tf-keras
when TF_USE_LEGACY_KERAS=1 is set); `oracle` tf.keras.estimator.model_to_estimator.
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf

TRAIN_STEPS = 300
# Iris' per-class feature means (sepal/petal length/width, cm) and a shared spread.
CLASS_MEANS = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.6, 2.0]])


def make_data(count, seed):
    rng = np.random.RandomState(seed)
    labels = rng.randint(3, size=count)
    features = CLASS_MEANS[labels] + rng.normal(0.0, 0.35, (count, 4))
    return features.astype(np.float32), labels.astype(np.int64)


def make_model():
    model = tf.keras.models.Sequential([
        tf.keras.layers.Dense(16, activation="relu", input_shape=(4,)),
        tf.keras.layers.Dropout(0.2),
        tf.keras.layers.Dense(3),
    ])
    model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  optimizer="adam", metrics=["accuracy"])
    rng = np.random.RandomState(7)
    model.set_weights([(0.3 * rng.randn(*w.shape)).astype(np.float32)
                       for w in model.get_weights()])
    return model


def run(which, work_dir):
    if which == "oracle":
        to_estimator, estimator_lib = tf.keras.estimator.model_to_estimator, tf.estimator
    else:
        import estimator_lite
        to_estimator, estimator_lib = estimator_lite.model_to_estimator, estimator_lite
    train_x, train_y = make_data(120, seed=0)
    test_x, test_y = make_data(30, seed=1)
    tf.keras.backend.clear_session()  # layer names from zero: dense, dense_1
    tf.keras.utils.set_random_seed(1)  # Keras 3 draws its dropout seeds from this
    model = make_model()
    # Before the conversion: tf-keras invalidates a model once it is converted.
    initial_outputs = model.predict(test_x, verbose=0).tolist()
    estimator = to_estimator(keras_model=model, model_dir=os.path.join(work_dir, "model"),
                             config=estimator_lib.RunConfig(tf_random_seed=3))

    def input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"dense_input": train_x}, train_y))
        return dataset.batch(32).repeat()

    def eval_input_fn():
        dataset = tf.data.Dataset.from_tensor_slices(({"dense_input": test_x}, test_y))
        return dataset.batch(32)

    def serving_input_receiver_fn():
        x = tf.compat.v1.placeholder(tf.float32, [None, 4], name="dense_input")
        return estimator_lib.export.ServingInputReceiver({"dense_input": x},
                                                         {"dense_input": x})

    estimator.train(input_fn, steps=TRAIN_STEPS)
    metrics = estimator.evaluate(eval_input_fn)
    predictions = list(estimator.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"dense_input": test_x}).batch(32)))
    export_dir = estimator.export_saved_model(os.path.join(work_dir, "export"),
                                              serving_input_receiver_fn)
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        meta_graph = tf.compat.v1.saved_model.loader.load(session, ["serve"], export_dir)
    return {
        "initial_outputs": initial_outputs,
        "metrics": {k: float(v) for k, v in metrics.items()},
        "prediction_keys": sorted(predictions[0]),
        "signatures": {k: {"method": s.method_name, "inputs": sorted(s.inputs),
                           "outputs": sorted(s.outputs)}
                       for k, s in meta_graph.signature_def.items()},
    }


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1], sys.argv[2])))
