"""Small argument checks shared by the public constructors.

Each raises TypeError for a wrong type and ValueError for a bad value, with a
message naming the argument, the rule and the value given.
"""

import numbers
import os


class WrongTypeError(TypeError, ValueError):
    """A value of the wrong type where tf.estimator raises ValueError.

    Users' code written for tf.estimator catches ValueError there; ours says
    TypeError for a wrong type. Both catch this one.
    """


def check_int(name, value, minimum=None, allow_none=False):
    """Checks that `value` is an int (not a bool), optionally >= `minimum`.

    Args:
      name: argument name used in the error message.
      value: the value to check.
      minimum: smallest allowed value, or None for no bound.
      allow_none: whether None is accepted.

    Returns:
      `value` unchanged, as a Python int (or None).

    Raises:
      TypeError: `value` is not an integer.
      ValueError: `value` is below `minimum`.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int{' or None' if allow_none else ''}, "
                        f"got {value!r} of type {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return int(value)


def check_number(name, value, minimum=None, allow_none=False):
    """Like `check_int` but accepts any real number (for seconds)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number{' or None' if allow_none else ''}, "
                        f"got {value!r} of type {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return value


def check_step_count(name, value):
    """None, or a number of steps > 0 (an int, or a float such as 1e6 from a config
    file, as tf.estimator accepts).

    Raises:
      TypeError: not a number.
      ValueError: not > 0.
    """
    check_number(name, value, allow_none=True)
    if value is not None and value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return value


def check_callable(name, value, allow_none=False):
    """Checks that `value` is callable (or None when allowed)."""
    if value is None and allow_none:
        return None
    if not callable(value):
        raise TypeError(f"{name} must be callable, got {value!r} of type "
                        f"{type(value).__name__}")
    return value


def check_instances(name, values, cls, cls_name):
    """Checks an iterable of objects against `cls`; returns them as a tuple.

    Args:
      name: argument name used in the error message.
      values: None, or an iterable of objects.
      cls: the class (or tuple of classes) every element must be.
      cls_name: readable name of `cls` for the message.

    Returns:
      A tuple of the elements (empty for None).

    Raises:
      TypeError: `values` is not iterable or an element has the wrong type.
    """
    if values is None:
        return ()
    try:
        items = tuple(values)
    except TypeError:
        raise TypeError(f"{name} must be an iterable of {cls_name}, got "
                        f"{values!r} of type {type(values).__name__}") from None
    for item in items:
        if not isinstance(item, cls):
            raise TypeError(f"{name} must contain only {cls_name}, got {item!r} "
                            f"of type {type(item).__name__}")
    return items


def check_members_not_overridden(obj, base, overridable, exempt_class_names=()):
    """Raises ValueError when `obj`'s class redefines a member of `base`.

    Only the class itself is inspected (as tf.estimator does for Estimator);
    dunder members and the names in `overridable` may be redefined, and classes
    named in `exempt_class_names` may redefine anything.

    Args:
      obj: the object being constructed.
      base: the class whose members are protected.
      overridable: member names a subclass may redefine.
      exempt_class_names: names of classes the rule does not apply to.

    Raises:
      ValueError: the class redefines other members of `base`.
    """
    cls = type(obj)
    if cls is base or cls.__name__ in exempt_class_names:
        return
    ours = {m for m in dir(base) if not m.startswith("__")}
    overridden = sorted(m for m in ours & set(vars(cls)) - set(overridable)
                        if getattr(base, m) != getattr(cls, m))
    if overridden:
        name = base.__name__
        raise ValueError(f"subclasses of {name} cannot override its members: "
                         f"{cls.__name__} overrides {overridden} ({cls.__name__} "
                         f"cannot override members of {name}: "
                         f"{', '.join(overridden)})")


def seconds_from_env(env_name, default_secs, allow_zero):
    """A duration in seconds from an environment variable, or the default.

    Args:
      env_name: the variable's name.
      default_secs: the value when the variable is not set.
      allow_zero: whether 0 is a valid value (else it must be positive).

    Raises:
      ValueError: the variable is not a number in range; names it and its value.
    """
    raw = os.environ.get(env_name)
    if raw is None:
        return default_secs
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if allow_zero and not value >= 0:
        raise ValueError(f"{env_name} must be a number of seconds >= 0, got {raw!r}")
    if not allow_zero and not value > 0:
        raise ValueError(f"{env_name} must be a positive number of seconds, got {raw!r}")
    return value
