"""XLA and mixed precision: the same MLP trained with each RunConfig switch.

A regression MLP (--width units, three hidden layers, Adam) on synthetic data
held in memory, trained by estimator_lite with RunConfig() as the baseline,
`experimental_jit_compile=True` (XLA), `experimental_mixed_precision=
"mixed_bfloat16"` (the oneDNN bfloat16 rewrite: fast on CPUs with AVX512-BF16 or
AMX, slow elsewhere), and both. Each mode trains --steps steps after --warmup in
its own process, interleaved over --repeats rounds; reported per mode: median
steps/sec (timed by a passive hook), its ratio to the baseline, and the final
training loss (modes must agree within half-precision tolerance). The machine's
load average is printed beside the figures. Prints a table, then one JSON line.

Usage: python benchmarks/precision.py [--steps 300] [--warmup 30] [--repeats 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from bench_util import parse_args

MODES = {"plain": {}, "jit": {"experimental_jit_compile": True},
         "bf16": {"experimental_mixed_precision": "mixed_bfloat16"},
         "jit_bf16": {"experimental_jit_compile": True,
                      "experimental_mixed_precision": "mixed_bfloat16"}}


def run_mode(mode, args):
    """Trains one mode in this process; returns (steps/sec, final loss)."""
    # Imported in the worker processes only.
    import numpy as np  # noqa: PLC0415
    import tensorflow as tf  # noqa: PLC0415
    from bench_util import timed_train  # noqa: PLC0415

    import estimator_lite as el  # noqa: PLC0415

    rng = np.random.RandomState(0)
    x = rng.randn(4096, args.features).astype(np.float32)
    y = np.tanh(x[:, :8].sum(axis=1, keepdims=True)).astype(np.float32)

    def input_fn():
        return (tf.data.Dataset.from_tensor_slices((x, y)).repeat()
                .batch(args.batch, drop_remainder=True).prefetch(2))

    def dense(inputs, units, name):
        # tf.compat.v1 variables: initialised from the graph seed, so every mode
        # starts from the same weights (Keras 3 layers draw their own seeds).
        kernel = tf.compat.v1.get_variable(
            name, [inputs.shape[-1], units],
            initializer=tf.compat.v1.glorot_uniform_initializer())
        return tf.matmul(inputs, kernel)

    def model_fn(features, labels, mode):
        hidden = features
        for layer in range(3):
            hidden = tf.nn.relu(dense(hidden, args.width, f"hidden{layer}"))
        loss = tf.reduce_mean(tf.square(dense(hidden, 1, "output") - labels))
        train_op = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(
            loss, tf.compat.v1.train.get_global_step())
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op)

    with tempfile.TemporaryDirectory() as model_dir:
        config = el.RunConfig(tf_random_seed=1, log_step_count_steps=None,
                              save_summary_steps=None, save_checkpoints_steps=None,
                              save_checkpoints_secs=None, **MODES[mode])
        estimator = el.Estimator(model_fn, model_dir, config)
        steps_per_sec = timed_train(estimator, input_fn, args.warmup, args.steps)
        loss = estimator.evaluate(input_fn, steps=4)["loss"]
    return steps_per_sec, float(loss)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--features", type=int, default=256)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--worker", choices=sorted(MODES), help=argparse.SUPPRESS)
    args = parse_args(parser, argv, {"steps": 3, "warmup": 2, "repeats": 1,
                                     "width": 16, "features": 8, "batch": 16})
    if args.worker:
        print(json.dumps(run_mode(args.worker, args)))
        return
    passed = list(argv if argv is not None else sys.argv[1:])
    results = {mode: [] for mode in MODES}
    for _ in range(args.repeats):
        for mode in MODES:
            out = subprocess.run([sys.executable, os.path.abspath(__file__), *passed,
                                  "--worker", mode], check=True, capture_output=True,
                                 text=True).stdout
            results[mode].append(json.loads(out.strip().splitlines()[-1]))
    report = {"load_average": round(os.getloadavg()[0], 2), "repeats": args.repeats}
    base = statistics.median(r[0] for r in results["plain"])
    print(f"{'mode':10} {'steps/sec':>10} {'vs plain':>9} {'loss':>9}")
    for mode, runs in results.items():
        speed = statistics.median(r[0] for r in runs)
        loss = statistics.median(r[1] for r in runs)
        print(f"{mode:10} {speed:10.1f} {speed / base:9.2f} {loss:9.4f}")
        report[f"{mode}_steps_per_sec"] = round(speed, 2)
        report[f"{mode}_vs_plain"] = round(speed / base, 3)
        report[f"{mode}_loss"] = round(loss, 5)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
