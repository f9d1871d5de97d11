"""Pytest setup: no TF_CONFIG leaks in; in CI no test may skip; longest files first;
the `core` marker (the subset `.ci/matrix` runs on other Python/TF versions).

Tests that need the TF 2.15 oracle or tf-keras skip on a fresh machine (README's
test command installs neither). `.ci/run` provides both and sets
ESTIMATOR_LITE_REQUIRE_ALL_TESTS=1, which turns every skip into a failure, so a
missing install in CI cannot pass as green.
"""

import os
import signal

import pytest

REQUIRE_ALL_TESTS_ENV = "ESTIMATOR_LITE_REQUIRE_ALL_TESTS"

# The longest test files (wall seconds on a 2-core machine, slowest first). xdist's
# --dist loadfile hands out files in collection order, so these go first: a long
# file started last would run alone at the end while the other workers idle.
LONGEST_FILES_FIRST = (
    # The slow step's longest (.ci/run: `-m slow`; deselected by default).
    "tests/conformance/speed_modes_test.py",  # ~20 min: every scenario in 3 modes
    "tests/third_party/library_suites_test.py",  # ~6 min: the libraries' own suites
    # The default run's longest.
    "tests/conformance/conformance_test.py",  # ~450 s: every scenario on estimator_lite
    "tests/repository/benchmarks_test.py",  # ~70 s: every benchmark's --quick run
    "tests/_engine/distribute_strategies_test.py",  # ~40 s: a strategy driver
    "tests/techniques/towers_test.py",  # ~60 s
    "tests/canned/private_builders_test.py",
    "tests/canned/linear_sdca_test.py",
    "tests/canned/rnn_test.py",
    "tests/third_party/libraries_test.py",
    "tests/migration/unchanged_test.py",
    "tests/head/keras_optimizer_test.py",
    "tests/repository/examples_test.py",
)


# The suite's core is every test outside these paths: `python -m pytest -m core`
# selects it, and `.ci/matrix` runs it on each Python/TensorFlow of the version
# matrix (the full suite runs on .ci/run's venv). Left out, each with why: the
# core must fit ~3 minutes per matrix entry on 2 cores, and what is left out
# either does not depend on the Python/TF version or needs more than the library.
NOT_CORE = {
    # Multi-process clusters and real-process launchers: minutes each, and what
    # they add (processes, ports, signals between roles) does not vary with TF.
    "tests/distribute/": "multi-process strategy clusters",
    "tests/faults/": "multi-process fault injection",
    "tests/launch_test.py": "multi-process launcher clusters",
    "tests/_engine/private_network_test.py":
        "the launcher's network namespaces (another host's needs root); "
        "not TF-version dependent",
    "tests/repository/kubernetes_manifest_test.py": "multi-process cluster from a manifest",
    "tests/repository/examples_test.py":
        "runs the examples' clusters; README's example runs on its own in .ci/matrix",
    # Several logical devices: TF's own multi-device runtime, the core's slowest.
    "tests/_engine/distribute_strategies_test.py":
        "~160 s of MirroredStrategy/CentralStorageStrategy drivers; "
        "tests/_engine/distribute_test.py stays",
    "tests/techniques/towers_test.py": "replicate_model_fn on 2 and 4 logical devices: "
                                       "a quarter of the core's time alone",
    "tests/repository/benchmarks_test.py": "timings, not behaviour",
    # The corpora: long, and what they check is the library's answers, which the
    # core's own tests check on each version.
    "tests/migration/": "migration corpus",
    "tests/conformance/": "~950 scenarios against recorded oracle answers",
    "tests/third_party/": "third-party libraries (pinned in .ci/run only)",
    # Checks of the repository's text, the same on every Python/TF.
    "tests/repository/lint_test.py": "ruff on the tree",
    "tests/repository/docs_test.py": "MkDocs build of docs/",
    "tests/repository/build_test.py": "BUILD file coverage",
    "tests/repository/repo_test.py": "README and .ci/run agree",
    "tests/repository/tf115_api_test.py": "static scan of the tf names used",
}


def in_core(nodeid):
    """True when a test (its pytest node id) belongs to the suite's core."""
    return not any(nodeid.startswith(path) for path in NOT_CORE)


def pytest_configure(config):
    """Registers `core`; gives SIGINT back its default when inherited ignored.

    A non-interactive shell starts background commands with SIGINT ignored, and an
    ignored signal stays ignored across exec: every program the tests start would
    then ignore Ctrl-C, and the tests that send it (the runner, the launcher, the
    fork server) would fail for a reason outside the library.
    """
    config.addinivalue_line(
        "markers", "core: the suite's core, run on every entry of .ci/matrix "
                   "(given by tests/conftest.py's NOT_CORE, never written by hand)")
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _no_tf_config(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Marks the core's tests `core`; puts LONGEST_FILES_FIRST first.

    Tests keep their order within a file.
    """
    for item in items:
        if in_core(item.nodeid):
            item.add_marker(pytest.mark.core)
    rank = {path: i for i, path in enumerate(LONGEST_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0],
                                         len(LONGEST_FILES_FIRST)))


def _skip_reason(report):
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return longrepr[2]
    return str(longrepr)


# Skips CI cannot remove by installing something: the machine's kernel lacks the
# feature, or the libraries' git mirrors (fetched by hand; CI reaches only the
# package registries) are absent. They stay skips (saying so) under
# REQUIRE_ALL_TESTS_ENV.
KERNEL_SKIPS = ("kernel lacks sch_netem", "library mirrors absent")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With REQUIRE_ALL_TESTS_ENV=1, a skipped test is reported as failed (unless
    the kernel lacks what it needs: KERNEL_SKIPS)."""
    del call
    outcome = yield
    report = outcome.get_result()
    if (report.skipped and os.environ.get(REQUIRE_ALL_TESTS_ENV) == "1"
            and not any(reason in _skip_reason(report) for reason in KERNEL_SKIPS)):
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} was skipped, and {REQUIRE_ALL_TESTS_ENV}=1 "
                           f"(set by .ci/run) forbids skips: {_skip_reason(report)}")
