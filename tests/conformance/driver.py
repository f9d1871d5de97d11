"""Runs the conformance scenarios on one library and prints their observations.

    python tests/conformance/driver.py lite [NAME_OR_PREFIX ...]    # estimator_lite
    python tests/conformance/driver.py oracle [NAME_OR_PREFIX ...]  # tf.estimator 2.15
    python tests/conformance/driver.py --record [NAME_OR_PREFIX ...]  # the oracle's answers
    python tests/conformance/driver.py --check    # the recorded answers are the oracle's
    python tests/conformance/driver.py lite --mode k4 [...]  # in a speed mode (MODES)

`oracle` needs TF 2.15 + tensorflow-estimator 2.15 (ESTIMATOR_LITE_TF215_PYTHON);
`--record` runs that interpreter and writes tests/data/conformance_oracle.json;
`--check` runs it and exits 1 when a recorded answer is no longer the oracle's (CI
runs it before the suite: `.ci/run`). The last line `oracle`/`lite` print is the
JSON {scenario name: observation}.

Observations are typed (tests/conformance/typed.py), so a `numpy.float32` where
tf.estimator gives a `float`, a list for a tuple, str for bytes or another key order
is a difference:
- None, bool, str, int, float (finite) and list are JSON's own values and mean
  exactly those builtin types; a plain str-keyed dict is a JSON object, with
  `"__keys__"` (its key order) when its keys are not sorted;
- any other value is {"__type__": name, ...}: "value" (scalars; bytes decoded),
  "items" (tuples, namedtuples, sets sorted, other dicts as [key, value] pairs),
  "dtype" and "shape" (numpy arrays and scalars).
A type's name is `module.qualname` (`builtins.tuple`, `numpy.float32`), with three
normalisations, each for a name that varies with a library's internals and not
with anything a user can observe: numpy types take numpy 2's names (`numpy.bool`,
numpy 1's `bool_`); classes defined in TensorFlow are `tf.<qualname>` (their
modules move between versions: ops.Tensor became tensor.Tensor, protobuf message
modules too) and every tensor class (SymbolicTensor, EagerTensor) is `tf.Tensor`;
classes defined in tensorflow_estimator or estimator_lite are
`estimator.<qualname>` (and keras/tf_keras ones `keras.<qualname>`). Scenarios
read protobuf maps (a SavedModel's signatures) sorted: their order is not defined
and differs between protobuf versions reading the same file.
"""

import glob
import importlib
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECORDED = os.path.join(ROOT, "tests", "data", "conformance_oracle.json")


def load_scenarios():
    """Imports every tests/conformance/scenarios_*.py; returns the registry."""
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    from tests.conformance import registry  # noqa: PLC0415 - after the path is set
    here = os.path.dirname(os.path.abspath(__file__))
    for path in sorted(glob.glob(os.path.join(here, "scenarios_*.py"))):
        importlib.import_module(
            f"tests.conformance.{os.path.splitext(os.path.basename(path))[0]}")
    return registry


def make_env(flavor, registry):
    """The Env of `flavor` ("oracle" or "lite")."""
    import tensorflow as tf  # noqa: PLC0415 - only when scenarios run

    if flavor == "oracle":
        from tensorflow_estimator.python.estimator import training  # noqa: PLC0415
        return registry.Env(flavor, tf, tf.estimator, tf.compat.v1.estimator, training)
    import estimator_lite  # noqa: PLC0415
    from estimator_lite import training  # noqa: PLC0415
    from estimator_lite.compat import v1  # noqa: PLC0415
    return registry.Env(flavor, tf, estimator_lite, v1, training)


# Speed modes: estimator_lite run with an optimization forced on or off, to be
# compared with the plain run (tests/conformance/speed_modes_test.py).
MODES = ("k4", "k3", "pool")


def set_mode(mode):
    """Puts this (lite) process in a speed mode.

    k4, k3: every RunConfig not given `experimental_steps_per_loop` loops K steps
    per session call. pool: no session leaves TensorFlow's default executor.
    Done here, in the driver's own process, by wrapping the library's functions:
    the library has no switch for it, and a user sets these per RunConfig.
    """
    from estimator_lite import run_config  # noqa: PLC0415
    from estimator_lite._engine import executor_choice  # noqa: PLC0415

    if mode in ("k4", "k3"):
        steps = int(mode[1:])
        original = run_config.RunConfig.__init__

        def init(self, *args, **kwargs):
            kwargs.setdefault("experimental_steps_per_loop", steps)
            original(self, *args, **kwargs)

        run_config.RunConfig.__init__ = init
    elif mode == "pool":
        executor_choice.session_config = (
            lambda graph, config, master, hooks=(), setup=(): config)


def selected(names, patterns):
    """The names equal to a pattern or under it (`prefix/...`); all without any."""
    if not patterns:
        return list(names)
    return [n for n in names
            if any(n == p or n.startswith(p.rstrip("/") + "/") for p in patterns)]


def run(flavor, patterns=()):
    """Runs the selected scenarios; returns {name: observation}."""
    registry = load_scenarios()
    env = make_env(flavor, registry)
    env.tf.compat.v1.logging.set_verbosity(env.tf.compat.v1.logging.ERROR)
    results = {}
    for name in selected(registry.SCENARIOS, patterns):
        # On stderr: a scenario that hangs is named by the last line there.
        print(f"scenario {name}", file=sys.stderr, flush=True)
        os.environ.pop("TF_CONFIG", None)
        try:
            results[name] = registry.to_json(registry.SCENARIOS[name](env))
        except Exception as error:  # noqa: BLE001 - recorded, compared like any result
            results[name] = {"scenario_error": registry.error_names(error),
                             "message": str(error)[:300]}
        finally:
            env.cleanup()
    return results


def oracle_answers(patterns=()):
    """Runs the selected scenarios (all without `patterns`) on the oracle
    interpreter; returns its answers."""
    python = os.environ.get("ESTIMATOR_LITE_TF215_PYTHON")
    if not python:
        sys.exit("needs ESTIMATOR_LITE_TF215_PYTHON (see tests/oracle/__init__.py)")
    out = subprocess.run([python, os.path.abspath(__file__), "oracle", *patterns],
                         capture_output=True, text=True, check=True,
                         env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    return json.loads(out.stdout.strip().splitlines()[-1])


def record(patterns=()):
    """Runs the selected scenarios (all without `patterns`) on the oracle and
    writes their answers to RECORDED (keeping the others' with `patterns`)."""
    answers = oracle_answers(patterns)
    if patterns:
        with open(RECORDED, encoding="utf-8") as f:
            answers = {**json.load(f), **answers}
    with open(RECORDED, "w", encoding="utf-8") as f:
        json.dump(answers, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(answers)} answers to {RECORDED}")


def check():
    """Exits 1 when the recorded answers are not what the oracle gives today."""
    from tests.conformance.registry import differences  # noqa: PLC0415

    with open(RECORDED, encoding="utf-8") as f:
        recorded = json.load(f)
    live = oracle_answers()
    problems = [f"scenarios without a recorded answer: {sorted(set(live) - set(recorded))}"
                ] if set(live) != set(recorded) else []
    for name in sorted(set(live) & set(recorded)):
        found = differences(recorded[name], live[name], rtol=1e-5)
        problems += [f"{name}: {line}" for line in found]
    if problems:
        print("\n".join(["recorded conformance answers differ from the oracle's "
                          "(python tests/conformance/driver.py --record):", *problems]))
        sys.exit(1)
    print(f"the {len(live)} recorded conformance answers are the oracle's")


def main(argv):
    if argv[:1] == ["--record"]:
        record(argv[1:])
        return
    if argv[:1] == ["--check"]:
        load_scenarios()
        check()
        return
    if not argv or argv[0] not in ("oracle", "lite"):
        sys.exit(__doc__)
    patterns = list(argv[1:])
    if patterns[:1] == ["--mode"] and argv[0] == "lite" and len(patterns) > 1:
        load_scenarios()  # the path, before the library is imported
        set_mode(patterns[1])
        patterns = patterns[2:]
    print(json.dumps(run(argv[0], patterns), sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1:])
