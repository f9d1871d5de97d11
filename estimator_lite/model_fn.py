"""ModeKeys and EstimatorSpec: what a model_fn receives and returns."""

from __future__ import annotations

import collections
from collections.abc import Iterable, Mapping
from typing import Any

from estimator_lite import _keras
from estimator_lite._engine import fn_args, keras_metrics, validation
from estimator_lite._engine.fn_args import call_with_declared_args
from estimator_lite._tf import TENSOR_TYPES, tensorboard_hint, tf
from estimator_lite.export import outputs as export_lib

# check_model_fn and invoke_model_fn are the package's interface to a model_fn
# (used by estimator.py); not tf.estimator names.
__all__ = ["ModeKeys", "EstimatorSpec"]


# The names of the metrics the Estimator adds itself (tf.estimator's module constants).
LOSS_METRIC_KEY = "loss"
AVERAGE_LOSS_METRIC_KEY = "average_loss"


class ModeKeys:
    """The mode a model_fn is called in (same strings as TF Estimator's ModeKeys)."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


_SpecTuple = collections.namedtuple("EstimatorSpec", [
    "mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs",
    "training_chief_hooks", "training_hooks", "scaffold", "evaluation_hooks",
    "prediction_hooks"])


def _check_is_tensor(name, value):
    """Returns `value` if tf.estimator counts it as a Tensor (variables too).

    Raises:
      TypeError: anything else, SparseTensors included (as tf.estimator).
    """
    if not isinstance(value, TENSOR_TYPES):
        raise TypeError(f"{name} must be Tensor, given: {value} (a Tensor or a "
                        f"Variable is needed, got type {type(value).__name__})")
    return value


def _check_loss(loss):
    """A loss whose element count is known and not 1 is refused; one that is not
    already a scalar (shape (1,), (None,), (None, 1)) is reshaped to one, as
    tf.estimator does (a batch of more than one then fails when it runs)."""
    loss = _check_is_tensor("loss", loss)
    shape = loss.shape
    if shape.num_elements() not in (None, 1):
        raise ValueError(f"Loss must be scalar, given: {loss} (loss must hold one "
                         f"element, got shape {shape})")
    if not shape.is_compatible_with(tf.TensorShape([])):
        loss = tf.reshape(loss, [])
    return loss


# What a model_fn author needs when a Keras 3 optimizer, or Keras 3 variables in a
# tf.compat.v1 optimizer, meet graph mode (both fail far from the cause).
KERAS3_OPTIMIZER_HINT = (
    "Keras 3 optimizers (tf.keras.optimizers.*) do not train in graph mode: there "
    "apply_gradients() only returns the optimizer's `iterations` variable and updates "
    "nothing. In a model_fn use a tf.compat.v1.train optimizer, e.g. "
    "tf.compat.v1.train.AdamOptimizer(0.001).minimize(loss, "
    "global_step=tf.compat.v1.train.get_global_step()), leaving var_list out or "
    "passing [v.value for v in layer.trainable_variables] (Keras 3 variables are not "
    "tf.Variables); or give the Keras optimizer to a head "
    "(head.create_estimator_spec(..., optimizer=...)) or a canned estimator, which "
    "map it to its graph equivalent; or use tf.keras.optimizers.legacy.* with the "
    "legacy-keras extra (pip install 'estimator_lite[legacy-keras]', "
    "TF_USE_LEGACY_KERAS=1)")


def _keras_repr(value):
    """repr(value); for a Keras 3 variable in graph mode, its repr without the value.

    Keras releases up to 3.12 (the last one for Python 3.10) read a variable's value
    to print it, which raises NotImplementedError in graph mode; later releases
    leave the value out there, and so does this.
    """
    try:
        return repr(value)
    except NotImplementedError:
        return (f"<Variable path={getattr(value, 'path', None)}, "
                f"shape={getattr(value, 'shape', None)}, "
                f"dtype={getattr(value, 'dtype', None)}>")


def _unprintable_keras_variable(error):
    """The Keras object whose __repr__ raised `error` (see _keras_repr), or None.

    TensorFlow prints what it was given when it refuses it (tf.group handed the
    `iterations` variable a Keras 3 optimizer returns): with Keras <= 3.12 in graph
    mode that printing raises instead of TensorFlow's TypeError.
    """
    tb = error.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        owner = frame.f_locals.get("self") if frame.f_code.co_name == "__repr__" else None
        if owner is not None and _keras.is_keras_object(owner):
            return owner
        tb = tb.tb_next
    return None


def _check_train_op(train_op):
    """Accepts a Tensor or Operation; a variable (some optimizers return the result
    of an assign, e.g. SyncReplicasOptimizer under resource variables) becomes its op.

    Raises:
      TypeError: anything else; a Keras 3 variable (what a Keras 3 optimizer's
        apply_gradients returns) gets KERAS3_OPTIMIZER_HINT.
    """
    if isinstance(train_op, (tf.Tensor, tf.Operation)):
        return train_op
    op = getattr(train_op, "op", None)
    if isinstance(op, tf.Operation):
        return op
    if _keras.is_keras_object(train_op):
        raise TypeError(f"train_op is a Keras object, {_keras_repr(train_op)}: "
                        f"{KERAS3_OPTIMIZER_HINT}")
    raise TypeError(f"train_op must be Operation or Tensor, given: {train_op} (got "
                    f"type {type(train_op).__name__})")


def _check_predictions(predictions, mode):
    """A Tensor or a dict of Tensors; None outside PREDICT becomes {} (as
    tf.estimator's spec holds it)."""
    if predictions is None:
        return {}
    if isinstance(predictions, dict):
        return {key: _check_is_tensor(f"predictions[{key}]", value)
                for key, value in predictions.items()}
    return _check_is_tensor("predictions", predictions)


def _check_metric_ops(eval_metric_ops):
    """A dict of name to a (value, update_op) tuple or a Keras Metric.

    As tf.estimator, the pair's members are not type-checked (an Operation or a
    nested tuple is fetched as it is); they must come from the model_fn's graph.
    """
    if eval_metric_ops is None:
        return {}
    if not isinstance(eval_metric_ops, dict):
        raise TypeError(f"eval_metric_ops must be a dict, given: {eval_metric_ops} "
                        "(a dict of name to a (value, update_op) tuple or a Keras "
                        "Metric)")
    eval_metric_ops = dict(eval_metric_ops)
    for name, given in eval_metric_ops.items():
        if hasattr(given, "value_and_update_op"):
            # A head's metric (what head.update_metrics returns), as tf.estimator's
            # heads return Metric objects that EstimatorSpec takes.
            eval_metric_ops[name] = tuple(given.value_and_update_op)
        elif _keras.is_keras_metric(given):
            # As tf.estimator: the metric's result, and its updates run per batch.
            eval_metric_ops[name] = keras_metrics.metric_pair(name, given)
        elif not isinstance(given, tuple) or len(given) != 2:
            raise TypeError("Values of eval_metric_ops must be (metric_value, "
                            f"update_op) tuples, given: {given} for key: {name} "
                            "(or a Keras Metric)")
    return eval_metric_ops


def _check_export_outputs(export_outputs, predictions, mode):
    """In PREDICT mode: validates export outputs and makes sure one is the serving
    default (a PredictOutput of the predictions when none are given). Other modes
    keep what they were given, as tf.estimator does."""
    if mode != ModeKeys.PREDICT:
        return export_outputs
    default_key = tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
    if export_outputs is None:
        return {default_key: export_lib.PredictOutput(predictions)}
    if not isinstance(export_outputs, dict):
        raise TypeError(f"`export_outputs` must be dict, received: {export_outputs}. "
                        "(a dict of signature name to ExportOutput)")
    for key, value in export_outputs.items():
        if not isinstance(value, export_lib.ExportOutput):
            raise TypeError("Values in `export_outputs` must be ExportOutput objects, "
                            f"received: {export_outputs}. (entry {key!r} is a "
                            f"{type(value).__name__}, not e.g. a PredictOutput)")
    # Signature names are the keys' text, as tf.estimator writes them ('1' for 1).
    outputs = {f"{key or 'None'}": value for key, value in export_outputs.items()}
    if default_key not in outputs:
        if len(outputs) != 1:
            raise ValueError("Multiple `export_outputs` were provided, but none of "
                             "them are specified as the default. Use"
                             "`tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY` to "
                             f"specify a default. (export_outputs has {len(outputs)} "
                             f"entries {sorted(outputs)} and none is {default_key!r})")
        outputs[default_key] = next(iter(outputs.values()))
    return outputs


def _check_hooks(name, hooks):
    if hooks is None:
        return ()
    hooks = tuple(hooks)
    for hook in hooks:
        if not isinstance(hook, tf.train.SessionRunHook):
            raise TypeError("All hooks must be SessionRunHook instances, given: "
                            f"{hook} ({name} holds a {type(hook).__name__})")
    return hooks


def _check_same_graph(name, values):
    """Every Tensor/Operation in `values` (nested) comes from the default graph.

    Raises:
      ValueError: one was built in another graph (outside the model_fn's call).
    """
    graph = tf.get_default_graph()
    for value in tf.nest.flatten(values):
        if getattr(value, "graph", graph) is not graph:
            raise ValueError(f'{name} with "{getattr(value, "name", value)}" must be '
                             "from the default graph. (the one the model_fn was "
                             f"called in: {value!r} was built outside the model_fn, "
                             "or by an earlier call of it)")


def _check_scaffold(scaffold):
    scaffold = scaffold or tf.train.Scaffold()
    if not isinstance(scaffold, tf.train.Scaffold):
        raise TypeError(f"scaffold must be tf.train.Scaffold. Given: {scaffold} (a "
                        f"tf.compat.v1.train.Scaffold is needed, got type "
                        f"{type(scaffold).__name__})")
    return scaffold


class EstimatorSpec(_SpecTuple):
    """What a model_fn returns, validated for its mode.

    TRAIN needs a scalar `loss` and a `train_op`; EVAL needs a scalar `loss`;
    PREDICT needs `predictions`. In PREDICT mode `export_outputs` defaults to a
    PredictOutput of the predictions under the serving default key. Validation
    follows tf.estimator 2.15 field by field, in its order: variables count as
    Tensors, a one-element loss becomes a scalar, `mode` itself is not checked.
    """

    def __new__(cls, mode: str,
                predictions: tf.Tensor | Mapping[str, tf.Tensor] | None = None,
                loss: tf.Tensor | None = None,
                train_op: tf.Operation | tf.Tensor | None = None,
                eval_metric_ops: Mapping[str, Any] | None = None,
                export_outputs: Mapping[str, export_lib.ExportOutput] | None = None,
                training_chief_hooks: Iterable[tf.train.SessionRunHook] | None = None,
                training_hooks: Iterable[tf.train.SessionRunHook] | None = None,
                scaffold: tf.train.Scaffold | None = None,
                evaluation_hooks: Iterable[tf.train.SessionRunHook] | None = None,
                prediction_hooks: Iterable[tf.train.SessionRunHook] | None = None,
                ) -> EstimatorSpec:
        """Validates the fields for `mode`.

        Raises:
          TypeError: a field has the wrong type.
          ValueError: a field the mode needs is missing, or is from another graph.
        """
        if train_op is None:
            if mode == ModeKeys.TRAIN:
                raise ValueError("Missing train_op. (train_op is required in "
                                 "'train' mode)")
        else:
            train_op = _check_train_op(train_op)
            _check_same_graph("train_op", train_op)
        if loss is None:
            if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
                raise ValueError(f"Missing loss. (loss is required in {mode!r} mode)")
        else:
            loss = _check_loss(loss)
            _check_same_graph("loss", loss)
        if predictions is None and mode == ModeKeys.PREDICT:
            raise ValueError("Missing predictions. (predictions are required in "
                             "'infer' (PREDICT) mode)")
        predictions = _check_predictions(predictions, mode)
        _check_same_graph("predictions", predictions)
        export_outputs = _check_export_outputs(export_outputs, predictions, mode)
        hooks = {name: _check_hooks(name, given) for name, given in (
            ("training_hooks", training_hooks), ("evaluation_hooks", evaluation_hooks),
            ("prediction_hooks", prediction_hooks),
            ("training_chief_hooks", training_chief_hooks))}
        eval_metric_ops = _check_metric_ops(eval_metric_ops)
        _check_same_graph("eval_metric_ops", eval_metric_ops)
        return super().__new__(
            cls, mode=mode, predictions=predictions, loss=loss, train_op=train_op,
            eval_metric_ops=eval_metric_ops, export_outputs=export_outputs,
            scaffold=_check_scaffold(scaffold), **hooks)

    def _replace(self, **kwargs):
        """Returns a copy with fields replaced, validated again.

        Raises:
          ValueError: `mode` would change.
        """
        if "mode" in kwargs and kwargs["mode"] != self.mode:
            raise ValueError(f"mode of EstimatorSpec cannot be changed. (it is "
                             f"{self.mode!r}, got mode={kwargs['mode']!r})")
        fields = self._asdict()
        fields.update(kwargs)
        return EstimatorSpec(**fields)


_MODEL_FN_ARGS = ("features", "labels", "mode", "params", "config")


def check_model_fn(model_fn, params=None):
    """Checks that `model_fn` is callable and declares only model_fn arguments.

    Args:
      model_fn: the model_fn.
      params: the Estimator's params (a model_fn given params must take them).

    Returns:
      model_fn.

    Raises:
      TypeError: not callable.
      ValueError: no `features` argument, an argument a model_fn cannot get, or
        params given to a model_fn without a `params` argument.
    """
    validation.check_callable("model_fn", model_fn)
    fn_args.check_declared_args("model_fn", model_fn, _MODEL_FN_ARGS, ("features",))
    declared = fn_args.declared_args(model_fn)
    if params is not None and declared is not None and "params" not in declared:
        raise ValueError(f"model_fn ({model_fn}) does not include params argument, "
                         f"but params ({params}) is passed to Estimator. (its "
                         "arguments are "
                         f"{fn_args.declared_args(model_fn)}: add params to them, or "
                         "give the Estimator no params)")
    return model_fn


_LEGACY_KERAS_HINT = (
    "the model_fn uses tf.compat.v1.layers or tf.compat.v1.nn.rnn_cell, which need "
    "Keras 2: pip install 'estimator_lite[legacy-keras]' (the tf-keras package) and set "
    "TF_USE_LEGACY_KERAS=1 in the environment before TensorFlow is imported")


# How a Keras 3 optimizer in a model_fn fails inside TensorFlow: its missing
# `minimize`, a tf.compat.v1 optimizer handed Keras 3 variables, and tf.group or
# control_dependencies given the `iterations` variable that apply_gradients returns.
_KERAS3_OPTIMIZER_ATTRIBUTE_ERRORS = ("has no attribute 'minimize'",
                                      "has no attribute '_in_graph_mode'")
_KERAS3_VARIABLE_REPR = "<Variable path="


def invoke_model_fn(model_fn, available):
    """Calls the model_fn with the arguments it declares, Keras 3 names per graph.

    Keras 3 numbers layer and variable names per process, so a second graph (eval
    after train) would name `dense_1` what the checkpoint calls `dense`; each graph
    gets a fresh numbering and the caller's numbering is restored afterwards.

    Raises:
      RuntimeError: the model_fn needs Keras 2 (tf.compat.v1.layers) and it is
        not installed/enabled; the message says what to install and set.
      TypeError: the model_fn uses a Keras 3 optimizer (or Keras 3 variables in a
        tf.compat.v1 optimizer); the message says what to use instead.
    """
    try:
        with _keras.isolated_keras_names(), tensorboard_hint():
            return call_with_declared_args(model_fn, available)
    except AttributeError as e:
        if "is not available with Keras 3" in str(e):
            raise RuntimeError(f"{_LEGACY_KERAS_HINT} (got: {e})") from e
        if any(sign in str(e) for sign in _KERAS3_OPTIMIZER_ATTRIBUTE_ERRORS):
            raise TypeError(f"{KERAS3_OPTIMIZER_HINT} (got: {e})") from e
        raise
    except TypeError as e:
        if _KERAS3_VARIABLE_REPR in str(e) and KERAS3_OPTIMIZER_HINT not in str(e):
            raise TypeError(f"{KERAS3_OPTIMIZER_HINT} (got: {e})") from e
        raise
    except NotImplementedError as e:
        # Keras <= 3.12 cannot print a variable in graph mode, so TensorFlow's
        # TypeError about the variable never forms; the cause is the same.
        variable = _unprintable_keras_variable(e)
        if variable is not None:
            raise TypeError(f"{KERAS3_OPTIMIZER_HINT} (got: {_keras_repr(variable)} "
                            f"where TensorFlow needs a tensor)") from e
        raise
