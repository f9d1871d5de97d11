"""The training loop's periodic actions: checkpoint policy and saver, progress and ETA."""

from estimator_lite._engine import periodic_actions
from estimator_lite._tf import tf


def test_checkpoint_policy_enabled():
    assert not periodic_actions.CheckpointPolicy("/d").enabled
    assert periodic_actions.CheckpointPolicy("/d", save_secs=600).enabled


def test_checkpoint_saver_without_policy_never_saves():
    saver = periodic_actions.CheckpointSaver()
    assert saver.checkpoint_dir is None and not saver.enabled
    assert not saver.due(100)


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class _Scalars:
    def __init__(self):
        self.written = []

    def add_scalars(self, values, step):
        self.written.append((step, values))


def test_report_progress_fetches_the_loss_on_log_steps_and_reports_rate_and_eta(caplog):
    clock, scalars = _Clock(), _Scalars()
    with tf.Graph().as_default():
        loss = tf.constant(1.0)
    progress = periodic_actions.ReportProgress(10, loss, examples_per_step=32,
                                               summaries=scalars, clock=clock)
    progress.start(0, target_step_fn=lambda first_step: first_step + 100)
    extra = {}
    progress.fetches(5, extra)
    assert extra == {}
    progress.fetches(10, extra)
    assert extra == {"loss": loss}
    clock.now += 2.0  # 10 steps in 2 s: 5 steps/sec, 160 examples/sec, 18 s left
    with caplog.at_level("INFO", logger="tensorflow"):
        progress.after_step(10, {"loss": 0.5})
    assert "step 10/100 (10%): loss = 0.5 (5.0 steps/sec, 160 examples/sec), " \
           "ETA 0:00:18" in caplog.text
    assert scalars.written == [(10, {"global_step/sec": 5.0, "examples/sec": 160.0})]
    extra = {}
    progress.fetches(11, extra)
    assert extra == {}  # marked at step 10


def _saved_graph(checkpoint_dir, save_graph_def):
    """A real session and Saver, and a CheckpointSaver that saved steps 1, 2 and 3."""
    graph = tf.Graph()
    with graph.as_default():
        weight = tf.get_variable("w", [3], initializer=tf.ones_initializer())
        update = tf.assign_add(weight, [1.0, 2.0, 3.0])
        saver = tf.train.Saver(max_to_keep=2)
        graph.finalize()
    policy = periodic_actions.CheckpointPolicy(
        checkpoint_dir, save_steps=1, save_graph_def=save_graph_def)
    checkpoint_saver = periodic_actions.CheckpointSaver(policy)
    with tf.Session(graph=graph) as session:
        session.run(weight.initializer)
        for step in (1, 2, 3):
            session.run(update)
            checkpoint_saver.save(session, saver, step)
    return saver


def test_every_checkpoint_gets_the_meta_graph_tensorflow_exports(tmp_path):
    """TensorFlow exports the first .meta; later saves write the same bytes again
    (the graph is finalized), and Saver's max_to_keep still removes old ones."""
    saver = _saved_graph(str(tmp_path), save_graph_def=True)
    metas = sorted(p.name for p in tmp_path.glob("*.meta*"))
    assert metas == ["model.ckpt-2.meta", "model.ckpt-3.meta"]  # max_to_keep=2
    first, last = ((tmp_path / name).read_bytes() for name in metas)
    assert first == last
    with tf.Graph().as_default():
        restorer = tf.train.import_meta_graph(str(tmp_path / "model.ckpt-3.meta"))
        assert restorer.saver_def == saver.saver_def
        weight = tf.global_variables()[0]
        with tf.Session() as session:
            restorer.restore(session, str(tmp_path / "model.ckpt-3"))
            assert session.run(tf.convert_to_tensor(weight)).tolist() == [4.0, 7.0, 10.0]


def test_no_meta_graph_when_the_policy_says_so(tmp_path):
    _saved_graph(str(tmp_path), save_graph_def=False)
    assert not list(tmp_path.glob("*.meta*"))
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-3")


def _meta_collection(path, key):
    """The values of collection `key` in the MetaGraphDef at `path`, or None."""
    meta_graph = tf.MetaGraphDef()
    with open(path, "rb") as f:
        meta_graph.ParseFromString(f.read())
    if key not in meta_graph.collection_def:
        return None
    return [value.decode() for value in meta_graph.collection_def[key].bytes_list.value]


def test_a_collection_changed_after_a_save_reaches_the_later_meta_files(tmp_path):
    """The graph is finalized, but a listener can still append to a collection
    (get_collection_ref); TensorFlow's Saver exports the .meta at every save, so
    later .meta files hold the change. Unchanged collections: the same bytes."""

    class Appends(tf.train.CheckpointSaverListener):
        def after_save(self, session, global_step_value):
            if global_step_value < 3:
                tf.get_collection_ref("saved_steps").append(f"step-{global_step_value}")

    graph = tf.Graph()
    with graph.as_default():
        weight = tf.get_variable("w", [3], initializer=tf.ones_initializer())
        saver = tf.train.Saver()
        graph.finalize()
        checkpoint_saver = periodic_actions.CheckpointSaver(
            periodic_actions.CheckpointPolicy(str(tmp_path), save_steps=1,
                                              listeners=[Appends()]))
        with tf.Session(graph=graph) as session:
            session.run(weight.initializer)
            for step in (1, 2, 3, 4):
                checkpoint_saver.save(session, saver, step)
    metas = {step: str(tmp_path / f"model.ckpt-{step}.meta") for step in (1, 2, 3, 4)}
    assert _meta_collection(metas[1], "saved_steps") is None
    assert _meta_collection(metas[2], "saved_steps") == ["step-1"]
    assert _meta_collection(metas[3], "saved_steps") == ["step-1", "step-2"]
    assert _meta_collection(metas[4], "saved_steps") == ["step-1", "step-2"]
    with open(metas[3], "rb") as third, open(metas[4], "rb") as fourth:
        assert third.read() == fourth.read()
