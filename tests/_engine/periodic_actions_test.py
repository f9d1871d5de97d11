"""The training loop's periodic actions: checkpoint policy and saver, progress and ETA."""

import json
import types

import pytest

from estimator_lite._engine import periodic_actions
from estimator_lite._tf import tf
from tests.oracle import driver_path, load_driver, requires_oracle, run_oracle_driver


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


_DRIVER = driver_path("checkpoint_files_driver.py")
# The collection keys of the last .meta of tf.estimator 2.15's runs (the oracle's,
# pinned so the test runs without it); a canned estimator's train op is in none.
_MODEL_FN_KEYS = ["global_step", "global_step_read_op_cache", "init_op", "iterators",
                  "local_init_op", "losses", "ready_for_local_init_op", "ready_op",
                  "savers", "summaries", "summary_op", "train_op", "trainable_variables",
                  "variables"]
_ORACLE_KEYS = {"plain": _MODEL_FN_KEYS, "early_stopping": _MODEL_FN_KEYS,
                "linear": [key for key in _MODEL_FN_KEYS if key != "train_op"]}


def _lite_checkpoint_files(work_dir):
    import estimator_lite  # noqa: PLC0415 - the package under test, as a `lib`
    from estimator_lite import early_stopping  # noqa: PLC0415

    driver = load_driver(_DRIVER, "checkpoint_files_driver")
    lib = types.SimpleNamespace(estimator=estimator_lite, early_stopping=early_stopping)
    # Through JSON, as the oracle's results come (integer keys become strings).
    return json.loads(json.dumps(driver.run(lib, str(work_dir), "meta")))


def _kinds(collections):
    return {key: value[0] for key, value in collections.items()}


# TF 2's tf.cond (cond_v2) adds no `cond_context` collection; TF 1.15's control flow
# does, where the canned heads use one: the keys are TF 2.15's.
@pytest.mark.tf2
def test_meta_files_have_tf_estimator_collection_keys(tmp_path):
    """Besides the model's collections, a training run's .meta holds the global
    step's cached read (`global_step/add:0`), the local init op and the loss, as
    tf.estimator's; nothing of estimator_lite's own (the early-stopping flag)."""
    lite = _lite_checkpoint_files(tmp_path)
    for name, keys in _ORACLE_KEYS.items():
        assert sorted(lite["collections"][name]) == keys, name
    plain = lite["collections"]["plain"]
    assert plain["global_step_read_op_cache"] == ["node_list", ["global_step/add:0"]]
    assert plain["losses"] == ["node_list", ["Mean:0"]]
    assert plain["local_init_op"][0] == "node_list"
    assert len(plain["local_init_op"][1]) == 1
    assert lite["listener_collections"] == {
        "0": None, "2": ["step-0"], "4": ["step-0", "step-2"],
        "6": ["step-0", "step-2", "step-4"]}


@pytest.mark.tf2
@requires_oracle
def test_meta_files_match_tf_estimator(tmp_path):
    """On the oracle: the same collection keys and kinds; a listener's change to a
    collection reaches the same .meta files. Op names of init_op, local_init_op and
    summary_op, and a canned head's losses, are not compared: they differ."""
    (tmp_path / "oracle").mkdir()
    oracle = run_oracle_driver(_DRIVER, tmp_path / "oracle", "meta")["results"]
    lite = _lite_checkpoint_files(tmp_path / "lite")
    assert lite["listener_collections"] == oracle["listener_collections"]
    for name, collections in oracle["collections"].items():
        assert sorted(collections) == _ORACLE_KEYS[name], name
        assert _kinds(lite["collections"][name]) == _kinds(collections), name
        for key in ("global_step_read_op_cache", "iterators", "ready_op",
                    "ready_for_local_init_op", "summaries", "train_op"):
            assert lite["collections"][name].get(key) == collections.get(key), (name, key)
