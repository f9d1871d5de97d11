"""The one place that asks "is this a Keras object?" and reaches into Keras' internals.

Keras is never imported at import time: a Keras object handed in by the user says
which Keras it is (Keras 3 `keras`, or `tf_keras` under TF_USE_LEGACY_KERAS=1).
What a Keras object is, is decided from the Keras classes it derives from, never
from the module of its own class: a user's subclass, defined in `__main__` or in
their package, is what its Keras base is (as tf.estimator, which used
`isinstance`, treated it).
"""

import contextlib
import importlib
import importlib.util
import os
import sys
import threading

from estimator_lite._tf import VARIABLE_TYPES, tf

__all__ = ["KERAS_PACKAGES", "forget_stale_counter", "is_keras_optimizer",
           "is_legacy_keras_optimizer", "keras_base", "keras_package",
           "legacy_optimizer_class", "optimizer_counter", "tensor_learning_rates",
           "tf1_keras_note", "tie_optimizer_counter", "trains_through_get_updates",
           "user_defined_methods"]

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


def legacy_optimizer_class(name):
    """tf-keras' ``optimizers.legacy.<name>`` when tf.keras is tf-keras, else None.

    tf.keras is tf-keras under TF_USE_LEGACY_KERAS=1 with tf_keras installed;
    Keras 3 has no legacy optimizers. Imports tf_keras in that case only.
    """
    legacy = os.environ.get("TF_USE_LEGACY_KERAS", "").lower() in ("1", "true", "yes")
    if not legacy or importlib.util.find_spec("tf_keras") is None:
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
    private field asks without creating it.
    """
    return getattr(optimizer, "_iterations", None)


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
    weights = getattr(optimizer, "_weights", None)
    if isinstance(weights, list):
        weights[:] = [w for w in weights if w is not own]
    optimizer._iterations = None


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
    legacy = os.environ.get("TF_USE_LEGACY_KERAS", "").lower() in ("1", "true", "yes")
    if "keras" not in sys.modules and (legacy or importlib.util.find_spec("keras") is None):
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
    """`original` (BaseOptimizer.__init__) taking a graph tensor learning rate."""
    def __init__(self, *args, **kwargs):  # noqa: N807 (replaces a constructor)
        if "learning_rate" in kwargs and _is_graph_tensor(kwargs["learning_rate"]):
            kwargs["learning_rate"] = TensorLearningRate(kwargs["learning_rate"])
        elif args and _is_graph_tensor(args[0]):
            args = (TensorLearningRate(args[0]), *args[1:])
        original(self, *args, **kwargs)
    __init__.__wrapped__ = original
    return __init__


@contextlib.contextmanager
def tensor_learning_rates():
    """While inside: Keras 3 optimizers accept a graph tensor as learning_rate.

    Only a graph tensor is changed (into a `TensorLearningRate`); every other
    argument reaches Keras as given. Nested and concurrent uses (replica
    threads building their model_fn) share one patch, removed by the last to
    leave. Without Keras 3 this does nothing.
    """
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
        with _lock:
            _active["count"] -= 1
            if _active["count"] == 0 and _active["class"] is not None:
                _active["class"].__init__ = _active["init"]
                _active["class"], _active["init"] = None, None
