"""docs/compatibility.md is the one table of what tf.estimator's private paths serve.

Each row of "Private names served" must be what the path gives once installed; every
private name the alias table serves from elsewhere, and every function and class the
room defines for a path, must have a row; every seam row must name an attribute that
exists.
"""

import ast
import importlib
import os
import re

import pytest

import estimator_lite
from estimator_lite._compat import alias_table

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = os.path.join(ROOT, "docs", "compatibility.md")
COMPAT_DIR = os.path.join(ROOT, "estimator_lite", "_compat")
# The room's modules that define names for a tf.estimator path (not the mechanism).
SERVING_MODULES = ("canned_head", "estimator_module", "head_utils", "training_module")


def _section(title):
    with open(PAGE) as f:
        text = f.read()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def _rows(title):
    """The table rows of a section, each a list of its cells' backticked texts."""
    rows = []
    for line in _section(title).splitlines():
        if line.startswith("| ") and not line.startswith(("| path |", "| seam |")):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            if set(cells[0]) != {"-"}:
                rows.append([re.findall(r"`([^`]+)`", c) for c in cells])
    return rows


def _served():
    """[(path under a private root, name, "module:attr")] of the names table."""
    return [(path[0], name[0], spec[0]) for path, name, spec, _ in
            _rows("Private names served")]


def _object(spec):
    module, _, attr = spec.partition(":")
    value = importlib.import_module(module)
    for part in attr.split("."):
        value = getattr(value, part)
    return value


@pytest.fixture
def installed():
    estimator_lite.install_as_tf_estimator()
    yield
    estimator_lite.uninstall_as_tf_estimator()


def test_the_table_is_read():
    served = _served()
    assert len(served) > 30
    assert ("training", "_TrainingExecutor", "estimator_lite.training:_TrainingExecutor"
            ) in served
    assert len({(path, name) for path, name, _ in served}) == len(served)


@pytest.mark.parametrize("root", alias_table.PRIVATE_ROOTS)
def test_every_row_is_what_the_path_serves(installed, root):
    wrong = []
    for path, name, spec in _served():
        module = importlib.import_module(f"{root}.{path}")
        if getattr(module, name) is not _object(spec):
            wrong.append((path, name, spec))
    assert wrong == []


def test_every_private_name_served_from_elsewhere_has_a_row():
    listed = {(path, name) for path, name, _ in _served()}
    prefix = alias_table.PRIVATE_ROOTS[0] + "."
    missing = sorted(
        (path[len(prefix):], name) for path, alias in alias_table.ALIASES.items()
        if path.startswith(prefix) for name in alias.attributes
        if name.startswith("_") and (path[len(prefix):], name) not in listed)
    assert missing == []


def _defined(module):
    """The functions and classes a module of the room defines at its top level."""
    with open(os.path.join(COMPAT_DIR, module + ".py")) as f:
        tree = ast.parse(f.read())
    return {node.name for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def test_every_name_the_room_defines_for_a_path_has_a_row():
    listed = {spec for _, _, spec in _served()}
    missing = sorted(f"estimator_lite._compat.{module}:{name}"
                     for module in SERVING_MODULES for name in _defined(module)
                     if f"estimator_lite._compat.{module}:{name}" not in listed)
    assert missing == []


def test_the_room_holds_the_modules_the_page_names():
    names = {f[:-3] for f in os.listdir(COMPAT_DIR) if f.endswith(".py")}
    assert names == {"__init__", "alias_modules", "alias_table", *SERVING_MODULES}


def test_every_seam_exists():
    specs = [spec for _, where, _ in _rows("Seams in working modules") for spec in where]
    assert len(specs) >= 10
    missing = []
    for spec in specs:
        try:
            _object(spec)
        except AttributeError:
            missing.append(spec)
    assert missing == []
