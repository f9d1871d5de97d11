"""Conformance: when SessionRunHooks and CheckpointSaverListeners are called in
train(), evaluate() and predict(), and which checkpoints are on disk then."""

import glob
import os

from tests.conformance import programs
from tests.conformance.registry import (
    error_names,
    files_under,
    outcome,
    scenario,
    scenarios,
)


def _recorder(env, log, tag, model_dir, stop_at=None, raise_at=None, fetch_step=True,
              read_step=True):
    """A hook logging each call as [tag, method, (global step,) checkpoints on disk].

    before_run fetches the global step when `fetch_step` (a fetch makes the step a
    hooked run); after_run logs the global step read after the step when
    `read_step` (a fetch in the same run as the train op may see it before or after
    the increment), else the run's results. It requests a stop after the step that
    reaches `stop_at` and raises in the after_run of the step that reaches `raise_at`.
    """
    tf = env.tf

    def on_disk():
        return programs.checkpoint_steps(env, model_dir) if model_dir else None

    class Recorder(tf.compat.v1.train.SessionRunHook):
        def begin(self):
            log.append([tag, "begin"])
            self._step = tf.compat.v1.train.get_global_step()

        def after_create_session(self, session, coord):
            log.append([tag, "after_create_session", on_disk()])

        def before_run(self, run_context):
            log.append([tag, "before_run"])
            if fetch_step:
                return tf.compat.v1.train.SessionRunArgs(self._step)
            return None

        def after_run(self, run_context, run_values):
            if read_step:
                step = int(run_context.session.run(self._step))
            else:
                step = run_values.results
            log.append([tag, "after_run", step, on_disk()])
            if raise_at is not None and step == raise_at:
                raise RuntimeError(f"{tag} fails at step {step}")
            if stop_at is not None and step is not None and step >= stop_at:
                run_context.request_stop()

        def end(self, session):
            log.append([tag, "end", on_disk()])
    return Recorder()


def _listener(env, log, model_dir, stop_at=None):
    """A CheckpointSaverListener logging its calls; after_save returns True once
    the saved step reaches `stop_at`."""
    tf = env.tf

    class Listener(tf.compat.v1.train.CheckpointSaverListener):
        def begin(self):
            log.append(["listener", "begin"])

        def before_save(self, session, global_step_value):
            log.append(["listener", "before_save", int(global_step_value),
                        programs.checkpoint_steps(env, model_dir)])

        def after_save(self, session, global_step_value):
            log.append(["listener", "after_save", int(global_step_value),
                        programs.checkpoint_steps(env, model_dir)])
            return stop_at is not None and global_step_value >= stop_at

        def end(self, session, global_step_value):
            log.append(["listener", "end", int(global_step_value),
                        programs.checkpoint_steps(env, model_dir)])
    return Listener()


def _estimator(env, model_fn=None, **config):
    config.setdefault("log_step_count_steps", None)
    return programs.estimator(env, model_fn or programs.regression_model_fn(env), **config)


def _train(env, est, log, *, steps=None, max_steps=None, hook=None, listener=None,
           input_fn=None):
    """est.train with a recording hook (and listener): its outcome, the log and the
    checkpoints after."""
    hooks = [hook or _recorder(env, log, "user", est.model_dir)]
    listeners = [listener] if listener is not None else None
    result = outcome(lambda: est.train(input_fn or programs.input_fn(env), steps=steps,
                                       max_steps=max_steps, hooks=hooks,
                                       saving_listeners=listeners) is est)
    return {"result": result, "log": list(log),
            "checkpoints": programs.checkpoint_steps(env, est.model_dir)}


# ---------------------------------------------------------------------------
# train(): checkpoint schedules and step limits.

_SCHEDULES = {
    "steps_1": {"save_checkpoints_steps": 1},
    "steps_2": {"save_checkpoints_steps": 2},
    "steps_3": {"save_checkpoints_steps": 3},
    "secs_large": {"save_checkpoints_steps": None, "save_checkpoints_secs": 10000},
    "none": {"save_checkpoints_steps": None, "save_checkpoints_secs": None},
    "keep_max_2": {"save_checkpoints_steps": 1, "keep_checkpoint_max": 2},
}


@scenarios("hooks/train/max_steps", _SCHEDULES)
def train_max_steps(env, case):
    est = _estimator(env, **case)
    log = []
    listener = None if case.get("save_checkpoints_secs", 1) is None and \
        case.get("save_checkpoints_steps") is None else _listener(env, log, est.model_dir)
    return _train(env, est, log, max_steps=5, listener=listener)


@scenarios("hooks/train/steps", _SCHEDULES)
def train_steps(env, case):
    est = _estimator(env, **case)
    log = []
    listener = None if case.get("save_checkpoints_secs", 1) is None and \
        case.get("save_checkpoints_steps") is None else _listener(env, log, est.model_dir)
    return _train(env, est, log, steps=4, listener=listener)


@scenario("hooks/train/listener_without_checkpoints")
def listener_without_checkpoints(env):
    est = _estimator(env, save_checkpoints_steps=None, save_checkpoints_secs=None)
    log = []
    return _train(env, est, log, max_steps=2, listener=_listener(env, log, est.model_dir))


_RESUMES = {
    "max_steps_reached": ({"max_steps": 3}, {"max_steps": 3}),
    "max_steps_below": ({"max_steps": 3}, {"max_steps": 2}),
    "max_steps_further": ({"max_steps": 3}, {"max_steps": 5}),
    "steps_after_max_steps": ({"max_steps": 3}, {"steps": 2}),
    "steps_twice": ({"steps": 2}, {"steps": 2}),
}


@scenarios("hooks/train/resume", _RESUMES)
def train_resume(env, case):
    """Two train() calls on one estimator (save every 2 steps): the second call's
    hook and listener calls."""
    first, second = case
    est = _estimator(env, save_checkpoints_steps=2)
    est.train(programs.input_fn(env), **first)
    log = []
    return _train(env, est, log, listener=_listener(env, log, est.model_dir), **second)


@scenarios("hooks/train/request_stop", {"at_1": 1, "at_2": 2, "at_3": 3, "at_5": 5})
def train_request_stop(env, case):
    """A hook requests a stop after step `case` (save every 2 steps, max 5)."""
    est = _estimator(env, save_checkpoints_steps=2)
    log = []
    hook = _recorder(env, log, "user", est.model_dir, stop_at=case)
    return _train(env, est, log, max_steps=5, hook=hook,
                  listener=_listener(env, log, est.model_dir))


@scenarios("hooks/train/listener_stops", {"at_2": (1, 2), "at_0": (1, 0),
                                          "at_4_every_2": (2, 4)})
def train_listener_stops(env, case):
    """A listener's after_save returns True once the step reaches `stop_at`."""
    every, stop_at = case
    est = _estimator(env, save_checkpoints_steps=every)
    log = []
    return _train(env, est, log, max_steps=6,
                  listener=_listener(env, log, est.model_dir, stop_at=stop_at))


@scenarios("hooks/train/after_run_raises", {"at_1": 1, "at_2": 2, "at_3": 3})
def train_after_run_raises(env, case):
    """A hook raises in after_run at step `case` (save every 2 steps)."""
    est = _estimator(env, save_checkpoints_steps=2)
    log = []
    hook = _recorder(env, log, "user", est.model_dir, raise_at=case)
    return _train(env, est, log, max_steps=5, hook=hook,
                  listener=_listener(env, log, est.model_dir))


def _raising_hook(env, log, method):
    tf = env.tf

    class Raising(tf.compat.v1.train.SessionRunHook):
        def begin(self):
            log.append(["raising", "begin"])
            if method == "begin":
                raise ValueError("begin fails")

        def after_create_session(self, session, coord):
            log.append(["raising", "after_create_session"])
            if method == "after_create_session":
                raise ValueError("after_create_session fails")

        def before_run(self, run_context):
            log.append(["raising", "before_run"])
            if method == "before_run":
                raise ValueError("before_run fails")

        def end(self, session):
            log.append(["raising", "end"])
            if method == "end":
                raise ValueError("end fails")
    return Raising()


@scenarios("hooks/train/raises_in", {m: m for m in ("begin", "after_create_session",
                                                   "before_run", "end")})
def train_raises_in(env, case):
    """A hook raising in `case`: the error, the other hook's calls, checkpoints."""
    est = _estimator(env, save_checkpoints_steps=2)
    log = []
    hooks = [_raising_hook(env, log, case), _recorder(env, log, "user", est.model_dir)]
    result = outcome(lambda: est.train(programs.input_fn(env), max_steps=3, hooks=hooks))
    return {"result": result, "log": log,
            "checkpoints": programs.checkpoint_steps(env, est.model_dir)}


def _nan_model_fn(env, nan_from_step):
    """Regression whose loss is NaN from global step `nan_from_step` on."""
    tf = env.tf

    def model_fn(features, labels, mode):
        predictions = programs.linear(env, features)
        loss = tf.reduce_mean(tf.square(predictions - labels))
        step = tf.compat.v1.train.get_or_create_global_step()
        loss = tf.where(step >= nan_from_step, tf.constant(float("nan")), loss)
        train_op = (programs.sgd_train_op(env, loss, 0.0)
                    if mode == env.est.ModeKeys.TRAIN else None)
        return env.est.EstimatorSpec(mode, predictions={"y": predictions}, loss=loss,
                                     train_op=train_op)
    return model_fn


@scenarios("hooks/train/nan_loss", {"from_0": 0, "from_2": 2, "from_3": 3})
def train_nan_loss(env, case):
    """NaN loss from step `case` (save every 2 steps): the error, the calls, the
    checkpoints and the global step on disk."""
    est = _estimator(env, _nan_model_fn(env, case), save_checkpoints_steps=2)
    log = []
    hooks = [_recorder(env, log, "user", est.model_dir)]
    error = None
    try:
        est.train(programs.input_fn(env), max_steps=5, hooks=hooks,
                  saving_listeners=[_listener(env, log, est.model_dir)])
    except Exception as e:  # noqa: BLE001 - the error's class is the observation
        error = error_names(e)
    return {"error": error, "log": log,
            "checkpoints": programs.checkpoint_steps(env, est.model_dir),
            "is_runtime_error": error is not None and "RuntimeError" in error}


@scenario("hooks/train/nan_loss_class")
def nan_loss_class(env):
    """The public NanLossDuringTrainingError class and what it derives from."""
    cls = env.est.NanLossDuringTrainingError if hasattr(
        env.est, "NanLossDuringTrainingError") else None
    v1 = getattr(env.v1, "NanLossDuringTrainingError", None)
    return {"public": cls is not None, "v1": v1 is not None,
            "runtime_error": cls is not None and issubclass(cls, RuntimeError)}


# ---------------------------------------------------------------------------
# train(): order among spec hooks, user hooks and the checkpoint listener.

def _spec_hooks_model_fn(env, log, model_dir, chief=True, worker=True, eval_hooks=False,
                         predict_hooks=False):
    def make_spec(mode, predictions, loss, train_op, labels):
        kwargs = {}
        if mode == env.est.ModeKeys.TRAIN:
            if chief:
                kwargs["training_chief_hooks"] = [_recorder(env, log, "chief", model_dir)]
            if worker:
                kwargs["training_hooks"] = [_recorder(env, log, "training", model_dir)]
        if mode == env.est.ModeKeys.EVAL and eval_hooks:
            kwargs["evaluation_hooks"] = [_recorder(env, log, "spec_eval", None)]
        if mode == env.est.ModeKeys.PREDICT and predict_hooks:
            kwargs["prediction_hooks"] = [_recorder(env, log, "spec_predict", None,
                                                    fetch_step=False, read_step=False)]
        return env.est.EstimatorSpec(mode, predictions={"y": predictions}, loss=loss,
                                     train_op=train_op, **kwargs)
    return programs.regression_model_fn(env, make_spec)


_ORDERS = {
    "all": {"chief": True, "worker": True, "user": True, "listener": True},
    "chief_and_user": {"chief": True, "worker": False, "user": True, "listener": False},
    "training_and_user": {"chief": False, "worker": True, "user": True, "listener": False},
    "spec_only": {"chief": True, "worker": True, "user": False, "listener": True},
    "two_user_hooks": {"chief": False, "worker": False, "user": 2, "listener": True},
}


@scenarios("hooks/train/order", _ORDERS)
def train_order(env, case):
    """Every hook's calls in order (save every 2 steps, max 3)."""
    log = []
    directory = env.tmpdir()
    est = env.est.Estimator(
        _spec_hooks_model_fn(env, log, directory, chief=case["chief"],
                             worker=case["worker"]),
        model_dir=directory, config=env.est.RunConfig(
            tf_random_seed=7, save_checkpoints_steps=2, log_step_count_steps=None))
    hooks = [_recorder(env, log, f"user{i}", directory)
             for i in range(int(case["user"]))]
    listeners = [_listener(env, log, directory)] if case["listener"] else None
    result = outcome(lambda: est.train(programs.input_fn(env), max_steps=3, hooks=hooks,
                                       saving_listeners=listeners) is est)
    return {"result": result, "log": log}


@scenario("hooks/train/hook_without_fetches")
def hook_without_fetches(env):
    """A hook whose before_run returns None: after_run sees results None."""
    est = _estimator(env, save_checkpoints_steps=2)
    log = []
    hook = _recorder(env, log, "user", est.model_dir, fetch_step=False, read_step=False)
    return _train(env, est, log, max_steps=3, hook=hook)


@scenario("hooks/train/input_ends")
def train_input_ends(env):
    """The input ends after 2 batches: the calls and the final checkpoint."""
    est = _estimator(env, save_checkpoints_steps=3)
    log = []
    return _train(env, est, log, max_steps=10, listener=_listener(env, log, est.model_dir),
                  input_fn=programs.input_fn(env, epochs=1))


@scenario("hooks/train/stop_at_step_hook")
def stop_at_step_hook(env):
    """The public StopAtStepHook given as a user hook with max_steps larger."""
    est = _estimator(env, save_checkpoints_steps=2)
    log = []
    hooks = [env.tf.compat.v1.train.StopAtStepHook(last_step=3),
             _recorder(env, log, "user", est.model_dir)]
    est.train(programs.input_fn(env), max_steps=6, hooks=hooks)
    return {"log": log, "checkpoints": programs.checkpoint_steps(env, est.model_dir)}


@scenario("hooks/train/hook_adds_variable_in_begin")
def hook_adds_variable(env):
    """A variable created in a hook's begin() is checkpointed."""
    tf = env.tf

    class Adds(tf.compat.v1.train.SessionRunHook):
        def begin(self):
            self.counter = tf.compat.v1.get_variable(
                "hook_counter", [], initializer=tf.compat.v1.zeros_initializer())
            self.add = tf.compat.v1.assign_add(self.counter, 1.0)

        def before_run(self, run_context):
            return tf.compat.v1.train.SessionRunArgs(self.add)
    est = _estimator(env, save_checkpoints_steps=2)
    est.train(programs.input_fn(env), max_steps=3, hooks=[Adds()])
    return {"variables": sorted(est.get_variable_names()),
            "counter": outcome(lambda: est.get_variable_value("hook_counter"))}


# ---------------------------------------------------------------------------
# Summaries written by train().

def _events(env, path):
    """{tag: [steps]} of the summaries in the event files directly under `path`,
    and whether a graph / meta graph was written."""
    tags = {}
    graph = meta = False
    for events in sorted(glob.glob(os.path.join(path, "events.out.tfevents.*"))):
        for event in env.tf.compat.v1.train.summary_iterator(events):
            graph = graph or bool(event.graph_def)
            meta = meta or bool(event.meta_graph_def)
            for value in event.summary.value:
                tags.setdefault(value.tag, []).append(event.step)
    return {"tags": {t: sorted(s) for t, s in tags.items() if t == "loss"},
            "tag_names": sorted(tags), "graph": graph, "meta_graph": meta}


_SUMMARY_CONFIGS = {
    "every_step": {"save_summary_steps": 1},
    "every_2": {"save_summary_steps": 2},
    "off_none": {"save_summary_steps": None},
    "off_0": {"save_summary_steps": 0},
    "with_step_log": {"save_summary_steps": 2, "log_step_count_steps": 2},
}


@scenarios("hooks/summaries", _SUMMARY_CONFIGS)
def train_summaries(env, case):
    est = _estimator(env, save_checkpoints_steps=2, **case)
    est.train(programs.input_fn(env), max_steps=5)
    return {"events": _events(env, est.model_dir),
            "files": [f for f in files_under(est.model_dir) if "ckpt" not in f]}


@scenario("hooks/summaries/user_summary")
def user_summary(env):
    """A tf.compat.v1.summary.scalar in the model_fn is written with the loss."""
    tf = env.tf

    def make_spec(mode, predictions, loss, train_op, labels):
        if loss is not None:
            tf.compat.v1.summary.scalar("mine", loss * 2)
        return env.est.EstimatorSpec(mode, predictions={"y": predictions}, loss=loss,
                                     train_op=train_op)
    est = _estimator(env, programs.regression_model_fn(env, make_spec),
                     save_checkpoints_steps=2, save_summary_steps=2)
    est.train(programs.input_fn(env), max_steps=4)
    ev = _events(env, est.model_dir)
    steps = {}
    for events in glob.glob(os.path.join(est.model_dir, "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(events):
            for value in event.summary.value:
                if value.tag == "mine":
                    steps.setdefault("mine", []).append(event.step)
    return {"events": ev, "mine": sorted(steps.get("mine", []))}


# ---------------------------------------------------------------------------
# evaluate() hooks.

_EVALUATIONS = {
    "steps_1": {"steps": 1},
    "steps_2": {"steps": 2},
    "steps_none_input_ends": {"steps": None, "epochs": 1},
    "steps_more_than_input": {"steps": 5, "epochs": 1},
    "batch_3_input_ends": {"steps": None, "epochs": 1, "batch_size": 3},
}


def _trained(env, log, **kwargs):
    directory = env.tmpdir()
    est = env.est.Estimator(
        _spec_hooks_model_fn(env, log, directory, chief=False, worker=False, **kwargs),
        model_dir=directory, config=env.est.RunConfig(
            tf_random_seed=7, save_checkpoints_steps=2, log_step_count_steps=None))
    est.train(programs.input_fn(env), max_steps=2)
    return est


@scenarios("hooks/evaluate", _EVALUATIONS)
def evaluate_hooks(env, case):
    """A user hook and a spec evaluation hook through evaluate()."""
    log = []
    est = _trained(env, log, eval_hooks=True)
    del log[:]
    hooks = [_recorder(env, log, "user", est.model_dir)]
    result = outcome(lambda: est.evaluate(
        programs.input_fn(env, epochs=case.get("epochs"),
                          batch_size=case.get("batch_size", 2)),
        steps=case["steps"], hooks=hooks))
    return {"result": result, "log": log}


@scenario("hooks/evaluate/request_stop")
def evaluate_request_stop(env):
    """A hook requesting a stop after the first batch ends the evaluation."""
    log = []
    est = _trained(env, log)
    del log[:]
    tf = env.tf

    class StopAfterOne(tf.compat.v1.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            log.append(["stopper", "after_run"])
            run_context.request_stop()
    hooks = [StopAfterOne(), _recorder(env, log, "user", None)]
    result = outcome(lambda: est.evaluate(programs.input_fn(env), steps=3, hooks=hooks))
    return {"result": result, "log": log}


@scenario("hooks/evaluate/raises")
def evaluate_raises(env):
    log = []
    est = _trained(env, log)
    del log[:]
    hooks = [_recorder(env, log, "user", None, raise_at=2)]
    result = outcome(lambda: est.evaluate(programs.input_fn(env), steps=3, hooks=hooks))
    return {"result": result, "log": log,
            "eval_files": files_under(os.path.join(est.model_dir, "eval"))
            if os.path.isdir(os.path.join(est.model_dir, "eval")) else None}


@scenario("hooks/evaluate/not_hooks")
def evaluate_not_hooks(env):
    log = []
    est = _trained(env, log)
    return outcome(lambda: est.evaluate(programs.input_fn(env), steps=1, hooks=[1]))


def _eval_step_model_fn(env):
    """The regression model_fn; in EVAL its scaffold has a local_init_op of its own
    (built in the model_fn, before the Estimator's locals exist)."""
    tf = env.tf

    def make_spec(mode, predictions, loss, train_op, labels):
        scaffold = (tf.compat.v1.train.Scaffold(
            local_init_op=tf.compat.v1.train.Scaffold.default_local_init_op())
            if mode == env.est.ModeKeys.EVAL else None)
        return env.est.EstimatorSpec(mode, predictions={"y": predictions}, loss=loss,
                                     train_op=train_op, scaffold=scaffold)
    return programs.regression_model_fn(env, make_spec)


@scenarios("hooks/evaluate/eval_step", {
    "steps_none": {"steps": None}, "steps_2": {"steps": 2},
    "own_local_init_op": {"steps": None, "own_local_init_op": True}})
def evaluate_eval_step(env, case):
    """The eval step a hook finds (GraphKeys.EVAL_STEP) and what session.run of the
    run's original fetches gives at each batch."""
    tf = env.tf
    v1 = tf.compat.v1
    log = []
    model_fn = (_eval_step_model_fn(env) if case.get("own_local_init_op")
                else programs.regression_model_fn(env))
    est = programs.estimator(env, model_fn, log_step_count_steps=None)
    est.train(programs.input_fn(env), max_steps=2)

    class EvalStepHook(v1.train.SessionRunHook):
        def begin(self):
            self._steps = v1.get_collection(v1.GraphKeys.EVAL_STEP)
            local = v1.local_variables()
            log.append(["begin", [[v.op.name, v.dtype.name, v.shape.as_list(),
                                   v in local, v in v1.trainable_variables()]
                                  for v in self._steps]])

        def after_create_session(self, session, coord):
            log.append(["after_create_session", session.run(self._steps)])

        def before_run(self, run_context):
            return v1.train.SessionRunArgs(run_context.original_args.fetches)

        def after_run(self, run_context, run_values):
            log.append(["after_run", run_values.results])

        def end(self, session):
            log.append(["end", session.run(self._steps)])
    metrics = est.evaluate(programs.input_fn(env, epochs=1), steps=case["steps"],
                           hooks=[EvalStepHook()])
    return {"log": log, "metrics": metrics}


# ---------------------------------------------------------------------------
# predict() hooks.

_PREDICTIONS = {
    "consume_all": {"take": None},
    "consume_one": {"take": 1},
    "consume_all_batches": {"take": None, "yield_single_examples": False},
    "spec_hooks": {"take": None, "spec": True},
    "batch_3": {"take": None, "batch_size": 3},
}


@scenarios("hooks/predict", _PREDICTIONS)
def predict_hooks(env, case):
    """predict() with a user hook (and the spec's prediction hooks): the calls
    while consuming `take` predictions, then after the generator is closed."""
    log = []
    est = _trained(env, log, predict_hooks=case.get("spec", False))
    del log[:]
    hooks = [_recorder(env, log, "user", None, fetch_step=False, read_step=False)]
    gen = est.predict(programs.input_fn(env, epochs=1, labels=False,
                                        batch_size=case.get("batch_size", 2)),
                      hooks=hooks,
                      yield_single_examples=case.get("yield_single_examples", True))
    got = []
    for prediction in gen:
        got.append(prediction)
        if case["take"] is not None and len(got) >= case["take"]:
            break
    during = list(log)
    gen.close()
    return {"count": len(got), "during": during, "after_close": log[len(during):]}


@scenario("hooks/predict/not_hooks")
def predict_not_hooks(env):
    log = []
    est = _trained(env, log)
    return outcome(lambda: next(est.predict(programs.input_fn(env, epochs=1, labels=False),
                                            hooks=[object()])))
