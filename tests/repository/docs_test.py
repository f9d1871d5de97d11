"""The documentation site builds with --strict, and its pages stay true to the code.

docs/ + mkdocs.yml hold the guide, the operator's pages and the API reference
(mkdocstrings reads the docstrings). `--strict` turns every warning into a failure:
a broken link or anchor, a page missing from the nav, a docstring `Args:` entry
naming no parameter of the signature.
"""

import ast
import importlib.util
import os
import re
import sys

import pytest

from tests.support import zygote

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "estimator_lite")
DOCS = os.path.join(ROOT, "docs")
CONFORMANCE_TEST = os.path.join(ROOT, "tests", "conformance", "conformance_test.py")


def _read(*parts):
    with open(os.path.join(*parts), encoding="utf-8") as f:
        return f.read()


def _missing_docs_packages():
    # mkdocstrings_handlers is the namespace package of mkdocstrings-python.
    return [name for name in ("mkdocs", "mkdocstrings", "mkdocstrings_handlers")
            if importlib.util.find_spec(name) is None]


def test_site_builds_strictly(tmp_path):
    missing = _missing_docs_packages()
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: pip install -e '.[docs]' "
                    "(the test extra has them; .ci/run installs it)")
    site = tmp_path / "site"
    result = zygote.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-6000:]
    assert (site / "index.html").exists()
    # The API reference really rendered the docstrings, not just the page titles.
    api = (site / "api" / "estimator" / "index.html").read_text(encoding="utf-8")
    assert "Trains until" in api and "export_saved_model" in api


def _package_files():
    files = set()
    for dirpath, dirnames, filenames in os.walk(PACKAGE):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        files |= {os.path.relpath(os.path.join(dirpath, f), PACKAGE).replace(os.sep, "/")
                  for f in filenames if f.endswith(".py")}
    return files


def _architecture_rows():
    """Module paths in the first column of architecture.md's module tables."""
    return set(re.findall(r"^\| `([\w/]+\.py)` \|", _read(DOCS, "architecture.md"), re.M))


def test_architecture_page_lists_every_module():
    rows = _architecture_rows()
    assert len(rows) > 50
    assert sorted(_package_files() - rows) == [], "add them to docs/architecture.md"


def test_architecture_page_lists_no_module_that_is_gone():
    assert sorted(_architecture_rows() - _package_files()) == []


def _listed_keys(dict_name):
    """The keys of a dict in the conformance test, read from the source (importing
    it would load the scenarios)."""
    tree = ast.parse(_read(CONFORMANCE_TEST))
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
                and any(getattr(t, "id", None) == dict_name for t in node.targets)):
            return [ast.literal_eval(key) for key in node.value.keys]
    raise AssertionError(f"no {dict_name} dict in {CONFORMANCE_TEST}")


def test_differences_page_lists_every_known_gap():
    keys = _listed_keys("KNOWN_GAPS")
    text = _read(DOCS, "differences.md")
    assert [k for k in keys if f"`{k}`" not in text] == [], (
        "list them in docs/differences.md, 'Known differences still to fix'")


def test_differences_page_lists_every_deliberate_difference():
    keys = _listed_keys("DELIBERATE")
    assert keys
    text = _read(DOCS, "differences.md")
    assert [k for k in keys if f"`{k}`" not in text] == [], (
        "explain them in docs/differences.md, 'Deliberate differences in behaviour'")
