"""The tree is ruff clean with the repo's configuration (ruff.toml), and no package module
outgrows the house limit (docs/development.md, "Layout")."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_ruff_check_passes():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", ROOT],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


# A module past this many lines holds more than one concept: split it by concept
# (docs/development.md, "Layout").
MODULE_MAX_LINES = 600


def test_no_package_module_is_over_the_line_limit():
    package = os.path.join(ROOT, "estimator_lite")
    long_modules = {}
    for dirpath, _, files in os.walk(package):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    count = sum(1 for _ in f)
                if count > MODULE_MAX_LINES:
                    long_modules[os.path.relpath(path, ROOT)] = count
    assert not long_modules, (
        f"modules over {MODULE_MAX_LINES} lines (split them by concept): {long_modules}")
