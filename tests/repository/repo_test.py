"""README's two opening commands stay true: CI runs both verbatim, with skips forbidden."""

import os
import re
import subprocess
import sys

import pytest

from tests import conftest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _readme_commands():
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    block = re.search(r"```(?:bash|sh)?\n(.*?)```", text, re.S)
    assert block, "README.md must open with a fenced block of commands"
    return [line for line in block.group(1).splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_readme_opens_with_main_job_and_test_commands():
    commands = _readme_commands()
    assert len(commands) == 2, commands
    main_job, tests = commands
    assert "examples/digits.py" in main_job and "pip install" in main_job
    assert "pytest" in tests


def _ci_lines():
    with open(os.path.join(ROOT, ".ci", "run")) as f:
        return [line.strip() for line in f if line.strip()]


def test_ci_runs_the_readme_commands_last_in_order():
    # The test command is CI's last line, so its exit status is CI's.
    assert _ci_lines()[-2:] == [c.strip() for c in _readme_commands()]


def test_ci_forbids_skips_before_running_the_tests():
    lines = _ci_lines()
    strict = f"export {conftest.REQUIRE_ALL_TESTS_ENV}=1"
    assert strict in lines
    assert lines.index(strict) < lines.index(_readme_commands()[1].strip())


@pytest.mark.parametrize("strict, exit_code", [("1", 1), ("", 0)])
def test_a_skip_fails_only_when_all_tests_are_required(tmp_path, strict, exit_code):
    (tmp_path / "test_needs_something.py").write_text(
        "import pytest\n\n\n"
        "@pytest.mark.skipif(True, reason='needs the oracle')\n"
        "def test_x():\n    pass\n")
    env = dict(os.environ, PYTHONPATH=ROOT, **{conftest.REQUIRE_ALL_TESTS_ENV: strict})
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-q",
         "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == exit_code, result.stdout
    if strict:
        assert "forbids skips: Skipped: needs the oracle" in result.stdout
    else:
        assert "1 skipped" in result.stdout


def test_every_path_left_out_of_the_core_exists():
    # A renamed test file must not slip into .ci/matrix's core by its new name.
    missing = [path for path in conftest.NOT_CORE
               if not os.path.exists(os.path.join(ROOT, path))]
    assert not missing, missing


def test_the_core_marker_selects_the_core_and_nothing_else():
    """`-m core` keeps a test outside NOT_CORE and drops one inside it."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "core", "-n", "0",
         "tests/model_fn_test.py", "tests/repository/lint_test.py"],
        cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True,
        timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "tests/model_fn_test.py::" in result.stdout
    assert "tests/repository/lint_test.py::" not in result.stdout


def test_matrix_script_is_valid_bash_naming_its_entries():
    path = os.path.join(ROOT, ".ci", "matrix")
    assert os.access(path, os.X_OK)
    subprocess.run(["bash", "-n", path], check=True, timeout=60)
    result = subprocess.run([path, "no-such-entry"], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 2
    assert "known: py3.10 py3.13 tf2.16.2 pre" in result.stdout
