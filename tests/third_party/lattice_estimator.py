"""TensorFlow Lattice 2.0's canned estimators on an unchanged program.

`tensorflow_lattice.python.estimators` imports tf.estimator's private modules
(`estimator`, `canned.optimizers`, `head.*`); its canned estimators subclass
`EstimatorV2`, build their config with `maybe_overwrite_model_dir_and_session_config`,
analyse the features' quantiles with a `feature_analysis_input_fn`, and train the
premade Keras models with the optimizer `get_optimizer_instance_v2` returns (its
`iterations` set to the global step). The program trains, evaluates and exports:
- CannedClassifier + CalibratedLinearConfig, optimizer 'Adagrad' (the default name);
- CannedClassifier + CalibratedLatticeConfig, a legacy Keras Adam;
- CannedRegressor + CalibratedLatticeEnsembleConfig (random lattices, seeded);
- CannedEstimator + tf.estimator.RegressionHead + CalibratedLinearConfig.
tf_random_seed is set and the data is fixed, so tf.estimator 2.15 gives the same
numbers. Keypoints are 'uniform' or given, never lattice's default 'quantiles':
lattice 2.0.13 computes those with `np.quantile(interpolation=...)`, an argument
NumPy 2.4 removed (nothing to do with the estimator). Prints `RESULT {json}`.
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf
import tensorflow_lattice as tfl

STEPS = 30
BATCH = 16


def _data():
    rng = np.random.RandomState(0)
    n = 64
    x = rng.uniform(0.0, 10.0, n).astype(np.float32)
    # x spans [0, 10] exactly, so its 'uniform' keypoints are exact whatever the
    # NumPy: np.linspace on float32 ends is float64 in NumPy 1 (the oracle's),
    # float32 in NumPy 2, and one float32 ulp moves the calibrated values.
    x[:2] = [0.0, 10.0]
    z = rng.uniform(-1.0, 1.0, n).astype(np.float32)
    color = rng.choice(["red", "green", "blue"], n)
    score = 0.4 * x - 2.0 * z + (color == "red") * 1.5 - 2.0
    return {"x": x, "z": z, "color": color}, score.astype(np.float32)


def _input_fn(labels, epochs=None, shuffle=False):
    def input_fn():
        features, score = _data()
        label = (score > 0).astype(np.int64) if labels == "class" else score
        ds = tf.data.Dataset.from_tensor_slices((features, label))
        if shuffle:
            ds = ds.shuffle(64, seed=1)
        return ds.repeat(epochs).batch(BATCH)
    return input_fn


def _feature_columns():
    return [
        tf.feature_column.numeric_column("x"),
        tf.feature_column.numeric_column("z"),
        tf.feature_column.categorical_column_with_vocabulary_list(
            "color", ["red", "green", "blue"]),
    ]


def _feature_configs():
    return [
        tfl.configs.FeatureConfig(name="x", lattice_size=3, monotonicity="increasing",
                                  pwl_calibration_num_keypoints=5,
                                  pwl_calibration_input_keypoints="uniform"),
        tfl.configs.FeatureConfig(name="z", lattice_size=2, monotonicity="decreasing",
                                  pwl_calibration_input_keypoints=[-1.0, -0.3, 0.3, 1.0]),
        tfl.configs.FeatureConfig(name="color", monotonicity=[("green", "red")]),
    ]


def _serving_input_receiver_fn():
    spec = tf.feature_column.make_parse_example_spec(_feature_columns())
    return tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)


def _run(estimator, labels, export_dir):
    estimator.train(_input_fn(labels, shuffle=True), steps=STEPS)
    metrics = estimator.evaluate(_input_fn(labels, epochs=1))
    predictions = list(estimator.predict(_input_fn(labels, epochs=1)))
    key = "logistic" if labels == "class" else "predictions"
    exported = estimator.export_saved_model(export_dir, _serving_input_receiver_fn())
    return {
        "metrics": {k: float(v) for k, v in metrics.items()},
        "predictions": [float(p[key][0]) for p in predictions[:8]],
        "exported": os.path.isfile(os.path.join(exported, b"saved_model.pb")),
        "variables": sorted(estimator.get_variable_names()),
    }


def _model_dir(model_dir, name):
    # Lattice writes its feature quantiles (keypoints.json) into model_dir in the
    # constructor, before the estimator creates the directory.
    path = os.path.join(model_dir, name)
    os.makedirs(path)
    return path


def main(model_dir):
    # Lattice's layers draw unseeded Keras initializers (categorical calibration,
    # linear weights): Keras seeds those from Python's `random`, so the program
    # seeds it (as lattice's own tests do); tf_random_seed covers the graph ops.
    tf.keras.utils.set_random_seed(42)
    config = tf.estimator.RunConfig(tf_random_seed=42)
    common = {"feature_columns": _feature_columns(), "config": config}
    classes = dict(common, feature_analysis_input_fn=_input_fn("class", epochs=1))
    scores = dict(common, feature_analysis_input_fn=_input_fn("score", epochs=1))
    linear = tfl.configs.CalibratedLinearConfig(
        feature_configs=_feature_configs(), use_bias=True)
    lattice = tfl.configs.CalibratedLatticeConfig(
        feature_configs=_feature_configs(),
        regularizer_configs=[tfl.configs.RegularizerConfig(name="torsion", l2=1e-4)])
    ensemble = tfl.configs.CalibratedLatticeEnsembleConfig(
        feature_configs=_feature_configs(), lattices="random", num_lattices=2,
        lattice_rank=2, random_seed=7, output_initialization=[-4.0, 4.0])
    linear_scores = tfl.configs.CalibratedLinearConfig(
        feature_configs=_feature_configs(), output_initialization=[-4.0, 4.0])
    runs = {
        "linear": (tfl.estimators.CannedClassifier(
            model_config=linear, model_dir=_model_dir(model_dir, "linear"),
            **classes), "class"),
        "lattice": (tfl.estimators.CannedClassifier(
            model_config=lattice, model_dir=_model_dir(model_dir, "lattice"),
            optimizer=tf.keras.optimizers.legacy.Adam(0.05), **classes), "class"),
        "ensemble": (tfl.estimators.CannedRegressor(
            model_config=ensemble, model_dir=_model_dir(model_dir, "ensemble"),
            optimizer="Adam", **scores), "score"),
        "head": (tfl.estimators.CannedEstimator(
            head=tf.estimator.RegressionHead(), model_config=linear_scores,
            model_dir=_model_dir(model_dir, "head"), optimizer="SGD", **scores),
            "score"),
    }
    result = {name: _run(estimator, labels, os.path.join(model_dir, name + "_export"))
              for name, (estimator, labels) in runs.items()}
    # What lattice's model_fns got for the optimizer names (through the module it
    # imported): Keras' legacy optimizers, which apply the layers' constraints.
    result["optimizers"] = {}
    for name in ("Adagrad", "Adam", "SGD"):
        optimizer = tfl.estimators.optimizers.get_optimizer_instance_v2(name)
        result["optimizers"][name] = [type(optimizer).__module__, type(optimizer).__name__]
    print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1])
