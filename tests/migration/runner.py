"""Runs the migration programs of examples/migration/ on both backends and compares.

A program runs as a user runs it: a subprocess, `python <program> --model-dir DIR`
(forked by tests/support/zygote.py from a warm interpreter, which a program cannot tell
from a fresh one).
- estimator_lite: the program file as it is, with this interpreter (TF >= 2.16).
- tf_estimator: a copy whose one line `import estimator_lite as tf_estimator  #
  migration: import swap` is replaced by the program's original import (normally
  `from tensorflow import estimator as tf_estimator`), run with
  ESTIMATOR_LITE_TF215_PYTHON (TF 2.15 + tensorflow-estimator 2.15, where
  estimator_lite is not installed). Nothing else changes.
Each program prints one last line `MIGRATION_RESULT {json}`: final metrics, export
signatures (keys, input and output tensor names) and program-specific facts.

Tolerances. The two runs use different TensorFlow versions (different kernels,
Eigen builds, op-seed bookkeeping), so metrics are compared within a tolerance.
Programs draw every random number from explicit seeds or start from zeros, so
their runs agree to float rounding and the default tolerance is tight
(rel 1e-3, abs 1e-4). Where a backend cannot be made deterministic the program
states why and gets a looser one. global_step is compared exactly; signatures
and the listed facts exactly.

Also a command line: `python -m tests.migration.runner [program ...]` runs the
programs on both backends and prints one line per program and a JSON summary.
"""

import dataclasses
import json
import math
import os
import re
import socket
import sys
import tempfile
import time

from tests import oracle as oracle_env
from tests.support import zygote

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAM_DIR = os.path.join(ROOT, "examples", "migration")
TF215_PYTHON = os.environ.get("ESTIMATOR_LITE_TF215_PYTHON")

SWAP_LINE = "import estimator_lite as tf_estimator  # migration: import swap"
# TF1 programs (TF 1.x's tf.estimator, TF 2.x's tf.compat.v1.estimator) import the
# v1 flavor, and tf.compat.v1.estimator on the oracle.
V1_SWAP_LINE = "import estimator_lite.compat.v1 as tf_estimator  # migration: import swap"
TF_ESTIMATOR_IMPORT = "from tensorflow import estimator as tf_estimator"
# tf.estimator keeps numpy_input_fn/pandas_input_fn only in the v1 namespace.
TF_ESTIMATOR_V1_IMPORT = "from tensorflow.compat.v1 import estimator as tf_estimator"
RESULT_PREFIX = "MIGRATION_RESULT "
LITE, ORACLE = "estimator_lite", "tf_estimator"
TIMEOUT_SECS = 300

# What estimator_lite should say when tf.compat.v1.layers is used under Keras 3.
LEGACY_KERAS_HINTS = ("estimator_lite[legacy-keras]", "TF_USE_LEGACY_KERAS=1")

# A tensorflow-logger line with a loss value and a step number, in either order:
# tf.estimator's "loss = 0.69, step = 0" or estimator_lite's "step 50: loss = 0.2".
# Evaluation summaries ("Saving dict for global step 200: ..., loss = 0.1") do not
# count: they are not the training loop's progress lines.
STEP_LOSS_LINE = (r"(?m)^INFO:tensorflow:(?!.*Saving dict)(?=.*\bloss = [-+\d.e]+|"
                  r".*\bloss = nan)(?=.*\bstep[ =:]+\d+).*$")


@dataclasses.dataclass(frozen=True)
class AtLeast:
    """A lower bound on a count of stderr lines (an int means exactly)."""
    count: int


@dataclasses.dataclass(frozen=True)
class Tolerance:
    """math.isclose bounds for metric values (global_step is always exact)."""
    rel: float = 1e-3
    abs: float = 1e-4
    why: str = "deterministic on both backends: seeds or zero initial values"


@dataclasses.dataclass(frozen=True)
class Program:
    """One program of the corpus and what its runs must show.

    Attributes:
      name: file stem in examples/migration/.
      global_step: the final evaluation's global_step.
      minimums: metric -> lowest acceptable value (quality on either backend).
      maximums: metric -> highest acceptable value.
      signatures: the export's expected signatures (None: the program exports
        nothing). Recorded from tf.estimator 2.15's run.
      facts: result keys (besides metrics/signatures) compared between backends.
      fact_abs_tol: fact -> absolute tolerance for its numbers (default exact).
      tolerance: metric tolerance between the backends.
      oracle_import: the line replacing the swap line under tf.estimator.
      swap_line: the program's estimator_lite import line (SWAP_LINE, or
        V1_SWAP_LINE for a TF1 program).
      legacy_keras: needs tf-keras with TF_USE_LEGACY_KERAS=1 on TF >= 2.16.
      master_tf_config: runs with a single-node legacy `master` TF_CONFIG.
      stderr_counts: regex -> number of stderr lines it must match on each
        backend: an int (exactly) or an AtLeast.
    """
    name: str
    global_step: int
    minimums: dict = dataclasses.field(default_factory=dict)
    maximums: dict = dataclasses.field(default_factory=dict)
    signatures: dict | None = None
    facts: tuple = ()
    fact_abs_tol: dict = dataclasses.field(default_factory=dict)
    tolerance: Tolerance = Tolerance()
    oracle_import: str = TF_ESTIMATOR_IMPORT
    swap_line: str = SWAP_LINE
    legacy_keras: bool = False
    master_tf_config: bool = False
    stderr_counts: dict = dataclasses.field(default_factory=dict)

    @property
    def path(self):
        return os.path.join(PROGRAM_DIR, self.name + ".py")


def _predict_signature(inputs, outputs, key="serving_default"):
    return {key: {"inputs": inputs, "outputs": outputs}}


# A canned estimator's parsing receiver: serialized tf.Examples.
_EXAMPLES = "input_example_tensor:0"
# A canned classifier's classification (and default) signature: the head's names.
_CLASSIFY = {"inputs": {"inputs": _EXAMPLES},
             "outputs": {"classes": "head/Tile:0",
                         "scores": "head/predictions/probabilities:0"}}


def _classifier_signatures(predict_outputs, **more):
    """A canned classifier's export: classification and serving_default (the head's
    classes and scores), predict (the head's predictions and `predict_outputs`), and
    `more` signatures by key."""
    predict = {"all_class_ids": "head/predictions/Tile:0",
               "all_classes": "head/predictions/Tile_1:0",
               "class_ids": "head/predictions/ExpandDims:0",
               "classes": "head/predictions/str_classes:0",
               "probabilities": "head/predictions/probabilities:0", **predict_outputs}
    return {"classification": _CLASSIFY, "serving_default": _CLASSIFY,
            "predict": {"inputs": {"examples": _EXAMPLES}, "outputs": predict}, **more}


def _regressor_signatures(output):
    """A canned regressor's export: predict, regression and serving_default, each
    giving `output` (a tensor name) for the examples."""
    return {key: {"inputs": {name: _EXAMPLES}, "outputs": {output_key: output}}
            for key, name, output_key in (("predict", "examples", "predictions"),
                                          ("regression", "inputs", "outputs"),
                                          ("serving_default", "inputs", "outputs"))}


PROGRAMS = (
    Program(
        "feature_columns_layers", global_step=150, legacy_keras=True,
        minimums={"accuracy": 0.9, "mean_per_class_accuracy": 0.9},
        signatures=_predict_signature(
            {"color": "color:0", "length": "length:0", "weight": "weight:0",
             "width": "width:0"},
            {"class_ids": "class_ids:0", "probabilities": "probabilities:0"})),
    Program(
        "keras_layers_model_fn", global_step=200,
        minimums={"accuracy": 0.97}, maximums={"loss": 0.1},
        signatures=_predict_signature(
            {"x": "x:0"}, {"classes": "classes:0", "probabilities": "softmax_tensor:0"}),
        facts=("predicted_classes",),
        tolerance=Tolerance(rel=0.0, abs=0.05, why=(
            "Keras draws initial weights and dropout masks with its own seed "
            "streams (Keras 2 on TF 2.15, Keras 3 on TF >= 2.16), so the two runs "
            "train different networks; both converge on separable data: accuracy "
            "within 0.05 and loss within 0.05 of each other"))),
    Program(
        "census_train_and_evaluate", global_step=120, master_tf_config=True,
        minimums={"accuracy": 0.85, "auc": 0.9},
        signatures={
            "serving_default": {"inputs": {"inputs": "input_example_tensor:0"},
                                "outputs": {"classes": "Tile:0", "scores": "scores:0"}},
            "predict": {"inputs": {"examples": "input_example_tensor:0"},
                        "outputs": {"class_ids": "class_ids:0",
                                    "probabilities": "probabilities:0"}}},
        facts=("config",)),
    Program(
        "numpy_input_fn_linear", global_step=300, oracle_import=TF_ESTIMATOR_V1_IMPORT,
        maximums={"rmse": 0.13},
        signatures=_predict_signature({"input": "x:0"}, {"y": "predictions:0"}),
        facts=("predicted", "expected"), fact_abs_tol={"predicted": 0.05},
        tolerance=Tolerance(rel=0.1, abs=1e-3, why=(
            "tf.estimator's numpy_input_fn shuffles through a feeding thread and a "
            "RandomShuffleQueue and is not reproducible from run to run (its loss "
            "varies by ~5% between identical runs); estimator_lite's shuffle is "
            "seeded by the graph seed. Both reach the noise floor within 10%"))),
    Program(
        "logging_tensor_hook", global_step=200, minimums={"accuracy": 0.9},
        stderr_counts={
            # LoggingTensorHook(every_n_iter=50) over 200 steps: steps 0, 50, 100, 150.
            r"(?m)^INFO:tensorflow:hook: cross_entropy=[\d.]+ first_probabilities=": 4,
            r"(?m)^INFO:tensorflow:batch_accuracy = [\d.]+": 4,
            r"(?m)^INFO:tensorflow:migration: final accuracy 0\.\d+$": 1,
            # log_step_count_steps=50 over 200 steps: 4 progress lines (tf.estimator
            # logs steps 0..150, estimator_lite steps 50..200); at least 3 either way.
            STEP_LOSS_LINE: AtLeast(3),
        }),
    Program(
        "predict_features_only", global_step=250, maximums={"mae": 0.01},
        facts=("predictions", "same_from_tensors", "batch_sizes", "targets"),
        fact_abs_tol={"predictions": 0.011},
        tolerance=Tolerance(rel=1e-3, abs=1e-3, why=(
            "deterministic (zero initial values, no shuffle); the model fits the "
            "data exactly, so the loss is ~1e-11 and compared in absolute terms"))),
)


CANNED_PROGRAMS = (
    Program(
        "canned_dnn_classifier", global_step=1000, minimums={"accuracy": 0.8},
        signatures=_classifier_signatures({"logits": "dnn/logits/BiasAdd:0"}),
        facts=("predicted_classes", "labels"),
        tolerance=Tolerance(why=(
            "estimator_lite's canned DNNClassifier builds the same ops in the same "
            "order as tf.estimator's, so the graph-seeded initial weights are the "
            "same and the runs agree to float rounding"))),
)


# TF1 programs: the v1 canned estimators, tf.compat.v1.estimator on the oracle.
TF1_PROGRAMS = (
    Program(
        # v1's small default learning rates (Ftrl ~0.005, Adagrad 0.001) leave the
        # model barely past the label prior after 300 steps: the point is that both
        # libraries train it the same way.
        "wide_deep_v1", global_step=300,
        minimums={"accuracy": 0.6, "auc": 0.65}, maximums={"average_loss": 0.66},
        oracle_import=TF_ESTIMATOR_V1_IMPORT, swap_line=V1_SWAP_LINE,
        signatures=_classifier_signatures(
            {"logistic": "head/predictions/logistic:0", "logits": "add:0"},
            regression={"inputs": {"inputs": _EXAMPLES},
                        "outputs": {"outputs": "head/predictions/logistic:0"}}),
        tolerance=Tolerance(why=(
            "estimator_lite's v1 DNNLinearCombinedClassifier builds the same ops in "
            "the same order as tf.compat.v1.estimator's, so the graph-seeded initial "
            "weights are the same and the runs agree to float rounding"))),
    Program(
        "linear_regressor_ftrl_v1", global_step=200, maximums={"average_loss": 0.25},
        oracle_import=TF_ESTIMATOR_V1_IMPORT, swap_line=V1_SWAP_LINE,
        signatures=_regressor_signatures(
            "linear/linear_model/linear_model/linear_model/weighted_sum:0")),
)


# Distribution strategies (issue 18): programs users wrote for MirroredStrategy and
# MultiWorkerMirroredStrategy, on two logical CPUs. tests/distribute/ runs the
# multi-worker tutorial as a multi-process job too.
STRATEGY_PROGRAMS = (
    Program(
        "mirrored_linear_regressor", global_step=10, maximums={"average_loss": 1e-6},
        signatures=_regressor_signatures(
            "linear/linear_model/linear/linear_model/linear/linear_model/weighted_sum:0"),
        facts=("num_replicas_in_sync", "first_step_weights", "weights"),
        fact_abs_tol={"first_step_weights": 1e-6, "weights": 1e-5},
        tolerance=Tolerance(rel=1e-3, abs=1e-6, why=(
            "deterministic (zero initial weights, one constant example); the model "
            "fits it exactly, so the loss (~1e-14) is compared in absolute terms"))),
    Program(
        "mirrored_train_and_evaluate_v1", global_step=1,
        oracle_import=TF_ESTIMATOR_V1_IMPORT, swap_line=V1_SWAP_LINE,
        signatures=_predict_signature({"features": "features:0"}, {"logits": "logits:0"}),
        facts=("num_replicas_in_sync", "weights"), fact_abs_tol={"weights": 1e-6}),
    Program(
        "multi_worker_tutorial", global_step=16, maximums={"loss": 1.5},
        signatures=_predict_signature({"image": "image:0"}, {"logits": "logits:0"}),
        facts=("num_replicas_in_sync", "task"),
        tolerance=Tolerance(why=(
            "deterministic: constant initial weights drawn by numpy, a seeded "
            "shuffle; both backends' eval loss agreed to every digit without the "
            "strategy (1.124191403388977)"))),
)


def canned_programs():
    """The canned-estimator programs, once estimator_lite/canned/ exists."""
    if not os.path.isdir(os.path.join(ROOT, "estimator_lite", "canned")):
        return ()
    return CANNED_PROGRAMS + TF1_PROGRAMS


def all_programs():
    return PROGRAMS + canned_programs() + STRATEGY_PROGRAMS


def program(name):
    """The Program called `name`."""
    for candidate in all_programs():
        if candidate.name == name:
            return candidate
    raise ValueError(f"no migration program named {name!r}; valid: "
                     f"{[p.name for p in all_programs()]}")


@dataclasses.dataclass
class Run:
    """One program run on one backend."""
    backend: str
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    result: dict | None

    def failure(self):
        """A short text saying why the run failed, or None when it succeeded."""
        if self.returncode == 0 and self.result is not None:
            return None
        tail = "\n".join(self.stderr.strip().splitlines()[-25:])
        return (f"{self.backend} exited {self.returncode}"
                f"{'' if self.result else ' without a MIGRATION_RESULT line'}:\n{tail}")


def swap_import(source, replacement, where="program", swap_line=SWAP_LINE):
    """`source` with its one `swap_line` replaced by `replacement`.

    Raises:
      ValueError: `source` does not have exactly one `swap_line`.
    """
    lines = source.splitlines(keepends=True)
    swaps = [i for i, line in enumerate(lines) if line.rstrip("\n") == swap_line]
    if len(swaps) != 1:
        raise ValueError(f"{where} must have exactly one line {swap_line!r}; "
                         f"found {len(swaps)}")
    lines[swaps[0]] = replacement + "\n"
    return "".join(lines)


def oracle_source(prog):
    """The program's text with the import swapped back to tf.estimator."""
    with open(prog.path) as f:
        return swap_import(f.read(), prog.oracle_import, where=prog.path,
                           swap_line=prog.swap_line)


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _environment(prog, backend, legacy_keras=True):
    env = dict(os.environ)
    env.pop("TF_CONFIG", None)
    env.pop("TF_USE_LEGACY_KERAS", None)
    env["PYTHONUNBUFFERED"] = "1"
    if prog.master_tf_config:
        env["TF_CONFIG"] = json.dumps({
            "cluster": {"master": [f"127.0.0.1:{_free_port()}"]},
            "task": {"type": "master", "index": 0}})
    if backend == ORACLE:
        # Only the oracle's own packages plus the shared report helper.
        env["PYTHONPATH"] = PROGRAM_DIR
    elif prog.legacy_keras and legacy_keras:
        env["TF_USE_LEGACY_KERAS"] = "1"
    return env


def parse_result(stdout):
    """The JSON of the last MIGRATION_RESULT line of `stdout`, or None."""
    lines = [line for line in stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    return json.loads(lines[-1][len(RESULT_PREFIX):]) if lines else None


def run(prog, backend, work_dir, legacy_keras=True, timeout_secs=TIMEOUT_SECS):
    """Runs `prog` on `backend` with a fresh model dir under `work_dir`.

    Args:
      prog: a Program.
      backend: LITE or ORACLE.
      work_dir: an existing directory for the model dir (and the oracle's copy).
      legacy_keras: on LITE, set TF_USE_LEGACY_KERAS=1 for a legacy_keras program.
      timeout_secs: the subprocess's time limit.

    Returns:
      A Run.

    Raises:
      ValueError: unknown backend, or ORACLE without ESTIMATOR_LITE_TF215_PYTHON.
    """
    if backend == LITE:
        python, path = sys.executable, prog.path
    elif backend == ORACLE:
        if not TF215_PYTHON:
            raise ValueError("backend tf_estimator needs ESTIMATOR_LITE_TF215_PYTHON")
        python, path = TF215_PYTHON, os.path.join(work_dir, prog.name + ".py")
        with open(path, "w") as f:
            f.write(oracle_source(prog))
    else:
        raise ValueError(f"backend must be {LITE!r} or {ORACLE!r}, got {backend!r}")
    model_dir = os.path.join(work_dir, f"model_{backend}")
    start = time.monotonic()
    completed = zygote.run(
        [python, path, "--model-dir", model_dir], capture_output=True, text=True,
        env=_environment(prog, backend, legacy_keras), cwd=work_dir,
        timeout=timeout_secs, check=False)
    seconds = time.monotonic() - start
    return Run(backend, completed.returncode, completed.stdout, completed.stderr,
               seconds, parse_result(completed.stdout))


def check_alone(prog, result_run):
    """What is wrong with one successful run on its own; [] when nothing.

    Checks the metric keys' presence, global_step, the quality bounds, the
    signatures and the stderr line counts.
    """
    problems = []
    metrics = result_run.result["metrics"]
    if metrics.get("global_step") != prog.global_step:
        problems.append(f"global_step {metrics.get('global_step')} != {prog.global_step}")
    for key, low in prog.minimums.items():
        if not metrics.get(key, -math.inf) >= low:
            problems.append(f"{key} = {metrics.get(key)} < {low}")
    for key, high in prog.maximums.items():
        if not metrics.get(key, math.inf) <= high:
            problems.append(f"{key} = {metrics.get(key)} > {high}")
    if result_run.result.get("signatures") != prog.signatures:
        problems.append(f"signatures {result_run.result.get('signatures')} != "
                        f"{prog.signatures}")
    for pattern, count in prog.stderr_counts.items():
        found = len(re.findall(pattern, result_run.stderr))
        if isinstance(count, AtLeast):
            if found < count.count:
                problems.append(f"stderr has {found} lines matching {pattern!r}, "
                                f"expected at least {count.count}")
        elif found != count:
            problems.append(f"stderr has {found} lines matching {pattern!r}, "
                            f"expected {count}")
    return [f"{result_run.backend}: {p}" for p in problems]


def _close(a, b, rel, abs_tol):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, rel, abs_tol)
                                        for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)
    return a == b


def compare(prog, lite, oracle):
    """Differences between the two backends' results; [] when they agree."""
    problems = []
    lite_metrics, oracle_metrics = lite.result["metrics"], oracle.result["metrics"]
    if sorted(lite_metrics) != sorted(oracle_metrics):
        problems.append(f"metric keys differ: {sorted(lite_metrics)} (estimator_lite) "
                        f"vs {sorted(oracle_metrics)} (tf.estimator)")
    tol = prog.tolerance
    for key in sorted(set(lite_metrics) & set(oracle_metrics)):
        a, b = lite_metrics[key], oracle_metrics[key]
        same = a == b if key == "global_step" else _close(a, b, tol.rel, tol.abs)
        if not same:
            problems.append(f"metric {key}: {a} (estimator_lite) vs {b} (tf.estimator), "
                            f"tolerance rel {tol.rel} abs {tol.abs}")
    if lite.result.get("signatures") != oracle.result.get("signatures"):
        problems.append(f"signatures differ: {lite.result.get('signatures')} "
                        f"(estimator_lite) vs {oracle.result.get('signatures')} "
                        "(tf.estimator)")
    for fact in prog.facts:
        a, b = lite.result.get(fact), oracle.result.get(fact)
        if not _close(a, b, 0.0, prog.fact_abs_tol.get(fact, 0.0)):
            problems.append(f"{fact}: {a} (estimator_lite) vs {b} (tf.estimator)")
    return problems


def check_legacy_keras_hint(lite):
    """[] when a run without tf-keras failed with the legacy-keras hint."""
    if lite.returncode == 0:
        return [f"{LITE}: ran without TF_USE_LEGACY_KERAS although it uses "
                "tf.compat.v1.layers"]
    missing = [hint for hint in LEGACY_KERAS_HINTS if hint not in lite.stderr]
    if missing:
        tail = "\n".join(lite.stderr.strip().splitlines()[-6:])
        return [f"{LITE}: tf.compat.v1.layers under Keras 3 failed without naming "
                f"{missing}:\n{tail}"]
    return []


def run_both(prog, work_dir, legacy_keras=None):
    """Runs `prog` on estimator_lite and, when available, tf.estimator.

    A legacy_keras program runs on estimator_lite with TF_USE_LEGACY_KERAS=1 when
    tf-keras is importable; otherwise without it, and must then fail with the
    legacy-keras hint (LEGACY_KERAS_HINTS).

    Args:
      prog: a Program.
      work_dir: an existing directory for both runs.
      legacy_keras: whether tf-keras is usable (default: importable here).

    Returns:
      (lite Run, oracle Run or None, problems): problems lists every failure,
      single-run check and difference.
    """
    if legacy_keras is None:
        legacy_keras = oracle_env.legacy_keras_available()
    hint_expected = prog.legacy_keras and not legacy_keras
    lite = run(prog, LITE, _subdir(work_dir, LITE), legacy_keras=legacy_keras)
    oracle = run(prog, ORACLE, _subdir(work_dir, ORACLE)) if TF215_PYTHON else None
    problems = check_legacy_keras_hint(lite) if hint_expected else []
    for one in (oracle,) if hint_expected else (lite, oracle):
        if one is None:
            continue
        failure = one.failure()
        if failure:
            problems.append(failure)
        else:
            problems.extend(check_alone(prog, one))
    if (oracle is not None and not hint_expected and not lite.failure()
            and not oracle.failure()):
        problems.extend(compare(prog, lite, oracle))
    return lite, oracle, problems


def _subdir(parent, name):
    path = os.path.join(parent, name)
    os.makedirs(path, exist_ok=True)
    return path


def main(argv):
    """Runs the named programs (all by default) and prints a summary."""
    names = argv or [p.name for p in all_programs()]
    summary = {}
    for name in names:
        prog = program(name)
        if prog.legacy_keras and not oracle_env.legacy_keras_available():
            print(f"{name}: tf-keras is not importable here; estimator_lite side "
                  "runs without TF_USE_LEGACY_KERAS (expect the legacy-keras hint)")
        with tempfile.TemporaryDirectory(prefix=f"migration_{name}_") as work_dir:
            lite, oracle, problems = run_both(prog, work_dir)
        summary[name] = {
            "seconds": {LITE: round(lite.seconds, 1),
                        ORACLE: None if oracle is None else round(oracle.seconds, 1)},
            "metrics": {LITE: lite.result and lite.result["metrics"],
                        ORACLE: oracle and oracle.result and oracle.result["metrics"]},
            "problems": problems}
        print(f"{name}: {'OK' if not problems else 'FAIL'} "
              f"({summary[name]['seconds']})", flush=True)
        for problem in problems:
            print("   " + problem.replace("\n", "\n   "))
    print(json.dumps(summary, sort_keys=True))
    return 0 if all(not s["problems"] for s in summary.values()) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
