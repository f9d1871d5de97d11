"""What a training run leaves in its checkpoints: `.meta` collections, the
early-stopping flag, and how a resumed run treats that flag.

Run as a script by the TF 2.15 interpreter (ESTIMATOR_LITE_TF215_PYTHON) it uses
tf.estimator; tests/_engine/periodic_actions_test.py (part `meta`) and
tests/early_stopping_test.py (part `early_stopping`) import it and call `run` with
estimator_lite. Prints one JSON line.

Usage: checkpoint_files_driver.py WORK_DIR meta|early_stopping
"""

import json
import os
import shutil
import sys
import types

import numpy as np
import tensorflow as tf

COLLECTION = "saved_steps"
STOP = "signal_early_stopping/STOP"


def model_fn(features, labels, mode):
    """Linear regression on 'x' (zero start: both libraries train the same)."""
    w = tf.compat.v1.get_variable("w", [4, 1], initializer=tf.compat.v1.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return types.SimpleNamespace(loss=loss, train_op=train_op)


def input_fn():
    x = np.random.RandomState(0).randn(64, 4).astype(np.float32)
    y = x @ np.array([[1.0], [2.0], [-1.0], [0.5]], np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(16)


def meta_collections(path):
    """{collection key: [kind, values]} of a .meta file; node names and strings
    are listed, serialized protos only counted."""
    meta_graph = tf.compat.v1.MetaGraphDef()
    with open(path, "rb") as f:
        meta_graph.ParseFromString(f.read())
    result = {}
    for key, collection in meta_graph.collection_def.items():
        kind = collection.WhichOneof("kind")
        values = list(getattr(collection, kind).value) if kind else []
        if kind == "node_list":
            result[key] = [kind, values]
        elif kind == "bytes_list" and key == COLLECTION:
            result[key] = [kind, [v.decode() for v in values]]
        else:
            result[key] = [kind, len(values)]
    return result


def _metas(model_dir):
    """{step: .meta path} of the checkpoints kept in model_dir."""
    return {int(name[len("model.ckpt-"):-len(".meta")]): os.path.join(model_dir, name)
            for name in os.listdir(model_dir)
            if name.startswith("model.ckpt-") and name.endswith(".meta")}


def _estimator(lib, model_dir, **config):
    def spec_fn(features, labels, mode):
        parts = model_fn(features, labels, mode)
        return lib.estimator.EstimatorSpec(mode, loss=parts.loss, train_op=parts.train_op)
    config.setdefault("save_checkpoints_steps", 10)
    return lib.estimator.Estimator(spec_fn, config=lib.estimator.RunConfig(
        model_dir=model_dir, **config))


def listener_collections(lib, work_dir):
    """(a) A listener appends to a collection after each save: {step: its values
    in that step's .meta, or None}."""

    class Appends(tf.compat.v1.train.CheckpointSaverListener):
        def after_save(self, session, global_step_value):
            # The graph is finalized: only the collection's list can change.
            tf.compat.v1.get_collection_ref(COLLECTION).append(f"step-{global_step_value}")

    model_dir = os.path.join(work_dir, "listener")
    estimator = _estimator(lib, model_dir, save_checkpoints_steps=2)
    estimator.train(input_fn, max_steps=6, saving_listeners=[Appends()])
    return {step: meta_collections(path).get(COLLECTION, [None, None])[1]
            for step, path in sorted(_metas(model_dir).items())}


def collections_of_last_meta(lib, work_dir):
    """(b) The collections of the last .meta of a model_fn run, with and without
    an early-stopping hook, and of a canned estimator's run."""
    result = {}
    for name in ("plain", "early_stopping", "linear"):
        model_dir = os.path.join(work_dir, f"keys_{name}")
        hooks = []
        if name == "linear":
            estimator = lib.estimator.LinearRegressor(
                [tf.feature_column.numeric_column("x", [4])], model_dir=model_dir,
                config=lib.estimator.RunConfig(save_checkpoints_steps=10))
        else:
            estimator = _estimator(lib, model_dir)
        if name == "early_stopping":
            hooks = [lib.estimator.experimental.make_early_stopping_hook(
                estimator, lambda: False, run_every_secs=None, run_every_steps=2)]
        estimator.train(input_fn, max_steps=6, hooks=hooks)
        metas = _metas(model_dir)
        result[name] = meta_collections(metas[max(metas)])
    return result


def early_stopping(lib, work_dir):
    """(c) The checkpoint after an early stop, and resumed runs from it."""
    model_dir = os.path.join(work_dir, "stopped")
    estimator = _estimator(lib, model_dir)
    calls = []
    hook = lib.estimator.experimental.make_early_stopping_hook(
        estimator, lambda: calls.append(1) or len(calls) >= 3, run_every_secs=None,
        run_every_steps=5)
    estimator.train(input_fn, hooks=[hook], max_steps=1000)
    reader = tf.train.load_checkpoint(estimator.latest_checkpoint())
    result = {
        "stopped_at": int(estimator.get_variable_value("global_step")),
        "variables": {name: [reader.get_variable_to_dtype_map()[name].name, shape]
                      for name, shape in reader.get_variable_to_shape_map().items()},
        "stop": bool(estimator.get_variable_value(STOP)),
    }

    def resume(name, make_hooks, first_max_steps=None):
        resumed_dir = os.path.join(work_dir, name)
        shutil.copytree(model_dir, resumed_dir)
        resumed = _estimator(lib, resumed_dir)
        try:
            if first_max_steps:  # a run without the hook first
                resumed.train(input_fn, max_steps=first_max_steps)
            resumed.train(input_fn, hooks=make_hooks(resumed), max_steps=30)
        except Exception as e:  # noqa: BLE001 - reported as the result
            return type(e).__name__
        names = resumed.get_variable_names()
        return [int(resumed.get_variable_value("global_step")),
                bool(resumed.get_variable_value(STOP)) if STOP in names else None]

    never = lambda: False  # noqa: E731 - a rule that never stops
    result["resumed"] = {
        "without_hook": resume("without_hook", lambda e: []),
        "chief_hook": resume("chief_hook", lambda e: [
            lib.estimator.experimental.make_early_stopping_hook(
                e, never, run_every_secs=None, run_every_steps=5)]),
        # What a non-chief worker runs (it only reads the flag).
        "worker_hook": resume("worker_hook",
                              lambda e: [lib.early_stopping._CheckForStoppingHook()]),
        "hook_after_a_run_without": resume(
            "hook_after_a_run_without", lambda e: [
                lib.estimator.experimental.make_early_stopping_hook(
                    e, never, run_every_secs=None, run_every_steps=5)],
            first_max_steps=20),
    }
    return result


def run(lib, work_dir, part):
    """One part's results; `lib` has `estimator` (the tf.estimator namespace) and
    `early_stopping` (the module holding the early-stopping hooks)."""
    if part == "meta":
        return {"listener_collections": listener_collections(lib, work_dir),
                "collections": collections_of_last_meta(lib, work_dir)}
    return early_stopping(lib, work_dir)


def main(work_dir, part):
    from tensorflow_estimator.python.estimator import (  # noqa: PLC0415 - the oracle's
        early_stopping as early_stopping_module,
    )

    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    lib = types.SimpleNamespace(estimator=tf.estimator,
                                early_stopping=early_stopping_module)
    print(json.dumps({"tf_version": tf.__version__,
                      "results": run(lib, work_dir, part)}))


if __name__ == "__main__":
    main(*sys.argv[1:3])
