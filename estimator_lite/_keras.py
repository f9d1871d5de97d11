"""The one place that asks "is this a Keras object?" and reaches into Keras' internals.

Keras is never imported at import time: a Keras object handed in by the user says
which Keras it is (Keras 3 `keras`, or `tf_keras` under TF_USE_LEGACY_KERAS=1).
What a Keras object is, is decided from the Keras classes it derives from, never
from the module of its own class: a user's subclass, defined in `__main__` or in
their package, is what its Keras base is (as tf.estimator, which used
`isinstance`, treated it).

It is also the one module that reads private attributes of Keras and TensorFlow
objects handed in by users (an optimizer's ``_iterations``, ``_hyper``,
``_learning_rate`` and ``_weights``, a tf-keras model's
``compiled_metrics._user_metrics``, a variable's ``_save_slice_info``, a v1
feature column's ``_variable_shape``): each read is a named function here. One
that must find its attribute raises a RuntimeError naming the Keras or TensorFlow
release that lacks it; the few that may legitimately find nothing say so in their
docstring. (TensorFlow's own internals stay with their owners: `_tf.py` for
`Operation._add_control_inputs`, `_engine/distribute.py` for tf.distribute's.)
tests/repository/private_attributes_test.py checks that no other module reads these
names. Keras 3's internal layer-name counters are reset here too
(`isolated_keras_names`).
"""

import collections
import contextlib
import importlib
import importlib.util
import os
import sys
import threading

from estimator_lite._tf import VARIABLE_TYPES, tf

__all__ = ["KERAS_PACKAGES", "TensorLearningRate", "called_from_keras_layer",
           "compiled_user_metrics", "feature_column_variable_shape",
           "forget_stale_counter", "is_keras_metric", "is_keras_object",
           "is_keras_optimizer", "is_learning_rate_schedule", "is_legacy_keras_optimizer",
           "isolated_keras_names", "keras_base", "keras_package", "legacy_hyperparameter",
           "legacy_optimizer_class", "optimizer_counter", "optimizer_learning_rate",
           "optimizer_variables", "save_slice_info", "tensor_learning_rates",
           "tf1_keras_note", "tf_variable", "tie_optimizer_counter",
           "trains_through_get_updates", "user_defined_methods"]

KERAS_PACKAGES = ("keras", "tf_keras")


def keras_base(cls, names):
    """The first class in cls's MRO that Keras defines and that is named in `names`.

    Args:
      cls: a class (the type of the object asked about).
      names: class names to look for, e.g. ("Sequential", "Functional").

    Returns:
      That Keras class, or None when `cls` derives from none of them.
    """
    for base in cls.__mro__:
        if base.__name__ in names and keras_package(base) is not None:
            return base
    return None


def keras_package(cls):
    """'keras' or 'tf_keras' when `cls` is defined by that package, else None."""
    top = (getattr(cls, "__module__", None) or "").split(".")[0]
    return top if top in KERAS_PACKAGES else None


def is_keras_object(value):
    """True when `value`'s class, or one of its bases, is defined by Keras 3 or tf-keras."""
    return any(keras_package(cls) is not None for cls in type(value).__mro__)


def is_keras_metric(value):
    """True for a Keras `Metric` of either stack (by its methods, not its class)."""
    return not isinstance(value, (tuple, list)) and all(
        hasattr(value, name) for name in _METRIC_METHODS)


def is_learning_rate_schedule(value):
    """True for a Keras LearningRateSchedule (Keras 3 or tf-keras), by its class name."""
    return any(cls.__name__ == "LearningRateSchedule" for cls in type(value).__mro__)


def called_from_keras_layer(frame):
    """Whether the call stack from `frame` up runs Keras layer code (Keras 3 or
    tf-keras): a layer or a random seed generator, not a metric or an optimizer.

    Judged from the modules of the calling frames (`frame` and its callers).
    """
    keras = False
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.split(".", 1)[0] in KERAS_PACKAGES:
            if any(part in module for part in _NOT_LAYER_STATE_MODULES):
                return False
            keras = True
        frame = frame.f_back
    return keras


def tf_variable(value):
    """The tf.Variable behind a tf.Variable or a Keras 3 Variable, else None."""
    if isinstance(value, VARIABLE_TYPES):
        return value
    if keras_package(type(value)) == "keras":  # Keras 3: .value is its tf.Variable.
        inner = getattr(value, "value", None)
        return inner if isinstance(inner, VARIABLE_TYPES) else None
    return None


# Keras metrics' methods (see is_keras_metric).
_METRIC_METHODS = ("update_state", "result", "variables")
# Keras modules whose variables are not layer state: a metric's are updated by
# evaluation (keras_metrics), an optimizer's by its own apply step.
_NOT_LAYER_STATE_MODULES = (".metrics", ".optimizers")


# Private attributes ------------------------------------------------------------------

def _release(obj):
    """The library and release `obj` comes from: 'Keras 3.x', 'tf-keras 2.x' or TF's."""
    base = next((cls for cls in type(obj).__mro__ if keras_package(cls) is not None),
                None)
    if base is None:
        return f"TensorFlow {tf.VERSION}"
    package = keras_package(base)
    version = getattr(sys.modules.get(package), "__version__", "(unknown version)")
    return f"{'Keras' if package == 'keras' else 'tf-keras'} {version}"


def _required(obj, attribute, why):
    """obj.<attribute>, a private attribute that every supported release has.

    Raises:
      RuntimeError: `obj` lacks it (a release that renamed it); names the release.
    """
    try:
        return getattr(obj, attribute)
    except AttributeError:
        raise RuntimeError(
            f"{type(obj).__name__} has no {attribute}, which estimator_lite reads "
            f"{why}; {_release(obj)} is not supported here (tested: Keras 3, tf-keras "
            f"2.x, TensorFlow 1.15 and 2.16+)") from None


def optimizer_learning_rate(optimizer):
    """The learning rate a Keras 3 / tf-keras (non-legacy) optimizer keeps, as given
    (a number or Keras variable, a schedule, a callable, a `TensorLearningRate`).

    Read from the private ``_learning_rate``: the public ``learning_rate``
    evaluates a variable or schedule, which graph mode cannot.

    Raises:
      RuntimeError: the optimizer has no ``_learning_rate``.
    """
    return _required(optimizer, "_learning_rate", "to map the optimizer to its graph "
                     "equivalent")


def legacy_hyperparameter(optimizer, name):
    """A legacy Keras optimizer's hyperparameter `name` as given (``_hyper[name]``),
    or None when it has no such hyperparameter.

    Raises:
      RuntimeError: the optimizer has no ``_hyper`` dict.
    """
    hyper = _required(optimizer, "_hyper", "to copy the optimizer for a new graph")
    if not isinstance(hyper, dict):
        raise RuntimeError(f"{type(optimizer).__name__}._hyper is a "
                           f"{type(hyper).__name__}, not the dict of hyperparameters "
                           f"estimator_lite reads ({_release(optimizer)})")
    return hyper.get(name)


def optimizer_variables(optimizer):
    """The tf.Variables a Keras optimizer holds in its attributes (private ones too).

    An optimizer holding none (not built yet) gives [].
    """
    found = []
    for value in vars(optimizer).values():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            variable = tf_variable(item)
            if variable is not None:
                found.append(variable)
    return found


def compiled_user_metrics(model):
    """The metrics a tf-keras model was compiled with, as given to compile(), or None.

    tf-keras keeps them in ``model.compiled_metrics._user_metrics``. None, as
    expected, for a model that was not compiled or whose metrics container is
    Keras 3's (whose compile config holds the metrics instead).

    Raises:
      RuntimeError: a tf-keras metrics container without ``_user_metrics``.
    """
    container = getattr(model, "compiled_metrics", None)
    if container is None or keras_package(type(container)) != "tf_keras":
        return None
    return _required(container, "_user_metrics", "to find the model's compiled metrics")


def save_slice_info(variable):
    """A partitioned variable's slice info (its whole's name and shape), else None.

    None, as expected, for a variable that is not a partition, and for an object
    that is not a tf.Variable.

    Raises:
      RuntimeError: a tf.Variable without ``_save_slice_info``.
    """
    if not isinstance(variable, VARIABLE_TYPES):
        return getattr(variable, "_save_slice_info", None)
    return _required(variable, "_save_slice_info", "to name a partitioned variable "
                     "in checkpoints")


def feature_column_variable_shape(column):
    """A dense feature column's shape per example (``variable_shape``; TF 1's
    v1-only columns name it ``_variable_shape``).

    Raises:
      RuntimeError: the column has neither.
    """
    shape = getattr(column, "variable_shape", None)
    if shape is not None:
        return shape
    return _required(column, "_variable_shape", "as the column's shape per example")


# TF 1.x's own Keras (tf.keras inside TensorFlow 1.15) is defined under this module.
_TF1_KERAS_MODULE = "tensorflow.python.keras."


def tf1_keras_note(value, instead):
    """Why `value` is refused when it is TF 1.15's built-in tf.keras object, else "".

    For the end of a TypeError message: only Keras 3 and tf-keras (TF 2.16+) are
    supported. Called on error paths only.

    Args:
      value: the object refused.
      instead: what to use on TF 1.15, e.g. "a tf.compat.v1.train.Optimizer".
    """
    if not any((getattr(cls, "__module__", None) or "").startswith(_TF1_KERAS_MODULE)
               for cls in type(value).__mro__):
        return ""
    return (f"; it is TensorFlow {tf.VERSION}'s built-in tf.keras, which "
            "estimator_lite does not support: Keras objects need TensorFlow 2.16+ "
            f"with Keras 3 or tf-keras; on TF 1.15 use {instead}")


def uses_legacy_keras():
    """Whether TensorFlow's tf.keras is tf-keras: TF_USE_LEGACY_KERAS read as
    TensorFlow reads it (exactly "1", "true" or "True")."""
    return os.environ.get("TF_USE_LEGACY_KERAS") in ("1", "true", "True")


def legacy_optimizer_class(name):
    """tf-keras' ``optimizers.legacy.<name>`` when tf.keras is tf-keras, else None.

    tf.keras is tf-keras under TF_USE_LEGACY_KERAS=1 with tf_keras installed;
    Keras 3 has no legacy optimizers. Imports tf_keras in that case only.
    """
    if not uses_legacy_keras() or importlib.util.find_spec("tf_keras") is None:
        return None
    optimizers = importlib.import_module("tf_keras.optimizers.legacy")
    return getattr(optimizers, name, None)


# Keras optimizers ------------------------------------------------------------------------

# Keras' optimizer base classes: Keras 3 (Optimizer, BaseOptimizer), tf-keras
# (Optimizer, _BaseOptimizer) and its legacy OptimizerV2.
_OPTIMIZER_BASES = ("Optimizer", "BaseOptimizer", "_BaseOptimizer", "OptimizerV2")
# tf.estimator 2.15 trained a Keras optimizer with `get_updates(loss, params)`. Keras'
# legacy optimizers define it (their gradients come from `get_gradients`); other
# Keras optimizers do not, so a user's class that defines it says how it trains.
_GET_UPDATES = "get_updates"
_LEGACY_GET_UPDATES_PARTS = ("get_updates", "get_gradients")


def is_legacy_keras_optimizer(obj):
    """A Keras 2 legacy OptimizerV2 (tf-keras, or Keras 2.x in TF <= 2.15), or a
    user's subclass of one (by its Keras bases, wherever the subclass is defined)."""
    return keras_base(type(obj), ("OptimizerV2",)) is not None


def is_keras_optimizer(obj):
    """A Keras 3 or tf-keras optimizer (legacy or not), or a user's subclass of one."""
    return keras_base(type(obj), _OPTIMIZER_BASES) is not None


def user_defined_methods(cls, names):
    """The methods among `names` that cls's own classes define (sorted).

    A class's own classes are those of its MRO before the first one Keras defines:
    the user's subclasses, not Keras' (nor Keras' own derived optimizers).
    """
    own = []
    for base in cls.__mro__:
        if keras_package(base) is not None:
            break
        own.append(base)
    return sorted({name for base in own for name in names if name in vars(base)})


def trains_through_get_updates(optimizer):
    """True for a user's Keras optimizer class that tf.estimator 2.15 trained
    through its own code: it defines `get_updates(loss, params)` (any Keras), or,
    deriving from a legacy OptimizerV2, the `get_gradients` that Keras'
    `get_updates` calls.

    Keras' own optimizers, and user subclasses that only change hyperparameters
    or the per-variable update rule (`_resource_apply_dense`...), are not: the
    estimator applies gradients to them.
    """
    if not is_keras_optimizer(optimizer):
        return False
    names = _LEGACY_GET_UPDATES_PARTS if is_legacy_keras_optimizer(optimizer) else (
        _GET_UPDATES,)
    return bool(user_defined_methods(type(optimizer), names))


def optimizer_counter(optimizer):
    """A Keras optimizer's iteration counter if it has one yet, else None.

    Keras' legacy optimizers create `iterations` when it is first read; reading the
    private field asks without creating it (None, as expected, before then).

    Raises:
      RuntimeError: the optimizer has no ``_iterations`` field at all.
    """
    return _required(optimizer, "_iterations", "to tie the optimizer's iterations to "
                     "the global step")


def tie_optimizer_counter(optimizer, counter):
    """Makes `counter` (the global step) a legacy Keras optimizer's `iterations`.

    Done only when the optimizer has no counter yet, or one of another graph (an
    instance reused by a later train() or evaluate(): Keras refuses to replace a
    counter, so the stale one is dropped from its weights first). A counter the
    user set in this graph stays.

    Returns:
      True when `counter` is the optimizer's iterations afterwards.
    """
    own = optimizer_counter(optimizer)
    if own is counter:
        return True
    if not is_legacy_keras_optimizer(optimizer):
        return False  # Other Keras optimizers make their counter when built.
    graph = getattr(counter, "graph", None)
    if own is not None and getattr(own, "graph", None) is graph:
        return own.name == counter.name
    if own is not None:
        _drop_counter(optimizer, own)
    optimizer.iterations = counter
    return True


def forget_stale_counter(optimizer):
    """Drops a legacy Keras optimizer's counter made in another graph than this one.

    A legacy optimizer creates its counter when `iterations` is first read, in the
    graph of that moment; the instance reused by a later graph makes a new one.
    """
    own = optimizer_counter(optimizer)
    if own is not None and is_legacy_keras_optimizer(optimizer) and (
            getattr(own, "graph", None) is not tf.get_default_graph()):
        _drop_counter(optimizer, own)


def _drop_counter(optimizer, own):
    """Forgets a legacy optimizer's counter `own` (Keras' private counter field and
    weights list: Keras refuses to replace a counter it has)."""
    weights = _required(optimizer, "_weights", "to replace the optimizer's counter")
    if isinstance(weights, list):
        weights[:] = [w for w in weights if w is not own]
    optimizer._iterations = None


# Keras 3's layer names ---------------------------------------------------------------

# Keras 3 keeps its object-name counters in this internal module (per thread). It is
# looked up only if the user's process already imported it; never imported here.
_KERAS3_GLOBAL_STATE = "keras.src.backend.common.global_state"
_KERAS3_NAME_COUNTERS = "object_name_uids"


@contextlib.contextmanager
def isolated_keras_names():
    """Builds under a fresh Keras 3 layer-name numbering, then restores the caller's.

    Keras 3 numbers auto-named layers per process (`dense`, `dense_1`, ...), so the
    same model_fn called for a second graph would name its variables differently
    from the checkpoint. Inside this context the numbering starts at zero; on exit
    the caller's numbering is put back, so the user's process sees no change. A
    no-op without Keras 3 (tf-keras/Keras 2 number per graph already).
    """
    state = sys.modules.get(_KERAS3_GLOBAL_STATE)
    saved = (getattr(state.GLOBAL_STATE_TRACKER, _KERAS3_NAME_COUNTERS, None)
             if state is not None else None)
    if state is not None:
        state.set_global_attribute(_KERAS3_NAME_COUNTERS, collections.defaultdict(int))
    try:
        yield
    finally:
        state = sys.modules.get(_KERAS3_GLOBAL_STATE)
        if state is not None:
            state.set_global_attribute(
                _KERAS3_NAME_COUNTERS,
                saved if saved is not None else collections.defaultdict(int))


# Keras 3 optimizers and a graph tensor as learning rate ---------------------------------
#
# Keras 3's optimizer constructor accepts a number, a schedule or a callable, and
# refuses a tensor, so tf.estimator's documented `optimizer=lambda: Adam(
# learning_rate=tf.compat.v1.train.exponential_decay(..., global_step, ...))` fails
# there. While such a callable runs, the constructor is made to take the tensor as
# a zero-argument callable returning it (`TensorLearningRate`); the graph optimizer
# that replaces the Keras one then evaluates that tensor at every step.

# The Keras 3 class whose __init__ checks the learning rate, found from the public
# keras.optimizers.Optimizer by name (a release that renames it gets no patch, and
# the constructor's own error is what the user sees).
_KERAS3_OPTIMIZER_BASE = "BaseOptimizer"
_lock = threading.Lock()
_active = {"count": 0, "class": None, "init": None}
# The threads inside `tensor_learning_rates()` (a per-thread depth): the patched
# constructor converts a tensor only for them; any other thread building an
# optimizer meanwhile gets Keras' own constructor's behaviour.
_this_thread = threading.local()


class TensorLearningRate:
    """A graph tensor handed to a Keras 3 optimizer as its learning rate.

    Keras keeps it as a callable learning rate; `tensor` is the tensor itself.
    """

    def __init__(self, tensor):
        self.tensor = tensor

    def __call__(self):
        return self.tensor

    def __repr__(self):
        return f"TensorLearningRate({self.tensor!r})"


def _is_graph_tensor(value):
    return isinstance(value, (tf.Tensor, *VARIABLE_TYPES)) and not (
        tf.executing_eagerly())


def _keras3_optimizer_base():
    """Keras 3's BaseOptimizer class, or None (no Keras 3, or tf.keras is tf-keras).

    Imports Keras 3 when it is installed and tf.keras would be it: the user's
    optimizer callable is about to build a `tf.keras` optimizer.
    """
    if "keras" not in sys.modules and (uses_legacy_keras()
                                       or importlib.util.find_spec("keras") is None):
        return None
    keras = importlib.import_module("keras")
    optimizer = getattr(getattr(keras, "optimizers", None), "Optimizer", None)
    if optimizer is None or not (getattr(keras, "__version__", "") or "").startswith("3"):
        return None
    for cls in optimizer.__mro__:
        if cls.__name__ == _KERAS3_OPTIMIZER_BASE and "__init__" in vars(cls):
            return cls
    return None


def _accepting_init(original):
    """`original` (BaseOptimizer.__init__) taking a graph tensor learning rate in the
    threads inside `tensor_learning_rates()`."""
    def __init__(self, *args, **kwargs):  # noqa: N807 (replaces a constructor)
        if getattr(_this_thread, "depth", 0):
            args, kwargs = _tensor_rate_as_callable(args, kwargs)
        original(self, *args, **kwargs)
    __init__.__wrapped__ = original
    return __init__


def _tensor_rate_as_callable(args, kwargs):
    """(args, kwargs) of an optimizer constructor, a graph tensor learning rate
    (keyword or first positional) made a `TensorLearningRate`."""
    if "learning_rate" in kwargs and _is_graph_tensor(kwargs["learning_rate"]):
        kwargs = dict(kwargs, learning_rate=TensorLearningRate(kwargs["learning_rate"]))
    elif args and _is_graph_tensor(args[0]):
        args = (TensorLearningRate(args[0]), *args[1:])
    return args, kwargs


@contextlib.contextmanager
def tensor_learning_rates():
    """While inside: Keras 3 optimizers accept a graph tensor as learning_rate.

    Only a graph tensor is changed (into a `TensorLearningRate`); every other
    argument reaches Keras as given. Nested and concurrent uses (replica
    threads building their model_fn) share one patch, removed by the last to
    leave; other threads' optimizers are built as Keras builds them (the patched
    constructor converts only for threads inside). Without Keras 3 this does
    nothing.
    """
    _this_thread.depth = getattr(_this_thread, "depth", 0) + 1
    with _lock:
        if _active["count"] == 0:
            base = _keras3_optimizer_base()
            if base is not None:
                _active["class"], _active["init"] = base, base.__init__
                base.__init__ = _accepting_init(base.__init__)
        _active["count"] += 1
    try:
        yield
    finally:
        _this_thread.depth -= 1
        with _lock:
            _active["count"] -= 1
            if _active["count"] == 0 and _active["class"] is not None:
                _active["class"].__init__ = _active["init"]
                _active["class"], _active["init"] = None, None
