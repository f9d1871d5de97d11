"""estimator_lite against tf.estimator 2.15: the same jobs, side by side, in one run.

Jobs (tiny linear regression: 16 features, batch 32, GradientDescent; default
RunConfig apart from model_dir):
  train_<N>  - wall time of the whole `train()` call for N = 300, 3000, 20000 steps
               (graph building, session creation, the loop, the final checkpoint);
  evaluate   - `evaluate()` over 625 batches (20,000 examples) of a trained model;
  predict    - `predict()` of 20,000 examples (batches of 32), one dict per example
               (for both: after one untimed call on one batch, so TensorFlow's
               one-off first-call costs are not counted);
  latency    - answering one one-example request: estimator_lite's
               `predictor.from_estimator(...)` callable (median over 200 requests,
               each a different example, after 20 untimed ones) against
               tf.estimator's whole one-example `predict()` call (graph build,
               restore, one prediction; median over 20 calls after an untimed one:
               fewer, as each takes a fraction of a second);
  predict_1  - that one-example `predict()` call on every backend (same medians);
  *_k100     - estimator_lite with its opt-in multi-step loop,
               ``RunConfig(experimental_steps_per_loop=100)``: the largest train and
               the cluster's chief exit, against tf.estimator's only mode (its own
               figure of the same job);
  cluster    - a local ps + chief + worker + evaluator job (one process each,
               TF_CONFIG each, max_steps 3000): seconds from start to the chief's
               exit, and to every process's exit. tf.estimator's ps never exits
               (it `join()`s forever), so only the chief's exit compares both; the
               ps is killed once the others are done. Four processes importing
               TensorFlow at once dominate this figure on a small machine; the
               optional packages only one interpreter has (Keras imports them with
               TensorFlow) are hidden in these processes, so both import the same
               (JSON: cluster_hidden_packages).

Three backends, each job in its own process: this file, with ``--job``, under
  estimator_lite         - this interpreter (the newest TensorFlow) and this checkout;
  estimator_lite_tf215   - ``$ESTIMATOR_LITE_TF215_PYTHON`` with this checkout on
                           PYTHONPATH: the same library on TF 2.15;
  tf.estimator           - ``$ESTIMATOR_LITE_TF215_PYTHON`` alone (tensorflow-estimator
                           2.15).
The job code is the same text for all; only the module that provides
Estimator/RunConfig/... differs. Backends are interleaved (the order alternates
every round) and each figure is the median over ``--repeats`` rounds.
Timings are taken inside the job process, so interpreter start-up and the
TensorFlow import are excluded, except for `cluster`, which is timed from outside.

Prints a table (seconds), then one JSON line (the last line) with the medians and
two speedups (tf.estimator / estimator_lite): ``speedup`` against estimator_lite on
the newest TF (library and TF version together) and ``speedup_same_tf`` against
estimator_lite on TF 2.15 (the library alone). Rows ending in ``_cpu`` give the job
process's CPU seconds (all threads) for the same calls: on a busy shared machine
they are steadier than wall time. Without ESTIMATOR_LITE_TF215_PYTHON, or with
``--quick`` (small sizes, one round: a smoke run), only estimator_lite on the newest
TF runs and the speedups are null.

Usage: python benchmarks/vs_tf_estimator.py [--repeats 3] [--quick]
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

_FEATURES = 16
_BATCH = 32
_EXAMPLES = 20000  # evaluate: 625 batches of 32; predict: 20,000 examples
_FULL = {"train_steps": (300, 3000, 20000), "eval_examples": _EXAMPLES,
         "predict_examples": _EXAMPLES, "latency_requests": 200, "predict_calls": 20,
         "cluster_steps": 3000}
_QUICK = {"train_steps": (100,), "eval_examples": 3200, "predict_examples": 3200,
          "latency_requests": 20, "predict_calls": 2, "cluster_steps": 300}
_WARMUP_REQUESTS = 20
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Backend -> (the library its jobs import, whether it runs on the TF 2.15 interpreter).
_BACKENDS = {"estimator_lite": ("estimator_lite", False),
             "estimator_lite_tf215": ("estimator_lite", True),
             "tf.estimator": ("tf.estimator", True)}
_LIBRARIES = ("estimator_lite", "tf.estimator")
_CLUSTER_ROLES = (("ps", 0), ("chief", 0), ("worker", 0), ("evaluator", 0))
_CLUSTER_TIMEOUT_SECS = 600
_JOB_TIMEOUT_SECS = 900
# Optional packages Keras imports with TensorFlow when they are installed (see
# `_unmatched_packages`), and the variable naming those a cluster process hides.
_OPTIONAL_PACKAGES = ("pandas", "scipy", "sklearn", "matplotlib", "pyarrow", "IPython",
                      "cv2", "huggingface_hub", "rich", "PIL", "h5py", "jax", "torch")
_HIDDEN_ENV = "ESTIMATOR_LITE_BENCH_HIDDEN"
_UNMATCHED = []  # [the list], filled once by main()
_POLL_SECS = 0.05
# The opt-in multi-step loop's K (RunConfig(experimental_steps_per_loop=K)) of the
# `_k100` figures, and those figures' names -> the tf.estimator figure they face.
_LOOP_STEPS = 100
_LOOP_FIGURES = {}


# The job: runs inside the subprocess, identical for both backends ------------------


def _import_backend(backend):
    """(module with Estimator, RunConfig, ...; tf.compat.v1) for `backend`."""
    import tensorflow

    if backend == "tf.estimator":
        estimator_lib = tensorflow.estimator
    else:
        import estimator_lite as estimator_lib
    return estimator_lib, tensorflow.compat.v1


def _data(examples, seed):
    import numpy as np

    rng = np.random.RandomState(seed)
    x = rng.randn(examples, _FEATURES).astype(np.float32)
    y = x.dot(np.random.RandomState(99).randn(_FEATURES, 1)).astype(np.float32)
    return x, y


def _make_model_fn(estimator_lib, tf):
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [_FEATURES, 1], initializer=tf.zeros_initializer())
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        predictions = tf.matmul(features["x"], w) + b
        if mode == estimator_lib.ModeKeys.PREDICT:
            return estimator_lib.EstimatorSpec(mode, predictions={"y": predictions})
        loss = tf.reduce_mean(tf.square(predictions - labels))
        train_op = tf.train.GradientDescentOptimizer(0.01).minimize(
            loss, global_step=tf.train.get_global_step())
        return estimator_lib.EstimatorSpec(mode, loss=loss, train_op=train_op)
    return model_fn


def _input_fn(tf, examples, repeat, labels=True, seed=0):
    def input_fn():
        import tensorflow

        x, y = _data(examples, seed)
        tensors = ({"x": x}, y) if labels else {"x": x}
        dataset = tensorflow.data.Dataset.from_tensor_slices(tensors)
        return (dataset.repeat() if repeat else dataset).batch(_BATCH)
    return input_fn


def _estimator(estimator_lib, tf, model_dir, **config):
    return estimator_lib.Estimator(
        _make_model_fn(estimator_lib, tf),
        config=estimator_lib.RunConfig(model_dir=model_dir, **config))


class _Clock:
    """Wall and process CPU seconds since construction (CPU: every thread)."""

    def __init__(self):
        self._wall, self._cpu = time.perf_counter(), time.process_time()

    def result(self, **extra):
        return dict(extra, secs=time.perf_counter() - self._wall,
                    cpu_secs=time.process_time() - self._cpu)


def _loop_config(args):
    """RunConfig's multi-step setting for a K > 1 job (estimator_lite only)."""
    return ({"experimental_steps_per_loop": args.steps_per_loop}
            if args.steps_per_loop > 1 else {})


def _job_train(estimator_lib, tf, model_dir, args):
    estimator = _estimator(estimator_lib, tf, model_dir, **_loop_config(args))
    clock = _Clock()
    estimator.train(_input_fn(tf, 4096, repeat=True), max_steps=args.steps)
    return clock.result()


def _trained_and_warm(estimator_lib, tf, model_dir, call):
    """An estimator trained 10 steps whose `call` already ran once on one batch.

    The untimed first call pays TensorFlow's one-off costs (lazy imports, first
    restore), which differ between TF versions and are not the orchestration.
    """
    estimator = _estimator(estimator_lib, tf, model_dir)
    estimator.train(_input_fn(tf, 4096, repeat=True), max_steps=10)
    call(estimator, _BATCH)
    return estimator


def _evaluate(estimator, tf, examples):
    return estimator.evaluate(_input_fn(tf, examples, repeat=False, seed=1))


def _predict_count(estimator, tf, examples):
    return sum(1 for _ in estimator.predict(
        _input_fn(tf, examples, repeat=False, labels=False, seed=2)))


def _job_evaluate(estimator_lib, tf, model_dir, args):
    estimator = _trained_and_warm(estimator_lib, tf, model_dir,
                                  lambda e, n: _evaluate(e, tf, n))
    clock = _Clock()
    metrics = _evaluate(estimator, tf, args.examples)
    return clock.result(global_step=int(metrics["global_step"]))


def _job_predict(estimator_lib, tf, model_dir, args):
    estimator = _trained_and_warm(estimator_lib, tf, model_dir,
                                  lambda e, n: _predict_count(e, tf, n))
    clock = _Clock()
    count = _predict_count(estimator, tf, args.examples)
    result = clock.result()
    if count != args.examples:
        raise RuntimeError(f"predict yielded {count} examples, expected {args.examples}")
    return result


def _serving_input_fn(estimator_lib, tf):
    def serving_input_fn():
        x = tf.placeholder(tf.float32, [None, _FEATURES], name="x")
        return estimator_lib.export.ServingInputReceiver({"x": x}, {"x": x})
    return serving_input_fn


def _predict_one(estimator, x):
    """One whole `predict()` call for the one example `x` ([1, features])."""
    import tensorflow

    def input_fn():
        return tensorflow.data.Dataset.from_tensor_slices({"x": x}).batch(1)
    return list(estimator.predict(input_fn))


def _median_call(fn, calls):
    """(median wall secs, median CPU secs) of `calls` calls of fn(index)."""
    walls, cpus = [], []
    for index in range(calls):
        clock = _Clock()
        fn(index)
        result = clock.result()
        walls.append(result["secs"])
        cpus.append(result["cpu_secs"])
    return statistics.median(walls), statistics.median(cpus)


def _job_latency(estimator_lib, tf, model_dir, args):
    """One-example requests: the predictor (estimator_lite) and the predict() call.

    `secs`/`cpu_secs`: one request as each library answers it best (estimator_lite's
    predictor; tf.estimator has only predict()); `predict_1_*`: one predict() call.
    """
    x = _data(max(args.requests, args.calls) + 1, seed=3)[0]
    estimator = _trained_and_warm(estimator_lib, tf, model_dir,
                                  lambda e, n: _predict_one(e, x[:1]))
    wall, cpu = _median_call(lambda i: _predict_one(estimator, x[i + 1:i + 2]),
                             args.calls)
    result = {"predict_1_secs": wall, "predict_1_cpu_secs": cpu, "secs": wall,
              "cpu_secs": cpu, "tf_version": tf.VERSION}
    if hasattr(estimator_lib, "predictor"):
        with estimator_lib.predictor.from_estimator(
                estimator, _serving_input_fn(estimator_lib, tf)) as predictor:
            for index in range(_WARMUP_REQUESTS):
                predictor({"x": x[index:index + 1]})
            result["secs"], result["cpu_secs"] = _median_call(
                lambda i: predictor({"x": x[i:i + 1]}), args.requests)
    return result


def _job_cluster_role(estimator_lib, tf, model_dir, args):
    """One role of the local cluster; the role comes from TF_CONFIG."""
    estimator = _estimator(estimator_lib, tf, model_dir, save_checkpoints_steps=1000,
                           experimental_max_worker_delay_secs=1, **_loop_config(args))
    train_spec = estimator_lib.TrainSpec(_input_fn(tf, 4096, repeat=True),
                                         max_steps=args.steps)
    eval_spec = estimator_lib.EvalSpec(_input_fn(tf, 640, repeat=False, seed=1),
                                       steps=None, start_delay_secs=0, throttle_secs=1)
    estimator_lib.train_and_evaluate(estimator, train_spec, eval_spec)
    return {}


_JOBS = {"train": _job_train, "evaluate": _job_evaluate, "predict": _job_predict,
         "latency": _job_latency, "cluster_role": _job_cluster_role}


def _hide_packages():
    """Makes the packages named in _HIDDEN_ENV unimportable in this process (see
    `_unmatched_packages`); call before TensorFlow is imported."""
    for name in filter(None, os.environ.get(_HIDDEN_ENV, "").split(",")):
        sys.modules[name] = None  # `import name` now raises ImportError


def _run_job(args):
    """The subprocess side: runs one job and prints its result as a JSON line."""
    _hide_packages()
    estimator_lib, tf = _import_backend(args.backend)
    result = _JOBS[args.job](estimator_lib, tf, args.model_dir, args)
    print(json.dumps(result), flush=True)


# The driver: starts the job processes and reports -------------------------------


def _python(backend):
    on_tf215 = _BACKENDS[backend][1]
    return os.environ["ESTIMATOR_LITE_TF215_PYTHON"] if on_tf215 else sys.executable


def _unmatched_packages():
    """The optional packages only one of the benchmark's interpreters has.

    `import tensorflow` (through Keras) also imports these when they are installed,
    about 0.5 s on TF 2.21 here; only the cluster job is timed with its imports, and
    there they would time the two environments instead of the two libraries. Its
    processes run with these hidden (a process lacking one is not affected).
    """
    pythons = {sys.executable, os.environ.get("ESTIMATOR_LITE_TF215_PYTHON") or ""} - {""}
    if len(pythons) < 2:
        return []
    probe = ("import importlib.util, json, sys; print(json.dumps([m for m in sys.argv[1:] "
             "if importlib.util.find_spec(m)]))")
    found = [set(json.loads(subprocess.run(
        [python, "-c", probe, *_OPTIONAL_PACKAGES], capture_output=True, text=True,
        check=True).stdout)) for python in sorted(pythons)]
    return sorted(found[0] ^ found[1])


def _job_env(backend, tf_config=None):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONUNBUFFERED="1")
    env.pop("TF_CONFIG", None)
    env.pop(_HIDDEN_ENV, None)
    if _BACKENDS[backend][0] == "tf.estimator":
        env.pop("PYTHONPATH", None)  # the oracle must not see this checkout
    else:  # this checkout, whatever else is installed
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (_ROOT, env.get("PYTHONPATH")) if p)
    if tf_config is not None:
        env["TF_CONFIG"] = json.dumps(tf_config)
        env[_HIDDEN_ENV] = ",".join(_UNMATCHED[0]) if _UNMATCHED else ""
    return env


def _job_command(backend, job, model_dir, **flags):
    command = [_python(backend), os.path.abspath(__file__), "--job", job,
               "--backend", _BACKENDS[backend][0], "--model-dir", model_dir]
    for name, value in flags.items():
        command += [f"--{name.replace('_', '-')}", str(value)]
    return command


def _timed_job(backend, job, tmp, **flags):
    """Runs one job process; returns the JSON dict it reports (secs, cpu_secs, ...)."""
    model_dir = tempfile.mkdtemp(dir=tmp)
    result = subprocess.run(_job_command(backend, job, model_dir, **flags),
                            capture_output=True, text=True, env=_job_env(backend),
                            timeout=_JOB_TIMEOUT_SECS, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{backend} {job} {flags} failed:\n{result.stderr[-3000:]}")
    shutil.rmtree(model_dir, ignore_errors=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def _free_ports(count):
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _timed_cluster(backend, tmp, steps, steps_per_loop=1):
    """Seconds from start to the chief's exit and to every process's exit.

    The second is None for tf.estimator, whose ps never exits (it is killed).
    """
    model_dir = tempfile.mkdtemp(dir=tmp)
    ports = iter(_free_ports(3))
    cluster = {job: [f"127.0.0.1:{next(ports)}"] for job in ("chief", "worker", "ps")}
    logs, processes = {}, {}
    start = time.perf_counter()
    for task_type, index in _CLUSTER_ROLES:
        tf_config = {"cluster": cluster, "task": {"type": task_type, "index": index}}
        logs[task_type] = open(os.path.join(tmp, f"{backend}-{task_type}.log"), "w")  # noqa: SIM115
        processes[task_type] = subprocess.Popen(
            _job_command(backend, "cluster_role", model_dir, steps=steps,
                         steps_per_loop=steps_per_loop),
            stdout=logs[task_type], stderr=subprocess.STDOUT,
            env=_job_env(backend, tf_config))
    exits = {}
    try:
        while len(exits) < len(processes):
            now = time.perf_counter()
            for task_type, process in processes.items():
                if task_type not in exits and process.poll() is not None:
                    exits[task_type] = now - start
                    if process.returncode != 0:
                        raise RuntimeError(f"{backend} {task_type} exited with "
                                           f"{process.returncode}; see {tmp}")
            if _BACKENDS[backend][0] == "tf.estimator" and set(exits) >= {
                    "chief", "worker", "evaluator"}:
                break  # its ps serves forever
            if now - start > _CLUSTER_TIMEOUT_SECS:
                raise RuntimeError(f"{backend} cluster did not finish; exits {exits}")
            time.sleep(_POLL_SECS)
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.wait()
        for log in logs.values():
            log.close()
    shutil.rmtree(model_dir, ignore_errors=True)
    every = exits.get("ps")
    return exits["chief"], (max(exits.values()) if every is not None else None)


def _rounds(sizes, repeats, backends, tmp):
    """({figure name: {backend: [secs per round]}}, {backend: TF version})."""
    figures, versions = {}, {}

    def record(name, backend, secs):
        figures.setdefault(name, {}).setdefault(backend, []).append(secs)

    def record_job(name, backend, job, **flags):
        reported = _timed_job(backend, job, tmp, **flags)
        record(name, backend, reported["secs"])
        record(f"{name}_cpu", backend, reported["cpu_secs"])
        return reported

    for round_index in range(repeats):
        order = backends if round_index % 2 == 0 else tuple(reversed(backends))
        for steps in sizes["train_steps"]:
            for backend in order:
                record_job(f"train_{steps}", backend, "train", steps=steps)
        for backend in order:
            record_job("evaluate", backend, "evaluate", examples=sizes["eval_examples"])
        for backend in order:
            record_job("predict", backend, "predict", examples=sizes["predict_examples"])
        for backend in order:
            reported = record_job("latency", backend, "latency",
                                  requests=sizes["latency_requests"],
                                  calls=sizes["predict_calls"])
            record("predict_1", backend, reported["predict_1_secs"])
            record("predict_1_cpu", backend, reported["predict_1_cpu_secs"])
            versions[backend] = reported["tf_version"]
        for backend in order:
            chief_secs, every_secs = _timed_cluster(backend, tmp, sizes["cluster_steps"])
            record("cluster_chief_exit", backend, chief_secs)
            if every_secs is not None:
                record("cluster_every_exit", backend, every_secs)
        _record_loop_modes(order, sizes, tmp, record, record_job)
        print(f"round {round_index + 1}/{repeats} done", file=sys.stderr, flush=True)
    for name, base in _LOOP_FIGURES.items():  # tf.estimator has one mode: its own
        if "tf.estimator" in figures.get(base, {}):
            figures[name]["tf.estimator"] = figures[base]["tf.estimator"]
    return figures, versions


def _record_loop_modes(order, sizes, tmp, record, record_job):
    """estimator_lite's opt-in multi-step loops (K = _LOOP_STEPS): the largest
    train and the cluster, on the estimator_lite backends."""
    steps = max(sizes["train_steps"])
    for backend in order:
        if _BACKENDS[backend][0] != "estimator_lite":
            continue
        record_job(f"train_{steps}_k{_LOOP_STEPS}", backend, "train", steps=steps,
                   steps_per_loop=_LOOP_STEPS)
        chief_secs, _ = _timed_cluster(backend, tmp, sizes["cluster_steps"],
                                       steps_per_loop=_LOOP_STEPS)
        record(f"cluster_chief_exit_k{_LOOP_STEPS}", backend, chief_secs)
    _LOOP_FIGURES.update({f"train_{steps}_k{_LOOP_STEPS}": f"train_{steps}",
                          f"train_{steps}_k{_LOOP_STEPS}_cpu": f"train_{steps}_cpu",
                          f"cluster_chief_exit_k{_LOOP_STEPS}": "cluster_chief_exit"})


def _medians(figures):
    return {name: {backend: statistics.median(values) for backend, values in by.items()}
            for name, by in figures.items()}


def _speedup(by, ours):
    """tf.estimator's seconds over backend `ours`'s, or None if either is missing."""
    theirs, mine = by.get("tf.estimator"), by.get(ours)
    return theirs / mine if theirs and mine else None


def _report(medians, versions, repeats, sizes, load_before):
    columns = (("estimator_lite s", 18), ("el on 2.15 s", 14), ("tf.estimator s", 16),
               ("speedup", 9), ("same TF", 9))
    print(f"{'job':<22}" + "".join(f"{title:>{width}}" for title, width in columns))
    speedups, same_tf = {}, {}
    # Wall time first (what the goals are about), then process CPU time, which a
    # busy shared machine disturbs less.
    order = sorted(medians, key=lambda n: (n.endswith("_cpu"), list(medians).index(n)))
    for name in order:
        by = medians[name]
        cells = (by.get("estimator_lite"), by.get("estimator_lite_tf215"),
                 by.get("tf.estimator"), _speedup(by, "estimator_lite"),
                 _speedup(by, "estimator_lite_tf215"))
        speedups[name] = round(cells[3], 2) if cells[3] else None
        same_tf[name] = round(cells[4], 2) if cells[4] else None
        line = "".join(f"{v:>{w}.{4 if v is not None and v < 0.1 else 2}f}"
                       if v is not None else f"{'-':>{w}}"
                       for v, (_, w) in zip(cells, columns, strict=True))
        print(f"{name:<22}{line}")
    sys.stdout.flush()
    print(json.dumps({
        "speedup": speedups, "speedup_same_tf": same_tf,
        "median_secs": {n: {b: round(s, 6) for b, s in by.items()}
                        for n, by in medians.items()},
        "tf_versions": versions,
        "repeats": repeats, "sizes": {k: list(v) if isinstance(v, tuple) else v
                                      for k, v in sizes.items()},
        "cluster_hidden_packages": _UNMATCHED[0] if _UNMATCHED else [],
        "load_avg_before": load_before, "load_avg_after": list(os.getloadavg())}))


def _parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3,
                        help="rounds of every job on both backends (median reported)")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and one round: a smoke run, not a measurement")
    # Internal: how the driver runs one job in a subprocess.
    parser.add_argument("--job", choices=sorted(_JOBS), help=argparse.SUPPRESS)
    parser.add_argument("--backend", choices=_LIBRARIES, help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", help=argparse.SUPPRESS)
    parser.add_argument("--steps", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--examples", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--requests", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--calls", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--steps-per-loop", type=int, default=1, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None):
    args = _parse(argv)
    if args.job:
        _run_job(args)
        return
    sizes = _QUICK if args.quick else _FULL
    repeats = 1 if args.quick else args.repeats
    backends = tuple(_BACKENDS)
    if args.quick or not os.environ.get("ESTIMATOR_LITE_TF215_PYTHON"):
        backends = ("estimator_lite",)
        print("--quick or no ESTIMATOR_LITE_TF215_PYTHON: estimator_lite on this "
              "interpreter only", file=sys.stderr)
    if len(backends) > 1:
        _UNMATCHED.append(_unmatched_packages())
    load_before = list(os.getloadavg())
    tmp = tempfile.mkdtemp(prefix="bench_vs_tf_estimator_")
    figures, versions = _rounds(sizes, repeats, backends, tmp)  # on failure tmp stays
    shutil.rmtree(tmp, ignore_errors=True)
    _report(_medians(figures), versions, repeats, sizes, load_before)


if __name__ == "__main__":
    main()
