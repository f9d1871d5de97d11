"""Pytest setup: no TF_CONFIG leaks in; in CI no test may skip; longest files first.

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
    "tests/strategy_test.py",  # ~160 s: two strategy drivers in turn
    "tests/conformance/conformance_test.py",  # every scenario on estimator_lite
    "tests/migration/migration_test.py",  # ~140 s
    "tests/faults/faults_late_test.py",  # ~110 s
    "tests/canned/rnn_test.py",
    "tests/techniques/towers_test.py",
    "tests/faults/faults_restart_test.py",
    "tests/third_party/libraries_test.py",
    "tests/distribute/multi_process_test.py",
    "tests/canned/canned_compat_test.py",
    "tests/head/head_compat_test.py",
    "tests/canned/keras_learning_rate_test.py",
    "tests/canned/v1_compat_test.py",
    "tests/faults/faults_signals_test.py",
    "tests/migration/unchanged_test.py",
    "tests/benchmarks_test.py",
    "tests/head/keras_optimizer_test.py",
    "tests/examples_test.py",
)


def pytest_configure(config):
    """Gives SIGINT back its default when the suite inherited it ignored.

    A non-interactive shell starts background commands with SIGINT ignored, and an
    ignored signal stays ignored across exec: every program the tests start would
    then ignore Ctrl-C, and the tests that send it (the runner, the launcher, the
    fork server) would fail for a reason outside the library.
    """
    del config
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _no_tf_config(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)


def pytest_collection_modifyitems(items):
    """Puts LONGEST_FILES_FIRST first; tests keep their order within a file."""
    rank = {path: i for i, path in enumerate(LONGEST_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0],
                                         len(LONGEST_FILES_FIRST)))


def _skip_reason(report):
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return longrepr[2]
    return str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With REQUIRE_ALL_TESTS_ENV=1, a skipped test is reported as failed."""
    del call
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get(REQUIRE_ALL_TESTS_ENV) == "1":
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} was skipped, and {REQUIRE_ALL_TESTS_ENV}=1 "
                           f"(set by .ci/run) forbids skips: {_skip_reason(report)}")
