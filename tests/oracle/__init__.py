"""What tests need beyond README's install: the TF 2.15 oracle and tf-keras.

.ci/run builds the oracle interpreter and sets ESTIMATOR_LITE_TF215_PYTHON;
tensorflow-estimator cannot be installed beside TF >= 2.16, so it is a separate
Python. tf-keras (Keras 2, for `tf.compat.v1.layers` programs run with
TF_USE_LEGACY_KERAS=1) is installed by .ci/run too. Without them, the tests that
need them skip with a reason that says how to get them; in CI no test may skip
(tests/conftest.py). Not a test file.
"""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

TF215_PYTHON = os.environ.get("ESTIMATOR_LITE_TF215_PYTHON")
# The drivers: scripts in this folder that run the same program on either library.
DRIVERS_DIR = os.path.dirname(os.path.abspath(__file__))

ORACLE_REASON = (
    "needs ESTIMATOR_LITE_TF215_PYTHON: a Python with tensorflow-estimator 2.15, "
    "which cannot be installed beside TF >= 2.16; make one as .ci/run does "
    "(python3 -m venv v215 && v215/bin/pip install tensorflow-cpu==2.15.1 "
    "tensorflow-estimator==2.15.0 'numpy<2') and export the variable")
LEGACY_KERAS_REASON = (
    "needs tf-keras (Keras 2, as tf.compat.v1.layers and Keras-2 twins need): "
    "pip install --no-deps "
    "'tf-keras~=<your TF major.minor>.0' (.ci/run installs it)")

requires_oracle = pytest.mark.skipif(not TF215_PYTHON, reason=ORACLE_REASON)


# Parametrizes a test over the two sides a driver runs on: estimator_lite in this
# interpreter ("lite") and tf.estimator 2.15 in the oracle's ("oracle").
BOTH_SIDES = ("lite", pytest.param("oracle", marks=requires_oracle))


def legacy_keras_available():
    """Whether tf-keras can be imported by this interpreter."""
    return importlib.util.find_spec("tf_keras") is not None


requires_legacy_keras = pytest.mark.skipif(not legacy_keras_available(),
                                           reason=LEGACY_KERAS_REASON)


def driver_path(file_name):
    """The path of one of this folder's driver scripts, e.g. "canned_driver.py"."""
    return os.path.join(DRIVERS_DIR, file_name)


def start_driver(python, driver_path, *args, checkout_on_path=True, **env):
    """Starts a driver script with `python` (through the test fork server), in the
    background: this process works meanwhile; `finish_driver` waits for its report.

    Args:
      python: the interpreter.
      driver_path: the script.
      *args: its command-line arguments (each passed as str).
      checkout_on_path: whether PYTHONPATH is this repository (False: no PYTHONPATH,
        for a test whose oracle must not see this checkout).
      **env: more environment variables, e.g. TF_USE_LEGACY_KERAS="1" (None unsets one).

    Returns:
      The driver's process.
    """
    from tests.support import zygote  # noqa: PLC0415 - the fork server only when one runs

    root = os.path.dirname(os.path.dirname(DRIVERS_DIR))
    environment = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=root)
    environment.pop("TF_CONFIG", None)
    if not checkout_on_path:
        environment.pop("PYTHONPATH")
    for name, value in env.items():
        environment.pop(name, None)
        if value is not None:
            environment[name] = value
    return zygote.Popen([python, driver_path, *map(str, args)], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True, env=environment)


def finish_driver(process, timeout_secs=900):
    """Waits for a driver `start_driver` started; returns the JSON report it prints
    last. A driver still running after `timeout_secs` is killed (and fails)."""
    try:
        stdout, stderr = process.communicate(timeout=timeout_secs)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, stderr[-4000:]
    return json.loads(stdout.strip().splitlines()[-1])


def run_oracle_beside(work_here, driver_path, *args, timeout_secs=900, **options):
    """Runs a driver on the oracle (`start_driver`, same options) while this process
    does `work_here()`; returns (the oracle's report, what work_here returned).

    The oracle is killed at once if work_here raises.
    """
    process = start_driver(TF215_PYTHON, driver_path, *args, **options)
    try:
        here = work_here()
    except BaseException:
        process.kill()
        process.wait()
        raise
    return finish_driver(process, timeout_secs), here


def run_driver(python, driver_path, *args, timeout_secs=900, **options):
    """Runs a driver script (`start_driver`, same options) and returns its report."""
    return finish_driver(start_driver(python, driver_path, *args, **options),
                         timeout_secs)


def run_driver_on(side, driver_path, *args, **options):
    """Runs a driver (`run_driver`, same options) on one of BOTH_SIDES: this
    interpreter ("lite") or the oracle's ("oracle")."""
    return run_driver(TF215_PYTHON if side == "oracle" else sys.executable, driver_path,
                      *args, **options)


def run_oracle_driver(driver_path, *args, **options):
    """Runs a driver script on the oracle (`run_driver`, same options); returns its
    JSON report, after checking it ran on TF 2.15."""
    report = run_driver(TF215_PYTHON, driver_path, *args, **options)
    assert report["tf_version"].startswith("2.15")
    return report


def load_driver(path, name):
    """Imports a driver script (run by both interpreters) as a module here.

    As when it runs as a script, its folder is on the path: drivers import what
    they share by name (`driver_tools`, `canned_driver`).
    """
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.append(folder)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
