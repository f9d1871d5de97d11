"""Packaging for estimator_lite.

TensorFlow is an extra rather than a hard requirement so that the user picks the
build (`tensorflow-cpu` or `tensorflow`) and an existing install is never replaced:
`pip install -e .[cpu]` or `pip install -e .[tf]`.

Two stacks are supported: Python 3.10-3.13 with TensorFlow 2.16 or newer (every
feature), and Python 3.7 with TensorFlow 1.15 (the seed features, see README).
Requirements that only exist for one of them carry a `python_version` marker, so
`pip install -e .` resolves on both; on 3.7, install tensorflow==1.15.5 yourself
(`.ci/tf115` shows how).
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


# Environment markers: a requirement for one of the two stacks only.
_MODERN = '; python_version>="3.10"'
_TF115 = '; python_version<"3.8"'

setup(
    name="estimator_lite",
    version=_version(),
    description="Estimator-style training orchestration for TensorFlow graph mode",
    long_description=_read("README.md"),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    # 3.7: TF 1.15's Python (seed features only); 3.8 and 3.9 are neither stack.
    python_requires=">=3.7,!=3.8.*,!=3.9.*",
    packages=find_packages(include=["estimator_lite", "estimator_lite.*"]),
    # PEP 561: the package's annotations are for type checkers (docs/development.md).
    package_data={"estimator_lite": ["py.typed"]},
    zip_safe=False,
    # TF 1.15 pins its own numpy (<1.19).
    install_requires=["numpy>=1.22" + _MODERN, "numpy>=1.16" + _TF115],
    extras_require={
        "cpu": ["tensorflow-cpu>=2.12" + _MODERN, "tensorflow-cpu==1.15.*" + _TF115],
        "tf": ["tensorflow>=2.12" + _MODERN, "tensorflow==1.15.*" + _TF115],
        # tf.compat.v1.layers / rnn_cell need Keras 2 (set TF_USE_LEGACY_KERAS=1).
        "legacy-keras": ["tf-keras" + _MODERN],
        "pandas": ["pandas>=1.5" + _MODERN],
        # tensorboard: its own event reader checks what TensorBoard shows; pyyaml:
        # the Kubernetes manifest test parses YAML; pytest-xdist: the suite runs in
        # three workers (pytest.ini), so the real-process scenarios' waits overlap
        # the CPU-bound tests (the suite fits 10 minutes on 2 cores).
        # mkdocs + mkdocstrings build the documentation site (docs/, mkdocs.yml);
        # tests/repository/docs_test.py builds it with --strict, so the test extra has
        # them too. mypy: tests/repository/typing_test.py type-checks the public API
        # (setup.cfg); pinned to a minor, as a newer one may read the same code
        # differently.
        # On 3.7 (TF 1.15) the test extra is what the core subset (.ci/tf115) needs.
        "docs": ["mkdocs>=1.5" + _MODERN, "mkdocstrings[python]>=0.24" + _MODERN],
        "test": ["pytest>=7", "pytest-timeout>=2.1", "pytest-xdist>=3.0", "pyyaml>=6",
                 *(name + _MODERN for name in (
                     "ruff>=0.4", "pandas>=1.5", "tensorboard>=2.12", "mkdocs>=1.5",
                     "mkdocstrings[python]>=0.24", "mypy>=2.4,<2.5"))],
    },
    entry_points={"console_scripts": [
        "estimator-lite-launch = estimator_lite.launch:run",
        "estimator-lite-inspect = estimator_lite.inspect:run",
        "estimator-lite-run = estimator_lite.run:main"]},
    classifiers=[
        "Programming Language :: Python :: 3",
        # The Pythons CI runs: .ci/run (3.11), .ci/matrix (README: "Supported
        # versions") and .ci/tf115 (3.7, with TensorFlow 1.15 only).
        "Programming Language :: Python :: 3.7",
        "Programming Language :: Python :: 3.10",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Programming Language :: Python :: 3.13",
        "License :: OSI Approved :: Apache Software License",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
)
