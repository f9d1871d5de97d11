"""Fixtures of the fault-injection suite: clusters that clean up and show their logs."""

import pytest

from tests.faults.cluster import Cluster, closing_clusters


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """Keeps each phase's report on the test item, so fixtures can see failures."""
    del call
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"faults_report_{report.when}", report)


@pytest.fixture
def make_cluster(tmp_path, request):
    """Returns a factory of Clusters under tmp_path.

    At teardown every process the clusters started is SIGKILLed if still alive,
    and when the test failed the tail of every role's log is printed (pytest
    shows it under "Captured stdout teardown"; the full logs stay in tmp_path).
    """
    with closing_clusters(Cluster, tmp_path, request) as make:
        yield make
