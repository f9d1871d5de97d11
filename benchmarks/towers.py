"""Throughput of replicate_model_fn towers, and its overhead with one device.

An MLP (64-256-256-10, softmax cross-entropy, GradientDescent) trains at a fixed
global batch with 1, 2 and 4 towers on logical CPU devices (GPUs when present),
plus the same model_fn unreplicated. All runs are in one process, interleaved over
--repeats rounds; the median of each is reported. Prints a table, then one JSON
line (the last line) with steps/sec per configuration and one_device_overhead =
1 - (replicated on one device) / (plain model_fn).

On a CPU-only machine the towers share the same cores, so more towers cannot be
faster; the numbers show the cost of splitting and aggregating. On GPUs they show
the scaling.

Usage: python benchmarks/towers.py [--steps 2000] [--warmup 200] [--batch 256]
"""

import argparse
import json
import shutil
import tempfile

import numpy as np
from bench_util import parse_args, timed_train

import estimator_lite as el
from estimator_lite._tf import tf

_FEATURES, _HIDDEN, _CLASSES = 64, 256, 10


def _input_fn(batch):
    def fn():
        rng = np.random.RandomState(0)
        x = rng.randn(4096, _FEATURES).astype(np.float32)
        y = rng.randint(0, _CLASSES, size=4096).astype(np.int64)
        return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(
            batch, drop_remainder=True)
    return fn


def _dense(inputs, units, name):
    with tf.variable_scope(name):
        kernel = tf.get_variable("kernel", [inputs.shape[-1], units])
        bias = tf.get_variable("bias", [units], initializer=tf.zeros_initializer())
        return tf.matmul(inputs, kernel) + bias


def model_fn(features, labels, mode):
    hidden = tf.nn.relu(_dense(features, _HIDDEN, "h1"))
    hidden = tf.nn.relu(_dense(hidden, _HIDDEN, "h2"))
    logits = _dense(hidden, _CLASSES, "logits")
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    optimizer = el.TowerOptimizer(tf.train.GradientDescentOptimizer(0.01))
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return el.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _devices(count):
    gpus = tf.config.experimental.list_logical_devices("GPU")
    if len(gpus) >= count:
        return [g.name for g in gpus[:count]]
    return [f"/device:CPU:{i}" for i in range(count)]


def _rate(name, fn, args, base_dir):
    config = el.RunConfig(model_dir=f"{base_dir}/{name}", save_checkpoints_steps=10**6,
                          save_summary_steps=0, log_step_count_steps=None,
                          session_config=tf.ConfigProto(device_count={"CPU": 4}))
    estimator = el.Estimator(fn, config=config)
    return timed_train(estimator, _input_fn(args.batch), args.warmup, args.steps)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000,
                        help="timed steps per run (shorter runs are noisy on 2 cores)")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--batch", type=int, default=256, help="global batch size")
    parser.add_argument("--repeats", type=int, default=5)
    args = parse_args(parser, argv, {"steps": 30, "warmup": 5, "repeats": 1})
    runs = {"plain": model_fn}
    for towers in (1, 2, 4):
        runs[f"towers_{towers}"] = el.replicate_model_fn(model_fn,
                                                         devices=_devices(towers))
    rates = {name: [] for name in runs}
    base_dir = tempfile.mkdtemp(prefix="bench_towers_")
    try:
        for round_index in range(args.repeats):
            for name, fn in runs.items():
                rates[name].append(_rate(f"{name}_{round_index}", fn, args, base_dir))
    finally:
        shutil.rmtree(base_dir)
    median = {name: float(np.median(values)) for name, values in rates.items()}
    print(f"{'model_fn':<12}{'steps/sec':>12}{'examples/sec':>14}{'vs plain':>10}")
    for name, rate in median.items():
        print(f"{name:<12}{rate:>12.1f}{rate * args.batch:>14.0f}"
              f"{rate / median['plain']:>10.3f}")
    result = {f"{name}_steps_per_sec": round(rate, 1) for name, rate in median.items()}
    result["one_device_overhead"] = round(1 - median["towers_1"] / median["plain"], 4)
    result.update(batch=args.batch, steps=args.steps, repeats=args.repeats,
                  devices=_devices(4))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
