"""Calling user functions with only the arguments they declare."""

import inspect

__all__ = ["declared_args", "call_with_declared_args", "check_declared_args", "fn_args"]

_POSITIONAL_KINDS = (inspect.Parameter.POSITIONAL_ONLY,
                     inspect.Parameter.POSITIONAL_OR_KEYWORD)


def declared_args(fn):
    """Names of the parameters `fn` declares, or None if it takes **kwargs.

    Arguments already bound by a functools.partial are left out.
    """
    is_partial = hasattr(fn, "func") and hasattr(fn, "keywords")
    target = fn.func if is_partial else fn
    params = inspect.signature(target).parameters
    if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    bound = set(getattr(fn, "keywords", None) or ()) if is_partial else set()
    return [name for name in params if name not in bound]


def call_with_declared_args(fn, available):
    """Calls `fn` with the entries of `available` that it declares (all for **kwargs)."""
    declared = declared_args(fn)
    kwargs = {k: v for k, v in available.items() if declared is None or k in declared}
    return fn(**kwargs)


def check_declared_args(name, fn, allowed, required=()):
    """Checks that callable `fn` declares only `allowed` arguments and every `required`.

    A function taking **kwargs declares nothing and passes.

    Args:
      name: the argument's name, for messages (e.g. 'model_fn').
      fn: the user function (already known to be callable).
      allowed: the argument names it may take.
      required: the names it must take.

    Returns:
      `fn`.

    Raises:
      ValueError: a required argument is missing or an unknown one is declared.
    """
    declared = declared_args(fn)
    if declared is None:
        return fn
    for arg in required:
        if arg not in declared:
            raise ValueError(f"{name} must take a {arg!r} argument; it takes {declared}")
    unknown = [a for a in declared if a not in allowed]
    if unknown:
        raise ValueError(f"{name} has unknown arguments {unknown}; it may take only "
                         f"{list(allowed)}")
    return fn


def fn_args(fn):
    """The names of `fn`'s arguments, as a tuple (tf.estimator's ``util.fn_args``).

    Unlike `declared_args`, a function taking **kwargs still lists its arguments;
    keyword-only arguments and the *args / **kwargs names are not listed (as
    tf.estimator's, which reads the positional ones). Arguments already bound are
    left out: a bound method's ``self``, a functools.partial's positional
    arguments and keywords; a callable object lists its ``__call__``'s.
    """
    if hasattr(fn, "func") and hasattr(fn, "keywords") and hasattr(fn, "args"):
        bound = set(fn.keywords or ())
        names = fn_args(fn.func)[len(fn.args):]
        return tuple(name for name in names if name not in bound)
    params = inspect.signature(fn).parameters.values()
    return tuple(p.name for p in params if p.kind in _POSITIONAL_KINDS)
