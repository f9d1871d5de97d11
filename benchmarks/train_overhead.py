"""Per-step overhead of Estimator.train against a bare session loop.

Tiny linear regression (16 features, batch 32, GradientDescent), trained several
ways in one process on the same graph construction:
  (a) bare   - ``session.run(train_op)`` in a Python loop on a default session
      (what a hand-written loop gets);
  (a') bare_single_threaded - the same on TensorFlow's single-threaded executor,
      which the Estimator picks for a graph this small (_engine/executor_choice.py);
  (b) monitored - tf.compat.v1.train.MonitoredTrainingSession with default hooks;
  (c) estimator - estimator_lite.Estimator.train, default RunConfig except
      save_checkpoints_steps=1000;
  (d) estimator_k100 - the same with RunConfig(experimental_steps_per_loop=100):
      100 steps per session call (a multi-step loop).
Each is timed over --steps steps after a warm-up. Prints a table, then one JSON
line (the last line) with steps/sec, estimator_vs_bare, k100_vs_k1 and
k100_vs_k1_cpu (the same ratio of process CPU time per step, which depends little on
other load of the machine).

Usage: python benchmarks/train_overhead.py [--steps 10000] [--warmup 300] [--repeats 3]
"""

import argparse
import json
import shutil
import sys
import tempfile
import time

import numpy as np
from bench_util import parse_args, timed_train_with_cpu

import estimator_lite as el
from estimator_lite._tf import tf

_FEATURES = 16
_BATCH = 32


def _data():
    rng = np.random.RandomState(0)
    x = rng.randn(4096, _FEATURES).astype(np.float32)
    y = x.dot(rng.randn(_FEATURES, 1)).astype(np.float32)
    return x, y


def _input_fn():
    x, y = _data()
    return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(_BATCH)


def _model(features, labels):
    w = tf.get_variable("w", [_FEATURES, 1], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(features, w) + b - labels))
    train_op = tf.train.GradientDescentOptimizer(0.01).minimize(
        loss, global_step=tf.train.get_or_create_global_step())
    return loss, train_op


def _model_fn(features, labels, mode):
    loss, train_op = _model(features, labels)
    return el.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _build_plain_graph():
    graph = tf.Graph()
    with graph.as_default():
        tf.train.get_or_create_global_step()
        features, labels = tf.data.make_one_shot_iterator(_input_fn()).get_next()
        _, train_op = _model(features, labels)
    return graph, train_op


def _loop_rate(session, train_op, steps, warmup):
    """Steps/sec of `session.run(train_op)` over `steps` steps after a warm-up."""
    for _ in range(warmup):
        session.run(train_op)
    start = time.perf_counter()
    for _ in range(steps):
        session.run(train_op)
    return steps / (time.perf_counter() - start)


def bench_bare(steps, warmup, executor_type=""):
    """Steps/sec of a bare session.run(train_op) loop on the given executor."""
    graph, train_op = _build_plain_graph()
    config = tf.ConfigProto()
    config.experimental.executor_type = executor_type
    with graph.as_default(), tf.Session(config=config) as session:
        session.run(tf.global_variables_initializer())
        return _loop_rate(session, train_op, steps, warmup)


def bench_monitored(steps, warmup, model_dir):
    """Steps/sec of MonitoredTrainingSession with its default hooks."""
    graph, train_op = _build_plain_graph()
    with graph.as_default(), tf.train.MonitoredTrainingSession(
            checkpoint_dir=model_dir, save_checkpoint_steps=1000,
            log_step_count_steps=100) as session:
        return _loop_rate(session, train_op, steps, warmup)


def bench_estimator(steps, warmup, model_dir, steps_per_loop=1):
    """(steps/sec, process CPU ms per 1000 steps) of Estimator.train, timed between
    two steps by a passive hook."""
    config = el.RunConfig(model_dir=model_dir, save_checkpoints_steps=1000,
                          experimental_steps_per_loop=steps_per_loop)
    estimator = el.Estimator(_model_fn, config=config)
    return timed_train_with_cpu(estimator, _input_fn, warmup, steps)


def _run_all(steps, warmup):
    tmp = tempfile.mkdtemp(prefix="bench_overhead_")
    try:
        k1, k1_cpu_ms = bench_estimator(steps, warmup, tmp + "/estimator")
        k100, k100_cpu_ms = bench_estimator(steps, warmup, tmp + "/k100", 100)
        return {
            "bare": bench_bare(steps, warmup),
            "bare_single_threaded": bench_bare(steps, warmup, "SINGLE_THREADED_EXECUTOR"),
            "monitored": bench_monitored(steps, warmup, tmp + "/monitored"),
            "estimator": k1,
            "estimator_k100": k100,
            # CPU time depends little on other load of the machine (steps/sec does).
            "k100_vs_k1_cpu": k1_cpu_ms / k100_cpu_ms,
        }
    finally:
        shutil.rmtree(tmp)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # 10,000: a K=100 row then makes 100 session calls per measurement; with 3,000
    # (30 calls) k100_vs_k1 swung between 1.2 and 1.8 from run to run.
    parser.add_argument("--steps", type=int, default=10000)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3,
                        help="rounds of every row; the median of each is reported")
    args = parse_args(parser, argv, {"steps": 50, "warmup": 10, "repeats": 1})
    rounds = [_run_all(args.steps, args.warmup) for _ in range(args.repeats)]
    median = {k: float(np.median([r[k] for r in rounds])) for k in rounds[0]}
    print(f"{'loop':<22}{'steps/sec':>12}{'vs bare':>10}")
    for name, rate in median.items():
        if name == "k100_vs_k1_cpu":
            continue
        print(f"{name:<22}{rate:>12.0f}{rate / median['bare']:>10.2f}")
    result = {
        "bare_steps_per_sec": round(median["bare"], 1),
        "bare_single_threaded_steps_per_sec": round(median["bare_single_threaded"], 1),
        "monitored_steps_per_sec": round(median["monitored"], 1),
        "estimator_steps_per_sec": round(median["estimator"], 1),
        "estimator_k100_steps_per_sec": round(median["estimator_k100"], 1),
        "estimator_vs_bare": round(median["estimator"] / median["bare"], 3),
        "k100_vs_k1": round(median["estimator_k100"] / median["estimator"], 3),
        "k100_vs_k1_cpu": round(median["k100_vs_k1_cpu"], 3),
        "steps": args.steps, "repeats": args.repeats,
    }
    sys.stdout.flush()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
