"""The TF1-era program (examples/tf1_program.py) on this TensorFlow, locally and as
a cluster of real processes (chief, worker, ps, evaluator on 127.0.0.1).

The same script runs on TF 1.15 / Python 3.7 (.ci/tf115) and on TF 2.16+ (with
tf-keras, which `tf.layers` needs there): a tf.layers model_fn in two towers over
two CPU devices, train_and_evaluate with a LatestExporter, the export reloaded
with TF1's `tf.saved_model.loader.load` and served.
"""

import os
import re
import sys

from tests import zygote
from tests.oracle import requires_legacy_keras
from tests.tf_versions import TF1

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, "examples", "tf1_program.py")
RESULT = re.compile(
    r"tf1 program on TF (\S+), 2 towers: test accuracy ([\d.]+) \(evaluate\), "
    r"([\d.]+) \(reloaded SavedModel (\S+)\) at step (\d+); first test image: "
    r"served (\d+), label (\d+)")

# tf.layers on TF >= 2.16 is tf-keras'; TF 1.15 has it built in.
needs_tf_layers = (lambda test: test) if TF1 else requires_legacy_keras


def _run(args, timeout_secs):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2",
               TF_USE_LEGACY_KERAS="1")
    env.pop("TF_CONFIG", None)
    result = zygote.run(args, capture_output=True, text=True, env=env, check=False,
                        timeout=timeout_secs)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    return output


def _check(match, max_steps):
    assert match, "no result line"
    _, evaluated, reloaded, export_dir, step, served, label = match.groups()
    assert float(evaluated) > 0.95  # 0.98 on TF 1.15.5 and on TF 2.21 at 600 steps
    assert float(reloaded) == float(evaluated)  # the reloaded export agrees
    assert max_steps <= int(step) <= max_steps + 2  # async trainers may overshoot
    assert os.path.exists(os.path.join(export_dir, "saved_model.pb"))
    assert served == label


@needs_tf_layers
def test_tf1_program_trains_exports_and_serves(tmp_path):
    output = _run([sys.executable, PROGRAM, "--model-dir", str(tmp_path),
                   "--max-steps", "400"], timeout_secs=600)
    _check(RESULT.search(output), 400)
    assert sorted(os.listdir(tmp_path / "export" / "latest")) != []


@needs_tf_layers
def test_tf1_program_as_a_cluster_every_role_exits(tmp_path):
    output = _run([sys.executable, "-m", "estimator_lite.launch", "--ps", "1",
                   "--workers", "1", "--evaluator", "--", sys.executable, PROGRAM,
                   "--model-dir", str(tmp_path), "--max-steps", "200"],
                  timeout_secs=600)
    for role in ("[chief] tf1 program: chief 0 done",
                 "[worker:0] tf1 program: worker 0 done",
                 "[ps:0] tf1 program: ps 0 done", "[launch] all roles finished"):
        assert role in output, output[-4000:]
    _check(re.search(r"\[evaluator\] " + RESULT.pattern, output), 200)
