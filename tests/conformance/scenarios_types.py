"""Conformance: the Python types, dtypes, shapes and key order of what the API hands
back or passes in — evaluate()'s metrics, predict()'s items and batches, variables,
checkpoint and export paths, exporter and train_and_evaluate results, hook and
listener arguments, Predictor outputs.

Observations are typed (tests/conformance/typed.py), so these scenarios return the
values themselves; where a value differs from run to run (a session, a temp path)
they return its type, or the path relative to a known directory in its own type.
"""

import os

import numpy as np

from tests.conformance import programs
from tests.conformance.registry import outcome, scenario, scenarios
from tests.conformance.typed import type_name


def _typed_model_fn(env):
    """A regression model_fn whose predictions and metrics have several dtypes,
    named in an order that is not sorted."""
    tf = env.tf

    def model_fn(features, labels, mode):
        y = programs.linear(env, features)
        predictions = {
            "z_float": y, "a_int64": tf.cast(tf.round(y[:, 0]), tf.int64),
            "m_bytes": tf.strings.as_string(y[:, 0], precision=1),
            "b_bool": y[:, 0] > 0, "k_double": tf.cast(y[:, 0], tf.float64)}
        if mode == env.est.ModeKeys.PREDICT:
            return env.est.EstimatorSpec(mode, predictions=predictions)
        loss = tf.reduce_mean(tf.square(y - labels))
        train_op = programs.sgd_train_op(env, loss) if mode == env.est.ModeKeys.TRAIN \
            else None
        metrics = {
            "zz": tf.compat.v1.metrics.mean(y),
            "acc": tf.compat.v1.metrics.accuracy(labels, tf.round(y)),
            "count_int64": (tf.constant(4, tf.int64), tf.no_op()),
            "vector": (tf.constant([1.0, 2.0]), tf.no_op()),
            "auc": tf.compat.v1.metrics.auc(labels, tf.sigmoid(y)),
        }
        return env.est.EstimatorSpec(mode, predictions=predictions, loss=loss,
                                     train_op=train_op, eval_metric_ops=metrics)
    return model_fn


def _typed_estimator(env, steps=2):
    est = programs.estimator(env, _typed_model_fn(env))
    est.train(programs.input_fn(env), steps=steps)
    return est


@scenario("types/evaluate")
def evaluate_types(env):
    est = _typed_estimator(env)
    return outcome(lambda: est.evaluate(programs.input_fn(env, epochs=1)))


@scenario("types/predict/items")
def predict_item_types(env):
    est = _typed_estimator(env)
    return outcome(lambda: list(est.predict(
        programs.input_fn(env, epochs=1, labels=False))))


@scenario("types/predict/batches")
def predict_batch_types(env):
    est = _typed_estimator(env)
    return outcome(lambda: list(est.predict(
        programs.input_fn(env, epochs=1, labels=False), yield_single_examples=False)))


@scenario("types/predict/keys_order")
def predict_keys_order(env):
    """predict_keys in another order than the model_fn's predictions."""
    est = _typed_estimator(env)
    input_fn = programs.input_fn(env, epochs=1, labels=False)
    keys = ["m_bytes", "z_float", "a_int64"]
    return {"items": outcome(lambda: next(est.predict(input_fn, predict_keys=keys))),
            "batches": outcome(lambda: next(est.predict(
                input_fn, predict_keys=keys, yield_single_examples=False)))}


@scenario("types/predict/tensor")
def predict_tensor_types(env):
    """Predictions that are one tensor, not a dict: items and batches."""
    est = programs.estimator(env, programs.regression_model_fn(
        env, lambda mode, predictions, loss, train_op, labels: env.est.EstimatorSpec(
            mode, predictions=predictions, loss=loss, train_op=train_op)))
    est.train(programs.input_fn(env), steps=1)
    input_fn = programs.input_fn(env, epochs=1, labels=False)
    return {"items": outcome(lambda: list(est.predict(input_fn))),
            "batches": outcome(lambda: list(est.predict(
                input_fn, yield_single_examples=False)))}


@scenario("types/variables")
def variable_types(env):
    est = _typed_estimator(env)
    latest = est.latest_checkpoint()
    return {"names": est.get_variable_names(),
            "step": est.get_variable_value("global_step"),
            "w": est.get_variable_value("w"),
            "b": est.get_variable_value("b"),
            "latest_checkpoint": [type_name(type(latest)), os.path.basename(latest)],
            "model_dir": type_name(type(est.model_dir)),
            "params": est.params}


def _receiver_fn(env):
    tf = env.tf

    def receiver():
        x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
        return env.est.export.ServingInputReceiver({"x": x}, {"x": x})
    return receiver


def _relative(path, start):
    """`path` relative to `start`, timestamp dirs as <ts>, in `path`'s own type
    (str or bytes)."""
    text = os.path.relpath(path.decode() if isinstance(path, bytes) else path, start)
    text = "/".join("<ts>" if part.isdigit() else part for part in text.split("/"))
    return text.encode() if isinstance(path, bytes) else text


@scenario("types/export")
def export_types(env):
    est = _typed_estimator(env)
    receiver = _receiver_fn(env)
    base = env.tmpdir()
    path = est.export_saved_model(base, receiver)
    everything = env.tmpdir()
    all_modes = est.experimental_export_all_saved_models(
        everything, {env.est.ModeKeys.PREDICT: receiver})
    return {"export_saved_model": _relative(path, base),
            "all_modes": _relative(all_modes, everything)}


def _exporters(env):
    receiver = _receiver_fn(env)
    return [env.est.LatestExporter("latest", receiver),
            env.est.FinalExporter("final", receiver),
            env.est.BestExporter("best", receiver)]


@scenario("types/train_and_evaluate")
def train_and_evaluate_types(env):
    est = programs.estimator(env, _typed_model_fn(env), save_checkpoints_steps=2,
                             log_step_count_steps=None)
    result = env.est.train_and_evaluate(
        est, env.est.TrainSpec(programs.input_fn(env), max_steps=2),
        env.est.EvalSpec(programs.input_fn(env, epochs=1), steps=None,
                         exporters=_exporters(env), throttle_secs=0,
                         start_delay_secs=0))
    metrics, exports = result
    exports_seen = [None if p is None else _relative(p, est.model_dir) for p in exports]
    return {"result": type_name(type(result)), "length": len(result),
            "metrics": metrics, "exports": [type_name(type(exports)), exports_seen]}


@scenario("types/exporter_export")
def exporter_export_types(env):
    """Each exporter's export() called as a custom training loop calls it."""
    est = _typed_estimator(env)
    checkpoint = est.latest_checkpoint()
    metrics = est.evaluate(programs.input_fn(env, epochs=1))
    seen = {}
    for exporter in _exporters(env):
        base = env.tmpdir()
        path = exporter.export(est, base, checkpoint, metrics, is_the_final_export=True)
        seen[exporter.name] = None if path is None else _relative(path, base)
    return seen


def _kinds(value):
    """The type names of a fetch structure, nested as it is."""
    if isinstance(value, (list, tuple)):
        return [type_name(type(value)), [_kinds(v) for v in value]]
    if isinstance(value, dict):
        return [type_name(type(value)), {k: _kinds(v) for k, v in value.items()}]
    return type_name(type(value))


def _type_hook(env, log):
    """A hook recording the types of what each of its methods is given (first call
    of each), fetching the global step as a dict holding a tuple and a list."""
    tf = env.tf

    def once(method, values):
        if not any(entry[0] == method for entry in log):
            log.append([method, values])

    class TypeHook(tf.compat.v1.train.SessionRunHook):
        def begin(self):
            self._step = tf.compat.v1.train.get_global_step()

        def after_create_session(self, session, coord):
            once("after_create_session", [type_name(type(session)),
                                          type_name(type(coord))])

        def before_run(self, run_context):
            once("before_run", {
                "context": type_name(type(run_context)),
                "original_args": type_name(type(run_context.original_args)),
                "fetches": _kinds(run_context.original_args.fetches),
                "feed_dict": type_name(type(run_context.original_args.feed_dict)),
                "options": type_name(type(run_context.original_args.options)),
                "stop_requested": run_context.stop_requested})
            return tf.compat.v1.train.SessionRunArgs(
                {"step": self._step, "pair": (self._step, self._step),
                 "one": [self._step]})

        def after_run(self, run_context, run_values):
            once("after_run", {
                "values": type_name(type(run_values)),
                "results": run_values.results,
                "options": type_name(type(run_values.options)),
                "run_metadata": type_name(type(run_values.run_metadata))})

        def end(self, session):
            once("end", type_name(type(session)))
    return TypeHook()


def _listener(env, log):
    tf = env.tf

    class TypeListener(tf.compat.v1.train.CheckpointSaverListener):
        def before_save(self, session, global_step_value):
            log.append(["before_save", global_step_value])

        def after_save(self, session, global_step_value):
            log.append(["after_save", global_step_value])

        def end(self, session, global_step_value):
            log.append(["end", global_step_value])
    return TypeListener()


@scenarios("types/hook_arguments", {
    "train": "train", "evaluate": "evaluate", "predict": "predict",
    "listener": "listener"})
def hook_argument_types(env, case):
    """What train(), evaluate() or predict() pass to a hook, or train() to a
    CheckpointSaverListener."""
    est = programs.estimator(env, _typed_model_fn(env), save_checkpoints_steps=2)
    seen = []
    hooks = [_type_hook(env, seen)]
    est.train(programs.input_fn(env), steps=2,
              hooks=hooks if case == "train" else None,
              saving_listeners=[_listener(env, seen)] if case == "listener" else None)
    if case == "evaluate":
        est.evaluate(programs.input_fn(env, epochs=1), hooks=hooks)
    if case == "predict":
        next(est.predict(programs.input_fn(env, epochs=1, labels=False), hooks=hooks))
    return seen


def _oracle_predictor(env, export_dir):
    """What TF 1's tf.contrib.predictor.from_saved_model gave: a session on the
    loaded SavedModel, called with a dict and returning session.run's dict of the
    serving signature's outputs."""
    tf = env.tf
    graph = tf.Graph()
    session = tf.compat.v1.Session(graph=graph)
    with graph.as_default():
        meta = tf.compat.v1.saved_model.loader.load(session, ["serve"], export_dir)
    signature = meta.signature_def["serving_default"]
    feeds = {k: graph.get_tensor_by_name(v.name) for k, v in signature.inputs.items()}
    fetches = {k: graph.get_tensor_by_name(v.name) for k, v in signature.outputs.items()}
    return lambda inputs: session.run(
        fetches, feed_dict={feeds[k]: v for k, v in inputs.items()})


@scenario("types/predictor")
def predictor_types(env):
    """Predictor outputs (tf.contrib.predictor's on the oracle's side) for a
    SavedModel export_saved_model wrote: sorted keys (a protobuf map's order is
    not defined), each value's type, dtype and shape."""
    est = _typed_estimator(env)
    receiver = _receiver_fn(env)
    path = est.export_saved_model(env.tmpdir(), receiver)
    path = path.decode() if isinstance(path, bytes) else path
    if env.flavor == "oracle":
        predictor = _oracle_predictor(env, path)
    else:
        from estimator_lite import predictor as predictor_lib  # noqa: PLC0415
        predictor = predictor_lib.from_saved_model(path)
    out = predictor({"x": programs.X[:2]})
    return {"type": type_name(type(out)), "outputs": dict(sorted(out.items())),
            "scalar_input": type_name(type(predictor({"x": np.zeros((1, 2), np.float32)})))}
