"""BUILD covers every Python file of the repo, and every pattern and path in it exists."""

import ast
import glob
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COVERED_FOLDERS = ("estimator_lite", "examples", "benchmarks", "tests")


def _build_tree():
    with open(os.path.join(ROOT, "BUILD")) as f:
        return ast.parse(f.read())  # Starlark BUILD files parse as Python here


def _glob_calls(tree):
    """(include patterns, exclude patterns) of every glob(...) in BUILD."""
    calls = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "glob":
            include = ast.literal_eval(node.args[0])
            exclude = next((ast.literal_eval(k.value) for k in node.keywords
                            if k.arg == "exclude"), [])
            calls.append((include, exclude))
    return calls


def _expand(patterns):
    return {os.path.relpath(p, ROOT) for pattern in patterns
            for p in glob.glob(os.path.join(ROOT, pattern), recursive=True)
            if os.path.isfile(p)}


def _matched_files(tree):
    matched = set()
    for include, exclude in _glob_calls(tree):
        matched |= _expand(include) - _expand(exclude)
    return matched


def _python_files():
    files = set()
    for folder in COVERED_FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, folder)):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            files |= {os.path.relpath(os.path.join(dirpath, f), ROOT)
                      for f in filenames if f.endswith(".py")}
    return files


def test_every_python_file_is_covered_by_a_glob():
    uncovered = sorted(_python_files() - _matched_files(_build_tree()))
    assert uncovered == []


def test_every_glob_pattern_matches_something():
    dead = [pattern for include, _ in _glob_calls(_build_tree()) for pattern in include
            if not _expand([pattern])]
    assert dead == []


def test_every_listed_path_exists():
    tree = _build_tree()
    listed = {node.value for node in ast.walk(tree)
              if isinstance(node, ast.Constant) and isinstance(node.value, str)
              and "/" in node.value and "*" not in node.value and ":" not in node.value
              and not node.value.startswith("//")}
    missing = sorted(p for p in listed if not os.path.exists(os.path.join(ROOT, p)))
    assert missing == []


def test_tests_in_subfolders_are_covered():
    matched = _matched_files(_build_tree())
    assert "tests/_engine/timer_test.py" in matched
    assert "estimator_lite/_engine/train_session.py" in matched
