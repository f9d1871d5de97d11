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

__all__ = ["KERAS_PACKAGES", "keras_base", "keras_package", "legacy_optimizer_class",
           "tensor_learning_rates"]

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
