"""Throughput of MirroredStrategy vs replicate_model_fn towers vs one device.

The MLP of benchmarks/towers.py (64-256-256-10, softmax cross-entropy,
GradientDescent) trains at one global batch: unreplicated on one device, as 2
replicate_model_fn towers, and with RunConfig(train_distribute=MirroredStrategy)
over 2 devices (logical CPUs, or GPUs when the machine has 2). The strategy's
input_fn gives the per-replica batch (global / 2), as tf.estimator's did. All
runs share one process, interleaved over --repeats rounds; medians are reported.
Prints a table, then one JSON line (the last line) with steps/sec per
configuration and the ratios to one device.

On a CPU-only machine the replicas share the same cores, so neither replicated
form can beat one device; the numbers show what replication costs (the
strategy's per-replica graph and all-reduce, the towers' split and sum). On GPUs
they show the scaling.

Usage: python benchmarks/strategies.py [--steps 1000] [--warmup 100] [--batch 256]
"""

import argparse
import json
import shutil
import tempfile

import tensorflow as tf_root

# Two logical CPUs, configured before TensorFlow initialises its devices.
if len(tf_root.config.list_physical_devices("GPU")) < 2:
    tf_root.config.set_logical_device_configuration(
        tf_root.config.list_physical_devices("CPU")[0],
        [tf_root.config.LogicalDeviceConfiguration()] * 2)

import numpy as np  # noqa: E402
from bench_util import parse_args, timed_train  # noqa: E402
from towers import _input_fn, model_fn  # noqa: E402

import estimator_lite as el  # noqa: E402
from estimator_lite._tf import tf  # noqa: E402


def _devices():
    gpus = tf_root.config.list_logical_devices("GPU")
    if len(gpus) >= 2:
        return [g.name for g in gpus[:2]]
    return ["/device:CPU:0", "/device:CPU:1"]


def _rate(name, args, base_dir):
    strategy = fn = None
    batch = args.batch
    if name == "one_device":
        fn = model_fn
    elif name == "towers_2":
        fn = el.replicate_model_fn(model_fn, devices=_devices())
    else:
        fn, batch = model_fn, args.batch // 2
        strategy = tf.distribute.MirroredStrategy(_devices())
    config = el.RunConfig(model_dir=f"{base_dir}/{name}", save_checkpoints_steps=10**6,
                          save_summary_steps=0, log_step_count_steps=None,
                          train_distribute=strategy)
    estimator = el.Estimator(fn, config=config)
    return timed_train(estimator, _input_fn(batch), args.warmup, args.steps)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--batch", type=int, default=256, help="global batch size")
    parser.add_argument("--repeats", type=int, default=3)
    args = parse_args(parser, argv, {"steps": 20, "warmup": 5, "repeats": 1})
    names = ("one_device", "towers_2", "mirrored_2")
    rates = {name: [] for name in names}
    base_dir = tempfile.mkdtemp(prefix="bench_strategies_")
    try:
        for round_index in range(args.repeats):
            for name in names:
                rates[name].append(_rate(name, args, base_dir + f"/{round_index}"))
    finally:
        shutil.rmtree(base_dir)
    median = {name: float(np.median(values)) for name, values in rates.items()}
    print(f"{'run':<12}{'steps/sec':>12}{'examples/sec':>14}{'vs one device':>15}")
    for name, rate in median.items():
        print(f"{name:<12}{rate:>12.1f}{rate * args.batch:>14.0f}"
              f"{rate / median['one_device']:>15.3f}")
    result = {f"{name}_steps_per_sec": round(rate, 1) for name, rate in median.items()}
    result.update({f"{name}_vs_one_device": round(rate / median["one_device"], 3)
                   for name, rate in median.items() if name != "one_device"})
    result.update(batch=args.batch, steps=args.steps, repeats=args.repeats,
                  devices=_devices())
    print(json.dumps(result))


if __name__ == "__main__":
    main()
