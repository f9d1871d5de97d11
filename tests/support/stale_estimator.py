"""The real tensorflow-estimator 2.15 wheel in a directory, as TFX environments hold it.

TFX/TFMA pin tensorflow-estimator 2.15 and keep it beside TF >= 2.16, where it
cannot import. `install_stale_estimator(directory)` puts that wheel (no
dependencies) into `directory` with pip from this interpreter, so a test can put it
on the Python path. Without a registry pip can reach, the tests using it skip with
the reason (in CI, tests/conftest.py turns that skip into a failure). Not a test file.
"""

import importlib.metadata
import os
import subprocess
import sys

import pytest

STALE_VERSION = "2.15.0"
PACKAGE = "tensorflow_estimator"
_PIP_TIMEOUT_SECS = 300
_TF_WITHOUT_ESTIMATOR = (2, 16)


def tensorflow_version():
    """This interpreter's TensorFlow version, from its metadata (imports nothing)."""
    names = importlib.metadata.packages_distributions().get("tensorflow", [])
    return importlib.metadata.version(names[0]) if names else None


def _tensorflow_without_estimator():
    """Whether this TensorFlow is one tensorflow-estimator 2.15 cannot import with."""
    version = tensorflow_version() or "0.0"
    return tuple(int(part) for part in version.split(".")[:2]) >= _TF_WITHOUT_ESTIMATOR


requires_tf_without_estimator = pytest.mark.skipif(
    not _tensorflow_without_estimator(),
    reason=f"needs TensorFlow >= 2.16 (this is {tensorflow_version()}): only there is "
           f"tensorflow-estimator {STALE_VERSION} stale")


def install_stale_estimator(directory):
    """Installs tensorflow-estimator 2.15.0 (no dependencies) into `directory`.

    Args:
      directory: an empty directory (pip's --target).

    Returns:
      `directory`, now holding `tensorflow_estimator` and its dist-info.
    """
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
               "--disable-pip-version-check", "--no-input", "--target", str(directory),
               f"tensorflow-estimator=={STALE_VERSION}"]
    try:
        pip = subprocess.run(command, capture_output=True, text=True,
                             timeout=_PIP_TIMEOUT_SECS, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        pytest.skip(f"pip could not install tensorflow-estimator {STALE_VERSION}: {error}")
    if pip.returncode != 0 or not os.path.isdir(os.path.join(directory, PACKAGE)):
        tail = (pip.stderr or pip.stdout).strip().splitlines()[-3:]
        pytest.skip(f"pip could not install tensorflow-estimator {STALE_VERSION} (the "
                    f"registry unreachable?): {' | '.join(tail)}")
    return directory
