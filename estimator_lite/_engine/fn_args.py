"""Calling user functions with only the arguments they declare."""

import inspect

__all__ = ["declared_args", "call_with_declared_args"]


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
