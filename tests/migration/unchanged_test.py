"""Migration corpus programs, unchanged (tf.estimator spelling), through the runner.

`python -m estimator_lite.run PROGRAM` on a copy of a corpus program whose
estimator_lite import line is put back to the tf.estimator spelling it had (no
estimator_lite anywhere in it) gives the same results as the import-swapped
program run directly. Two programs, two spellings (`from tensorflow import
estimator as tf_estimator`, and `tf_estimator = tf.estimator` after `import
tensorflow as tf`), to keep the wall time low; tests/migration/migration_test.py
compares every program with tf.estimator 2.15 itself.
"""

import os
import subprocess
import sys
import time

import pytest

from tests.migration import runner

UNCHANGED = [
    ("keras_layers_model_fn", runner.TF_ESTIMATOR_IMPORT),
    ("logging_tensor_hook", "tf_estimator = tf.estimator"),
]


def _run_unchanged(prog, spelling, work_dir):
    path = os.path.join(work_dir, prog.name + ".py")
    with open(prog.path) as f:
        source = runner.swap_import(f.read(), spelling, where=prog.path)
    assert "estimator_lite" not in source
    with open(path, "w") as f:
        f.write(source)
    env = runner._environment(prog, runner.LITE)
    env["PYTHONPATH"] = os.pathsep.join([runner.ROOT, runner.PROGRAM_DIR])
    start = time.monotonic()
    completed = subprocess.run(
        [sys.executable, "-m", "estimator_lite.run", path, "--model-dir",
         os.path.join(work_dir, "model_unchanged")], capture_output=True, text=True,
        env=env, cwd=work_dir, timeout=runner.TIMEOUT_SECS, check=False)
    return runner.Run("unchanged via estimator_lite.run", completed.returncode,
                      completed.stdout, completed.stderr, time.monotonic() - start,
                      runner.parse_result(completed.stdout))


@pytest.mark.parametrize("name,spelling", UNCHANGED, ids=[n for n, _ in UNCHANGED])
def test_unchanged_program_matches_its_import_swapped_twin(tmp_path, name, spelling):
    prog = runner.program(name)
    unchanged = _run_unchanged(prog, spelling, str(tmp_path))
    assert unchanged.failure() is None, unchanged.failure()
    swapped = runner.run(prog, runner.LITE, str(tmp_path))
    assert swapped.failure() is None, swapped.failure()
    assert runner.check_alone(prog, unchanged) == []
    assert runner.compare(prog, unchanged, swapped) == []
