"""estimator_lite against Keras 3 `model.fit` on the same MLP: training steps/sec.

The model: 16 features -> Dense(64, relu) -> Dense(64, relu) -> Dense(1), mean
squared error, plain SGD (learning rate 0.01), batch 32, one tf.data pipeline
(from_tensor_slices, repeat, batch). Rows, each timed over --steps steps after a
warm-up (the warm-up also pays tracing and compilation):
  estimator_k1 / estimator_k100 - Estimator.train with
      RunConfig(experimental_steps_per_loop=1 or 100), checkpoints every 10000;
  keras_spe1 / keras_spe100 - Keras 3 model.fit(steps_per_execution=1 or 100);
  keras_spe100_jit - the same with jit_compile=True (XLA).
The best of each side is compared: best_estimator_vs_best_keras. Each row also
reports the process CPU milliseconds per 1000 steps (all threads), which depends
little on other load of the machine (steps/sec does). Prints a table, then one JSON
line (the last line). Keras runs with its TensorFlow backend in
this process (estimator_lite builds its own graphs and leaves no global state).

Usage: python benchmarks/vs_keras.py [--steps 3000] [--warmup 300] [--repeats 3]
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np
from bench_util import parse_args, timed_train_with_cpu

import estimator_lite as el
from estimator_lite._tf import tf

_FEATURES = 16
_HIDDEN = 64
_BATCH = 32
_LEARNING_RATE = 0.01


def _arrays():
    rng = np.random.RandomState(0)
    x = rng.randn(4096, _FEATURES).astype(np.float32)
    y = np.tanh(x.dot(rng.randn(_FEATURES, 1))).astype(np.float32)
    return x, y


def _dataset(data_module):
    x, y = _arrays()
    return data_module.Dataset.from_tensor_slices((x, y)).repeat().batch(_BATCH)


def _dense(inputs, units, name, activation=None):
    kernel = tf.get_variable(f"{name}/kernel", [inputs.shape[-1], units],
                             initializer=tf.glorot_uniform_initializer())
    bias = tf.get_variable(f"{name}/bias", [units], initializer=tf.zeros_initializer())
    out = tf.matmul(inputs, kernel) + bias
    return activation(out) if activation is not None else out


def _model_fn(features, labels, mode):
    hidden = _dense(features, _HIDDEN, "dense", tf.nn.relu)
    hidden = _dense(hidden, _HIDDEN, "dense_1", tf.nn.relu)
    loss = tf.reduce_mean(tf.square(_dense(hidden, 1, "dense_2") - labels))
    train_op = tf.train.GradientDescentOptimizer(_LEARNING_RATE).minimize(
        loss, global_step=tf.train.get_or_create_global_step())
    return el.EstimatorSpec(mode, loss=loss, train_op=train_op)


def bench_estimator(steps, warmup, model_dir, steps_per_loop):
    """(steps/sec, CPU ms per 1000 steps) of Estimator.train with `steps_per_loop`
    steps per session call."""
    config = el.RunConfig(model_dir=model_dir, save_checkpoints_steps=10000,
                          experimental_steps_per_loop=steps_per_loop)
    estimator = el.Estimator(_model_fn, config=config)
    return timed_train_with_cpu(estimator, lambda: _dataset(tf.data), warmup, steps)


class _BatchEndTimes:
    """A Keras callback body: wall and CPU time at each on_train_batch_end, by step."""

    def __init__(self):
        self.times = {}

    def record(self, batch, logs=None):
        del logs
        self.times[batch + 1] = (time.perf_counter(), time.process_time())


def bench_keras(steps, warmup, steps_per_execution, jit_compile):
    """(steps/sec, CPU ms per 1000 steps) of Keras 3 model.fit, same MLP and input.

    One fit() of warmup + steps steps; the clock runs between the ends of the
    executions that finish the warm-up and the last step (Keras calls
    on_train_batch_end once per execution).
    """
    import keras  # Keras 3: imported only here, so the other rows never pay it.
    import tensorflow as tf2
    per = steps_per_execution
    warmup = -(-warmup // per) * per
    steps = -(-steps // per) * per
    keras.utils.set_random_seed(0)
    model = keras.Sequential([
        keras.Input((_FEATURES,)),
        keras.layers.Dense(_HIDDEN, activation="relu"),
        keras.layers.Dense(_HIDDEN, activation="relu"),
        keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(_LEARNING_RATE), loss="mse",
                  steps_per_execution=per, jit_compile=jit_compile)
    times = _BatchEndTimes()
    model.fit(_dataset(tf2.data), epochs=1, steps_per_epoch=warmup + steps, verbose=0,
              callbacks=[keras.callbacks.LambdaCallback(on_train_batch_end=times.record)])
    (wall0, cpu0), (wall1, cpu1) = times.times[warmup], times.times[warmup + steps]
    return steps / (wall1 - wall0), 1e6 * (cpu1 - cpu0) / steps


def _run_all(steps, warmup):
    tmp = tempfile.mkdtemp(prefix="bench_vs_keras_")
    try:
        return {
            "estimator_k1": bench_estimator(steps, warmup, tmp + "/k1", 1),
            "estimator_k100": bench_estimator(steps, warmup, tmp + "/k100", 100),
            "keras_spe1": bench_keras(steps, warmup, 1, False),
            "keras_spe100": bench_keras(steps, warmup, 100, False),
            "keras_spe100_jit": bench_keras(steps, warmup, 100, True),
        }
    finally:
        shutil.rmtree(tmp)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3,
                        help="rounds of every row; the median of each is reported")
    args = parse_args(parser, argv, {"steps": 200, "warmup": 100, "repeats": 1})
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    rounds = [_run_all(args.steps, args.warmup) for _ in range(args.repeats)]
    median = {k: float(np.median([r[k][0] for r in rounds])) for k in rounds[0]}
    cpu = {k: float(np.median([r[k][1] for r in rounds])) for k in rounds[0]}
    best_estimator = max(v for k, v in median.items() if k.startswith("estimator"))
    best_keras = max(v for k, v in median.items() if k.startswith("keras"))
    print(f"{'loop':<18}{'steps/sec':>12}{'vs best Keras':>15}{'CPU ms/1000':>13}")
    for name, rate in median.items():
        print(f"{name:<18}{rate:>12.0f}{rate / best_keras:>15.2f}{cpu[name]:>13.0f}")
    result = {f"{k}_steps_per_sec": round(v, 1) for k, v in median.items()}
    result.update({f"{k}_cpu_ms_per_1000_steps": round(v) for k, v in cpu.items()})
    result.update({
        "best_estimator_vs_best_keras": round(best_estimator / best_keras, 3),
        "k100_vs_k1": round(median["estimator_k100"] / median["estimator_k1"], 3),
        "steps": args.steps, "repeats": args.repeats,
    })
    sys.stdout.flush()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
