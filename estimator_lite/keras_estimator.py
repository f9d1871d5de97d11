"""`model_to_estimator`: a compiled Keras model as an Estimator (tf.estimator 2.15's API).

tf-keras's `tf.keras.estimator.model_to_estimator` needs tensorflow_estimator; this
one builds an estimator_lite.Estimator whose model_fn rebuilds the model from its
config in each graph (Keras 3 layers, or tf-keras layers under TF_USE_LEGACY_KERAS=1,
run in graph mode) and uses what `compile()` recorded:
- loss: the compiled loss (plus the model's regularization losses); a loss given
  by name ('mse') or as a function is averaged over the batch, as compile() does;
- optimizer: mapped to the graph optimizer with the same class and hyperparameters
  (estimator_lite.canned.optimizers), or a clear error for one that has none;
- metrics: each compiled metric as a tf.compat.v1 metric with Keras' update rule
  (accuracy family, MSE, MAE, AUC), named as Keras names them (`metric_names_map`
  renames), plus `loss`;
- the model's current weights: written to `<model_dir>/keras/keras_model.ckpt` and
  warm-started from when training starts without a checkpoint, as tf.estimator did;
- predictions and the serving signature keyed by the model's output names;
  features looked up by the model's input names (a KeyError when one is
  missing, as tf.estimator raised).

A user's subclass of Sequential, or of a functional model, trains as the plain
Sequential / functional model of its layers (tf.estimator cloned it into one); a
subclassed keras.Model (structure in `call`) is refused with a ValueError, as
tf.estimator refused it.

Checkpoints are name-based (`dense/kernel`) whatever `checkpoint_format` says, so a
model_dir written by tf.estimator's model_to_estimator (object-based names) does not
load here: start from the Keras model's weights instead.
"""

import copy
import importlib
import os
import re

from estimator_lite import _keras
from estimator_lite._engine import compiled_metrics
from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import logging, tf
from estimator_lite.estimator import Estimator, WarmStartSettings
from estimator_lite.model_fn import EstimatorSpec, ModeKeys
from estimator_lite.optimizers import mapping as optimizers_lib

__all__ = ["model_to_estimator"]

_CHECKPOINT_FORMATS = ("checkpoint", "saver")
_KERAS_CHECKPOINT = os.path.join("keras", "keras_model.ckpt")


def graph_optimizer_factory(keras_optimizer):
    """The one adapter to estimator_lite's Keras-optimizer mapping.

    Args:
      keras_optimizer: the compiled Keras optimizer (read eagerly, here).

    Returns:
      A zero-argument function building the equivalent graph optimizer (an object
      with `apply_gradients(grads_and_vars, iterations)`) in the current graph.

    Raises:
      ValueError: the optimizer (or one of its options) has no graph equivalent.
    """
    return optimizers_lib.optimizer_factory(keras_optimizer,
                                            argument="keras_model.optimizer")


# Model structure ---------------------------------------------------------------------


def _structure(model):
    """(class, config) that rebuild the model's structure in any graph.

    A user's subclass of Sequential is rebuilt as a plain Sequential of its
    layers, and a user's subclass of a functional model (its constructor calls
    `super().__init__(inputs, outputs)`) as a plain functional model of the same
    layers, as tf.estimator's model cloning did: their own constructors may take
    other arguments than the config holds.
    """
    sequential = _keras.keras_base(type(model), ("Sequential",))
    if sequential is not None:
        return sequential, model.get_config()
    own_class = _keras.keras_package(type(model)) is None
    if own_class and _keras.keras_base(type(model), ("Functional",)) is not None:
        keras_model_class = _keras_package(model).Model
        plain = keras_model_class(model.inputs, model.outputs, name=model.name)
        return keras_model_class, plain.get_config()
    return type(model), model.get_config()


def _input_names(model, config):
    """Feature keys the model's inputs are looked up under."""
    names = getattr(model, "input_names", None)  # Keras 2 / tf-keras
    if names:
        return list(names)
    layers = config.get("input_layers")
    if layers:  # Keras 3 functional: [name, 0, 0] or a list of those
        layers = [layers] if isinstance(layers[0], str) else layers
        return [entry[0] for entry in layers]
    first = (config.get("layers") or [{}])[0]
    if first.get("class_name") == "InputLayer":
        return [first["config"]["name"]]
    return [f"{model.layers[0].name}_input"]


def _output_names(model):
    names = getattr(model, "output_names", None)
    if names:
        return list(names)
    return [model.layers[-1].name]  # Keras 3 Sequential: its last layer


# The names Keras 3 gives an unnamed input layer: input_layer, input_layer_1, ...
_KERAS3_INPUT_NAME = re.compile(r"input_layer(_\d+)?")


def _legacy_input_name(model, input_names):
    """Keras 2's name for a Keras 3 Sequential's input ('dense_input'), or None.

    Keras 2 named a Sequential's input after its first layer, and tutorials key
    their features by it; Keras 3 names it 'input_layer'. Only that case gets
    the alias: a named input, or a tf-keras model (Keras 2's names), does not.
    """
    if (len(input_names) != 1 or not model.layers
            or not _KERAS3_INPUT_NAME.fullmatch(input_names[0])
            or _keras.keras_base(type(model), ("Sequential",)) is None
            or _keras_package(model).__name__ != "keras"):
        return None
    return f"{model.layers[0].name}_input"


class _MissingFeaturesError(KeyError):
    """KeyError whose message prints as written (KeyError would quote it)."""

    def __str__(self):
        return str(self.args[0])


def _model_inputs(features, input_names, legacy_name):
    """The model's inputs from what the input_fn / serving receiver gave.

    A dict is looked up by the model's input names (extra keys are ignored); a
    single-input Keras 3 Sequential also answers to Keras 2's name for it
    (`legacy_name`, '<first layer>_input', which tutorials use).

    Raises:
      KeyError: a dict of features misses one of the model's input names (as
        tf.estimator raises: a wrong key is an error, not silently used).
    """
    if not isinstance(features, dict):
        return features
    if legacy_name is not None and input_names[0] not in features and (
            legacy_name in features):
        return features[legacy_name]
    missing = [name for name in input_names if name not in features]
    if missing:
        alias = f" (or Keras 2's name {legacy_name!r})" if legacy_name else ""
        raise _MissingFeaturesError(
            f"features must hold every input of the Keras model: expected keys "
            f"{sorted(input_names)}{alias}, got keys {sorted(features)}, missing "
            f"{sorted(missing)}")
    values = [features[name] for name in input_names]
    return values[0] if len(values) == 1 else values


def _by_output(value, output_names, what):
    """A dict output name -> tensor from a tensor, list or dict.

    Raises:
      ValueError: the structure does not match the model's outputs.
    """
    if isinstance(value, dict):
        missing = [n for n in output_names if n not in value]
        if missing:
            raise ValueError(f"{what} must be keyed by the Keras model's output names "
                             f"{output_names}, got keys {sorted(value)}")
        return {n: value[n] for n in output_names}
    if isinstance(value, (list, tuple)):
        if len(value) != len(output_names):
            raise ValueError(f"{what}: the model has outputs {output_names}, got "
                             f"{len(value)} values")
        return dict(zip_strict(output_names, value))
    if len(output_names) != 1:
        raise ValueError(f"{what}: the model has outputs {output_names}; give a dict "
                         "keyed by them")
    return {output_names[0]: value}


# Loss and metrics --------------------------------------------------------------------


def _keras_package(model):
    """The Keras the model was built with: `keras` (Keras 3) or `tf_keras`.

    Decided from the model's Keras base class, never from the module of its own
    class: a user's subclass (defined in `__main__`, say) is what its base is.

    Raises:
      TypeError: `model` is not a Keras model.
    """
    base = _keras.keras_base(type(model), ("Model",))
    if base is None:
        raise TypeError(f"keras_model must be a Keras model (keras.Model or "
                        f"tf_keras.Model), got {model!r}" + _keras.tf1_keras_note(
                            model, "an Estimator with a model_fn"))
    return importlib.import_module(_keras.keras_package(base))


def _same_rank(labels, predictions):
    """Labels and predictions brought to one rank, as Keras' loss wrapper does.

    A rank-1 tensor beside a rank-2 one whose last dimension is 1 gets that
    dimension added, so a per-example loss compares labels (batch,) with
    predictions (batch, 1) element by element, not broadcast.
    """
    labels = tf.convert_to_tensor(labels)
    label_rank, prediction_rank = labels.shape.ndims, predictions.shape.ndims
    if label_rank is None or prediction_rank is None:
        return labels, predictions
    if prediction_rank == label_rank + 1 and predictions.shape[-1] == 1:
        labels = tf.expand_dims(labels, -1) if label_rank == 1 else labels
        predictions = predictions if label_rank == 1 else tf.squeeze(predictions, -1)
    elif label_rank == prediction_rank + 1 and labels.shape[-1] == 1:
        predictions = (tf.expand_dims(predictions, -1) if prediction_rank == 1
                       else predictions)
        labels = labels if prediction_rank == 1 else tf.squeeze(labels, -1)
    return labels, predictions


def _mean_over_batch(fn):
    """A per-example loss function reduced as compile() reduces it.

    Keras wraps a loss given by name or as a plain function so that its
    per-example values are averaged over every element (`sum_over_batch_size`);
    a Keras `Loss` object reduces itself.
    """
    def loss(labels, predictions):
        labels, predictions = _same_rank(labels, predictions)
        return tf.reduce_mean(fn(labels, predictions))
    loss.fn = fn  # What _loss_kind reads (the name 'accuracy' resolves by).
    loss.__name__ = getattr(fn, "__name__", "loss")
    return loss


def _losses_by_output(model, output_names):
    """Output name -> a scalar loss callable (y_true, y_pred), from compile(loss=...)."""
    losses_module = _keras_package(model).losses
    loss = model.loss
    if isinstance(loss, dict):
        per_output = {n: loss[n] for n in output_names if loss.get(n) is not None}
    elif isinstance(loss, (list, tuple)):
        per_output = dict(zip_strict(output_names, loss))
    else:
        per_output = dict.fromkeys(output_names, loss)
    result = {}
    for name, value in per_output.items():
        loss_fn = losses_module.get(value) if isinstance(value, str) else value
        if _keras.keras_base(type(loss_fn), ("Loss",)) is None:
            loss_fn = _mean_over_batch(loss_fn)
        result[name] = loss_fn
    return result


def _compiled_metrics(model, output_names):
    """Output name -> list of compiled metrics (as given to compile())."""
    config = model.get_compile_config() if hasattr(model, "get_compile_config") else {}
    metrics = (config or {}).get("metrics")
    if metrics is None:
        metrics = _keras.compiled_user_metrics(model)
    if not metrics:
        return {}
    if isinstance(metrics, dict):
        return {n: list(m) if isinstance(m, (list, tuple)) else [m]
                for n, m in metrics.items()}
    if len(output_names) == 1 or not isinstance(metrics[0], (list, tuple)):
        return {n: list(metrics) for n in output_names}
    return dict(zip_strict(output_names, metrics))


def _metric_builders(model, output_names, losses, metric_names_map):
    """[(result name, output name, builder)] for every compiled metric."""
    builders = []
    for output, metrics in _compiled_metrics(model, output_names).items():
        for metric in metrics:
            name, build = compiled_metrics.metric_spec(metric, losses.get(output))
            if len(output_names) > 1:
                name = f"{output}_{name}"
            builders.append(((metric_names_map or {}).get(name, name), output, build))
    return builders


# Weights -----------------------------------------------------------------------------


def _rebuild(structure):
    """A fresh copy of the model's structure (see `_structure`), in the current graph."""
    cls, config = structure
    config = copy.deepcopy(config)  # from_config may change its argument
    if cls.__name__ == "Sequential" and _keras.keras_package(cls) == "keras":
        return _rebuild_sequential(cls, config)
    return cls.from_config(config)


def _rebuild_sequential(cls, config):
    """A Keras 3 Sequential whose variables are named `<layer>/<weight>`.

    Keras 3 releases after 3.15 deserialize a Sequential's layers inside the
    model's name scope (`sequential/dense/kernel`); tf.estimator's checkpoints,
    like those Keras <= 3.15 made here, name them `dense/kernel`. So the layers
    are deserialized first, outside that scope, as Keras 3.15's from_config did.
    """
    keras = importlib.import_module(cls.__module__.split(".")[0])
    model = cls(name=config["name"])
    for layer_config in config["layers"]:
        model.add(keras.saving.deserialize_keras_object(layer_config))
    shape = config.get("build_input_shape")
    if not model.built and isinstance(shape, (tuple, list)) and shape:
        model.build(shape)
    return model


def _write_keras_checkpoint(model, structure, path):
    """Saves the model's current weights under the names the model_fn's graph uses.

    Returns:
      The names of the variables written (for warm-starting exactly those).
    """
    weights = model.get_weights()
    with tf.Graph().as_default():
        clone = _rebuild(structure)
        clone.build(model.input_shape)
        variables = [_keras.tf_variable(w) for w in clone.weights]
        with tf.Session() as session:
            session.run(tf.variables_initializer(variables))
            for variable, value in zip_strict(variables, weights):
                variable.load(value, session)
            tf.train.Saver(var_list=variables).save(session, path,
                                                   write_meta_graph=False)
    return [v.op.name for v in variables]


def _loading_keras():
    """The Keras TensorFlow's tf.keras is: tf-keras under TF_USE_LEGACY_KERAS=1."""
    return importlib.import_module("tf_keras" if _keras.uses_legacy_keras() else "keras")


# The estimator -----------------------------------------------------------------------


def _check_model(keras_model, keras_model_path, custom_objects):
    """The compiled Keras model to convert.

    Raises:
      ValueError: neither or both of keras_model / keras_model_path, or the model
        is not compiled or not a Sequential/functional model.
    """
    if keras_model is None and keras_model_path is None:
        raise ValueError("Either keras_model or keras_model_path needs to be provided, "
                         "got neither")
    if keras_model is not None and keras_model_path is not None:
        raise ValueError("Give either keras_model or keras_model_path, not both; got "
                         f"keras_model={keras_model!r}, keras_model_path="
                         f"{keras_model_path!r}")
    if keras_model is None:
        if os.path.isdir(keras_model_path) or not os.path.exists(keras_model_path):
            raise ValueError("keras_model_path must be a saved .keras or .h5 file, got "
                             f"{keras_model_path!r}")
        keras_model = _loading_keras().models.load_model(keras_model_path,
                                                         custom_objects=custom_objects)
    _check_structure(keras_model)
    if getattr(keras_model, "optimizer", None) is None or keras_model.loss is None:
        raise ValueError("The given keras model has not been compiled yet: call "
                         "model.compile(optimizer, loss, metrics) before "
                         f"model_to_estimator; got {keras_model!r}")
    return keras_model


def _check_structure(keras_model):
    """Refuses a subclassed model: only a Sequential or functional one is rebuilt.

    tf.estimator refused it too (a ValueError) with the default object-based
    checkpoints; here the model_fn rebuilds the model from its config, which a
    subclassed model's config cannot do, whatever the checkpoint format.

    Raises:
      TypeError: not a Keras model.
      ValueError: a subclassed keras.Model.
    """
    _keras_package(keras_model)
    if _keras.keras_base(type(keras_model), ("Sequential", "Functional")) is None:
        raise ValueError(
            "model_to_estimator does not support subclassed Keras models (object-"
            "based checkpoints of them are not supported, and they cannot be rebuilt "
            "from their config); build the model with keras.Sequential or the "
            f"functional API, got {type(keras_model).__name__}")


# Variable writes a layer call makes besides computing its outputs: BatchNorm moving
# statistics, Keras 3 seed-generator advances (new dropout masks each step).
_STATE_UPDATE_OP_TYPES = ("AssignVariableOp", "AssignAddVariableOp",
                          "AssignSubVariableOp")


def _call_with_state_updates(clone, inputs, training):
    """Calls the model; returns (outputs, the state-update ops the call created).

    In graph mode these writes are ops nothing depends on (Keras' fit runs them with
    each step); grouping them with the train op runs them with each training step,
    never in eval/predict. Only ops created by this call are taken, never updates
    built on the model's own Input placeholders.
    """
    graph = tf.get_default_graph()
    first_new = len(graph.get_operations())
    outputs = clone(inputs, training=training)
    updates = [op for op in graph.get_operations()[first_new:]
               if op.type in _STATE_UPDATE_OP_TYPES] if training else []
    return outputs, updates


def _make_model_fn(model, structure, export_outputs, metric_names_map):
    input_names = _input_names(model, structure[1])
    output_names = _output_names(model)
    legacy_name = _legacy_input_name(model, input_names)
    losses = _losses_by_output(model, output_names)
    metric_builders = _metric_builders(model, output_names, losses, metric_names_map)
    new_optimizer = graph_optimizer_factory(model.optimizer)

    def model_fn(features, labels, mode):
        clone = _rebuild(structure)
        outputs, state_updates = _call_with_state_updates(
            clone, _model_inputs(features, input_names, legacy_name),
            training=mode == ModeKeys.TRAIN)
        predictions = _by_output(outputs, output_names, "model outputs")
        if mode == ModeKeys.PREDICT:
            return EstimatorSpec(mode, predictions=predictions,
                                 export_outputs=export_outputs)
        targets = _by_output(labels, output_names, "labels")
        loss_terms = [losses[n](targets[n], predictions[n]) for n in losses]
        loss_terms += list(clone.losses)  # regularization
        loss = tf.add_n([tf.cast(t, tf.float32) for t in loss_terms])
        if mode == ModeKeys.EVAL:
            metrics = {name: build(targets[output], predictions[output])
                       for name, output, build in metric_builders}
            return EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
        variables = [_keras.tf_variable(w) for w in clone.trainable_weights]
        grads = tf.gradients(loss, variables)
        train_op = new_optimizer().apply_gradients(
            zip_strict(grads, variables),
            iterations=tf.train.get_or_create_global_step())
        if state_updates:
            train_op = tf.group(train_op, *state_updates)
        return EstimatorSpec(mode, loss=loss, train_op=train_op)

    return model_fn


def model_to_estimator(keras_model=None, keras_model_path=None, custom_objects=None,
                       model_dir=None, config=None, checkpoint_format="checkpoint",
                       metric_names_map=None, export_outputs=None):
    """An Estimator training, evaluating and serving a compiled Keras model.

    Args:
      keras_model: a compiled Sequential or functional Keras model (Keras 3, or
        tf-keras under TF_USE_LEGACY_KERAS=1).
      keras_model_path: a saved model file (.keras / .h5) instead of keras_model.
      custom_objects: passed to load_model for keras_model_path.
      model_dir: the Estimator's directory (default: config's, else a temp dir).
      config: an estimator_lite.RunConfig.
      checkpoint_format: 'checkpoint' or 'saver' (tf.estimator's choice between
        object- and name-based checkpoints); accepted for compatibility, the
        checkpoints are name-based either way.
      metric_names_map: dict renaming metrics in evaluate()'s results.
      export_outputs: dict of signature name to ExportOutput for serving (default:
        a PredictOutput of the outputs keyed by the model's output names).

    Returns:
      An estimator_lite.Estimator. Features are looked up by the model's input
      names (a single-input model also takes a single-entry dict, e.g. Keras 2's
      '<first layer>_input' key); labels by its output names (or one tensor).

    Raises:
      ValueError: see `_check_model`; a bad checkpoint_format; an optimizer or
        metric with no graph-mode equivalent.
      TypeError: metric_names_map is not a dict.
    """
    if checkpoint_format not in _CHECKPOINT_FORMATS:
        raise ValueError(f"checkpoint_format must be one of {_CHECKPOINT_FORMATS}, got "
                         f"{checkpoint_format!r}")
    if metric_names_map is not None and not isinstance(metric_names_map, dict):
        raise TypeError(f"metric_names_map must be a dict or None, got "
                        f"{metric_names_map!r}")
    model = _check_model(keras_model, keras_model_path, custom_objects)
    structure = _structure(model)
    model_fn = _make_model_fn(model, structure, export_outputs, metric_names_map)
    estimator = Estimator(model_fn, model_dir=model_dir, config=config)
    checkpoint = os.path.join(estimator.model_dir, _KERAS_CHECKPOINT)
    if estimator.latest_checkpoint() is not None:
        logging.info("model_to_estimator: %s has a checkpoint; it is used instead of "
                     "the Keras model's weights", estimator.model_dir)
        return estimator
    os.makedirs(os.path.dirname(checkpoint), exist_ok=True)
    names = _write_keras_checkpoint(model, structure, checkpoint)
    warm_start = WarmStartSettings(checkpoint, vars_to_warm_start=[
        re.escape(name) + ":" for name in names])
    return Estimator(model_fn, model_dir=estimator.model_dir, config=estimator.config,
                     warm_start_from=warm_start)
