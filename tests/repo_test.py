"""README's two opening commands stay true: CI runs README's test command verbatim."""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


def test_ci_runs_the_readme_test_command():
    test_command = _readme_commands()[1]
    with open(os.path.join(ROOT, ".ci", "run")) as f:
        ci_lines = [line.strip() for line in f]
    assert test_command.strip() in ci_lines
