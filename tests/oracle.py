"""The TF 2.15 + tensorflow-estimator 2.15 interpreter the compat tests compare with.

.ci/run builds it and sets ESTIMATOR_LITE_TF215_PYTHON; tensorflow-estimator cannot be
installed beside TF >= 2.16, so it is a separate Python. Without the variable, the
tests that need it are skipped with that reason (not a test file).
"""

import importlib.util
import os

import pytest

TF215_PYTHON = os.environ.get("ESTIMATOR_LITE_TF215_PYTHON")

requires_oracle = pytest.mark.skipif(not TF215_PYTHON, reason=(
    "needs ESTIMATOR_LITE_TF215_PYTHON: a Python with tensorflow-estimator 2.15, "
    "which cannot be installed beside TF >= 2.16 (.ci/run provides one)"))


def load_driver(path, name):
    """Imports a driver script (run by both interpreters) as a module here."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
