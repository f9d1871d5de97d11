"""The conformance scenarios' registry and the observations they return.

A scenario is a small program written the way a tf.estimator user writes it,
taking an `Env` (the estimator API to use, TensorFlow, temp dirs) and returning an
observation: typed JSON values (tests/conformance/typed.py: each value keeps its
Python type, numpy dtype and shape, and dicts their key order) that describe what
a user can see — values, error types, files written, call order, signatures. The
same scenario runs on tf.estimator 2.15 (the oracle) and on estimator_lite, and
tests/conformance/conformance_test.py compares the two observations.

This module imports nothing from TensorFlow or estimator_lite at import time, so
the oracle interpreter can load it (tests/conformance/driver.py).
"""

import builtins
import functools
import os
import shutil
import tempfile

from tests.conformance.typed import differences, to_json

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
