"""Observations as JSON that keeps what a user's code can tell apart: Python types,
numpy dtypes and shapes, and the order of a dict's keys.

`to_json(value)` encodes a value; `differences(oracle, lite)` compares two
encodings. The rules (also in tests/conformance/driver.py's docstring):

- None, bool, str, int, float and list are JSON's own values (`json` keeps `1`
  and `1.0` apart), so they mean exactly `NoneType`, `builtins.bool`,
  `builtins.str`, `builtins.int`, `builtins.float` (finite) and `builtins.list`.
- A plain dict with str keys is a JSON object; when its keys are not in sorted
  order it also holds `"__keys__"`: the keys in the dict's order.
- Everything else is an object holding `"__type__"` (the type's name, below) and
  what else it has: `"value"` (a number, str, bytes decoded as UTF-8, a non-finite
  float's repr), `"items"` (tuples, namedtuples, sets sorted, list subclasses,
  dicts with other keys or of another dict class: `[key, value]` pairs),
  `"dtype"` and `"shape"` (numpy arrays and scalars; an array's `"value"` is its
  nested list, elements typed only for dtype=object).

A type's name is `module.qualname` (`builtins.tuple`, `numpy.float32`,
`collections.OrderedDict`), normalised only where it varies with a library's
internals rather than with what a user can observe:
- numpy types are `numpy.<name>` with numpy 2's names (`numpy.bool`; numpy 1
  calls it `bool_`);
- a class defined in TensorFlow is `tf.<qualname>` (its module moves between
  versions: `tensorflow.python.framework.ops.Tensor` became
  `...framework.tensor.Tensor`; protobuf messages' modules too), and any tensor
  class (SymbolicTensor, EagerTensor) is `tf.Tensor`;
- a class defined in tensorflow_estimator or estimator_lite is
  `estimator.<qualname>` (users name it `tf.estimator.X`, whatever module holds it);
- a class defined in keras or tf_keras is `keras.<qualname>`.
"""

import json
import math

__all__ = ["to_json", "differences", "type_name"]

_MARK = "__type__"
_ORDER = "__keys__"
# Top-level module -> the name recorded for its classes (see the module docstring).
_FAMILIES = {"tensorflow": "tf", "tensorflow_estimator": "estimator",
             "estimator_lite": "estimator", "keras": "keras", "tf_keras": "keras"}
_NUMPY_RENAMED = {"bool_": "bool"}


def type_name(cls):
    """The recorded name of class `cls` (the rules in the module docstring)."""
    module = cls.__module__ or ""
    top = module.split(".", 1)[0]
    if top == "numpy":
        return f"numpy.{_NUMPY_RENAMED.get(cls.__name__, cls.__name__)}"
    family = _FAMILIES.get(top)
    if family is None:
        return f"{module}.{cls.__qualname__}"
    if family == "tf" and any(c.__name__ == "Tensor" and
                              (c.__module__ or "").startswith("tensorflow")
                              for c in cls.__mro__):
        return "tf.Tensor"
    return f"{family}.{cls.__qualname__}"


def _tagged(obj, **fields):
    return {_MARK: type_name(type(obj)), **fields}


def _already_encoded(value):
    # Scenarios nest outcome()'s encodings in what they return, which run()
    # encodes again: an encoded dict is left as it is.
    return _MARK in value or _ORDER in value


def _plain_float(value):
    return value if math.isfinite(value) else repr(value)


def _array_values(value):
    """An array's elements: numbers and text plain, object elements typed."""
    if value.dtype.kind == "O":
        return to_json(value.tolist())

    def plain(v):
        if isinstance(v, list):
            return [plain(x) for x in v]
        if isinstance(v, bytes):
            return v.decode("utf-8", "replace")
        if isinstance(v, float):
            return _plain_float(v)
        if isinstance(v, complex):
            return [_plain_float(v.real), _plain_float(v.imag)]
        return v
    return plain(value.tolist())


def _encode_dict(value):
    if type(value) is dict and all(type(k) is str for k in value):
        if _already_encoded(value):
            return value
        out = {k: to_json(v) for k, v in value.items()}
        if list(value) != sorted(value):
            out[_ORDER] = list(value)
        return out
    return _tagged(value, items=[[to_json(k), to_json(v)] for k, v in value.items()])


def _encode_numpy(value):
    shape = list(value.shape)
    if type(value).__name__ == "ndarray":
        return _tagged(value, dtype=value.dtype.name, shape=shape,
                       value=_array_values(value))
    return _tagged(value, dtype=value.dtype.name, shape=shape,
                   value=_array_values(value))


def to_json(value):
    """The typed JSON encoding of `value` (the rules in the module docstring)."""
    kind = type(value)
    if value is None or kind in (bool, str, int, list):
        return [to_json(v) for v in value] if kind is list else value
    if kind is float:
        return value if math.isfinite(value) else _tagged(value, value=repr(value))
    if (kind.__module__ or "").split(".", 1)[0] == "numpy" and hasattr(value, "dtype"):
        return _encode_numpy(value)
    if isinstance(value, dict):
        return _encode_dict(value)
    if isinstance(value, (bytes, bytearray)):
        return _tagged(value, value=bytes(value).decode("utf-8", "replace"))
    if isinstance(value, (set, frozenset)):
        items = [to_json(v) for v in value]
        return _tagged(value, items=sorted(items, key=json.dumps))
    if isinstance(value, (list, tuple)):
        return _tagged(value, items=[to_json(v) for v in value])
    if isinstance(value, bool):  # before int: bool subclasses int
        return _tagged(value, value=bool(value))
    if isinstance(value, int):
        return _tagged(value, value=int(value))
    if isinstance(value, float):
        return _tagged(value, value=_plain_float(float(value)))
    if isinstance(value, str):
        return _tagged(value, value=str(value))
    if kind.__name__ == "TensorShape":
        return _tagged(value, value=None if value.rank is None else value.as_list())
    if kind.__name__ == "DType":
        return _tagged(value, value=value.name)
    return _tagged(value)


def _encoded_type(encoded):
    """The recorded type name of an encoding."""
    if encoded is None:
        return "builtins.NoneType"
    if isinstance(encoded, dict):
        return encoded.get(_MARK, "builtins.dict")
    return f"builtins.{type(encoded).__name__}"


def _close(a, b, rtol, atol):
    return abs(a - b) <= atol + rtol * abs(b)


def _is_error(value):
    return isinstance(value, dict) and set(value) == {"error"}


def _dict_differences(oracle, lite, rtol, atol, path):
    if _is_error(oracle) and _is_error(lite):
        if oracle["error"] and oracle["error"][0] not in lite["error"]:
            return [f"{path}: raised {lite['error']}, tf.estimator raises "
                    f"{oracle['error'][0]}"]
        return []
    out = []
    if _MARK not in oracle:
        order = [oracle.get(_ORDER, sorted(k for k in oracle if k != _ORDER)),
                 lite.get(_ORDER, sorted(k for k in lite if k != _ORDER))]
        if order[0] != order[1] and sorted(order[0]) == sorted(order[1]):
            out.append(f"{path}: keys in order {order[1]}, tf.estimator {order[0]}")
    for key in sorted((set(oracle) | set(lite)) - {_ORDER}):
        if key not in lite:
            out.append(f"{path}/{key}: missing (tf.estimator: {oracle[key]!r})")
        elif key not in oracle:
            out.append(f"{path}/{key}: extra {lite[key]!r}")
        else:
            out += differences(oracle[key], lite[key], rtol, atol, f"{path}/{key}")
    return out


def differences(oracle, lite, rtol=1e-4, atol=1e-6, path=""):
    """Where encoding `lite` differs from encoding `oracle`: human-readable lines.

    Types must be equal (a `numpy.float32` is not a `builtins.float`), and so must
    dtypes, shapes and key order; numbers compare within `rtol`/`atol`; an error
    matches when the oracle's class (its most specific reported class) is among
    the classes lite's error is an instance of; everything else compares equal.
    """
    types = _encoded_type(oracle), _encoded_type(lite)
    if types[0] != types[1]:
        return [f"{path}: {lite!r} is a {types[1]}, tf.estimator's {oracle!r} a "
                f"{types[0]}"]
    if isinstance(oracle, dict):
        return _dict_differences(oracle, lite, rtol, atol, path)
    if isinstance(oracle, list):
        if len(oracle) != len(lite):
            return [f"{path}: {lite!r} has {len(lite)} items, tf.estimator's "
                    f"{oracle!r} has {len(oracle)}"]
        out = []
        for i, (a, b) in enumerate(zip(oracle, lite, strict=True)):
            out += differences(a, b, rtol, atol, f"{path}[{i}]")
        return out
    if isinstance(oracle, (int, float)) and not isinstance(oracle, bool):
        return [] if _close(lite, oracle, rtol, atol) else [
            f"{path}: {lite!r}, tf.estimator {oracle!r}"]
    return [] if oracle == lite else [f"{path}: {lite!r}, tf.estimator {oracle!r}"]
