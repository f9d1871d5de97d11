"""Which executor runs an in-process session (estimator_lite/_engine/executor_choice.py).

Small graphs run on TensorFlow's single-threaded executor, or, with control flow,
on the calling thread; every condition that keeps the thread pool is checked here
on a real graph, and an Estimator trained either way ends with the same variables,
metrics, predictions and summaries to the bit.
"""

import json
import os
import threading

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite._engine import executor_choice
from estimator_lite._engine import input_fn as input_fn_lib
from estimator_lite._pycompat import zip_strict

tf1 = tf.compat.v1
SINGLE = executor_choice.SINGLE_THREADED
CALLER = executor_choice.CALLER_THREAD


def _setting(config):
    """(executor_type, inter_op_parallelism_threads) of a chosen config."""
    return config.experimental.executor_type, config.inter_op_parallelism_threads


def _small_graph():
    """A linear model's training graph: resource variables, tf.data input."""
    graph = tf.Graph()
    with graph.as_default():
        x = np.arange(24, dtype=np.float32).reshape(12, 2)
        # The Estimator's own input, as an input_fn's dataset becomes it.
        inputs = input_fn_lib.split_input(tf.data.Dataset.from_tensor_slices(x).batch(4))
        features = inputs.features
        tf1.add_to_collection(tf1.GraphKeys.LOCAL_INIT_OP, inputs.initializer)
        weight = tf1.get_variable("w", [2, 1], initializer=tf1.zeros_initializer())
        loss = tf.reduce_mean(tf.matmul(features, weight))
        tf1.train.GradientDescentOptimizer(0.1).minimize(loss)
        # Where a Scaffold puts it: the initializers are setup, not a step.
        tf1.add_to_collection(tf1.GraphKeys.INIT_OP, tf1.global_variables_initializer())
    return graph


def _with(graph, build):
    with graph.as_default():
        build()
    return graph


@pytest.mark.tf2
def test_a_small_graph_gets_the_single_threaded_executor_in_a_copy_of_the_config():
    asked = tf1.ConfigProto(allow_soft_placement=True)
    chosen = executor_choice.session_config(_small_graph(), asked, master="")
    assert chosen.experimental.executor_type == SINGLE
    assert chosen.allow_soft_placement
    assert asked.experimental.executor_type == ""  # the caller's config is kept
    assert executor_choice.session_config(
        _small_graph(), None, master="").experimental.executor_type == SINGLE


@pytest.mark.parametrize("setting", ["executor_type", "inter_op_parallelism_threads",
                                     "use_per_session_threads"])
def test_a_config_that_sets_the_executor_or_threads_is_kept(setting):
    asked = tf1.ConfigProto()
    if setting == "executor_type":
        asked.experimental.executor_type = "DEFAULT"  # how a user opts out
    else:
        setattr(asked, setting, 2 if setting.endswith("threads") else True)
    assert executor_choice.session_config(_small_graph(), asked, master="") is asked


def test_a_cluster_session_keeps_the_config():
    asked = tf1.ConfigProto()
    assert executor_choice.session_config(
        _small_graph(), asked, master="grpc://127.0.0.1:2222") is asked


@pytest.mark.tf2
@pytest.mark.parametrize("build", [
    pytest.param(lambda: tf.cond(tf1.placeholder(tf.bool, []), lambda: tf.constant(1.0),
                                 lambda: tf.constant(2.0)), id="tf.cond"),
    pytest.param(lambda: tf.while_loop(lambda i: i < 3, lambda i: i + 1, [0]),
                 id="tf.while_loop"),
])
def test_a_small_graph_with_control_flow_runs_on_the_calling_thread(build):
    """The single-threaded executor would run If and While as function calls, whose
    bodies miss the session graph's rewrites; the default executor inlines them."""
    asked = tf1.ConfigProto(allow_soft_placement=True)
    chosen = executor_choice.session_config(_with(_small_graph(), build), asked, "")
    assert _setting(chosen) == ("", CALLER)
    assert chosen.allow_soft_placement and asked.inter_op_parallelism_threads == 0


@pytest.mark.parametrize("build", [
    pytest.param(lambda: tf1.Variable(1.0, use_resource=False), id="ref variable"),
    pytest.param(lambda: tf1.identity(tf.constant(1.0)).op._set_device("/cpu:1"),
                 id="second cpu"),
    pytest.param(lambda: [tf.constant(float(i)) for i in range(executor_choice.MAX_OPS)],
                 id="many ops"),
])
def test_graphs_it_cannot_run_or_that_may_use_threads_keep_the_default(build):
    assert executor_choice.session_config(_with(_small_graph(), build), None,
                                          master="") is None


def _jit_scoped_op():
    with tf1.get_default_graph()._attr_scope(  # noqa: SLF001 (jit_scope's mechanism)
            {"_XlaCompile": tf1.AttrValue(b=True)}):
        tf.constant(1.0)


@pytest.mark.tf2
def test_xla_keeps_the_default_executor(monkeypatch):
    """XLA's launch ops bring a Switch op the graph did not show before."""
    assert executor_choice.session_config(_with(_small_graph(), _jit_scoped_op), None,
                                          master="") is None
    jit = tf1.ConfigProto()
    jit.graph_options.optimizer_options.global_jit_level = tf1.OptimizerOptions.ON_1
    assert executor_choice.session_config(_small_graph(), jit, master="") is jit
    monkeypatch.setenv("TF_XLA_FLAGS", "--tf_xla_auto_jit=2")
    assert executor_choice.session_config(_small_graph(), None, master="") is None


@pytest.mark.tf2
def test_a_tracing_hook_keeps_the_default_executor(tmp_path):
    with tf.Graph().as_default():
        profiler = tf1.train.ProfilerHook(save_steps=1, output_dir=str(tmp_path))
    assert executor_choice.session_config(_small_graph(), None, "", [profiler]) is None
    assert executor_choice.session_config(
        _small_graph(), None, "", [tf1.train.StepCounterHook()]) is not None


@pytest.mark.tf2
def test_an_estimator_gives_the_same_numbers_on_either_executor(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.randn(256, 4).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32) > 0).astype(np.int32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).shuffle(
            256, seed=1).repeat(2).batch(32)

    def predict_input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": x}).batch(64)

    def model_fn(features, labels, mode):
        kernel = tf1.get_variable("kernel", [4, 2],
                                  initializer=tf1.glorot_uniform_initializer(seed=3))
        logits = tf.matmul(features["x"], kernel)
        if mode == el.ModeKeys.PREDICT:
            return el.EstimatorSpec(mode, predictions={"logits": logits})
        loss = tf1.losses.sparse_softmax_cross_entropy(labels, logits)
        train_op = tf1.train.AdamOptimizer(0.05).minimize(
            loss, global_step=tf1.train.get_global_step())
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={
            "accuracy": tf1.metrics.accuracy(labels, tf.argmax(logits, 1))})

    seen = {}

    class Executor(tf1.train.SessionRunHook):
        def __init__(self, key):
            self._key = key

        def after_create_session(self, session, coord):
            del coord
            seen[self._key] = _setting(session._config)  # noqa: SLF001

    results = {}
    runs = (("auto", "", 1), ("default", "DEFAULT", 1), ("auto_k4", "", 4),
            ("default_k4", "DEFAULT", 4))
    for name, executor_type, steps_per_loop in runs:
        config = tf1.ConfigProto()
        config.experimental.executor_type = executor_type
        estimator = el.Estimator(model_fn, model_dir=str(tmp_path / name),
                                 config=el.RunConfig(
                                     tf_random_seed=7, session_config=config,
                                     experimental_steps_per_loop=steps_per_loop))
        estimator.train(input_fn, hooks=[Executor(name)])
        metrics = estimator.evaluate(input_fn, hooks=[Executor(name + "_eval")])
        predictions = [p["logits"] for p in estimator.predict(predict_input_fn)]
        weights = {n: estimator.get_variable_value(n)
                   for n in estimator.get_variable_names()}
        results[name] = (metrics, np.stack(predictions), weights)
    # A multi-step loop runs on the calling thread: its While op, run as a function
    # call on the single-threaded executor, would not give K single steps' numbers.
    default = ("DEFAULT", 0)
    assert seen == {"auto": (SINGLE, 0), "auto_eval": (SINGLE, 0),
                    "auto_k4": ("", CALLER), "auto_k4_eval": (SINGLE, 0),
                    "default": default, "default_eval": default,
                    "default_k4": default, "default_k4_eval": default}
    for name in ("auto", "auto_k4", "default_k4"):
        ours, default = results[name], results["default"]
        assert ours[0] == default[0] and ours[0]["global_step"] == 16
        np.testing.assert_array_equal(ours[1], default[1])
        assert sorted(ours[2]) == sorted(default[2])
        for variable in ours[2]:
            np.testing.assert_array_equal(ours[2][variable], default[2][variable])


@pytest.mark.tf2
@pytest.mark.parametrize("steps_per_loop", [1, 4])
def test_a_profiler_hook_still_records_every_op_of_a_step(tmp_path, steps_per_loop):
    def model_fn(features, labels, mode):
        weight = tf1.get_variable("w", [2, 1], initializer=tf1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features, weight) - labels))
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf1.train.get_global_step())
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def input_fn():
        return tf.data.Dataset.from_tensors((np.ones((4, 2), np.float32),
                                             np.ones((4, 1), np.float32))).repeat(12)

    def profiled_model_fn(features, labels, mode):
        spec = model_fn(features, labels, mode)
        hook = tf1.train.ProfilerHook(save_steps=1, output_dir=str(tmp_path / "profile"))
        return spec._replace(training_hooks=[hook])

    config = el.RunConfig(experimental_steps_per_loop=steps_per_loop)
    el.Estimator(profiled_model_fn, model_dir=str(tmp_path / "model"),
                 config=config).train(input_fn)
    timelines = sorted(n for n in os.listdir(tmp_path / "profile")
                       if n.startswith("timeline"))
    assert timelines, "ProfilerHook wrote no timeline"
    with open(tmp_path / "profile" / timelines[-1]) as f:
        events = json.load(f)["traceEvents"]
    # The single-threaded executor would record no op at all.
    ops = {e.get("args", {}).get("op") for e in events}
    assert "ResourceApplyGradientDescent" in ops
    assert any("MatMul" in str(op) for op in ops)  # MatMul, or oneDNN's _MklMatMul


def test_tensorflow_1_keeps_its_default_executor():
    chosen = executor_choice.session_config(_small_graph(), None, master="")
    if tf.__version__.startswith("1."):
        assert chosen is None
    else:
        assert chosen.experimental.executor_type == SINGLE


def _counter_step():
    counter = tf1.get_variable("counter", [], initializer=tf1.zeros_initializer())
    tf1.add_to_collection(tf1.GraphKeys.INIT_OP, counter.initializer)
    return tf1.assign_add(counter, 1.0)


@pytest.mark.tf2
def test_state_changed_without_the_input_keeps_the_default_executor():
    """At the input's end the default executor still runs what does not need the
    input; the single-threaded one might not."""
    graph = _small_graph()
    with graph.as_default():
        step = _counter_step().op
    assert executor_choice.session_config(graph, None, master="") is None
    # The same op as setup (run once to prepare the session) is fine.
    chosen = executor_choice.session_config(graph, None, master="", setup=[step])
    assert chosen.experimental.executor_type == SINGLE


def _counting_loop(count_after_input):
    """A graph whose tf.while_loop body reads a dataset and counts in a variable,
    after the read or independently of it."""
    graph = tf.Graph()
    with graph.as_default():
        counter = tf1.Variable(0, use_resource=True)
        tf1.add_to_collection(tf1.GraphKeys.INIT_OP, counter.initializer)
        iterator = tf1.data.make_one_shot_iterator(tf.data.Dataset.range(10))

        def body(i):
            # Read as the library reads an input_fn's tensors (a multi-step loop).
            element = input_fn_lib.split_input(iterator.get_next()).features
            waits = [element] if count_after_input else []
            with tf.control_dependencies(waits):
                count = counter.assign_add(1)
            return i + tf.cast(element, tf.int32) * 0 + tf.cast(count, tf.int32) * 0 + 1

        tf.while_loop(lambda i: i < 3, body, [0])
    return graph


@pytest.mark.tf2
def test_a_loop_body_that_changes_state_before_its_input_keeps_the_thread_pool():
    """Looked into: a While op's body is held to the same input rule."""
    chosen = executor_choice.session_config(_counting_loop(True), None, "")
    assert _setting(chosen) == ("", CALLER)
    assert executor_choice.session_config(_counting_loop(False), None, "") is None


@pytest.mark.tf2
def test_a_cond_that_changes_state_is_judged_by_its_branch_choice():
    def build(pick_by_input):
        graph = _small_graph()
        with graph.as_default():
            counter = tf1.Variable(0.0, use_resource=True)
            tf1.add_to_collection(tf1.GraphKeys.INIT_OP, counter.initializer)
            features = graph.get_operation_by_name("IteratorGetNext").outputs[0]
            pick = (tf.reduce_sum(features) > 0 if pick_by_input
                    else tf1.placeholder_with_default(True, []))
            tf.cond(pick, lambda: counter.assign_add(1.0), counter.read_value)
        return graph

    assert _setting(executor_choice.session_config(build(True), None, "")) == ("", CALLER)
    assert executor_choice.session_config(build(False), None, "") is None


@pytest.mark.tf2
def test_a_hook_that_fetches_keeps_the_default_executor():
    class Fetching(tf1.train.SessionRunHook):
        def before_run(self, run_context):
            del run_context

    class Watching(tf1.train.SessionRunHook):
        def after_create_session(self, session, coord):
            del session, coord

    assert executor_choice.session_config(_small_graph(), None, "", [Fetching()]) is None
    watched = executor_choice.session_config(_small_graph(), None, "", [Watching()])
    assert watched.experimental.executor_type == SINGLE


@pytest.mark.tf2
def test_a_mocked_hook_keeps_the_default_executor(tmp_path):
    # Libraries' tests (tf.estimator's own among them) pass hooks made with
    # mock.MagicMock(spec=SessionRunHook): its class has no before_run to read.
    from unittest import mock
    hook = mock.MagicMock(wraps=tf1.train.SessionRunHook(),
                          spec=tf1.train.SessionRunHook)
    assert executor_choice.session_config(_small_graph(), None, "", [hook]) is None

    def model_fn(features, labels, mode):
        del features, labels
        step = tf1.train.get_global_step()
        return el.EstimatorSpec(mode, loss=tf.constant(0.0),
                                train_op=tf1.assign_add(step, 1), training_hooks=[hook])

    el.Estimator(model_fn, str(tmp_path)).train(lambda: ({"x": tf.ones([1])}, None),
                                                steps=1)
    assert hook.begin.called and hook.end.called


@pytest.mark.tf2
def test_a_metric_of_a_constant_counts_every_batch_once(tmp_path):
    """The failing last step of evaluation: a mean of a constant stays the constant
    (both of its counters move in every step, or neither)."""
    def input_fn():
        return tf.data.Dataset.from_tensor_slices(
            ({"x": np.ones((9, 2), np.float32)}, np.ones((9, 1), np.float32))).batch(3)

    def model_fn(features, labels, mode):
        weight = tf1.get_variable("w", [2, 1], initializer=tf1.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], weight) - labels))
        train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf1.train.get_global_step())
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={
            "constant": tf1.metrics.mean(tf.constant(42.0))})

    estimator = el.Estimator(model_fn, model_dir=str(tmp_path))
    estimator.train(input_fn)
    assert estimator.evaluate(input_fn)["constant"] == 42.0


def _summary_values(model_dir):
    """{tag: [(step, value)]} of the scalar and histogram (sum) summaries."""
    values = {}
    for path in sorted(tf1.gfile.Glob(os.path.join(model_dir, "events.out*"))):
        for event in tf1.train.summary_iterator(path):
            for value in event.summary.value:
                number = value.histo.sum if value.HasField("histo") else value.simple_value
                values.setdefault(value.tag, []).append((event.step, number))
    return values


@pytest.mark.tf2
@pytest.mark.parametrize("with_cond", [False, True], ids=["single_threaded", "caller"])
def test_reads_beside_the_train_op_see_the_weights_before_the_step(tmp_path, with_cond):
    """Variable reads fetched with the train op (summaries, LoggingTensorHook) see
    the weights before the step's update, wherever the read was built.

    On the thread pool (tf.estimator's executor) such a read races with the update
    and usually, not always, comes first (a CI run on TF 2.16 once saw the updated
    value); off the pool it always does. Checked against the checkpoint of the step
    before, which holds exactly those weights.
    """
    x = np.random.RandomState(0).randn(64, 4).astype(np.float32)
    y = 2.0 * x.sum(axis=1, keepdims=True)
    logged, seen = [], []

    def model_fn(features, labels, mode):
        weight = tf1.get_variable("w", [4, 1], initializer=tf1.ones_initializer())
        predictions = tf.matmul(features, weight)
        if with_cond:
            predictions = tf.cond(tf.reduce_sum(predictions) > 1e9,
                                  lambda: predictions * 0.5, lambda: predictions)
        loss = tf.reduce_mean(tf.square(predictions - labels))
        early = tf.identity(weight[0, 0])
        tf1.summary.scalar("early", early)
        tf1.summary.histogram("early_histogram", tf.identity(weight))
        train_op = tf1.train.AdamOptimizer(0.1).minimize(
            loss, global_step=tf1.train.get_global_step())
        late = tf.identity(weight[0, 0])
        tf1.summary.scalar("late", late)

        def capture(values):
            logged.append(values)
            return ""

        return el.EstimatorSpec(mode, loss=loss, train_op=train_op, training_hooks=[
            tf1.train.LoggingTensorHook({"early": early, "late": late, "w": weight},
                                        every_n_iter=1, formatter=capture)])

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(16)

    class Executor(tf1.train.SessionRunHook):
        def after_create_session(self, session, coord):
            del coord
            seen.append(_setting(session._config))  # noqa: SLF001

    model_dir = str(tmp_path)
    estimator = el.Estimator(model_fn, model_dir=model_dir, config=el.RunConfig(
        save_summary_steps=1, save_checkpoints_steps=1, keep_checkpoint_max=10))
    estimator.train(input_fn, steps=5, hooks=[Executor()])
    assert seen == [("", CALLER) if with_cond else (SINGLE, 0)]
    before = [np.ones([4, 1], np.float32)] + [
        tf1.train.load_variable(os.path.join(model_dir, f"model.ckpt-{step}"), "w")
        for step in range(1, 5)]
    summaries = _summary_values(model_dir)
    for tag in ("early", "late"):
        assert summaries[tag] == [(step + 1, w[0, 0]) for step, w in enumerate(before)]
    # A histogram sums in float64: the weights' sum to float32's precision.
    assert [v for _, v in summaries["early_histogram"]] == pytest.approx(
        [float(w.sum()) for w in before], rel=1e-6)
    assert len(logged) == 5
    for values, weights in zip_strict(logged, before):
        assert values["early"] == values["late"] == weights[0, 0]
        np.testing.assert_array_equal(values["w"], weights)


# Issue 39, items 1-3: model_fns whose ops wait on each other, or read a second
# dataset of their own, keep the thread pool and give the thread pool's result.

class _SessionExecutor(tf1.train.SessionRunHook):
    """Notes the (executor_type, inter_op threads) each session was created with."""

    def __init__(self):
        self.settings = []

    def after_create_session(self, session, coord):
        del coord
        self.settings.append(_setting(session._config))  # noqa: SLF001


def _run_within(seconds, fn):
    """fn()'s result; fails the test (instead of hanging it) after `seconds`."""
    box = {}

    def target():
        try:
            box["result"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the test's thread
            box["error"] = e

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"did not finish within {seconds} s (a hang)"
    if "error" in box:
        raise box["error"]
    return box["result"]


def _batches_input_fn():
    # Batch i holds the value i + 1 everywhere: each step's features differ.
    x = np.repeat(np.arange(1, 9, dtype=np.float32), 8).reshape(32, 2)
    return tf.data.Dataset.from_tensor_slices((x, np.ones((32, 1), np.float32))).batch(4)


def _linear(features, labels, extra_loss=0.0, extra_ops=()):
    weight = tf1.get_variable("w", [2, 1], initializer=tf1.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(features, weight) - labels)) + extra_loss
    step = tf1.train.GradientDescentOptimizer(0.01).minimize(
        loss, global_step=tf1.train.get_global_step())
    return loss, tf.group(step, *extra_ops)


@pytest.mark.tf2
def test_a_queue_filled_and_drained_in_one_step_keeps_the_thread_pool(tmp_path):
    """A replay buffer: each step enqueues its batch and dequeues one, with no
    dependency between the two. On one thread the dequeue could run first and
    wait forever; tf.estimator trains."""
    def model_fn(features, labels, mode):
        buffer = tf1.FIFOQueue(10, [tf.float32], shapes=[[4, 2]])
        replayed = buffer.dequeue()
        loss, train_op = _linear(features, labels, 0.0 * tf.reduce_sum(replayed),
                                 [buffer.enqueue([features])])
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op)

    watch = _SessionExecutor()
    estimator = el.Estimator(model_fn, model_dir=str(tmp_path))
    _run_within(120, lambda: estimator.train(_batches_input_fn, hooks=[watch]))
    assert estimator.get_variable_value("global_step") == 8
    assert watch.settings == [("", 0)]


@pytest.mark.tf2
def test_python_ops_that_wait_on_each_other_keep_the_thread_pool(tmp_path):
    """Two tf.py_functions of one step, the consumer waiting for the producer:
    every step's consumer sees that step's value (on one thread in the wrong
    order it would wait out its cap, then see the step before's)."""
    produced = threading.Event()
    box, seen = {}, []

    def produce(x):
        box["sum"] = float(x.numpy().sum())
        produced.set()
        return np.float32(0)

    def consume(labels):
        del labels  # read so that both ops follow the input: only the wait orders them
        waited = produced.wait(20)
        produced.clear()
        seen.append(box["sum"] if waited else None)
        return np.float32(0)

    def model_fn(features, labels, mode):
        extra = (tf.py_function(produce, [features], tf.float32)
                 + tf.py_function(consume, [labels], tf.float32))
        loss, train_op = _linear(features, labels, extra)
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op)

    watch = _SessionExecutor()
    estimator = el.Estimator(model_fn, model_dir=str(tmp_path))
    # steps=8: a ninth step would meet the input's end with its consumer waiting.
    _run_within(120, lambda: estimator.train(_batches_input_fn, steps=8, hooks=[watch]))
    assert seen == [8.0 * step for step in range(1, 9)]  # 4x2 values of step i
    assert watch.settings == [("", 0)]


@pytest.mark.tf2
def test_a_metric_of_a_second_dataset_counts_every_batch_once(tmp_path):
    """A model_fn that reads a side dataset of its own (not the input_fn's) and
    averages it: only the input_fn's iterator is the input; evaluation keeps the
    thread pool and a mean of ones is one, every time."""
    def model_fn(features, labels, mode):
        side = tf1.data.make_one_shot_iterator(
            tf.data.Dataset.from_tensors(1.0).repeat()).get_next()
        loss, train_op = _linear(features, labels)
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                eval_metric_ops={"side": tf1.metrics.mean(side)})

    def eval_input_fn():  # 20 examples in batches of 3: the last step meets the end
        return tf.data.Dataset.from_tensor_slices(
            (np.ones((20, 2), np.float32), np.ones((20, 1), np.float32))).batch(3)

    watch = _SessionExecutor()
    estimator = el.Estimator(model_fn, model_dir=str(tmp_path))
    estimator.train(_batches_input_fn, steps=1)
    means = [estimator.evaluate(eval_input_fn, hooks=[watch])["side"] for _ in range(4)]
    assert means == [1.0] * 4
    assert watch.settings == [("", 0)] * 4


@pytest.mark.tf2
def test_an_input_fn_returning_its_iterators_tensors_is_the_input(tmp_path):
    """A TF1-style input_fn returning a one-shot iterator's tensors: those reads are
    the input, so a small model still runs on one thread."""
    def input_fn():
        return tf1.data.make_one_shot_iterator(_batches_input_fn()).get_next()

    def model_fn(features, labels, mode):
        loss, train_op = _linear(features, labels)
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op)

    watch = _SessionExecutor()
    estimator = el.Estimator(model_fn, model_dir=str(tmp_path))
    estimator.train(input_fn, hooks=[watch])
    assert estimator.get_variable_value("global_step") == 8
    assert watch.settings == [(SINGLE, 0)]
