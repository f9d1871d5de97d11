"""Keras' and TensorFlow's private attributes are read only in estimator_lite/_keras.py.

A release of Keras or TensorFlow may rename a private attribute; reading it in one
place, through named functions that say which release lacks it, keeps that failure
clear. Two owners of TensorFlow internals are documented exceptions: `_tf.py`
(`Operation._add_control_inputs`, `Graph._functions` and `CheckpointSaverHook._listeners`;
`_keras` imports `_tf`, so
they cannot live there)
and `_engine/distribute.py` (tf.distribute's private hooks; docs/architecture.md).
"""

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "estimator_lite")
OWNER = "_keras.py"

# Private attributes of Keras / TensorFlow objects that estimator_lite reads.
PRIVATE_NAMES = frozenset({
    "_iterations", "_hyper", "_learning_rate", "_weights", "_user_metrics",
    "_save_slice_info", "_variable_shape", "_add_control_inputs",
    "_std_server_started", "_is_loss_scaled_by_optimizer",
    "_scale_loss_for_estimator_enabled", "_make_input_fn_iterator",
    "_update_config_proto", "_functions", "_listeners"})
# getattr-style reads by name allowed outside _keras.py: module -> names.
DOCUMENTED_OWNERS = {
    "_tf.py": {"_add_control_inputs", "_functions", "_listeners"},
    os.path.join("_engine", "distribute.py"): {
        "_std_server_started", "_is_loss_scaled_by_optimizer",
        "_scale_loss_for_estimator_enabled", "_make_input_fn_iterator",
        "_update_config_proto"},
}
_BY_NAME = ("getattr", "hasattr", "setattr", "delattr")


def _package_files():
    return sorted(os.path.relpath(os.path.join(d, f), PACKAGE)
                  for d, _, files in os.walk(PACKAGE) for f in files if f.endswith(".py"))


def _is_private(name):
    return name.startswith("_") and not name.startswith("__")


def _name_read_by_string(node):
    """"_name" when `node` is getattr(obj, "_name", ...) or the like, else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in _BY_NAME and len(node.args) >= 2):
        return None
    arg = node.args[1]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and _is_private(
            arg.value):
        return arg.value
    return None


def private_reads(source):
    """(line, name) of every private attribute `source` reads of another object.

    Counted: ``getattr(obj, "_name", ...)`` (and hasattr/setattr/delattr) with any
    private name, and ``obj._name`` for the names in PRIVATE_NAMES unless obj is
    ``self`` or ``cls`` (a class's own attribute of the same name).
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        name = _name_read_by_string(node)
        if name is not None:
            found.append((node.lineno, name))
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_NAMES and not (
                isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            found.append((node.lineno, node.attr))
    return sorted(found)


def _reads(relpath):
    with open(os.path.join(PACKAGE, relpath)) as f:
        return private_reads(f.read())


@pytest.mark.parametrize("relpath", [p for p in _package_files() if p != OWNER])
def test_no_module_but_keras_reads_private_attributes(relpath):
    allowed = DOCUMENTED_OWNERS.get(relpath, set())
    assert [(line, name) for line, name in _reads(relpath) if name not in allowed] == []


def test_the_keras_module_is_where_they_are_read():
    with open(os.path.join(PACKAGE, OWNER)) as f:
        tree = ast.parse(f.read())
    names = {n.value for n in ast.walk(tree)
             if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert {"_iterations", "_hyper", "_learning_rate", "_weights", "_user_metrics",
            "_save_slice_info", "_variable_shape"} <= names


def test_documented_owners_still_read_their_names():
    # An exception that is no longer needed is removed from the list.
    for relpath, names in DOCUMENTED_OWNERS.items():
        assert names <= {name for _, name in _reads(relpath)}, relpath


def test_checker_sees_private_reads():
    source = ("def f(opt, model, self):\n"
              "    a = getattr(opt, '_iterations', None)\n"
              "    b = model.compiled_metrics._user_metrics\n"
              "    c = self.optimizer._hyper\n"
              "    d = self._hyper\n"
              "    e = hasattr(opt, '_anything_private')\n"
              "    return getattr(opt, '__class__'), getattr(opt, 'learning_rate')\n")
    assert private_reads(source) == [(2, "_iterations"), (3, "_user_metrics"),
                                     (4, "_hyper"), (6, "_anything_private")]
