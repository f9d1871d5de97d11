"""Fault injection: a ps that stops answering, bounded by operation_timeout_in_ms.

A SIGSTOPped ps keeps its TCP connections open and answers nothing: to the chief
and the worker it looks like a network partition that never ends (see
faults_network_test.py for real partitions, which need root). With
``session_config=ConfigProto(operation_timeout_in_ms=...)`` (job.py's
``--operation-timeout-ms``) each trainer must end, exit 1, with a
DeadlineExceededError naming the ps and the bound, soon after the bound; the
checkpoints already written must all restore. Runs on 127.0.0.1 without root.
"""

import signal
import time

import pytest

from tests.faults.cluster import restores, wait_for
from tests.faults.scenarios import FAULT_AT_STEP, START_SECS

pytestmark = pytest.mark.slow

OPERATION_TIMEOUT_MS = 5000
# The bound, the ~5 s the library gives a blocked session.close(), and slack for a
# loaded machine: a hang fails far below pytest's timeout.
END_SECS = 60


def test_stopped_ps_ends_trainers_with_a_named_deadline_error(make_cluster):
    cluster = make_cluster(["--max-steps", "600", "--step-sleep-ms", "20",
                            "--operation-timeout-ms", str(OPERATION_TIMEOUT_MS)])
    cluster.start_all(["ps0", "chief0", "worker0"])
    wait_for(lambda: cluster.latest_checkpoint_step() >= FAULT_AT_STEP, START_SECS,
             f"a checkpoint at step >= {FAULT_AT_STEP}")
    fault_start = time.monotonic()
    cluster.signal("ps0", signal.SIGSTOP)
    try:
        codes = {label: cluster.wait_exit(label, END_SECS) for label in ("chief0",
                                                                        "worker0")}
        elapsed = time.monotonic() - fault_start
    finally:
        cluster.signal("ps0", signal.SIGCONT)
    print(f"trainers ended {elapsed:.1f} s after the ps stopped: {codes}")
    assert codes == {"chief0": 1, "worker0": 1}, codes
    assert elapsed >= OPERATION_TIMEOUT_MS / 1000, elapsed
    for label in ("chief0", "worker0"):
        log = cluster.log_text(label)
        assert "DeadlineExceededError" in log, log[-3000:]
        assert "/job:ps/task:0" in log and (
            f"operation_timeout_in_ms={OPERATION_TIMEOUT_MS}") in log, log[-3000:]
    paths = cluster.checkpoint_paths()
    broken = {path: why for path in paths for ok, why in [restores(path)] if not ok}
    assert paths and not broken, broken
