"""From what users pass as an optimizer to what trains in a tf.compat.v1 graph.

`graph_optimizer` is the one place an optimizer instance becomes something that
trains in a tf.compat.v1 graph; the canned estimators (through
`optimizer_factory`, which also takes names and callables) and the heads'
``create_estimator_spec(optimizer=...)`` both use it:
  * a tf-keras legacy optimizer (``tf.keras.optimizers.legacy.*`` with
    TF_USE_LEGACY_KERAS=1) runs as it is, as on tf.estimator 2.15
    (`adapters.LegacyKerasOptimizer`);
  * a Keras 3 or tf-keras (non-legacy) optimizer becomes the `GraphOptimizer`
    with the same class name and hyperparameters;
  * a tf.compat.v1.train.Optimizer or a GraphOptimizer is used as it is;
  * a user's subclass of a Keras optimizer is what its Keras base class is
    (decided from its bases, wherever it is defined), as tf.estimator's
    ``isinstance`` checks took it; one overriding the update rule is refused;
  * but a user's Keras optimizer class that defines ``get_updates(loss, params)``
    (or, on a legacy OptimizerV2, ``get_gradients``) trains through it, as
    tf.estimator 2.15 trained every Keras optimizer
    (`adapters.UserUpdatesOptimizer`).
Keras 3's constructor refuses a tensor learning rate; inside an optimizer
callable given to a canned estimator it is made to take one
(estimator_lite._keras.tensor_learning_rates), so tf.estimator's documented
``optimizer=lambda: Adam(learning_rate=exponential_decay(...))`` trains on Keras 3
too. `get_optimizer_instance_v2` is tf.estimator's function of that name.
"""

from estimator_lite import _keras
from estimator_lite._engine import validation
from estimator_lite._tf import logging, tf
from estimator_lite.optimizers.adapters import (
    LegacyKerasOptimizer,
    UserUpdatesOptimizer,
    V1Optimizer,
)
from estimator_lite.optimizers.graph import (
    KERAS_CLASSES,
    OPTIMIZER_NAMES,
    GraphOptimizer,
    is_number,
)

__all__ = ["get_optimizer_instance_v2", "graph_optimizer", "optimizer_factory"]

# What TF 1.15 takes instead of its built-in tf.keras optimizers (_keras.tf1_keras_note).
_TF1_OPTIMIZERS = "a tf.compat.v1.train.Optimizer"
# Keras optimizer options that change the update rule and that we do not emulate,
# with the values that leave it unchanged.
_UNSUPPORTED_KERAS_OPTIONS = {
    "weight_decay": (None, 0), "clipnorm": (None,), "clipvalue": (None,),
    "global_clipnorm": (None,), "loss_scale_factor": (None, 1),
    "gradient_accumulation_steps": (None, 1), "use_ema": (None, False),
    "amsgrad": (None, False)}


# Methods that make an optimizer's update rule: a user's subclass overriding one
# cannot be replaced by the graph optimizer of its base class.
_UPDATE_RULE_METHODS = ("update_step", "apply", "apply_gradients", "build",
                        "stateless_apply", "minimize", "_update_step",
                        "_backend_update_step", "_apply_weight_decay")


def _keras_learning_rate(optimizer):
    """The learning rate a Keras 3 / tf-keras optimizer was given.

    A number stays a number; a schedule or a callable is returned as it is; a
    rate held in a graph variable (tf-keras builds a variable from a tensor it is
    given, such as an exponential_decay on the global step) is returned as the
    tensor it was built from, so it is recomputed at every step.
    """
    raw = _keras.optimizer_learning_rate(optimizer)
    if isinstance(raw, _keras.TensorLearningRate):  # A graph tensor given to Keras 3.
        return raw.tensor
    variable = _keras.tf_variable(raw)
    if variable is None:
        return raw
    try:
        return float(variable.numpy())
    except NotImplementedError:  # A graph variable: numpy() needs eager execution.
        initial = variable.initial_value
        static = tf.get_static_value(initial)
        return float(static) if static is not None else initial


def _forget_keras_variables(optimizer):
    """Drops the replaced Keras optimizer's graph variables from the collections.

    A Keras optimizer built inside the model_fn creates its counters and rate
    variables in the graph; nothing uses them once it is replaced, and they must
    not enter checkpoints (tf.estimator 2.15's have no such names).
    """
    if tf.executing_eagerly():
        return
    graph = tf.get_default_graph()
    ids = {id(v) for v in _keras.optimizer_variables(optimizer)
           if getattr(v, "graph", None) is graph}
    if not ids:
        return
    for key in (tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.LOCAL_VARIABLES):
        collection = tf.get_collection_ref(key)
        collection[:] = [v for v in collection if id(v) not in ids]


def _keras_hyperparameters(optimizer, cls):
    """Hyperparameters of a Keras 3 / tf-keras optimizer, read from its attributes.

    get_config cannot be used in a graph: tf-keras evaluates its learning-rate
    variable there (FailedPreconditionError or NotImplementedError).
    """
    names = {*cls.HYPER, *cls.OPTIONS, *_UNSUPPORTED_KERAS_OPTIONS} - {"learning_rate"}
    values = {n: getattr(optimizer, n) for n in sorted(names) if hasattr(optimizer, n)}
    values["learning_rate"] = _keras_learning_rate(optimizer)
    return values


def _graph_class(optimizer, argument):
    """(GraphOptimizer class, Keras class name) for a Keras optimizer.

    The class is the first one Keras defines in the optimizer's MRO: a user's
    subclass of a Keras optimizer is its Keras base (its own hyperparameter
    defaults are read from the instance), unless it overrides the update rule,
    which has no graph-mode equivalent. Keras' own derived optimizers (AdamW...)
    stay what they are.

    Raises:
      ValueError: that Keras class has no graph equivalent, or the subclass
        overrides the update rule.
    """
    base = next(cls for cls in type(optimizer).__mro__
                if _keras.keras_package(cls) is not None)
    if base.__name__ not in KERAS_CLASSES:
        raise ValueError(f"{argument}: Keras optimizer {base.__name__} has no graph-mode "
                         f"equivalent; use one of {sorted(KERAS_CLASSES)} (or a "
                         "subclass of one)")
    overridden = _keras.user_defined_methods(type(optimizer), _UPDATE_RULE_METHODS)
    if overridden:
        raise ValueError(f"{argument}: {type(optimizer).__name__} overrides {overridden} "
                         f"of Keras' {base.__name__}; a custom update rule cannot run "
                         "in graph mode (a subclass may only change hyperparameters)")
    return KERAS_CLASSES[base.__name__], base.__name__


def _from_keras(optimizer, argument):
    """A GraphOptimizer with the class and hyperparameters of a Keras optimizer."""
    cls, cls_name = _graph_class(optimizer, argument)
    config = _keras_hyperparameters(optimizer, cls)
    for option, neutral in _UNSUPPORTED_KERAS_OPTIONS.items():
        if config.get(option) not in neutral:
            raise ValueError(f"{argument}: Keras option {option}={config[option]!r} of "
                             f"{cls_name} is not supported in graph mode; leave it at "
                             f"{neutral[-1]!r}")
    known = {"learning_rate", "decay", *cls.HYPER, *cls.OPTIONS}
    kwargs = {k: v for k, v in config.items() if k in known}
    if is_number(kwargs["learning_rate"]):
        kwargs["learning_rate"] = float(kwargs["learning_rate"])
    graph_optimizer = cls(**kwargs)
    _forget_keras_variables(optimizer)
    logging.info("%s: Keras optimizer %s cannot run in graph mode; using its "
                 "tf.compat.v1 equivalent %r", argument, cls_name, graph_optimizer)
    return graph_optimizer


def _resolve_instance(value, argument):
    """An object with apply_gradients(grads_and_vars, iterations), or None."""
    if isinstance(value, (GraphOptimizer, LegacyKerasOptimizer, V1Optimizer,
                          UserUpdatesOptimizer)):
        return value
    if isinstance(value, tf.train.Optimizer):
        return V1Optimizer(value)
    if _keras.trains_through_get_updates(value):
        return UserUpdatesOptimizer(value)
    if _keras.is_legacy_keras_optimizer(value):
        return LegacyKerasOptimizer(value)
    if _keras.is_keras_optimizer(value):
        return _from_keras(value, argument)
    return None


def graph_optimizer(optimizer, argument="optimizer"):
    """Turns an optimizer instance into one that trains in a tf.compat.v1 graph.

    The one mapping from what users pass as an optimizer to what runs: canned
    estimators, heads and wrappers such as model_to_estimator all call it.

    Args:
      optimizer: a Keras 3 or tf-keras optimizer (mapped to the `GraphOptimizer`
        of the same class name, hyperparameters and learning rate: a number,
        tensor, callable or LearningRateSchedule), a tf-keras legacy optimizer
        (run as it is), a tf.compat.v1.train.Optimizer, or a GraphOptimizer.
      argument: the argument name used in messages.

    Returns:
      An object with ``apply_gradients(grads_and_vars, iterations=None,
      name=None)``: it applies the updates and increments `iterations` (an int64
      variable, usually the global step; None: the optimizer's own counter).
      Call it inside the graph it trains, after `optimizer` was built.

    Raises:
      TypeError: `optimizer` is not an optimizer instance of those kinds.
      ValueError: a Keras optimizer with no graph equivalent (the message names
        it and lists the supported ones), or with an option that changes the
        update rule and is not emulated (clipnorm, weight_decay, ema...).
    """
    built = _resolve_instance(optimizer, argument)
    if built is None:
        raise TypeError(f"{argument} must be an optimizer instance (Keras, tf-keras "
                        f"legacy or tf.compat.v1.train.Optimizer), got {optimizer!r} "
                        f"of type {type(optimizer).__name__}" + _keras.tf1_keras_note(
                            optimizer, _TF1_OPTIMIZERS))
    return built


def _fresh_copy(instance):
    """A copy of a built optimizer for a new graph (variables belong to one graph)."""
    if isinstance(instance, GraphOptimizer):
        return type(instance)(**instance.get_config())
    if isinstance(instance, LegacyKerasOptimizer):
        return instance.fresh_copy()
    return instance


def optimizer_factory(optimizer, default_learning_rate=None, argument="optimizer"):
    """Validates an `optimizer` argument; returns a function building it in a graph.

    Args:
      optimizer: a name from OPTIMIZER_NAMES, any instance `graph_optimizer`
        takes, or a callable returning one (called in the model_fn's graph, so
        its learning rate may be a tensor on the global step).
      default_learning_rate: learning rate for a name (None: the Keras default).
      argument: argument name for messages.

    Returns:
      A zero-argument function returning a fresh object with
      ``apply_gradients(grads_and_vars, iterations=None)``; call it inside the
      model_fn.

    Raises:
      TypeError: `optimizer` has none of the accepted types.
      ValueError: an unknown name, or an unsupported Keras optimizer.
    """
    if isinstance(optimizer, str):
        cls = OPTIMIZER_NAMES.get(optimizer)
        if cls is None:
            raise ValueError(f"{argument} must be one of {sorted(OPTIMIZER_NAMES)} when "
                             f"given as a name, got {optimizer!r}")
        return lambda: cls(learning_rate=default_learning_rate)
    instance = _resolve_instance(optimizer, argument)
    if instance is not None:
        return lambda: _fresh_copy(instance)
    if callable(optimizer):
        def build():
            # The callable may give a Keras 3 optimizer a tensor learning rate
            # (tf.estimator's documented example), which Keras 3 alone refuses.
            with _keras.tensor_learning_rates():
                result = optimizer()
            value = _resolve_instance(result, argument)
            if value is None:
                raise TypeError(f"{argument} callable must return an optimizer "
                                f"instance, got {result!r} of type "
                                f"{type(result).__name__}" + _keras.tf1_keras_note(
                                    result, _TF1_OPTIMIZERS))
            return value
        return build
    raise TypeError(f"{argument} must be an optimizer name, an optimizer instance or a "
                    f"callable returning one, got {optimizer!r} of type "
                    f"{type(optimizer).__name__}" + _keras.tf1_keras_note(
                        optimizer, _TF1_OPTIMIZERS))


def get_optimizer_instance_v2(opt, learning_rate=None):
    """The Keras-style optimizer a model_fn trains with, from a name or an instance.

    tf.estimator's function of that name, which libraries' model_fns call
    (tensorflow_lattice's canned estimators, which then set the result's
    `iterations` to the global step and hand it to a head).

    Args:
      opt: a name from OPTIMIZER_NAMES, an optimizer instance, or a callable
        returning one (called here).
      learning_rate: the learning rate for a name; None or 0 gives the
        optimizer's default (as tf.estimator).

    Returns:
      For a name, tf-keras' legacy optimizer of that name when tf.keras is
      tf-keras (TF_USE_LEGACY_KERAS=1), which is what tf.estimator 2.15 returns
      (it applies the variables' Keras constraints), else the `GraphOptimizer`
      of that name (Keras 3 has no legacy optimizers). A tf-keras legacy
      optimizer or a GraphOptimizer is returned as it is. A Keras 3 or tf-keras
      (non-legacy) optimizer becomes its `GraphOptimizer`, as tf.estimator turned
      one into its legacy equivalent (only when called eagerly).

    Raises:
      ValueError: `opt` is a name not in OPTIMIZER_NAMES, or the optimizer has
        no graph-mode equivalent.
      TypeError: `opt` (or what its callable returned) is not a Keras optimizer
        or GraphOptimizer, e.g. a tf.compat.v1.train.Optimizer (also a
        ValueError, what tf.estimator raises).
    """
    if isinstance(opt, str):
        if opt not in OPTIMIZER_NAMES:
            raise ValueError(f"opt must be one of {sorted(OPTIMIZER_NAMES)} when given as "
                             f"a name, got {opt!r}")
        legacy = _keras.legacy_optimizer_class(OPTIMIZER_NAMES[opt].KERAS_NAME)
        cls = legacy or OPTIMIZER_NAMES[opt]
        return cls(learning_rate=learning_rate) if learning_rate else cls()
    if callable(opt):
        with _keras.tensor_learning_rates():  # As optimizer_factory's callables.
            opt = opt()
    if isinstance(opt, GraphOptimizer) or _keras.is_legacy_keras_optimizer(opt) or (
            _keras.trains_through_get_updates(opt)):
        return opt
    if _keras.is_keras_optimizer(opt):
        return _from_keras(opt, "opt")
    raise validation.WrongTypeError(
        f"opt must be a Keras optimizer (or an optimizer name, or a callable returning "
        f"one), got {opt!r} of type {type(opt).__name__}")
