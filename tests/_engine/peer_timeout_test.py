"""peer_timeout: the error naming the tasks a timed-out step waited on, and a close
that does not block (real partitions: tests/faults/faults_network_test.py)."""

import threading
import time

import tensorflow as tf

from estimator_lite._engine import peer_timeout


def _ps_graph():
    """A replica_device_setter graph as a worker of a 2-ps cluster builds it."""
    graph = tf.Graph()
    with graph.as_default(), tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(
            ps_tasks=2, worker_device="/job:worker/task:1")):
        a = tf.compat.v1.get_variable("a", [1])
        b = tf.compat.v1.get_variable("b", [1])
        guard = tf.identity(a + b)
    return graph, guard


def test_remote_tasks_are_the_graphs_tasks_but_our_own():
    graph, guard = _ps_graph()
    assert guard.device == "/job:worker/task:1"
    assert peer_timeout.remote_tasks(graph, "/job:worker/task:1") == [
        "/job:ps/task:0", "/job:ps/task:1"]
    assert peer_timeout.remote_tasks(tf.Graph(), None) == []


def test_the_error_keeps_its_type_and_names_peers_bound_and_cause():
    text = "Graph execution error:\n\nOperation timed out."
    cause = tf.errors.DeadlineExceededError(None, None, text)
    config = tf.compat.v1.ConfigProto(operation_timeout_in_ms=8000)
    error = peer_timeout.peer_timeout_error(cause, ["/job:ps/task:0"], config)
    assert isinstance(error, tf.errors.DeadlineExceededError)
    assert "operation_timeout_in_ms=8000" in error.message
    assert "/job:ps/task:0" in error.message
    assert error.message.endswith("Cause: Operation timed out.")


def test_a_close_that_blocks_is_left_to_a_daemon_thread(monkeypatch):
    monkeypatch.setattr(peer_timeout, "_CLOSE_WAIT_SECS", 0.2)
    release = threading.Event()
    closed = threading.Event()

    class BlockedSession:
        def close(self):
            release.wait(10)
            closed.set()

    start = time.monotonic()
    peer_timeout.close_in_background(BlockedSession(), "/job:ps/task:0")
    assert time.monotonic() - start < 5
    assert not closed.is_set()
    release.set()  # the network came back: the close finishes by itself
    assert closed.wait(5)
