"""The estimator unit tests of tfgan, lattice, ranking, adanet and nsl pass on lite.

`tests/upstream/run_libraries.py` extracts the libraries' own estimator test files
from git mirrors at the pinned releases (.ci/run installs the wheels) and runs them
through `python -m estimator_lite.run -m pytest` on this TensorFlow. What the oracle
(TF 2.15 + tensorflow-estimator 2.15) does with them is recorded in
tests/data/library_suites_oracle.json (re-record it with the runner's oracle side,
see tests/upstream/README.md): CI does not re-run the oracle.

Every test that passes on the oracle must pass here, except those in
KNOWN_FAILURES (each with its reason; docs/differences.md lists them too).
Slow (about 15 minutes on CI's two cores): .ci/run runs it in its `-m slow` step.
"""

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RUNNER = os.path.join(ROOT, "tests", "upstream", "run_libraries.py")
ORACLE = os.path.join(ROOT, "tests", "data", "library_suites_oracle.json")
sys.path.insert(0, os.path.dirname(RUNNER))
import run_libraries  # noqa: E402  (tests/upstream is not a package)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

# Test id -> why it fails on lite although it passes on the oracle.
KNOWN_FAILURES = {}
# Oracle-passing tests that pass on lite, per library (measured; may only grow).
MEASURED_LITE_PASSES = {"tfgan": 43, "lattice": 33, "ranking": 65, "adanet": 137,
                        "nsl": 0}


def _missing():
    packages = ("tensorflow_gan", "tensorflow_lattice", "tensorflow_ranking", "adanet",
                "neural_structured_learning", "tensorflow_serving",
                "tensorflow_probability", "tf_keras")
    import importlib.util
    missing = [name for name in packages if importlib.util.find_spec(name) is None]
    mirrors = run_libraries.missing_mirrors(run_libraries.MIRROR_ROOT)
    return missing + [f"the {name} mirror" for name in mirrors]


@pytest.fixture(scope="module")
def comparison(tmp_path_factory):
    missing = _missing()
    if missing:
        pytest.skip(f"{', '.join(missing)} not here (.ci/run installs the packages; "
                    f"the mirrors are under {run_libraries.MIRROR_ROOT})")
    out = tmp_path_factory.mktemp("libraries") / "lite.json"
    completed = subprocess.run(
        [sys.executable, RUNNER, "--side", "lite", "--python", sys.executable,
         "--worktree", ROOT, "--out", str(out), "--oracle-results", ORACLE],
        capture_output=True, text=True, check=False, timeout=3500)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    with open(out) as f:
        return json.load(f)["comparison"]


def test_each_library_passes_at_least_the_measured_number(comparison):
    counts = comparison["libraries"]
    passes = {name: counts.get(name, {}).get("lite_passes", 0)
              for name in MEASURED_LITE_PASSES}
    assert all(passes[name] >= MEASURED_LITE_PASSES[name] for name in passes), (
        passes, MEASURED_LITE_PASSES)


def test_every_oracle_passing_test_passes_unless_known(comparison):
    unexpected = {test_id: data for test_id, data in comparison["tests"].items()
                  if test_id not in KNOWN_FAILURES}
    assert not unexpected, json.dumps(unexpected, indent=1)[:6000]
