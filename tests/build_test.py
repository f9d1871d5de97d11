"""BUILD lists exactly the library modules and test files that exist on disk."""

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _build_rules():
    """Parses BUILD (Starlark is Python syntax here) into {rule name: kwargs}."""
    with open(os.path.join(ROOT, "BUILD")) as f:
        tree = ast.parse(f.read())
    rules = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
                node.func.id in ("py_library", "py_test", "py_binary")):
            kwargs = {}
            for kw in node.keywords:
                try:
                    kwargs[kw.arg] = ast.literal_eval(kw.value)
                except ValueError:
                    kwargs[kw.arg] = None  # e.g. deps built with requirement()
            kwargs["kind"] = node.func.id
            rules[kwargs["name"]] = kwargs
    return rules


def _py_files(folder, suffix=".py"):
    path = os.path.join(ROOT, folder)
    return sorted(f"{folder}/{f}" for f in os.listdir(path) if f.endswith(suffix))


def test_library_srcs_match_package_files():
    rules = _build_rules()
    assert sorted(rules["estimator_lite"]["srcs"]) == _py_files("estimator_lite")


def test_one_py_test_per_test_file():
    rules = _build_rules()
    tests = {r["srcs"][0]: name for name, r in rules.items() if r["kind"] == "py_test"}
    assert sorted(tests) == _py_files("tests", "_test.py")
    for src, name in tests.items():
        assert name == os.path.basename(src)[:-3], f"py_test for {src} is named {name}"


def test_test_support_files_are_listed():
    rules = _build_rules()
    support = [f for f in _py_files("tests") if not f.endswith("_test.py")]
    assert sorted(rules["testlib"]["srcs"]) == support


def test_examples_are_listed():
    rules = _build_rules()
    listed = sorted(s for r in rules.values() if r["kind"] == "py_binary"
                    for s in r["srcs"] if s.startswith("examples/"))
    assert listed == _py_files("examples")


def test_benchmarks_are_listed():
    rules = _build_rules()
    listed = sorted(s for r in rules.values() for s in r.get("srcs") or ()
                    if s.startswith("benchmarks/"))
    assert listed == _py_files("benchmarks")
