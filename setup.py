"""Packaging for estimator_lite.

TensorFlow is an extra rather than a hard requirement so that the user picks the
build (`tensorflow-cpu` or `tensorflow`) and an existing install is never replaced:
`pip install -e .[cpu]` or `pip install -e .[tf]`.
"""

import os
import re

from setuptools import find_packages, setup

_HERE = os.path.dirname(os.path.abspath(__file__))


def _read(name):
    with open(os.path.join(_HERE, name), encoding="utf-8") as f:
        return f.read()


def _version():
    return re.search(r'^__version__ = "([^"]+)"', _read("estimator_lite/__init__.py"),
                     re.M).group(1)


setup(
    name="estimator_lite",
    version=_version(),
    description="Estimator-style training orchestration for TensorFlow graph mode",
    long_description=_read("README.md"),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=["estimator_lite", "estimator_lite.*"]),
    install_requires=["numpy>=1.22"],
    extras_require={
        "cpu": ["tensorflow-cpu>=2.12"],
        "tf": ["tensorflow>=2.12"],
        # tf.compat.v1.layers / rnn_cell need Keras 2 (set TF_USE_LEGACY_KERAS=1).
        "legacy-keras": ["tf-keras"],
        "pandas": ["pandas>=1.5"],
        # tensorboard: its own event reader checks what TensorBoard shows; pyyaml:
        # the Kubernetes manifest test parses YAML; pytest-xdist: the suite runs in
        # three workers (pytest.ini), so the real-process scenarios' waits overlap
        # the CPU-bound tests (the suite fits 10 minutes on 2 cores).
        # mkdocs + mkdocstrings build the documentation site (docs/, mkdocs.yml);
        # tests/docs_test.py builds it with --strict, so the test extra has them too.
        "docs": ["mkdocs>=1.5", "mkdocstrings[python]>=0.24"],
        "test": ["pytest>=7", "pytest-timeout>=2.1", "pytest-xdist>=3.0", "ruff>=0.4",
                 "pandas>=1.5", "tensorboard>=2.12", "pyyaml>=6",
                 "mkdocs>=1.5", "mkdocstrings[python]>=0.24"],
    },
    entry_points={"console_scripts": [
        "estimator-lite-launch = estimator_lite.launch:run",
        "estimator-lite-inspect = estimator_lite.inspect:run",
        "estimator-lite-run = estimator_lite.run:main"]},
    classifiers=[
        "Programming Language :: Python :: 3",
        # The Pythons CI runs: .ci/run (3.11) and .ci/matrix (README: "Supported versions").
        "Programming Language :: Python :: 3.10",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Programming Language :: Python :: 3.13",
        "License :: OSI Approved :: Apache Software License",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)
