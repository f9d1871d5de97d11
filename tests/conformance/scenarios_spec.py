"""Conformance: what a model_fn may return (EstimatorSpec fields, through the
Estimator and built directly)."""

import numpy as np

from tests.conformance import programs
from tests.conformance.registry import outcome, scenario, scenarios


def _train_eval_predict(env, model_fn, train_steps=2):
    """What train/evaluate/predict give: each step's outcome."""
    est = programs.estimator(env, model_fn)
    observed = {"train": outcome(lambda: est.train(programs.input_fn(env),
                                                   steps=train_steps) and
                                 est.get_variable_value("global_step"))}
    observed["evaluate"] = outcome(lambda: est.evaluate(programs.input_fn(env), steps=2))
    observed["predict"] = outcome(lambda: list(est.predict(
        programs.input_fn(env, epochs=1, labels=False)))[:3])
    return observed


# What a model_fn returns as its loss (batch size 2 unless said).
_LOSSES = {
    "scalar": lambda tf, err: tf.reduce_mean(err),
    "shape_1": lambda tf, err: tf.reshape(tf.reduce_mean(err), [1]),
    "shape_1_1": lambda tf, err: tf.reshape(tf.reduce_mean(err), [1, 1]),
    "per_example_none_batch_2": lambda tf, err: tf.reshape(err, [-1]),
    "per_example_none_1_batch_2": lambda tf, err: err,
    "known_2": lambda tf, err: tf.reshape(err, [2]),
    "sum_as_variable_read": lambda tf, err: tf.compat.v1.get_variable(
        "lossvar", [], initializer=tf.compat.v1.ones_initializer())
    + 0 * tf.reduce_sum(err),
    "int32": lambda tf, err: tf.cast(tf.reduce_sum(err) * 100, tf.int32),
    "float64": lambda tf, err: tf.cast(tf.reduce_mean(err), tf.float64),
    "python_float": lambda tf, err: 1.0,
    "numpy_float": lambda tf, err: np.float32(1.0),
    "sparse": lambda tf, err: tf.SparseTensor([[0]], [1.0], [1]),
}


@scenarios("spec/loss", _LOSSES)
def loss_kinds(env, case):
    tf = env.tf

    def make_spec(mode, predictions, loss, train_op, labels):
        if mode == env.est.ModeKeys.PREDICT:
            return env.est.EstimatorSpec(mode, predictions={"y": predictions})
        user_loss = case(tf, tf.square(predictions - labels))
        step = tf.compat.v1.train.get_global_step()
        train_op = tf.compat.v1.assign_add(step, 1) if mode == "train" else None
        return env.est.EstimatorSpec(mode, loss=user_loss, train_op=train_op)
    return _train_eval_predict(env, programs.regression_model_fn(env, make_spec))


@scenario("spec/loss/per_example_batch_1")
def loss_per_example_batch_1(env):
    """A per-example loss of shape (None,) on a batch of one trains (tf.estimator
    reshapes a one-element loss to a scalar)."""
    tf = env.tf

    def make_spec(mode, predictions, loss, train_op, labels):
        per_example = tf.reshape(tf.square(predictions - labels), [-1])
        return env.est.EstimatorSpec(mode, predictions={"y": predictions},
                                   loss=per_example, train_op=programs.sgd_train_op(
                                       env, per_example) if mode == "train" else None)
    est = programs.estimator(env, programs.regression_model_fn(env, make_spec))
    est.train(programs.input_fn(env, batch_size=1), steps=3)
    return {"w": est.get_variable_value("w"), "step": est.get_variable_value("global_step"),
            "eval": outcome(lambda: est.evaluate(programs.input_fn(env, batch_size=1),
                                                 steps=4))}


_PREDICTIONS = {
    "tensor": lambda env, p: p,
    "dict": lambda env, p: {"y": p, "double": 2 * p},
    "variable": lambda env, p: env.tf.compat.v1.get_variable("pv", [2, 1]),
    "dict_with_variable": lambda env, p: {"y": p, "v": env.tf.compat.v1.get_variable(
        "pv", [2, 1])},
    "sparse": lambda env, p: env.tf.SparseTensor([[0, 0]], [1.0], [2, 1]),
    "dict_int_key": lambda env, p: {1: p},
    "dict_tuple_key": lambda env, p: {("head", "y"): p},
    "list": lambda env, p: [p],
    "none": lambda env, p: None,
    "numpy": lambda env, p: np.ones([2, 1], np.float32),
}


@scenarios("spec/predictions", _PREDICTIONS)
def prediction_kinds(env, case):
    """Predictions in every mode (the same spec for all), and predict()'s output."""
    tf = env.tf

    def make_spec(mode, predictions, loss, train_op, labels):
        return env.est.EstimatorSpec(mode, predictions=case(env, predictions), loss=loss,
                                   train_op=train_op)
    observed = _train_eval_predict(env, programs.regression_model_fn(env, make_spec))
    with tf.Graph().as_default():
        observed["eval_spec_predictions"] = outcome(lambda: sorted(
            map(str, _keys(env.est.EstimatorSpec(
                "eval", loss=tf.constant(1.0),
                predictions=case(env, tf.constant([[1.0], [2.0]]))).predictions))))
    return observed


def _keys(predictions):
    return predictions.keys() if isinstance(predictions, dict) else ["<tensor>"]


_TRAIN_OPS = {
    "operation": programs.sgd_train_op,
    "tensor": lambda env, loss: env.tf.identity(env.tf.compat.v1.assign_add(
        env.tf.compat.v1.train.get_global_step(), 1)),
    "variable": lambda env, loss: env.tf.compat.v1.assign_add(
        env.tf.compat.v1.train.get_global_step(), 1),
    "group": lambda env, loss: env.tf.group(programs.sgd_train_op(env, loss)),
    "python_object": lambda env, loss: object(),
    "list_of_ops": lambda env, loss: [programs.sgd_train_op(env, loss)],
}


@scenarios("spec/train_op", _TRAIN_OPS)
def train_op_kinds(env, case):
    def make_spec(mode, predictions, loss, train_op, labels):
        if mode == "train":
            train_op = case(env, loss)
        return env.est.EstimatorSpec(mode, predictions={"y": predictions}, loss=loss,
                                   train_op=train_op)
    return _train_eval_predict(env, programs.regression_model_fn(env, make_spec))


@scenario("spec/train_op/missing_in_train")
def train_op_missing(env):
    def make_spec(mode, predictions, loss, train_op, labels):
        return env.est.EstimatorSpec(mode, predictions={"y": predictions}, loss=loss)
    return _train_eval_predict(env, programs.regression_model_fn(env, make_spec))


def _mean_pair(env, predictions, labels):
    return env.tf.compat.v1.metrics.mean_absolute_error(labels, predictions)


_METRICS = {
    "tuple_pair": lambda env, p, labels: {"mae": _mean_pair(env, p, labels)},
    "list_pair": lambda env, p, labels: {"mae": list(_mean_pair(env, p, labels))},
    "operation_update": lambda env, p, labels: {"mae": (_mean_pair(env, p, labels)[0],
                                                   _mean_pair(env, p, labels)[1].op)},
    "nested_value": lambda env, p, labels: {"pair": ((_mean_pair(env, p, labels)[0],
                                                 env.tf.constant(2.0)),
                                                _mean_pair(env, p, labels)[1])},
    "tensor_not_pair": lambda env, p, labels: {"mae": env.tf.reduce_mean(p)},
    "three_tuple": lambda env, p, labels: {"mae": (*_mean_pair(env, p, labels), p)},
    "not_a_dict": lambda env, p, labels: [_mean_pair(env, p, labels)],
    "int_key": lambda env, p, labels: {1: _mean_pair(env, p, labels)},
    "loss_key_overrides": lambda env, p, labels: {"loss": env.tf.compat.v1.metrics.mean(
        env.tf.constant(5.0))},
    "global_step_key": lambda env, p, labels: {"global_step": env.tf.compat.v1.metrics.mean(
        env.tf.constant(5.0))},
    "string_value": lambda env, p, labels: {"s": (env.tf.constant("text"), env.tf.no_op())},
    "vector_value": lambda env, p, labels: {"v": (env.tf.constant([1.0, 2.0]),
                                             env.tf.no_op())},
    "int_value": lambda env, p, labels: {"i": (env.tf.constant(3), env.tf.no_op())},
    "keras_mean_metric": lambda env, p, labels: {"m": _keras_mean(env, p)},
}


def _keras_mean(env, predictions):
    metric = env.tf.keras.metrics.Mean(name="mean_prediction")
    metric.update_state(predictions)
    return metric


@scenarios("spec/eval_metric_ops", _METRICS)
def metric_kinds(env, case):
    def make_spec(mode, predictions, loss, train_op, labels):
        metrics = case(env, predictions, labels) if mode == "eval" else None
        return env.est.EstimatorSpec(mode, predictions={"y": predictions}, loss=loss,
                                   train_op=train_op, eval_metric_ops=metrics)
    est = programs.estimator(env, programs.regression_model_fn(env, make_spec))
    est.train(programs.input_fn(env), steps=2)
    return outcome(lambda: est.evaluate(programs.input_fn(env), steps=2))


@scenarios("spec/mode", {"none": None, "unknown": "training", "train": "train",
                         "eval": "eval", "infer": "infer"})
def mode_values(env, case):
    """A spec built directly with only a loss: what each mode accepts and holds."""
    tf = env.tf
    with tf.Graph().as_default():
        def build():
            spec = env.est.EstimatorSpec(case, loss=tf.constant([2.0]))
            return {"mode": spec.mode, "loss_shape": spec.loss.shape,
                    "predictions": spec.predictions,
                    "export_outputs": spec.export_outputs,
                    "hooks": [spec.training_hooks, spec.training_chief_hooks,
                              spec.evaluation_hooks, spec.prediction_hooks],
                    "scaffold": spec.scaffold is not None,
                    "eval_metric_ops": spec.eval_metric_ops}
        return outcome(build)


@scenario("spec/replace")
def replace_fields(env):
    tf = env.tf
    with tf.Graph().as_default():
        spec = env.est.EstimatorSpec("eval", loss=tf.constant(1.0))
        return {"same_mode": outcome(lambda: spec._replace(mode="eval").mode),
                "other_mode": outcome(lambda: spec._replace(mode="train")),
                "loss_shape": outcome(lambda: spec._replace(
                    loss=tf.constant([3.0])).loss.shape),
                "bad_hooks": outcome(lambda: spec._replace(evaluation_hooks=[1]))}


_FIELD_ERRORS = {
    "hooks_not_hooks": {"training_hooks": [object()]},
    "chief_hooks_not_hooks": {"training_chief_hooks": [1]},
    "evaluation_hooks_none": {"evaluation_hooks": None},
    "scaffold_wrong": {"scaffold": object()},
    "scaffold_falsy": {"scaffold": 0},
    "export_outputs_in_eval_not_dict": {"export_outputs": [1]},
    "loss_from_other_graph": "other_graph_loss",
    "predictions_from_other_graph": "other_graph_predictions",
    "train_op_from_other_graph": "other_graph_train_op",
}


@scenarios("spec/fields", _FIELD_ERRORS)
def field_errors(env, case):
    tf = env.tf
    with tf.Graph().as_default():
        other = tf.constant(1.0)
    with tf.Graph().as_default():
        step = tf.compat.v1.train.get_or_create_global_step()
        fields = {"loss": tf.constant(1.0), "train_op": tf.compat.v1.assign_add(step, 1)}
        if isinstance(case, dict):
            fields.update(case)
        elif case == "other_graph_loss":
            fields["loss"] = other
        elif case == "other_graph_predictions":
            fields["predictions"] = {"y": other}
        else:
            fields["train_op"] = other
        return outcome(lambda: sorted(
            k for k, v in env.est.EstimatorSpec("train", **fields)._asdict().items()
            if v is not None))


_EXPORT_OUTPUTS = {
    "none": lambda est, p: None,
    "one_named": lambda est, p: {"mine": est.export.PredictOutput({"y": p})},
    "default_and_other": lambda est, p: {
        "serving_default": est.export.PredictOutput({"y": p}),
        "other": est.export.RegressionOutput(p)},
    "two_without_default": lambda est, p: {"a": est.export.PredictOutput({"y": p}),
                                         "b": est.export.PredictOutput({"z": p})},
    "not_export_output": lambda est, p: {"serving_default": p},
    "not_a_dict": lambda est, p: [est.export.PredictOutput({"y": p})],
    "int_key": lambda est, p: {1: est.export.PredictOutput({"y": p})},
    "regression_only": lambda est, p: {"serving_default": est.export.RegressionOutput(p)},
}


@scenarios("spec/export_outputs", _EXPORT_OUTPUTS)
def export_output_kinds(env, case):
    """PREDICT-mode export outputs: the spec's keys, then the exported signatures
    (raw tensor receiver)."""
    tf = env.tf

    def make_spec(mode, predictions, loss, train_op, labels):
        outputs = case(env.est, predictions) if mode == "infer" else None
        return env.est.EstimatorSpec(mode, predictions={"y": predictions}, loss=loss,
                                   train_op=train_op, export_outputs=outputs)
    est = programs.estimator(env, programs.regression_model_fn(env, make_spec))
    est.train(programs.input_fn(env), steps=1)
    receiver = env.est.export.build_raw_serving_input_receiver_fn({"x": tf.zeros([1, 2])})
    return outcome(lambda: programs.signature_summary(
        env, est.export_saved_model(env.tmpdir(), receiver)))
