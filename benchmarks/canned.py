"""Canned estimators side by side: estimator_lite against tf.estimator 2.15.

A tabular dataset built from the bundled UCI digits (examples/data, CC BY 4.0):
numeric column ``pixels`` (64 values in [0, 1]) and eight categorical columns
``row<i>`` naming the column of the most ink in pixel row i ("c0".."c7", or
"blank"); the label is the digit (10 classes), split 80/20. Two models with the
same hyperparameters in both libraries:
  * dnn - DNNClassifier([64, 32]) on pixels + 4-d embeddings of the row columns,
    Adagrad(0.05);
  * wide_deep - DNNLinearCombinedClassifier: linear part on the row columns and
    one crossed pair (Ftrl 0.05), DNN part as above.
Each (library, model) trains --steps steps (batch 64) after --warmup steps in its
own process, interleaved over --repeats rounds; estimator_lite runs in this
interpreter, tf.estimator under ESTIMATOR_LITE_TF215_PYTHON. A third row,
``estimator_lite_loop``, is estimator_lite with
``RunConfig(experimental_steps_per_loop=--steps-per-loop)`` (multi-step loops,
which tf.estimator never had off TPU; 0 or 1 leaves the row out). Reported per cell:
median train steps/sec (between warm-up and end, timed by a passive hook) and
test accuracy after training; for estimator_lite also the steps/sec of a bare
``session.run(train_op)`` loop on the same graph (no loop around it: the limit
any orchestration can reach, so `estimator_lite_vs_bare` shows what is left to
gain outside the graph). Prints a table, then one JSON line (the last line).
``--quick`` (small sizes, one round, the wide_deep model only: its DNN part is the
dnn model) is a smoke run of each library's path.

Usage: python benchmarks/canned.py [--steps 2000] [--warmup 200] [--repeats 3]
                                  [--steps-per-loop 100]
"""

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from bench_util import parse_args

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA_PATH = os.path.join(ROOT, "examples", "data", "digits.csv.gz")
MODELS = ("dnn", "wide_deep")
LIBRARIES = ("estimator_lite", "tf_estimator")
_LOOP = "estimator_lite_loop"  # estimator_lite with multi-step loops
_BATCH = 64
_ROWS = 8


def load_table(test_fraction=0.2, seed=0):
    """Returns (train_features, train_labels, test_features, test_labels)."""
    with gzip.open(DATA_PATH, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    pixels = table[:, :64] / 16.0
    labels = table[:, 64].astype(np.int64)
    images = pixels.reshape(-1, _ROWS, 8)
    features = {"pixels": pixels}
    for row in range(_ROWS):
        ink = images[:, row, :]
        names = np.array([f"c{i}" for i in np.argmax(ink, axis=1)])
        features[f"row{row}"] = np.where(ink.max(axis=1) > 0, names, "blank")
    order = np.random.RandomState(seed).permutation(len(labels))
    n_test = int(len(labels) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return ({k: v[train] for k, v in features.items()}, labels[train],
            {k: v[test] for k, v in features.items()}, labels[test])


def _columns(fc):
    rows = [fc.categorical_column_with_vocabulary_list(
        f"row{i}", [f"c{j}" for j in range(8)] + ["blank"]) for i in range(_ROWS)]
    deep = [fc.numeric_column("pixels", shape=(64,))]
    deep += [fc.embedding_column(r, 4) for r in rows]
    wide = rows + [fc.crossed_column([rows[2], rows[5]], 50)]
    return deep, wide


def _build(library, model, model_dir, seed, steps_per_loop=1):
    """The estimator for (library, model), with identical hyperparameters."""
    import tensorflow as tf

    if library == "estimator_lite":
        import estimator_lite as el
        from estimator_lite import canned as lib
        keras_opts = tf.keras.optimizers
        config = el.RunConfig(model_dir=model_dir, tf_random_seed=seed,
                              experimental_steps_per_loop=steps_per_loop)
    else:
        lib = tf.estimator
        keras_opts = tf.keras.optimizers.legacy  # tf.estimator 2.15 needs these.
        config = tf.estimator.RunConfig(model_dir=model_dir, tf_random_seed=seed)
    deep, wide = _columns(tf.feature_column)
    if model == "dnn":
        return lib.DNNClassifier([64, 32], deep, n_classes=10, config=config,
                                 optimizer=keras_opts.Adagrad(0.05))
    return lib.DNNLinearCombinedClassifier(
        linear_feature_columns=wide, linear_optimizer=keras_opts.Ftrl(0.05),
        dnn_feature_columns=deep, dnn_hidden_units=[64, 32],
        dnn_optimizer=keras_opts.Adagrad(0.05), n_classes=10, config=config)


def run_worker(library, model, steps, warmup, seed, steps_per_loop=1):
    """Trains one (library, model) in this process; returns rate and accuracy."""
    import tensorflow as tf
    from bench_util import BareLoopHook, timed_train

    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    x_train, y_train, x_test, y_test = load_table()
    model_dir = tempfile.mkdtemp(prefix="bench_canned_")
    try:
        estimator = _build(library, model, model_dir, seed, steps_per_loop)

        def train_input_fn():
            return tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(
                len(y_train), seed=seed).repeat().batch(_BATCH)

        def test_input_fn():
            return tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(256)

        rate = timed_train(estimator, train_input_fn, warmup, steps)
        accuracy = estimator.evaluate(test_input_fn)["accuracy"]
        result = {"steps_per_sec": rate, "accuracy": float(accuracy),
                  "tf_version": tf.__version__}
        if library == "estimator_lite" and steps_per_loop == 1:
            # The same graph without any loop around it, on a throw-away model_dir.
            bare = BareLoopHook(warmup, steps)
            _build(library, model, tempfile.mkdtemp(dir=model_dir), seed).train(
                train_input_fn, hooks=[bare], steps=1)
            result["bare_steps_per_sec"] = bare.steps_per_sec
        return result
    finally:
        shutil.rmtree(model_dir, ignore_errors=True)


def _run_subprocess(python, variant, model, args, seed):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_CONFIG", None)
    library = "estimator_lite" if variant == _LOOP else variant
    per_loop = args.steps_per_loop if variant == _LOOP else 1
    command = [python, os.path.abspath(__file__), "--worker", library, "--model", model,
               "--steps", str(args.steps), "--warmup", str(args.warmup),
               "--seed", str(seed), "--worker-steps-per-loop", str(per_loop)]
    result = subprocess.run(command, capture_output=True, text=True, env=env,
                            check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{library}/{model} worker failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3,
                        help="interleaved rounds; medians are reported")
    parser.add_argument("--worker", choices=LIBRARIES, help=argparse.SUPPRESS)
    parser.add_argument("--model", choices=MODELS, help=argparse.SUPPRESS)
    parser.add_argument("--steps-per-loop", type=int, default=100,
                        help="steps per session call of the estimator_lite_loop row "
                             "(0 or 1: no such row)")
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--worker-steps-per-loop", type=int, default=1,
                        help=argparse.SUPPRESS)
    args = parse_args(parser, argv, {"steps": 30, "warmup": 5, "repeats": 1,
                                     "steps_per_loop": 10})
    if args.worker:
        print(json.dumps(run_worker(args.worker, args.model, args.steps, args.warmup,
                                    args.seed, args.worker_steps_per_loop)))
        return
    tf215 = os.environ.get("ESTIMATOR_LITE_TF215_PYTHON")
    libraries = LIBRARIES if tf215 else LIBRARIES[:1]
    if args.steps_per_loop > 1:
        libraries += (_LOOP,)
    pythons = {"estimator_lite": sys.executable, _LOOP: sys.executable,
               "tf_estimator": tf215}
    # A quick run (a smoke run of every library's path) trains wide_deep only: its
    # DNN part is the dnn model's.
    models = MODELS[-1:] if args.quick else MODELS
    runs = {(lib, m): [] for lib in libraries for m in models}
    for seed in range(args.repeats):
        for model in models:
            for library in libraries:
                runs[library, model].append(
                    _run_subprocess(pythons[library], library, model, args, seed))
    median = {key: {k: float(np.median([r[k] for r in rs])) for k in rs[0]
                    if k != "tf_version"} for key, rs in runs.items()}
    print(f"{'model':<11}{'library':<21}{'steps/sec':>11}{'accuracy':>10}"
          f"{'bare loop':>11}")
    for (library, model), m in median.items():
        bare = f"{m['bare_steps_per_sec']:>11.0f}" if "bare_steps_per_sec" in m else ""
        print(f"{model:<11}{library:<21}{m['steps_per_sec']:>11.0f}"
              f"{m['accuracy']:>10.3f}{bare}")
    result = {"steps": args.steps, "repeats": args.repeats, "batch": _BATCH,
              "steps_per_loop": args.steps_per_loop}
    for (library, model), m in median.items():
        result[f"{model}_{library}_steps_per_sec"] = round(m["steps_per_sec"], 1)
        result[f"{model}_{library}_accuracy"] = round(m["accuracy"], 4)
        if "bare_steps_per_sec" in m:
            result[f"{model}_bare_steps_per_sec"] = round(m["bare_steps_per_sec"], 1)
            result[f"{model}_estimator_lite_vs_bare"] = round(
                m["steps_per_sec"] / m["bare_steps_per_sec"], 3)
    if tf215:
        for model in models:
            lite, ref = median["estimator_lite", model], median["tf_estimator", model]
            result[f"{model}_speedup"] = round(lite["steps_per_sec"] /
                                               ref["steps_per_sec"], 2)
            result[f"{model}_accuracy_diff"] = round(lite["accuracy"] - ref["accuracy"],
                                                     4)
            print(f"{model}: estimator_lite/tf.estimator steps/sec = "
                  f"{result[f'{model}_speedup']:.2f}x, accuracy difference "
                  f"{result[f'{model}_accuracy_diff']:+.4f}")
            if (_LOOP, model) in median:
                loop = median[_LOOP, model]
                result[f"{model}_loop_speedup"] = round(loop["steps_per_sec"] /
                                                        ref["steps_per_sec"], 2)
                print(f"{model}: estimator_lite with {args.steps_per_loop}-step loops/"
                      f"tf.estimator steps/sec = {result[f'{model}_loop_speedup']:.2f}x")
    sys.stdout.flush()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
