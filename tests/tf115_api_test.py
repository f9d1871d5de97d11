"""Every tf.* name the library uses exists in TF 1.15's tf.compat.v1 too."""

import ast
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
API_LIST = os.path.join(ROOT, "tests", "data", "tf115_compat_v1_api.txt")


def _tf115_names():
    with open(API_LIST) as f:
        return {line.strip() for line in f if line.strip() and not line.startswith("#")}


def _attribute_chain(node):
    """'train.Saver' for the expression tf.train.Saver; None if not rooted at tf."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id == "tf" and parts:
        return ".".join(reversed(parts))
    return None


def _used_names(path):
    """The tf.* chains in the code of `path` (docstrings and comments excluded)."""
    with open(path) as f:
        tree = ast.parse(f.read())
    chains = set()
    for node in ast.walk(tree):
        chain = _attribute_chain(node) if isinstance(node, ast.Attribute) else None
        if chain:
            chains.add(chain)
    return {c for c in chains if not any(o != c and o.startswith(c + ".")
                                         for o in chains)}


def _known(chain, names):
    """A chain is known if it is listed, or a listed class prefix owns the rest."""
    parts = chain.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in names:
            return end == len(parts) or parts[end - 1][0].isupper()
    return False


def _library_files():
    """Every module of the package, subpackages included."""
    package = os.path.join(ROOT, "estimator_lite")
    return sorted(os.path.join(dirpath, f)
                  for dirpath, _, filenames in os.walk(package)
                  for f in filenames if f.endswith(".py"))


def _relative(path):
    return os.path.relpath(path, ROOT)


@pytest.mark.parametrize("path", _library_files(), ids=_relative)
def test_only_tf115_compat_v1_names(path):
    names = _tf115_names()
    unknown = sorted(c for c in _used_names(path) if not _known(c, names))
    assert unknown == [], f"not in TF 1.15 tf.compat.v1: {unknown}"


def test_checker_rejects_a_tf2_only_name():
    names = _tf115_names()
    assert not _known("experimental.dtensor", names)
    assert _known("train.Scaffold.finalize", names)
    assert _known("GraphKeys.SAVERS", names)
    assert not _known("train.bogus_function", names)


def test_tensorflow_is_imported_in_one_place():
    offenders = []
    for path in _library_files():
        with open(path) as f:
            if re.search(r"^\s*(import tensorflow|from tensorflow)", f.read(), re.M):
                offenders.append(_relative(path))
    assert offenders == [os.path.join("estimator_lite", "_tf.py")]


def test_the_walk_reaches_subpackages():
    files = {_relative(p) for p in _library_files()}
    assert os.path.join("estimator_lite", "_engine", "train_session.py") in files
