"""The v1 canned estimators' optimizers (``tf.compat.v1.estimator``): names to v1 ones.

TF 1.x's canned estimators, still in TF 2.x as ``tf.compat.v1.estimator``, train
with ``tf.compat.v1.train`` optimizers: a name such as ``'Adagrad'`` becomes
``tf.compat.v1.train.AdagradOptimizer(learning_rate=<the estimator's default>)``,
so their checkpoints hold the v1 slot names (``<variable>/Adagrad``,
``<variable>/Ftrl`` and ``<variable>/Ftrl_1``, Adam's ``beta1_power``...), not the
Keras-style ``training/Adagrad/...`` variables of the TF2 canned estimators (see
`estimator_lite.optimizers.mapping`). Only ``tf.compat.v1.train.Optimizer``
instances (or callables returning one) are accepted besides names, as in TF 1.x.
"""

from estimator_lite import _keras
from estimator_lite._tf import tf

__all__ = ["OPTIMIZER_NAMES", "get_optimizer_instance", "optimizer_factory"]


def _optimizer_classes():
    """tf.estimator 1.x's names for `optimizer` and their tf.compat.v1.train classes."""
    return {"Adagrad": tf.train.AdagradOptimizer, "Adam": tf.train.AdamOptimizer,
            "Ftrl": tf.train.FtrlOptimizer, "RMSProp": tf.train.RMSPropOptimizer,
            "SGD": tf.train.GradientDescentOptimizer}


OPTIMIZER_NAMES = tuple(sorted(_optimizer_classes()))


def _type_error(argument, value, what):
    hint = ""
    if _keras.is_keras_object(value):
        hint = (" (a Keras optimizer: pass a tf.compat.v1.train optimizer here, or use "
                "the TF2 classes of estimator_lite, e.g. estimator_lite.DNNClassifier, "
                "which take Keras optimizers)")
    return TypeError(f"{argument} must be {what}, got {value!r} of type "
                     f"{type(value).__name__}{hint}")


def _checked_instance(value, argument):
    if not isinstance(value, tf.train.Optimizer):
        raise _type_error(argument, value, "a tf.compat.v1.train.Optimizer")
    return value


def optimizer_factory(optimizer, learning_rate, argument="optimizer"):
    """Validates an `optimizer` argument; returns a function building the optimizer.

    Args:
      optimizer: one of OPTIMIZER_NAMES, a tf.compat.v1.train.Optimizer, or a
        callable returning one.
      learning_rate: the learning rate of an optimizer given by name (the
        estimator's v1 default).
      argument: argument name for messages.

    Returns:
      A zero-argument function returning a tf.compat.v1.train.Optimizer: a new one
      per call for a name, the instance itself for an instance (as TF 1.x reuses
      it in every graph), the callable's result for a callable.

    Raises:
      ValueError: an unknown name.
      TypeError: neither a name, a tf.compat.v1 optimizer nor a callable.
    """
    if isinstance(optimizer, str):
        cls = _optimizer_classes().get(optimizer)
        if cls is None:
            raise ValueError(f"{argument} must be one of {list(OPTIMIZER_NAMES)} when "
                             f"given as a name, got {optimizer!r}")
        return lambda: cls(learning_rate=learning_rate)
    if isinstance(optimizer, tf.train.Optimizer):
        return lambda: optimizer
    if callable(optimizer) and not hasattr(optimizer, "get_config"):
        return lambda: _checked_instance(optimizer(), argument)
    raise _type_error(argument, optimizer, "an optimizer name, a "
                      "tf.compat.v1.train.Optimizer or a callable returning one")


def get_optimizer_instance(opt, learning_rate=None):
    """A tf.compat.v1.train.Optimizer from a name, an instance or a callable.

    tf.estimator's v1 helper of that name (its ``canned.optimizers`` module), which
    TF1-era model_fns call; served at that path by `install_as_tf_estimator`.

    Args:
      opt: one of OPTIMIZER_NAMES, a tf.compat.v1.train.Optimizer (returned as it
        is), or a callable returning one (called here).
      learning_rate: the learning rate of an optimizer given by name; required
        (and non-zero) then, ignored otherwise.

    Returns:
      The tf.compat.v1.train.Optimizer.

    Raises:
      ValueError: an unknown name, a name without a learning rate, or anything
        that is not (or whose callable does not return) a
        tf.compat.v1.train.Optimizer (tf.estimator raises ValueError for each).
    """
    if isinstance(opt, str):
        cls = _optimizer_classes().get(opt)
        if cls is None:
            raise ValueError(f"opt must be one of {OPTIMIZER_NAMES} when given as a "
                             f"name, got {opt!r}")
        if not learning_rate:
            raise ValueError(f"learning_rate is required (and must not be 0) when opt "
                             f"is a name, got learning_rate={learning_rate!r} for "
                             f"opt={opt!r}")
        return cls(learning_rate=learning_rate)
    if callable(opt):
        opt = opt()
    if not isinstance(opt, tf.train.Optimizer):
        raise ValueError(str(_type_error("opt", opt, "a tf.compat.v1.train.Optimizer, "
                                         "an optimizer name or a callable returning "
                                         "one")))
    return opt
