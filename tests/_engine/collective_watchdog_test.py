"""The collective watchdog: bounds, probes, messages (the fault suite runs it for real:
tests/faults/faults_collective_test.py)."""

import socket
import threading
import types

import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite._engine import collective_watchdog as cw
from estimator_lite._engine import local_cluster, peer_incarnation

_PEERS = [("worker 1", "127.0.0.1:1111"), ("worker 2", "127.0.0.1:2222")]


class _Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class _ExitedError(Exception):
    pass


def _watchdog(clock, down=(), exits=None, **kwargs):
    exits = exits if exits is not None else []

    def exit_fn(code):
        exits.append(code)
        raise _ExitedError

    return cw.CollectiveWatchdog(
        _PEERS, "worker 0", None, kwargs.pop("step", 30), kwargs.pop("start", 300),
        clock=clock, exit_fn=exit_fn, reachable=lambda address: address not in down,
        incarnation=kwargs.pop("incarnation", lambda address: None), **kwargs)


def _run_inside(watchdog, clock, first, checks):
    """Runs a watched call that advances the clock and checks `checks` times."""
    def call():
        for secs in checks:
            clock.now += secs
            watchdog.check()
        return "done"
    return watchdog.watch(call, "step", first=first)()


def test_a_quick_step_never_probes_nor_exits():
    clock, exits = _Clock(), []
    watchdog = _watchdog(clock, down=("127.0.0.1:1111",), exits=exits)
    assert _run_inside(watchdog, clock, False, [1, 1, 1]) == "done"
    watchdog.check()  # nothing running: nothing to do
    assert exits == []


def test_an_unanswering_peer_ends_a_long_step_with_exit_1(caplog):
    clock, exits = _Clock(), []
    watchdog = _watchdog(clock, down=("127.0.0.1:2222",), exits=exits)
    with pytest.raises(_ExitedError):
        # Probes start after 5 s; the second missed probe in a row ends it.
        _run_inside(watchdog, clock, False, [5, 1, 1])
    assert exits == [cw.EXIT_CODE] == [1]
    assert "lost worker 2 (127.0.0.1:2222)" in caplog.text
    assert "worker 1" not in caplog.text.split("lost", 1)[1].split(".")[0]


def test_one_missed_probe_is_not_a_loss():
    clock, exits = _Clock(), []
    answers = iter([False, True, True, True, True, True])
    watchdog = cw.CollectiveWatchdog(
        _PEERS[:1], "worker 0", None, 30, 300, clock=clock, exit_fn=exits.append,
        reachable=lambda address: next(answers), incarnation=lambda address: None)
    _run_inside(watchdog, clock, False, [5, 1, 1])
    assert exits == []


def test_the_bound_ends_a_step_whose_peers_all_answer(caplog):
    clock, exits = _Clock(), []
    watchdog = _watchdog(clock, exits=exits, step=30)
    with pytest.raises(_ExitedError):
        _run_inside(watchdog, clock, False, [10, 10, 9, 1])
    assert exits == [1]
    assert "ran past its 30 s bound" in caplog.text
    assert "every peer answers" in caplog.text


def test_a_restarted_peer_ends_a_long_step_at_the_first_probe(caplog):
    # Worker 2 was killed and restarted at once: it accepts connections again, but
    # its server answers with new incarnation ids.
    clock, exits = _Clock(), []
    ids = {"127.0.0.1:1111": (("cpu", 1),), "127.0.0.1:2222": (("cpu", 2),)}
    watchdog = _watchdog(clock, exits=exits, step=600, incarnation=ids.get)
    assert _run_inside(watchdog, clock, True, [1]) == "done"  # collectives formed
    watchdog.check()  # the thread learns each peer's incarnation
    assert _run_inside(watchdog, clock, False, [6, 1]) == "done"  # same ids: no end
    ids["127.0.0.1:2222"] = (("cpu", 99),)
    with pytest.raises(_ExitedError):
        _run_inside(watchdog, clock, False, [5])
    assert exits == [1]
    assert "lost worker 2 (127.0.0.1:2222), which was restarted" in caplog.text
    assert "worker 0 of a MultiWorkerMirroredStrategy job, 5 s into its step: " \
        "a peer stopped answering or was restarted: lost worker 2" in caplog.text


def test_an_answering_peer_with_unknown_or_unlearned_incarnation_keeps_the_bound():
    # A peer that accepts but does not answer GetStatus (hung) is no restart: only
    # the bound ends the step. Nor is a change seen before a call ever succeeded.
    clock, exits = _Clock(), []
    answers = {"127.0.0.1:1111": None, "127.0.0.1:2222": (("cpu", 2),)}
    watchdog = _watchdog(clock, exits=exits, step=30,
                         incarnation=lambda address: answers[address])
    watchdog.check()
    answers["127.0.0.1:2222"] = (("cpu", 3),)  # not learned yet: no baseline
    assert _run_inside(watchdog, clock, False, [10, 10, 9]) == "done"
    watchdog.check()
    answers["127.0.0.1:2222"] = None  # now hung
    with pytest.raises(_ExitedError):
        _run_inside(watchdog, clock, False, [10, 10, 9, 1])
    assert exits == [1]


def test_incarnation_of_a_real_server_is_stable_and_unknown_when_nobody_answers():
    (port,) = local_cluster.pick_free_ports(1)
    address = f"127.0.0.1:{port}"
    assert peer_incarnation.incarnation(address, timeout_secs=0.5) is None
    server = tf.distribute.Server({"worker": [address]}, job_name="worker",
                                  task_index=0, start=True)
    del server  # gRPC servers cannot be stopped; it serves until the test process ends
    first = peer_incarnation.incarnation(address)
    assert first and first == peer_incarnation.incarnation(address)
    names = [name for name, _ in first]
    assert "/job:worker/replica:0/task:0/device:CPU:0" in names
    assert all(isinstance(value, int) and value > 0 for _, value in first)


def test_decode_incarnations_reads_get_status_replies():
    def device(name, incarnation):
        encoded = name.encode()
        return (b"\x0a" + bytes([len(encoded)]) + encoded + b"\x12\x03CPU"
                + b"\x31" + incarnation.to_bytes(8, "little"))
    one, two = device("/job:w/device:CPU:0", 7), device("/job:w/device:GPU:0", 2**63)
    reply = (b"\x0a" + bytes([len(two)]) + two + b"\x0a" + bytes([len(one)]) + one)
    assert peer_incarnation.decode_incarnations(reply) == (
        ("/job:w/device:CPU:0", 7), ("/job:w/device:GPU:0", 2**63))
    assert peer_incarnation.decode_incarnations(b"") == ()
    with pytest.raises(ValueError, match="truncated"):
        peer_incarnation.decode_incarnations(b"\x0a\x05ab")


def test_session_creation_and_first_step_wait_for_starting_peers():
    # Peers not up yet are normal at the start: no probes, only the start bound.
    clock, exits = _Clock(), []
    watchdog = _watchdog(clock, down=("127.0.0.1:1111",), exits=exits, start=300)
    assert _run_inside(watchdog, clock, True, [60, 60, 60, 60]) == "done"
    with pytest.raises(_ExitedError):
        _run_inside(watchdog, clock, True, [299, 2])
    assert exits == [1]


def test_no_bound_waits_but_still_ends_on_a_lost_peer():
    clock, exits = _Clock(), []
    watchdog = _watchdog(clock, exits=exits, step=None)
    assert _run_inside(watchdog, clock, False, [1000, 1000]) == "done"
    watchdog = _watchdog(clock, down=("127.0.0.1:1111",), exits=exits, step=None)
    with pytest.raises(_ExitedError):
        _run_inside(watchdog, clock, False, [6, 1])


def test_message_names_the_newest_checkpoint(tmp_path, caplog):
    with tf.Graph().as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            session.run(step.assign(300))
            tf.compat.v1.train.Saver().save(session, str(tmp_path / "model.ckpt"),
                                            global_step=step)
    clock, exits = _Clock(), []
    watchdog = cw.CollectiveWatchdog(
        _PEERS, "worker 0", str(tmp_path), 30, 300, clock=clock, exit_fn=exits.append,
        reachable=lambda address: False, incarnation=lambda address: None)
    _run_inside(watchdog, clock, False, [6, 1])
    assert exits == [1]
    assert "model.ckpt-300 (global step 300)" in caplog.text


def test_lost_error_keeps_the_type_and_names_the_peer(tmp_path):
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    alive = f"127.0.0.1:{listening.getsockname()[1]}"
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead = f"127.0.0.1:{closed.getsockname()[1]}"
    closed.close()
    try:
        error = tf.errors.UnavailableError(None, None, "Collective ops is aborted by: x")
        lost = cw.lost_error(error, [("worker 0", alive), ("worker 1", dead)],
                             str(tmp_path), "worker 2")
    finally:
        listening.close()
    assert type(lost) is tf.errors.UnavailableError
    assert f"lost worker 1 ({dead})" in lost.message
    assert "worker 0" not in lost.message.split("lost", 1)[1].split("(not")[0]
    assert "no checkpoint yet" in lost.message
    assert "Collective ops is aborted by: x" in lost.message


def test_which_errors_mean_a_lost_peer():
    assert cw.is_collective_loss(tf.errors.AbortedError(None, None, "x"))
    assert cw.is_collective_loss(tf.errors.FailedPreconditionError(
        None, None, "Device /job:worker/task:0 current incarnation doesn't match"))
    assert not cw.is_collective_loss(tf.errors.FailedPreconditionError(
        None, None, "Attempting to use uninitialized value w"))
    assert not cw.is_collective_loss(tf.errors.InvalidArgumentError(None, None, "x"))


def test_peers_come_from_the_cluster_spec():
    spec = tf.train.ClusterSpec({"worker": ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"],
                                 "evaluator": ["127.0.0.1:4"]})
    assert cw.peers(spec, "worker", 1) == [("worker 0", "127.0.0.1:1"),
                                           ("worker 2", "127.0.0.1:3")]
    config = types.SimpleNamespace(cluster_spec=spec, task_type="worker", task_id=1,
                                   experimental_collective_timeout_secs=42)
    watchdog = cw.for_config(config, None, 7200)
    assert watchdog.peer_list == [("worker 0", "127.0.0.1:1"), ("worker 2", "127.0.0.1:3")]
    assert watchdog.task == "worker 1"
    assert cw.peers(None, "worker", 0) == []
    alone = types.SimpleNamespace(cluster_spec=tf.train.ClusterSpec({"worker": ["a:1"]}),
                                  task_type="worker", task_id=0)
    assert cw.for_config(alone, None, 7200) is None  # one worker: nothing to lose


def test_run_config_collective_timeout():
    assert el.RunConfig().experimental_collective_timeout_secs == 600
    assert el.RunConfig(experimental_collective_timeout_secs=None) \
        .experimental_collective_timeout_secs is None
    assert el.RunConfig().replace(experimental_collective_timeout_secs=5.5) \
        .experimental_collective_timeout_secs == 5.5
    with pytest.raises(ValueError, match="collective_timeout_secs must be > 0"):
        el.RunConfig(experimental_collective_timeout_secs=0)
    with pytest.raises(TypeError, match="experimental_collective_timeout_secs"):
        el.RunConfig(experimental_collective_timeout_secs="60")


def test_the_thread_ends_a_blocked_call_and_stops_cleanly():
    ended = threading.Event()
    exits = []

    def exit_fn(code):
        exits.append(code)
        ended.set()  # a real exit never returns; here the blocked call goes on

    watchdog = cw.CollectiveWatchdog(
        _PEERS[:1], "worker 0", None, 30, 300, exit_fn=exit_fn,
        reachable=lambda address: False, poll_secs=0.01, probe_after_secs=0,
        incarnation=lambda address: None)
    watchdog.start()
    try:
        # A step blocked on a lost peer: the thread ends it (here: unblocks it).
        assert watchdog.watch(lambda: ended.wait(10), "step")() is True
    finally:
        watchdog.stop()
    assert exits[:1] == [1]
    watchdog.start()  # a second train() call starts it again
    watchdog.stop()
