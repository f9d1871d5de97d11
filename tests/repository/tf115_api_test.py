"""Every tf.* name the library uses exists in TF 1.15's tf.compat.v1 too."""

import ast
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
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


# What .ci/tf115 runs on Python 3.7: the library and the core test files it lists.
CI_TF115 = os.path.join(ROOT, ".ci", "tf115")


def _core_test_files():
    """The .py files of the CORE_TESTS list in .ci/tf115 (folders expanded)."""
    with open(CI_TF115) as f:
        block = re.search(r"^CORE_TESTS=\((.*?)^\)", f.read(), re.M | re.S).group(1)
    entries = re.findall(r"^\s*(tests/\S+)", block, re.M)
    files = []
    for entry in entries:
        path = os.path.join(ROOT, entry)
        assert os.path.exists(path), f".ci/tf115 lists {entry}, which does not exist"
        files += ([path] if path.endswith(".py") else sorted(
            os.path.join(path, f) for f in os.listdir(path) if f.endswith(".py")))
    return files


def _defers_annotations(tree):
    """Whether the module has `from __future__ import annotations` (PEP 563, in
    Python 3.7): its annotations are strings, never evaluated at run time."""
    return any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
               and any(alias.name == "annotations" for alias in node.names)
               for node in tree.body)


def _python38_constructs(tree):
    """Calls and annotations Python 3.7 cannot run, as 'line: what' strings."""
    found = []
    deferred = _defers_annotations(tree)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "zip"
                and any(k.arg == "strict" for k in node.keywords)):
            found.append(f"{node.lineno}: zip(strict=) (use _pycompat.zip_strict)")
        annotation = None
        if isinstance(node, (ast.AnnAssign, ast.arg)):
            annotation = node.annotation
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            annotation = node.returns
        if annotation is not None and not deferred:
            if any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr)
                   for n in ast.walk(annotation)):
                found.append(f"{node.lineno}: `X | Y` annotation (3.10+)")
            if any(isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
                   and n.value.id in ("list", "dict", "tuple", "set", "type")
                   for n in ast.walk(annotation)):
                found.append(f"{node.lineno}: builtin generic annotation (3.9+)")
    return found


@pytest.mark.parametrize("path", _library_files() + _core_test_files(), ids=_relative)
def test_runs_on_python37(path):
    # TF 1.15's Python: the grammar (walrus, positional-only parameters, ...) and
    # what 3.7 fails on at run time (zip(strict=), 3.9+/3.10+ annotations).
    with open(path) as f:
        source = f.read()
    try:
        tree = ast.parse(source, feature_version=(3, 7))
    except SyntaxError as error:
        pytest.fail(f"not Python 3.7 syntax: line {error.lineno}: {error.msg}")
    assert _python38_constructs(tree) == []


def test_python37_check_finds_what_37_lacks():
    source = ("def f(a: int | None) -> dict[str, int]:\n"
              "    return dict(zip(a, a, strict=True))\n")
    assert len(_python38_constructs(ast.parse(source))) == 3
    # With PEP 563's import the annotations are strings: only zip(strict=) is left.
    deferred = "from __future__ import annotations\n" + source
    assert len(_python38_constructs(ast.parse(deferred))) == 1
    with pytest.raises(SyntaxError):
        ast.parse("if (n := 1):\n    pass\n", feature_version=(3, 7))
