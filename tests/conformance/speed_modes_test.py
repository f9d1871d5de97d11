"""Every conformance scenario gives the same observation in every speed mode.

The speed modes (tests/conformance/driver.py MODES) run estimator_lite with an
optimization forced on or off: multi-step loops of 4 and 3 steps
(`experimental_steps_per_loop` on every RunConfig that does not set it) and the
thread pool for every session (the default executor choice off). Each is compared
with the plain run, exactly: a default-on optimization must not change a result,
an error or a hang, and a loop must give K single steps' result, or fall back.
What differs at loop boundaries only (hooks and periodic actions run once per
loop; docs/performance.md "Multi-step loops") is listed in LOOP_BOUNDARY with the
reason. Slow (five driver runs over ~960 scenarios): `.ci/run` runs it after the
suite, with the fault scenarios.
"""

import sys

import pytest

from tests.conformance import driver
from tests.conformance.conformance_test import run_driver
from tests.conformance.registry import differences

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

# Scenario name (or prefix ending in "/") -> why a loop of K steps shows it
# differently from K single steps, by design.
LOOP_BOUNDARY = {}


def _listed(name, table):
    return next((reason for key, reason in table.items()
                 if name == key or (key.endswith("/") and name.startswith(key))), None)


@pytest.fixture(scope="module")
def plain():
    return run_driver(sys.executable, "lite")


@pytest.mark.parametrize("mode", driver.MODES)
def test_a_speed_mode_gives_the_plain_runs_observations(mode, plain):
    moded = run_driver(sys.executable, "lite", ("--mode", mode))
    assert sorted(moded) == sorted(plain)
    unlisted, stale = [], []
    for name in sorted(plain):
        found = differences(plain[name], moded[name], rtol=0.0, atol=0.0)
        reason = _listed(name, LOOP_BOUNDARY) if mode != "pool" else None
        if found and reason is None:
            unlisted += [f"{name}: {line}" for line in found[:5]]
        elif reason is not None and not found and name in LOOP_BOUNDARY:
            stale.append(name)
    assert not unlisted, "\n".join([f"mode {mode} differs from the plain run:",
                                    *unlisted])
    assert mode == "k3" or not stale, (
        f"listed in LOOP_BOUNDARY but now the same in mode {mode}: {stale}")
