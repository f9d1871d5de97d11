"""The SessionRunHook protocol shared by train, evaluate and predict."""

import pytest

from estimator_lite._engine.hook_protocol import (
    RestoredSession,
    merge_run_args,
    run_with_hooks,
    without_readiness_reports,
)
from estimator_lite._tf import tf
from tests.support.tf_versions import tf2_only


class RecordingHook(tf.train.SessionRunHook):
    """Asks for `fetches` (and feeds), records what it saw, stops after `stop_after`."""

    def __init__(self, fetches=None, feed_dict=None, stop_after=None):
        self.fetches = fetches
        self.feed_dict = feed_dict
        self.stop_after = stop_after
        self.calls = []
        self.original = []
        self.runs = 0

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")

    def before_run(self, run_context):
        self.original.append(run_context.original_args.fetches)
        if self.fetches is None and self.feed_dict is None:
            return None
        return tf.train.SessionRunArgs(self.fetches, feed_dict=self.feed_dict)

    def after_run(self, run_context, run_values):
        self.runs += 1
        self.calls.append(("after_run", run_values.results))
        if self.stop_after is not None and self.runs >= self.stop_after:
            run_context.request_stop()

    def end(self, session):
        self.calls.append("end")


def test_merge_run_args():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32)
        b = tf.constant(1.0)
        slow = tf.RunOptions(timeout_in_ms=5000)
        fast = tf.RunOptions(timeout_in_ms=100, trace_level=tf.RunOptions.FULL_TRACE)
        fetches, feeds, options = merge_run_args([
            tf.train.SessionRunArgs(b, feed_dict={a: 1.0}, options=slow), None,
            tf.train.SessionRunArgs(None, options=fast)])
        assert fetches == {0: b}
        assert feeds == {a: 1.0}
        assert options.timeout_in_ms == 100
        assert options.trace_level == tf.RunOptions.FULL_TRACE
        with pytest.raises(RuntimeError, match="feed the same tensor"):
            merge_run_args([tf.train.SessionRunArgs(b, {a: 1.0}),
                            tf.train.SessionRunArgs(b, {a: 2.0})])


def test_hooks_fetch_feed_and_stop():
    with tf.Graph().as_default():
        counter = tf.Variable(0, name="counter")
        increment = tf.assign_add(counter, 1)
        scale = tf.placeholder_with_default(1, [])
        scaled = counter * scale
        feeder = RecordingHook(fetches=scaled, feed_dict={scale: 10}, stop_after=2)
        watcher = RecordingHook()
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            first, stop = run_with_hooks(session, [feeder, watcher], increment,
                                         original_fetches="train-op")
            assert (first, stop) == (1, False)
            _, stop = run_with_hooks(session, [feeder, watcher], increment)
    assert stop
    assert feeder.calls[0][0] == "after_run" and feeder.calls[0][1] in (0, 10)
    assert watcher.calls == [("after_run", None), ("after_run", None)]
    assert watcher.original == ["train-op", increment]


def test_fast_path_is_used_when_no_hook_asks_for_anything():
    with tf.Graph().as_default():
        counter = tf.Variable(0)
        increment = tf.assign_add(counter, 1)
        fast_calls = []
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            run_fast = session.make_callable(increment)

            def fast_fn():
                fast_calls.append(1)
                return run_fast()

            assert run_with_hooks(session, [], increment, fast_fn=fast_fn) == (1, False)
            result, _ = run_with_hooks(session, [RecordingHook()], increment,
                                       fast_fn=fast_fn)
            assert result == 2
            result, _ = run_with_hooks(session, [RecordingHook(fetches=counter)],
                                       increment, fast_fn=fast_fn)
            assert result == 3
    assert len(fast_calls) == 2  # the hook that fetched forced a full session.run


def test_restored_session_runs_the_hook_lifecycle(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(3.0, name="v")
        saver = tf.train.Saver()
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            session.run(tf.assign(v, 7.0))
            path = saver.save(session, str(tmp_path / "ckpt"))
    with tf.Graph().as_default():
        v = tf.Variable(3.0, name="v")
        hook = RecordingHook()
        scaffold = tf.train.Scaffold()
        with RestoredSession(scaffold, path, None, "", [hook]) as session:
            assert session.run(v) == 7.0  # restored, not initialised
        assert hook.calls == ["begin", "after_create_session", "end"]


def _readiness_op_count(graph):
    return sum(op.type in ("IsVariableInitialized", "VarIsInitializedOp")
               for op in graph.get_operations())


def test_restored_session_builds_no_readiness_reports():
    """Evaluation and prediction restore the model themselves: no op may be built to
    report uninitialised variables (Scaffold.finalize's default would build two)."""
    with tf.Graph().as_default() as graph:
        tf.Variable(3.0, name="v")
        before = _readiness_op_count(graph)  # a resource variable has its own
        with RestoredSession(tf.train.Scaffold(), None, None, "", []):
            pass
        assert _readiness_op_count(graph) == before
    with tf.Graph().as_default() as graph:
        tf.Variable(3.0, name="v")
        before = _readiness_op_count(graph)
        tf.train.Scaffold().finalize()
        assert _readiness_op_count(graph) > before  # what the check above would see


def test_without_readiness_reports_keeps_the_callers_own():
    with tf.Graph().as_default():
        mine = tf.constant(["x"], name="mine")
        user_init = tf.no_op(name="user_init")
        scaffold = without_readiness_reports(
            tf.train.Scaffold(ready_op=mine, init_op=user_init))
        assert scaffold.ready_op is mine
        assert scaffold.init_op is user_init
        assert scaffold.ready_for_local_init_op.op.name == "no_readiness_report"


@tf2_only("tf.compat.v1.train.Scaffold(local_init_feed_dict=) came after TF 1.15")
def test_restored_session_feeds_the_local_init_feed_dict():
    with tf.Graph().as_default():
        start = tf.placeholder(tf.float32, [], name="start")
        local = tf.Variable(0.0, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
        scaffold = tf.train.Scaffold(local_init_op=tf.assign(local, start),
                                     local_init_feed_dict={start: 5.0})
        with RestoredSession(scaffold, None, None, "", []) as session:
            assert session.run(local) == 5.0


def test_restored_session_fetches_alongside_the_local_init():
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.range(10).batch(4)
        iterator = tf.data.make_initializable_iterator(dataset)
        batch = iterator.get_next()
        scaffold = tf.train.Scaffold(local_init_op=iterator.initializer)
        restored = RestoredSession(scaffold, None, None, "", [],
                                   fetch_with_local_init=tf.data.experimental.cardinality(
                                       dataset))
        with restored as session:
            assert restored.local_init_results == 3
            assert list(session.run(batch)) == [0, 1, 2, 3]  # initialised
