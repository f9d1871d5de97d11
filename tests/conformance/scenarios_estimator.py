"""Conformance: the Estimator's methods and their arguments (train, evaluate,
predict, export_saved_model, variables, warm start)."""

import os

from tests.conformance import programs
from tests.conformance.registry import files_under, outcome, scenarios


def _trained(env, steps=3, **config):
    est = programs.estimator(env, programs.regression_model_fn(env), **config)
    if steps:
        est.train(programs.input_fn(env), steps=steps)
    return est


_TRAIN_ARGS = {
    "steps_0": {"steps": 0},
    "steps_negative": {"steps": -1},
    "steps_float": {"steps": 1.5},
    "max_steps_0": {"max_steps": 0},
    "max_steps_negative": {"max_steps": -2},
    "steps_and_max_steps": {"steps": 1, "max_steps": 2},
    "hooks_not_hooks": {"steps": 1, "hooks": [object()]},
    "hooks_not_list": {"steps": 1, "hooks": "hook"},
    "listener_not_listener": {"steps": 1, "saving_listeners": [object()]},
    "steps_none_max_steps_none_ends_with_input": {"input_epochs": 1},
    "input_fn_not_callable": {"input_fn": "nope", "steps": 1},
}


@scenarios("estimator/train_args", _TRAIN_ARGS)
def train_args(env, case):
    case = dict(case)
    est = programs.estimator(env, programs.regression_model_fn(env))
    input_fn = case.pop("input_fn", None) or programs.input_fn(
        env, epochs=case.pop("input_epochs", None))
    result = outcome(lambda: est.train(input_fn, **case) is est)
    return {"result": result, "step": outcome(lambda: est.get_variable_value(
        "global_step")), "checkpoints": programs.checkpoint_steps(env, est.model_dir)}


_TRAIN_SEQUENCES = {
    "steps_then_steps": [{"steps": 2}, {"steps": 3}],
    "max_steps_then_lower_max_steps": [{"max_steps": 4}, {"max_steps": 2}],
    "max_steps_twice": [{"max_steps": 3}, {"max_steps": 3}],
    "steps_then_max_steps": [{"steps": 2}, {"max_steps": 5}],
}


@scenarios("estimator/train_sequence", _TRAIN_SEQUENCES)
def train_sequence(env, case):
    """Calls of train() one after another: where each ends, what is saved."""
    est = programs.estimator(env, programs.regression_model_fn(env),
                             save_checkpoints_steps=2)
    observed = []
    for kwargs in case:
        est.train(programs.input_fn(env), **kwargs)
        observed.append([est.get_variable_value("global_step"),
                         programs.checkpoint_steps(env, est.model_dir)])
    return observed


_EVAL_ARGS = {
    "steps_none_ends_with_input": {"epochs": 1},
    "steps_2": {"steps": 2},
    "steps_0": {"steps": 0},
    "steps_negative": {"steps": -1},
    "named": {"steps": 1, "name": "holdout"},
    "name_empty": {"steps": 1, "name": ""},
    "checkpoint_path_explicit": {"steps": 1, "checkpoint": "first"},
    "checkpoint_path_missing": {"steps": 1, "checkpoint": "missing"},
    "no_checkpoint_yet": {"steps": 1, "untrained": True},
    "hooks_not_hooks": {"steps": 1, "hooks": [1]},
}


@scenarios("estimator/evaluate_args", _EVAL_ARGS)
def evaluate_args(env, case):
    case = dict(case)
    est = _trained(env, steps=0 if case.pop("untrained", False) else 3,
                   save_checkpoints_steps=1)
    checkpoint = case.pop("checkpoint", None)
    if checkpoint == "first":
        case["checkpoint_path"] = os.path.join(est.model_dir, "model.ckpt-1")
    elif checkpoint == "missing":
        case["checkpoint_path"] = os.path.join(est.model_dir, "model.ckpt-99")
    input_fn = programs.input_fn(env, epochs=case.pop("epochs", None))
    result = outcome(lambda: est.evaluate(input_fn, **case))
    return {"result": result,
            "eval_dirs": sorted(d for d in os.listdir(est.model_dir)
                                if d.startswith("eval"))}


_PREDICT_ARGS = {
    "keys_one": {"predict_keys": ["y"]},
    "keys_str": {"predict_keys": "y"},
    "keys_unknown": {"predict_keys": ["nope"]},
    "batches": {"yield_single_examples": False},
    "no_checkpoint": {"untrained": True},
    "checkpoint_path_missing": {"checkpoint_path": "/nonexistent/model.ckpt-1"},
    "hooks_not_hooks": {"hooks": [1]},
    "tensor_predictions_with_keys": {"tensor": True, "predict_keys": ["y"]},
    "different_batch_sizes": {"mismatched": True},
    "scalar_prediction": {"scalar": True},
    "scalar_prediction_batches": {"scalar": True, "yield_single_examples": False},
}


@scenarios("estimator/predict_args", _PREDICT_ARGS)
def predict_args(env, case):
    tf = env.tf
    case = dict(case)
    tensor, mismatched, scalar = (case.pop(k, False) for k in
                                  ("tensor", "mismatched", "scalar"))

    def make_spec(mode, predictions, loss, train_op, labels):
        preds = {"y": predictions, "z": 2 * predictions}
        if tensor:
            preds = predictions
        elif mismatched:
            preds = {"y": predictions, "first": predictions[:1]}
        elif scalar:
            preds = {"y": predictions, "mean": tf.reduce_mean(predictions)}
        return env.est.EstimatorSpec(mode, predictions=preds, loss=loss,
                                     train_op=train_op)
    est = programs.estimator(env, programs.regression_model_fn(env, make_spec))
    if not case.pop("untrained", False):
        est.train(programs.input_fn(env), steps=2)
    return outcome(lambda: list(est.predict(programs.input_fn(env, epochs=1,
                                                              labels=False), **case)))


_EXPORT_ARGS = {
    "plain": {},
    "as_text": {"as_text": True},
    "assets_extra": {"assets_extra": "file"},
    "checkpoint_path_first": {"checkpoint": "first"},
    "checkpoint_path_missing": {"checkpoint": "missing"},
    "no_checkpoint": {"untrained": True},
    "receiver_returns_dict": {"receiver": "dict"},
    "receiver_not_callable": {"receiver": "string"},
    "experimental_mode_eval": {"experimental_mode": "eval"},
    "experimental_mode_bogus": {"experimental_mode": "bogus"},
}


@scenarios("estimator/export_args", _EXPORT_ARGS)
def export_args(env, case):
    tf = env.tf
    case = dict(case)
    est = _trained(env, steps=0 if case.pop("untrained", False) else 3,
                   save_checkpoints_steps=1)
    receiver = env.est.export.build_raw_serving_input_receiver_fn({"x": tf.zeros([1, 2])})
    kind = case.pop("receiver", None)
    if kind == "dict":
        receiver = lambda: {"x": tf.compat.v1.placeholder(tf.float32, [None, 2])}  # noqa: E731
    elif kind == "string":
        receiver = "receiver"
    if case.get("experimental_mode") == "eval":
        receiver = env.est.experimental.build_raw_supervised_input_receiver_fn(
            {"x": tf.zeros([1, 2])}, tf.zeros([1, 1]))
    if case.pop("assets_extra", None):
        source = os.path.join(env.tmpdir(), "vocab.txt")
        with open(source, "w", encoding="utf-8") as f:
            f.write("a\n")
        case["assets_extra"] = {"data/vocab.txt": source}
    checkpoint = case.pop("checkpoint", None)
    if checkpoint:
        case["checkpoint_path"] = os.path.join(
            est.model_dir, "model.ckpt-1" if checkpoint == "first" else "model.ckpt-99")
    base = env.tmpdir()

    def export():
        path = est.export_saved_model(base, receiver, **case)
        name = path.decode() if isinstance(path, bytes) else path
        return {"type": type(path).__name__, "numeric_dir": os.path.basename(
            name).isdigit(), "files": files_under(name),
            "signatures": programs.signature_summary(env, name)}
    return outcome(export)


_VARIABLE_QUERIES = {
    "names": lambda est: sorted(est.get_variable_names()),
    "value_w": lambda est: est.get_variable_value("w"),
    "value_missing": lambda est: est.get_variable_value("nope"),
    "latest_checkpoint": lambda est: os.path.basename(est.latest_checkpoint()),
    "eval_dir_default": lambda est: os.path.relpath(est.eval_dir(), est.model_dir),
    "eval_dir_named": lambda est: os.path.relpath(est.eval_dir("x"), est.model_dir),
    "params_default": lambda est: est.params,
}


@scenarios("estimator/variables", _VARIABLE_QUERIES)
def variable_queries(env, case):
    return outcome(case, _trained(env, steps=2))


@scenarios("estimator/untrained", {
    "names": lambda est: est.get_variable_names(),
    "latest_checkpoint": lambda est: est.latest_checkpoint(),
    "value": lambda est: est.get_variable_value("w")})
def untrained_queries(env, case):
    return outcome(case, _trained(env, steps=0))


_WARM_STARTS = {
    "path": lambda env, src: src,
    "settings_all": lambda env, src: env.est.WarmStartSettings(src),
    "settings_regex_w": lambda env, src: env.est.WarmStartSettings(
        src, vars_to_warm_start="w"),
    "settings_list": lambda env, src: env.est.WarmStartSettings(
        src, vars_to_warm_start=["b"]),
    "checkpoint_file": lambda env, src: os.path.join(src, "model.ckpt-3"),
    "missing_dir": lambda env, src: os.path.join(src, "nowhere"),
}


@scenarios("estimator/warm_start", _WARM_STARTS)
def warm_start(env, case):
    source = _trained(env, steps=3)
    target = env.est.Estimator(programs.regression_model_fn(env), model_dir=env.tmpdir(),
                               config=env.est.RunConfig(tf_random_seed=1),
                               warm_start_from=case(env, source.model_dir))
    trained = outcome(lambda: target.train(programs.input_fn(env), steps=1) and {
        "w": target.get_variable_value("w"), "b": target.get_variable_value("b"),
        "step": target.get_variable_value("global_step")})
    return trained


@scenarios("estimator/constructor", {
    "model_dir_pathlike": "pathlike",
    "model_dir_conflict": "conflict",
    "model_dir_same_as_config": "same",
    "config_not_runconfig": "bad_config",
    "model_fn_no_features": "no_features",
    "model_fn_extra_arg": "extra_arg",
    "model_fn_with_self_method": "method"})
def constructor(env, case):
    import pathlib  # noqa: PLC0415

    model_fn = programs.regression_model_fn(env)
    directory = env.tmpdir()
    config = env.est.RunConfig()

    class Holder:
        def model_fn(self, features, labels, mode):
            return model_fn(features, labels, mode)

    def build():
        if case == "pathlike":
            given = env.est.Estimator(model_fn, model_dir=pathlib.Path(directory))
            return [type(given.model_dir).__name__, given.model_dir == directory]
        if case == "conflict":
            return env.est.Estimator(model_fn, model_dir=directory,
                                     config=env.est.RunConfig(model_dir=directory + "x"))
        if case == "same":
            return env.est.Estimator(
                model_fn, model_dir=directory,
                config=env.est.RunConfig(model_dir=directory)).model_dir == directory
        if case == "bad_config":
            return env.est.Estimator(model_fn, config={"model_dir": directory})
        if case == "no_features":
            return env.est.Estimator(lambda inputs, labels, mode: None, config=config)
        if case == "extra_arg":
            return env.est.Estimator(lambda features, labels, mode, batch: None)
        est = env.est.Estimator(Holder().model_fn, model_dir=directory)
        est.train(programs.input_fn(env), steps=1)
        return est.get_variable_value("global_step")
    return outcome(build)
