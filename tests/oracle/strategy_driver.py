"""Strategy cases run in one fresh interpreter with 4 logical CPUs; prints JSON.

Usage: python -m tests.oracle.strategy_driver BACKEND
  BACKEND = estimator_lite (this interpreter, TF >= 2.16) or tf_estimator (the
  TF 2.15 + tensorflow-estimator 2.15 oracle).

Logical CPU devices must be configured before TensorFlow initialises its runtime,
hence a subprocess per backend. Every case trains and evaluates small models the
way users write them (`import tensorflow as tf`, tf.data input_fns, a
tf.compat.v1 optimizer in a model_fn, canned estimators) and reports numbers:
weights after one step, the reported loss, eval metrics, checkpoint keys. The
oracle gets `session_config=ConfigProto(device_count={"CPU": 4})` because
tf.estimator hangs without it; estimator_lite runs without it.
"""

import glob
import json
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf

_CPUS = 4
tf.config.set_logical_device_configuration(
    tf.config.list_physical_devices("CPU")[0],
    [tf.config.LogicalDeviceConfiguration()] * _CPUS)

BACKEND = sys.argv[1] if len(sys.argv) > 1 else "estimator_lite"
if BACKEND == "tf_estimator":
    from tensorflow import estimator as tf_estimator
    from tensorflow.compat.v1 import estimator as tf_estimator_v1
else:
    import estimator_lite as tf_estimator
    import estimator_lite.compat.v1 as tf_estimator_v1

tf1 = tf.compat.v1
_FEATURES = 3
_X = np.random.RandomState(0).uniform(-1, 1, (64, _FEATURES)).astype(np.float32)
_Y = (_X @ np.array([[1.0], [2.0], [-1.0]], np.float32) + 0.5).astype(np.float32)


def _strategy(kind, replicas):
    devices = [f"/cpu:{i}" for i in range(replicas)]
    if kind == "mirrored":
        return tf.distribute.MirroredStrategy(devices)
    if kind == "mirrored_v1":
        return tf1.distribute.MirroredStrategy(devices)
    if kind == "central_storage":
        return tf.distribute.experimental.CentralStorageStrategy(devices)
    raise ValueError(kind)


def _config(model_dir, strategy=None, **kwargs):
    extra = {}
    if BACKEND == "tf_estimator":
        extra["session_config"] = tf1.ConfigProto(device_count={"CPU": _CPUS})
    return tf_estimator.RunConfig(model_dir=model_dir, train_distribute=strategy,
                                  eval_distribute=strategy, tf_random_seed=1,
                                  save_summary_steps=1, **extra, **kwargs)


def _input_fn(batch, repeat=True, calls=None):
    def input_fn(input_context=None):
        if calls is not None:
            calls.append(None if input_context is None else [
                input_context.num_input_pipelines, input_context.input_pipeline_id,
                input_context.num_replicas_in_sync])
        dataset = tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).batch(batch)
        return dataset.repeat() if repeat else dataset
    return input_fn


def _model_fn(optimizer_name):
    def model_fn(features, labels, mode):
        w = tf1.get_variable("w", [_FEATURES, 1], initializer=tf1.zeros_initializer())
        b = tf1.get_variable("b", [1], initializer=tf1.zeros_initializer())
        predictions = tf.matmul(features["x"], w) + b
        loss = tf1.losses.mean_squared_error(labels, predictions)
        optimizer = (tf1.train.GradientDescentOptimizer(0.1) if optimizer_name == "sgd"
                     else tf1.train.AdamOptimizer(0.1))
        train_op = optimizer.minimize(loss, global_step=tf1.train.get_global_step())
        return tf_estimator.EstimatorSpec(
            mode, loss=loss, train_op=train_op, predictions={"y": predictions},
            eval_metric_ops={"mae": tf1.metrics.mean_absolute_error(labels, predictions)})
    return model_fn


def _summary_values(model_dir, tag):
    values = []
    for path in sorted(glob.glob(os.path.join(model_dir, "events.out.tfevents.*"))):
        for event in tf1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == tag:
                    values.append([int(event.step), float(value.simple_value)])
    return values


def _weights(estimator):
    return {name: np.asarray(estimator.get_variable_value(name)).ravel().tolist()
            for name in estimator.get_variable_names()
            if not name.startswith("global_step") and "/replica_" not in name}


def _custom(optimizer_name, kind, replicas, per_replica_batch=8):
    model_dir = tempfile.mkdtemp()
    strategy = None if kind is None else _strategy(kind, replicas)
    batch = per_replica_batch if strategy is not None else per_replica_batch * replicas
    calls = []
    estimator = tf_estimator.Estimator(_model_fn(optimizer_name),
                                       config=_config(model_dir, strategy))
    estimator.train(_input_fn(batch, calls=calls), steps=1)
    metrics = estimator.evaluate(_input_fn(batch, repeat=False))
    return {"weights": _weights(estimator), "loss": _summary_values(model_dir, "loss"),
            "global_step": int(estimator.get_variable_value("global_step")),
            "eval": {k: float(v) for k, v in metrics.items()}, "input_calls": calls,
            "keys": sorted(estimator.get_variable_names())}


def _canned(name, kind, replicas, per_replica_batch=8, steps=1):
    model_dir = tempfile.mkdtemp()
    strategy = None if kind is None else _strategy(kind, replicas)
    batch = per_replica_batch if strategy is not None else per_replica_batch * replicas
    columns = [tf1.feature_column.numeric_column("x", shape=[_FEATURES])]
    config = _config(model_dir, strategy)
    if name == "linear":
        estimator = tf_estimator.LinearRegressor(columns, optimizer="SGD", config=config)
    elif name == "dnn":
        estimator = tf_estimator.DNNRegressor([4], columns, optimizer="Adagrad",
                                              config=config)
    else:  # TF 1.x's canned estimator: SUM loss, a tf.compat.v1.train optimizer.
        estimator = tf_estimator_v1.LinearRegressor(
            columns, optimizer=tf1.train.GradientDescentOptimizer(0.01), config=config)
    estimator.train(_input_fn(batch), steps=steps)
    metrics = estimator.evaluate(_input_fn(batch, repeat=False))
    return {"weights": _weights(estimator),
            "global_step": int(estimator.get_variable_value("global_step")),
            "eval": {k: float(v) for k, v in metrics.items()}}


def _restore_both_ways():
    """A canned model trained with a strategy keeps training without one, and the
    reverse: the final global steps."""
    columns = [tf1.feature_column.numeric_column("x", shape=[_FEATURES])]
    steps = {}
    for first, second in (("mirrored", None), (None, "mirrored")):
        model_dir = tempfile.mkdtemp()
        for index, kind in enumerate((first, second)):
            strategy = None if kind is None else _strategy(kind, 2)
            estimator = tf_estimator.DNNRegressor(
                [4], columns, optimizer="Adagrad", config=_config(model_dir, strategy))
            try:
                estimator.train(_input_fn(8), steps=2)
                steps[f"{first}->{second}:{index}"] = int(
                    estimator.get_variable_value("global_step"))
            except Exception as e:  # noqa: BLE001 - recorded: the oracle fails here
                steps[f"{first}->{second}:{index}"] = type(e).__name__
    return steps


def main():
    results = {}
    for optimizer in ("sgd", "adam"):
        for replicas in (2, 4):
            results[f"custom_{optimizer}_{replicas}_none"] = _custom(optimizer, None,
                                                                     replicas)
            results[f"custom_{optimizer}_{replicas}_mirrored"] = _custom(
                optimizer, "mirrored", replicas)
    results["custom_sgd_2_mirrored_v1"] = _custom("sgd", "mirrored_v1", 2)
    results["custom_sgd_2_central_storage"] = _custom("sgd", "central_storage", 2)
    for name in ("linear", "dnn", "v1_linear"):
        results[f"canned_{name}_none"] = _canned(name, None, 2)
        results[f"canned_{name}_mirrored"] = _canned(name, "mirrored", 2)
    results["restore_both_ways"] = _restore_both_ways()
    print("STRATEGY_RESULTS " + json.dumps(results, sort_keys=True))


if __name__ == "__main__":
    main()
