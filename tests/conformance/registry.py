"""The conformance scenarios' registry and the observations they return.

A scenario is a small program written the way a tf.estimator user writes it,
taking an `Env` (the estimator API to use, TensorFlow, temp dirs) and returning an
observation: plain JSON values (numbers, strings, lists, dicts) that describe what
a user can see — values, error types, files written, call order, signatures. The
same scenario runs on tf.estimator 2.15 (the oracle) and on estimator_lite, and
tests/conformance/conformance_test.py compares the two observations.

This module imports nothing from TensorFlow or estimator_lite at import time, so
the oracle interpreter can load it (tests/conformance/driver.py).
"""

import builtins
import functools
import math
import os
import shutil
import tempfile

__all__ = ["SCENARIOS", "Env", "scenario", "scenarios", "outcome", "error_names",
           "to_json", "differences", "files_under"]

# name -> function(env) returning a JSON-able observation.
SCENARIOS = {}


def scenario(name):
    """Registers `fn(env)` as scenario `name` (unique)."""
    def register(fn):
        if name in SCENARIOS:
            raise ValueError(f"scenario {name!r} is registered twice")
        SCENARIOS[name] = fn
        return fn
    return register


def scenarios(prefix, cases):
    """Registers `fn(env, case)` once per case as scenario `prefix/<case name>`.

    Args:
      prefix: the family's name.
      cases: dict of case name to the case's value.
    """
    def register(fn):
        for case_name, case in cases.items():
            scenario(f"{prefix}/{case_name}")(functools.partial(fn, case=case))
        return fn
    return register


class Env:
    """What a scenario runs with.

    Attributes:
      flavor: "oracle" (tf.estimator 2.15) or "lite" (estimator_lite).
      tf: the `tensorflow` module.
      est: the TF2 estimator API (`tf.estimator` or `estimator_lite`).
      v1: the TF1 API (`tf.compat.v1.estimator` or `estimator_lite.compat.v1`).
      training: the module holding `_TrainingExecutor` and friends.
    """

    def __init__(self, flavor, tf, estimator, v1, training):
        self.flavor = flavor
        self.tf = tf
        self.est = estimator
        self.v1 = v1
        self.training = training
        self._dirs = []

    def tmpdir(self):
        """A new empty directory, removed after the scenario."""
        path = tempfile.mkdtemp(prefix="conformance_")
        self._dirs.append(path)
        return path

    def cleanup(self):
        for path in self._dirs:
            shutil.rmtree(path, ignore_errors=True)
        self._dirs = []


def _is_reported_error_class(cls):
    if not issubclass(cls, BaseException) or cls in (BaseException, Exception):
        return False
    if getattr(builtins, cls.__name__, None) is cls:
        return True
    module = cls.__module__ or ""
    return module.startswith("tensorflow.python.framework.errors")


def error_names(error):
    """The builtin and tf.errors classes `error` is an instance of, most specific
    first (what a user's `except` clause can name)."""
    names = [cls.__name__ for cls in type(error).__mro__ if _is_reported_error_class(cls)]
    if type(error).__name__ == "NanLossDuringTrainingError":
        names.insert(0, "NanLossDuringTrainingError")
    return names


def outcome(fn, *args, **kwargs):
    """{"value": to_json(fn(...))}, or {"error": error_names(e)} if it raised."""
    try:
        return {"value": to_json(fn(*args, **kwargs))}
    except Exception as error:  # noqa: BLE001 - the error's class is the observation
        return {"error": error_names(error)}


def to_json(value):
    """A JSON-able copy of `value`: numpy values become numbers and lists, bytes
    become str, tuples and sets lists (sets sorted), TensorFlow shapes and dtypes
    their text, other objects their class name in angle brackets."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, dict):
        return {str(to_json(k)): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(to_json(v) for v in value)
    kind = type(value).__name__
    if hasattr(value, "tolist") and type(value).__module__ == "numpy":
        return to_json(value.tolist())
    if kind in ("TensorShape",):
        return None if value.rank is None else list(value.as_list())
    if kind in ("DType",):
        return value.name
    return f"<{kind}>"


def files_under(path):
    """Sorted relative paths of the files under `path` (checkpoint numbering and
    event file names normalised: event files differ in host and time)."""
    found = []
    for root, _, names in os.walk(path):
        for name in names:
            rel = os.path.relpath(os.path.join(root, name), path)
            if name.startswith("events.out.tfevents."):
                rel = os.path.join(os.path.dirname(rel), "<events>")
            found.append(rel)
    return sorted(set(found))


def _close(a, b, rtol, atol):
    return abs(a - b) <= atol + rtol * abs(b)


def differences(oracle, lite, rtol=1e-4, atol=1e-6, path=""):
    """Where `lite` differs from `oracle`: a list of human-readable lines.

    Numbers compare within `rtol`/`atol`; an error matches when the oracle's class
    (its most specific reported class) is among the classes lite's error is an
    instance of; everything else compares equal.
    """
    if isinstance(oracle, dict) and isinstance(lite, dict):
        if set(oracle) == {"error"} and set(lite) == {"error"}:
            if oracle["error"] and oracle["error"][0] not in lite["error"]:
                return [f"{path}: raised {lite['error']}, tf.estimator raises "
                        f"{oracle['error'][0]}"]
            return []
        out = []
        for key in sorted(set(oracle) | set(lite)):
            if key not in lite:
                out.append(f"{path}/{key}: missing (tf.estimator: {oracle[key]!r})")
            elif key not in oracle:
                out.append(f"{path}/{key}: extra {lite[key]!r}")
            else:
                out += differences(oracle[key], lite[key], rtol, atol, f"{path}/{key}")
        return out
    if isinstance(oracle, list) and isinstance(lite, list):
        if len(oracle) != len(lite):
            return [f"{path}: {lite!r} has {len(lite)} items, tf.estimator's "
                    f"{oracle!r} has {len(oracle)}"]
        out = []
        for i, (a, b) in enumerate(zip(oracle, lite, strict=True)):
            out += differences(a, b, rtol, atol, f"{path}[{i}]")
        return out
    numbers = (int, float)
    if (isinstance(oracle, numbers) and isinstance(lite, numbers)
            and not isinstance(oracle, bool) and not isinstance(lite, bool)):
        return [] if _close(lite, oracle, rtol, atol) else [
            f"{path}: {lite!r}, tf.estimator {oracle!r}"]
    return [] if oracle == lite else [f"{path}: {lite!r}, tf.estimator {oracle!r}"]
