"""Conformance: TrainSpec / EvalSpec, train_and_evaluate in local mode with
exporters, the exporters' arguments, _TrainingExecutor's arguments, and the
early-stopping hooks."""

import glob
import os
import re

from tests.conformance import programs
from tests.conformance.registry import files_under, outcome, scenario, scenarios

_TIMESTAMP = re.compile(r"^\d{9,}$")


def _recording_hook(env, log, tag):
    """A SessionRunHook appending `tag:method` to `log`."""
    class Hook(env.tf.compat.v1.train.SessionRunHook):
        def begin(self):
            log.append(f"{tag}:begin")

        def end(self, session):
            log.append(f"{tag}:end")
    return Hook()


def _listener(env):
    class Listener(env.tf.compat.v1.train.CheckpointSaverListener):
        pass
    return Listener()


def _spec_fields(spec):
    """A TrainSpec's / EvalSpec's fields (hooks and exporters by kind and count)."""
    seen = {}
    for key, value in spec._asdict().items():
        if key in ("hooks", "saving_listeners", "exporters"):
            seen[key] = [type(value).__name__, len(value)]
        elif callable(value):
            seen[key] = "<callable>"
        else:
            seen[key] = value
    return seen


# ---------------------------------------------------------------------------
# TrainSpec / EvalSpec constructors.

_TRAIN_SPECS = {
    "defaults": {},
    "max_steps_1": {"max_steps": 1},
    "max_steps_0": {"max_steps": 0},
    "max_steps_negative": {"max_steps": -5},
    "max_steps_float": {"max_steps": 2.5},
    "max_steps_str": {"max_steps": "3"},
    "max_steps_none": {"max_steps": None},
    "input_fn_none": {"input_fn": None},
    "input_fn_not_callable": {"input_fn": 3},
    "hooks_list": {"hooks": "<hooks>"},
    "hooks_tuple": {"hooks": "<hooks_tuple>"},
    "hooks_not_hooks": {"hooks": [object()]},
    "hooks_empty": {"hooks": []},
    "hooks_single_hook": {"hooks": "<hook>"},
    "saving_listeners": {"saving_listeners": "<listeners>"},
    "saving_listeners_not_listeners": {"saving_listeners": [1]},
    "saving_listeners_empty": {"saving_listeners": ()},
}


def _resolve_hooks(env, kwargs):
    kwargs = dict(kwargs)
    if kwargs.get("hooks") == "<hooks>":
        kwargs["hooks"] = [_recording_hook(env, [], "h"), _recording_hook(env, [], "g")]
    elif kwargs.get("hooks") == "<hooks_tuple>":
        kwargs["hooks"] = (_recording_hook(env, [], "h"),)
    elif kwargs.get("hooks") == "<hook>":
        kwargs["hooks"] = _recording_hook(env, [], "h")
    if kwargs.get("saving_listeners") == "<listeners>":
        kwargs["saving_listeners"] = [_listener(env)]
    return kwargs


@scenarios("training/train_spec", _TRAIN_SPECS)
def train_spec_args(env, case):
    kwargs = {"input_fn": programs.input_fn(env), **_resolve_hooks(env, case)}
    return outcome(lambda: _spec_fields(env.est.TrainSpec(**kwargs)))


@scenario("training/train_spec/positional")
def train_spec_positional(env):
    return outcome(lambda: _spec_fields(env.est.TrainSpec(programs.input_fn(env), 7)))


_EVAL_SPECS = {
    "defaults": {},
    "steps_none": {"steps": None},
    "steps_1": {"steps": 1},
    "steps_0": {"steps": 0},
    "steps_negative": {"steps": -1},
    "steps_float": {"steps": 1.5},
    "name_str": {"name": "validation"},
    "name_empty": {"name": ""},
    "name_int": {"name": 3},
    "input_fn_not_callable": {"input_fn": "data"},
    "hooks_list": {"hooks": "<hooks>"},
    "hooks_not_hooks": {"hooks": ["hook"]},
    "exporters_single": {"exporters": "<latest>"},
    "exporters_list": {"exporters": "<latest,final>"},
    "exporters_tuple": {"exporters": "(<latest>)"},
    "exporters_duplicate_names": {"exporters": "<latest,latest>"},
    "exporters_not_exporter": {"exporters": [1]},
    "exporters_none_in_list": {"exporters": [None]},
    "exporters_empty_list": {"exporters": []},
    "exporters_str": {"exporters": "exporter"},
    "start_delay_secs_0": {"start_delay_secs": 0},
    "start_delay_secs_negative": {"start_delay_secs": -1},
    "start_delay_secs_float": {"start_delay_secs": 0.5},
    "throttle_secs_0": {"throttle_secs": 0},
    "throttle_secs_negative": {"throttle_secs": -1},
    "throttle_secs_float": {"throttle_secs": 2.5},
}


def _serving_fn(env):
    tf = env.tf

    def serving_input_receiver_fn():
        x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
        return env.est.export.ServingInputReceiver({"x": x}, {"x": x})
    return serving_input_receiver_fn


def _exporters(env, text):
    if not isinstance(text, str) or "<" not in text:
        return text
    made = []
    for kind in text.strip("()<>").split(","):
        if kind == "latest":
            made.append(env.est.LatestExporter("latest", _serving_fn(env)))
        else:
            made.append(env.est.FinalExporter("final", _serving_fn(env)))
    if text.startswith("("):
        return tuple(made)
    return made if "," in text else made[0]


@scenarios("training/eval_spec", _EVAL_SPECS)
def eval_spec_args(env, case):
    kwargs = {"input_fn": programs.input_fn(env), **_resolve_hooks(env, case)}
    if "exporters" in kwargs:
        kwargs["exporters"] = _exporters(env, kwargs["exporters"])
    return outcome(lambda: _spec_fields(env.est.EvalSpec(**kwargs)))


# ---------------------------------------------------------------------------
# Exporter constructors.

def _compare_by_loss(best_eval_result, current_eval_result):
    return current_eval_result["loss"] < best_eval_result["loss"]


_EXPORTER_ARGS = {
    "latest/defaults": ("LatestExporter", {"name": "latest"}),
    "latest/name_none": ("LatestExporter", {"name": None}),
    "latest/name_empty": ("LatestExporter", {"name": ""}),
    "latest/name_int": ("LatestExporter", {"name": 5}),
    "latest/receiver_none": ("LatestExporter", {"name": "l",
                                                "serving_input_receiver_fn": None}),
    "latest/receiver_not_callable": ("LatestExporter", {"name": "l",
                                                        "serving_input_receiver_fn": 3}),
    "latest/exports_to_keep_0": ("LatestExporter", {"name": "l", "exports_to_keep": 0}),
    "latest/exports_to_keep_negative": ("LatestExporter", {"name": "l",
                                                           "exports_to_keep": -1}),
    "latest/exports_to_keep_none": ("LatestExporter", {"name": "l",
                                                       "exports_to_keep": None}),
    "latest/exports_to_keep_float": ("LatestExporter", {"name": "l",
                                                        "exports_to_keep": 1.5}),
    "latest/as_text_str": ("LatestExporter", {"name": "l", "as_text": "yes"}),
    "latest/assets_extra_list": ("LatestExporter", {"name": "l", "assets_extra": ["a"]}),
    "best/defaults": ("BestExporter", {}),
    "best/receiver_none": ("BestExporter", {"serving_input_receiver_fn": None}),
    "best/compare_fn_none": ("BestExporter", {"compare_fn": None}),
    "best/compare_fn_not_callable": ("BestExporter", {"compare_fn": 3}),
    "best/compare_fn_wrong_arg_names": ("BestExporter", {"compare_fn": lambda a, b: True}),
    "best/compare_fn_one_arg": ("BestExporter",
                                {"compare_fn": lambda best_eval_result: True}),
    "best/compare_fn_named": ("BestExporter", {"compare_fn": _compare_by_loss}),
    "best/compare_fn_kwargs": ("BestExporter", {"compare_fn": lambda **kw: True}),
    "best/exports_to_keep_0": ("BestExporter", {"exports_to_keep": 0}),
    "best/exports_to_keep_none": ("BestExporter", {"exports_to_keep": None}),
    "best/event_file_pattern_none": ("BestExporter", {"event_file_pattern": None}),
    "best/event_file_pattern_custom": ("BestExporter", {"event_file_pattern": "e/*"}),
    "best/name_none": ("BestExporter", {"name": None}),
    "final/defaults": ("FinalExporter", {"name": "final"}),
    "final/name_none": ("FinalExporter", {"name": None}),
    "final/receiver_none": ("FinalExporter", {"name": "f",
                                              "serving_input_receiver_fn": None}),
    "final/exports_to_keep": ("FinalExporter", {"name": "f", "exports_to_keep": 2}),
}


@scenarios("training/exporter_args", _EXPORTER_ARGS)
def exporter_args(env, case):
    kind, kwargs = case
    kwargs = dict(kwargs)
    kwargs.setdefault("serving_input_receiver_fn", _serving_fn(env))

    def build():
        exporter = getattr(env.est, kind)(**kwargs)
        return {"name": exporter.name,
                "is_exporter": isinstance(exporter, env.est.Exporter)}
    return outcome(build)


@scenario("training/exporter_args/abstract_base")
def exporter_abstract_base(env):
    class Incomplete(env.est.Exporter):
        @property
        def name(self):
            return "x"

    class Complete(Incomplete):
        def export(self, estimator, export_path, checkpoint_path, eval_result,
                   is_the_final_export):
            return None
    return {"base": outcome(env.est.Exporter),
            "incomplete": outcome(Incomplete),
            "complete": outcome(lambda: Complete().name)}


# ---------------------------------------------------------------------------
# train_and_evaluate, local mode.

def _normalise(path):
    return "/".join("<ts>" if _TIMESTAMP.match(p) else p for p in path.split("/"))


# estimator_lite's BestExporter keeps its best result beside the exports, on
# purpose (tests/conformance/conformance_test.py DELIBERATE): observed by the
# scenario training/exporters/best only.
_BEST_RESULT_FILE = "best_eval_result.json"


def _export_summary(model_dir, every_file=False):
    """{exporter name: number of timestamped exports, other entries, files} under
    model_dir/export (BestExporter's result file only with `every_file`)."""
    summary = {}
    for path in sorted(glob.glob(os.path.join(model_dir, "export", "*"))):
        names = os.listdir(path) if os.path.isdir(path) else []
        if not every_file:
            names = [n for n in names if n != _BEST_RESULT_FILE]
        summary[os.path.basename(path)] = {
            "exports": sum(1 for n in names if _TIMESTAMP.match(n)),
            # A failed export's temp dir is named after the time: kept by kind.
            "other": sorted(re.sub(r"^temp-\d+$", "temp-<n>", n) for n in names
                            if not _TIMESTAMP.match(n)),
            "files": sorted({_normalise(re.sub(r"^temp-\d+", "temp-<n>", f))
                             for f in files_under(path)
                             if every_file or f != _BEST_RESULT_FILE})}
    return summary


def _eval_steps(env, model_dir):
    """{eval dir: sorted global steps that have a 'loss' summary}."""
    found = {}
    for path in sorted(glob.glob(os.path.join(model_dir, "eval*"))):
        steps = []
        for events in sorted(glob.glob(os.path.join(path, "events.out.tfevents.*"))):
            for event in env.tf.compat.v1.train.summary_iterator(events):
                if any(v.tag == "loss" for v in event.summary.value):
                    steps.append(event.step)
        found[os.path.basename(path)] = sorted(steps)
    return found


def _export_results(model_dir, results):
    if results is None:
        return None
    out = []
    for result in results:
        path = result.decode() if isinstance(result, bytes) else result
        # An export path under model_dir, relative to it, in the type the exporter
        # returned it (bytes or str); anything else (what a custom exporter
        # returns) as it is.
        if isinstance(path, str) and os.path.isabs(path):
            path = _normalise(os.path.relpath(path, model_dir))
            out.append(path.encode() if isinstance(result, bytes) else path)
        else:
            out.append(result)
    return type(results)(out) if isinstance(results, (list, tuple)) else out


def _train_and_evaluate(env, model_fn=None, config=None, train=None, evaluate=None,
                        exporters=None, every_file=False):
    """Runs train_and_evaluate locally; observes result, files, evals, exports."""
    config = {"save_checkpoints_steps": 2, "log_step_count_steps": None,
              "save_summary_steps": 1000, **(config or {})}
    est = programs.estimator(env, model_fn or programs.regression_model_fn(env), **config)
    train = {"input_fn": programs.input_fn(env), "max_steps": 4, **(train or {})}
    evaluate = {"input_fn": programs.input_fn(env, epochs=1), "steps": None,
                "throttle_secs": 0, "start_delay_secs": 0, **(evaluate or {})}
    if exporters is not None:
        evaluate["exporters"] = exporters

    def run():
        result = env.est.train_and_evaluate(est, env.est.TrainSpec(**train),
                                            env.est.EvalSpec(**evaluate))
        if result is None:
            return None
        metrics, export_results = result
        return {"metrics": metrics, "exports": _export_results(est.model_dir,
                                                               export_results)}
    observed = {"result": outcome(run)}
    observed["files"] = sorted({_normalise(f) for f in files_under(est.model_dir)
                                if not f.startswith("export/")})
    observed["evals"] = _eval_steps(env, est.model_dir)
    observed["export_dirs"] = _export_summary(est.model_dir, every_file)
    observed["checkpoints"] = programs.checkpoint_steps(env, est.model_dir)
    return observed


_LOCAL_RUNS = {
    "plain": {},
    "steps_1_eval_each": {"evaluate": {"steps": 1}},
    "save_every_step": {"config": {"save_checkpoints_steps": 1}, "train": {"max_steps": 2}},
    "save_every_3": {"config": {"save_checkpoints_steps": 3}, "train": {"max_steps": 5}},
    "save_secs_large": {"config": {"save_checkpoints_steps": None,
                                   "save_checkpoints_secs": 10000}},
    "throttle_large": {"evaluate": {"throttle_secs": 10000}},
    "eval_name": {"evaluate": {"name": "holdout"}},
    "train_input_ends": {"train": {"input_fn": "<finite>", "max_steps": None}},
    "eval_hooks": {"evaluate": {"hooks": "<hooks>"}},
    "train_hooks": {"train": {"hooks": "<hooks>"}},
    "train_listeners": {"train": {"saving_listeners": "<listeners>"}},
}


@scenarios("training/local", _LOCAL_RUNS)
def local_runs(env, case):
    case = {k: dict(v) for k, v in case.items()}
    log = []
    for part in ("train", "evaluate"):
        spec = case.get(part, {})
        if spec.get("hooks") == "<hooks>":
            spec["hooks"] = [_recording_hook(env, log, part)]
        if spec.get("saving_listeners") == "<listeners>":
            spec["saving_listeners"] = [_logging_listener(env, log)]
        if spec.get("input_fn") == "<finite>":
            spec["input_fn"] = programs.input_fn(env, epochs=2)
    observed = _train_and_evaluate(env, **case)
    observed["log"] = log
    return observed


def _logging_listener(env, log):
    class Listener(env.tf.compat.v1.train.CheckpointSaverListener):
        def begin(self):
            log.append("listener:begin")

        def after_save(self, session, global_step_value):
            log.append(f"listener:after_save:{global_step_value}")

        def end(self, session, global_step_value):
            log.append(f"listener:end:{global_step_value}")
    return Listener()


@scenario("training/local/resume_after_max_steps")
def local_resume(env):
    """A second train_and_evaluate with the same max_steps: no training; what is
    evaluated and exported then."""
    est = programs.estimator(env, programs.regression_model_fn(env),
                             save_checkpoints_steps=2, log_step_count_steps=None)
    train = env.est.TrainSpec(programs.input_fn(env), max_steps=2)
    evaluate = env.est.EvalSpec(programs.input_fn(env, epochs=1), steps=None,
                                throttle_secs=0, start_delay_secs=0,
                                exporters=[env.est.LatestExporter("l", _serving_fn(env))])
    first = outcome(lambda: env.est.train_and_evaluate(est, train, evaluate)[0])
    second = outcome(lambda: env.est.train_and_evaluate(est, train, evaluate))
    return {"first": first, "second": second, "evals": _eval_steps(env, est.model_dir),
            "exports": _export_summary(est.model_dir)}


def _exporter_cases(env, name):
    fn = _serving_fn(env)
    est = env.est
    return {
        "latest": lambda: [est.LatestExporter("latest", fn)],
        "latest_keep_1": lambda: [est.LatestExporter("latest", fn, exports_to_keep=1)],
        "latest_keep_none": lambda: [est.LatestExporter("latest", fn,
                                                        exports_to_keep=None)],
        "latest_as_text": lambda: [est.LatestExporter("latest", fn, as_text=True)],
        "final": lambda: [est.FinalExporter("final", fn)],
        "best": lambda: [est.BestExporter(serving_input_receiver_fn=fn)],
        "best_keep_1": lambda: [est.BestExporter(serving_input_receiver_fn=fn,
                                                 exports_to_keep=1)],
        "best_always": lambda: [est.BestExporter(
            serving_input_receiver_fn=fn,
            compare_fn=lambda best_eval_result, current_eval_result: True)],
        "best_never": lambda: [est.BestExporter(
            serving_input_receiver_fn=fn,
            compare_fn=lambda best_eval_result, current_eval_result: False)],
        "best_bigger_loss": lambda: [est.BestExporter(
            serving_input_receiver_fn=fn,
            compare_fn=lambda best_eval_result, current_eval_result:
                current_eval_result["loss"] > best_eval_result["loss"])],
        "best_pattern_elsewhere": lambda: [est.BestExporter(
            serving_input_receiver_fn=fn, event_file_pattern="nowhere/*.tfevents.*")],
        "best_named_eval": lambda: [est.BestExporter(serving_input_receiver_fn=fn)],
        "latest_and_final": lambda: [est.LatestExporter("latest", fn),
                                     est.FinalExporter("final", fn)],
        "single_not_list": lambda: est.LatestExporter("latest", fn),
        "raising_receiver": lambda: [est.LatestExporter("bad", _raising_receiver)],
        "custom_exporter": lambda: [_custom_exporter(env)],
    }[name]()


def _raising_receiver():
    raise RuntimeError("receiver failed")


def _custom_exporter(env):
    class Recording(env.est.Exporter):
        calls = []

        @property
        def name(self):
            return "custom"

        def export(self, estimator, export_path, checkpoint_path, eval_result,
                   is_the_final_export):
            self.calls.append([os.path.basename(export_path),
                               os.path.basename(checkpoint_path),
                               sorted(eval_result), is_the_final_export])
            return f"custom-{len(self.calls)}"
    return Recording()


_EXPORTER_RUNS = ("latest", "latest_keep_1", "latest_keep_none", "latest_as_text",
                  "final", "best", "best_keep_1", "best_always", "best_never",
                  "best_bigger_loss", "best_pattern_elsewhere", "best_named_eval",
                  "latest_and_final", "single_not_list", "raising_receiver",
                  "custom_exporter")


@scenarios("training/exporters", {name: name for name in _EXPORTER_RUNS})
def exporter_runs(env, case):
    exporters = _exporter_cases(env, case)
    evaluate = {"name": "named"} if case == "best_named_eval" else {}
    # Two evaluations (steps 2 and 4): keep-counts and comparisons show, and
    # tf.estimator waits a second before a second export in the same second.
    observed = _train_and_evaluate(env, exporters=exporters, evaluate=evaluate,
                                   every_file=case == "best")
    if case == "custom_exporter":
        calls = exporters[0].calls
        observed["custom_calls"] = calls
    return observed


# ---------------------------------------------------------------------------
# train_and_evaluate and _TrainingExecutor argument errors.

_EXECUTOR_ARGS = {
    "estimator_not_estimator": {"estimator": object()},
    "estimator_none": {"estimator": None},
    "train_spec_wrong": {"train_spec": "spec"},
    "train_spec_none": {"train_spec": None},
    "eval_spec_wrong": {"eval_spec": 3},
    "eval_spec_none": {"eval_spec": None},
    "train_hooks_wrong": {"train_hooks": [1]},
    "train_hooks_ok": {"train_hooks": "<hooks>"},
    "listener_wrong": {"continuous_eval_listener": object()},
    "all_ok": {},
}


def _executor_kwargs(env, case):
    est = programs.estimator(env, programs.regression_model_fn(env))
    kwargs = {"estimator": est,
              "train_spec": env.est.TrainSpec(programs.input_fn(env), max_steps=1),
              "eval_spec": env.est.EvalSpec(programs.input_fn(env), steps=1)}
    kwargs.update(case)
    if kwargs.get("train_hooks") == "<hooks>":
        kwargs["train_hooks"] = [_recording_hook(env, [], "t")]
    return kwargs


@scenarios("training/executor_args", _EXECUTOR_ARGS)
def executor_args(env, case):
    kwargs = _executor_kwargs(env, case)
    return outcome(lambda: type(env.training._TrainingExecutor(**kwargs)).__name__)


_T_AND_E_ARGS = {k: v for k, v in _EXECUTOR_ARGS.items()
                 if k in ("estimator_not_estimator", "estimator_none", "train_spec_wrong",
                          "train_spec_none", "eval_spec_wrong", "eval_spec_none")}


@scenarios("training/train_and_evaluate_args", _T_AND_E_ARGS)
def train_and_evaluate_args(env, case):
    kwargs = _executor_kwargs(env, case)
    return outcome(lambda: env.est.train_and_evaluate(**kwargs))


@scenario("training/train_and_evaluate_args/keras_like_estimator")
def train_and_evaluate_estimator_v1(env):
    """A tf.compat.v1 Estimator is accepted too."""
    est = env.v1.Estimator(programs.regression_model_fn(env), model_dir=env.tmpdir(),
                           config=env.est.RunConfig(tf_random_seed=1,
                                                    log_step_count_steps=None))
    return outcome(lambda: env.est.train_and_evaluate(
        est, env.est.TrainSpec(programs.input_fn(env), max_steps=2),
        env.est.EvalSpec(programs.input_fn(env, epochs=1), steps=None,
                         throttle_secs=0))[0])


@scenario("training/train_and_evaluate_args/max_steps_none_input_ends")
def train_and_evaluate_max_steps_none(env):
    return _train_and_evaluate(env, train={"input_fn": programs.input_fn(env, epochs=1),
                                           "max_steps": None})


# ---------------------------------------------------------------------------
# Early stopping hooks.

# Early stopping. tf.estimator's hooks check on the global step they fetch in the
# same run as the train op (it may be read before or after the increment), so the
# step of any check but the first varies from run to run. The scenarios therefore
# give the rules an evaluation history written beforehand and observe the first
# check: a rule met stops training after step 1, a rule never met runs to the end.

_HISTORY = {10: {"acc": 0.5, "loss": 1.0}, 20: {"acc": 0.9, "loss": 0.5},
            30: {"acc": 0.8, "loss": 0.6}, 40: {"acc": 0.85, "loss": 0.7}}

_RULES = {
    # (hook factory, arguments after the estimator, eval history)
    "higher/crossed": ("stop_if_higher_hook", {"metric_name": "acc", "threshold": 0.8},
                       _HISTORY),
    "higher/not_crossed": ("stop_if_higher_hook", {"metric_name": "acc", "threshold": 0.9},
                           _HISTORY),
    "higher/equal_is_not_higher": ("stop_if_higher_hook",
                                   {"metric_name": "loss", "threshold": 1.0}, _HISTORY),
    "higher/min_steps_skips": ("stop_if_higher_hook",
                               {"metric_name": "acc", "threshold": 0.86, "min_steps": 25},
                               _HISTORY),
    "higher/min_steps_equal": ("stop_if_higher_hook",
                               {"metric_name": "acc", "threshold": 0.84, "min_steps": 40},
                               _HISTORY),
    "lower/crossed": ("stop_if_lower_hook", {"metric_name": "loss", "threshold": 0.55},
                      _HISTORY),
    "lower/not_crossed": ("stop_if_lower_hook", {"metric_name": "loss", "threshold": 0.5},
                          _HISTORY),
    "lower/min_steps_skips": ("stop_if_lower_hook",
                              {"metric_name": "loss", "threshold": 0.55, "min_steps": 21},
                              _HISTORY),
    "no_decrease/stalled": ("stop_if_no_decrease_hook",
                            {"metric_name": "loss", "max_steps_without_decrease": 20},
                            _HISTORY),
    "no_decrease/not_yet": ("stop_if_no_decrease_hook",
                            {"metric_name": "loss", "max_steps_without_decrease": 21},
                            _HISTORY),
    "no_decrease/min_steps": ("stop_if_no_decrease_hook",
                              {"metric_name": "loss", "max_steps_without_decrease": 10,
                               "min_steps": 35}, _HISTORY),
    "no_decrease/zero_steps": ("stop_if_no_decrease_hook",
                               {"metric_name": "loss", "max_steps_without_decrease": 0},
                               _HISTORY),
    "no_increase/stalled": ("stop_if_no_increase_hook",
                            {"metric_name": "acc", "max_steps_without_increase": 20},
                            _HISTORY),
    "no_increase/not_yet": ("stop_if_no_increase_hook",
                            {"metric_name": "acc", "max_steps_without_increase": 25},
                            _HISTORY),
    "unknown_metric": ("stop_if_lower_hook", {"metric_name": "auc", "threshold": 1.0},
                       _HISTORY),
    "metric_missing_at_one_step": ("stop_if_lower_hook",
                                   {"metric_name": "acc", "threshold": 0.1},
                                   {**_HISTORY, 50: {"loss": 0.1}}),
    "empty_history": ("stop_if_lower_hook", {"metric_name": "loss", "threshold": 9.0}, {}),
    "no_eval_dir": ("stop_if_lower_hook", {"metric_name": "loss", "threshold": 9.0}, None),
    "explicit_eval_dir": ("stop_if_lower_hook",
                          {"metric_name": "loss", "threshold": 0.55, "eval_dir": "<other>"},
                          _HISTORY),
}


def _write_history(env, eval_dir, history):
    tf = env.tf
    with tf.Graph().as_default():
        writer = tf.compat.v1.summary.FileWriter(eval_dir)
        for step, metrics in sorted(history.items()):
            writer.add_summary(tf.compat.v1.Summary(value=[
                tf.compat.v1.Summary.Value(tag=k, simple_value=v)
                for k, v in metrics.items()]), step)
        writer.close()


@scenarios("training/early_stopping", _RULES)
def early_stopping(env, case):
    """train(max_steps=5) with a rule hook checked every step over a written eval
    history: the step training stops at."""
    factory, kwargs, history = case
    kwargs = dict(kwargs)
    est = programs.estimator(env, programs.regression_model_fn(env),
                             log_step_count_steps=None)
    eval_dir = est.eval_dir()
    if kwargs.get("eval_dir") == "<other>":
        eval_dir = kwargs["eval_dir"] = env.tmpdir()
    if history is not None:
        _write_history(env, eval_dir, history)

    def run():
        hook = getattr(env.est.experimental, factory)(
            est, run_every_secs=None, run_every_steps=1, **kwargs)
        est.train(programs.input_fn(env), max_steps=5, hooks=[hook])
        return est.get_variable_value("global_step")
    return outcome(run)


_LOCAL_EARLY_STOPPING = {
    "never": ("stop_if_higher_hook", {"metric_name": "loss", "threshold": 1e9}),
    "first_evaluation": ("stop_if_lower_hook", {"metric_name": "loss", "threshold": 1e9}),
    "unknown_metric": ("stop_if_lower_hook", {"metric_name": "accuracy", "threshold": 1.0}),
}


@scenarios("training/early_stopping_local", _LOCAL_EARLY_STOPPING)
def early_stopping_local(env, case):
    """train_and_evaluate with a rule hook checked every step and an evaluation at
    every checkpoint (every step): the step training stops at, the evaluations."""
    factory, kwargs = case
    est = programs.estimator(env, programs.regression_model_fn(env),
                             save_checkpoints_steps=1, log_step_count_steps=None)

    def run():
        hook = getattr(env.est.experimental, factory)(
            est, run_every_secs=None, run_every_steps=1, **kwargs)
        env.est.train_and_evaluate(
            est, env.est.TrainSpec(programs.input_fn(env), max_steps=6, hooks=[hook]),
            env.est.EvalSpec(programs.input_fn(env, epochs=1), steps=None,
                             throttle_secs=0, start_delay_secs=0))
        return est.get_variable_value("global_step")
    return {"stopped_at": outcome(run), "evals": _eval_steps(env, est.model_dir)}


@scenarios("training/early_stopping_fn", {"after_3_calls": 3, "never": None,
                                          "first_call": 1})
def early_stopping_fn(env, case):
    """make_early_stopping_hook with a should_stop_fn true from its `case`-th call
    (which step a later call falls on varies, see above: observed as whether
    training stopped early)."""
    calls = []

    def should_stop_fn():
        calls.append(1)
        return case is not None and len(calls) >= case
    est = programs.estimator(env, programs.regression_model_fn(env),
                             log_step_count_steps=None)
    hook = env.est.experimental.make_early_stopping_hook(
        est, should_stop_fn, run_every_secs=None, run_every_steps=1)

    def run():
        est.train(programs.input_fn(env), max_steps=8, hooks=[hook])
        step = est.get_variable_value("global_step")
        return step if case in (None, 1) else bool(step < 8)
    return {"stopped_at": outcome(run),
            "calls": len(calls) if case is not None else bool(calls)}


_EARLY_STOPPING_ARGS = {
    "both_run_every": {"run_every_secs": 10, "run_every_steps": 10},
    "neither_run_every": {"run_every_secs": None, "run_every_steps": None},
    "secs_only": {"run_every_secs": 10, "run_every_steps": None},
    "estimator_not_estimator": {"estimator": object()},
    "should_stop_fn_not_callable": {"should_stop_fn": 3},
    "eval_dir_given": "<eval_dir>",
}


@scenarios("training/early_stopping_args", _EARLY_STOPPING_ARGS)
def early_stopping_args(env, case):
    est = programs.estimator(env, programs.regression_model_fn(env))
    if case == "<eval_dir>":
        return outcome(lambda: type(env.est.experimental.stop_if_lower_hook(
            est, "loss", 1.0, eval_dir=env.tmpdir(), run_every_secs=None,
            run_every_steps=1)).__name__ != "")
    kwargs = {"estimator": est, "should_stop_fn": lambda: False, **case}
    return outcome(lambda: type(env.est.experimental.make_early_stopping_hook(
        **kwargs)).__name__ != "")


@scenario("training/early_stopping/resume_after_stop")
def early_stopping_resume(env):
    """Training again after an early stop starts (the stop flag is not restored)."""
    est = programs.estimator(env, programs.regression_model_fn(env),
                             log_step_count_steps=None)
    first = env.est.experimental.make_early_stopping_hook(
        est, lambda: True, run_every_secs=None, run_every_steps=1)
    est.train(programs.input_fn(env), max_steps=5, hooks=[first])
    stopped = est.get_variable_value("global_step")
    est.train(programs.input_fn(env), max_steps=5)
    return {"stopped": stopped, "resumed": est.get_variable_value("global_step"),
            "checkpoints": programs.checkpoint_steps(env, est.model_dir)}
