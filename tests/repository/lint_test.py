"""The tree is ruff clean with the repo's configuration (ruff.toml)."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_ruff_check_passes():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", ROOT],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
