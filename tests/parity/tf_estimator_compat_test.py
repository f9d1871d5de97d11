"""train_and_evaluate drives a real tf.estimator.Estimator (tensorflow-estimator 2.15).

TF >= 2.16 has no tf.estimator, so this runs tests/oracle/tf_estimator_driver.py
with a second interpreter that has tensorflow 2.15 + tensorflow-estimator 2.15,
named by ESTIMATOR_LITE_TF215_PYTHON. .ci/run builds that interpreter and sets the
variable, so CI always runs this test; a plain local run without it skips it.
"""

import json
import os

from tests.oracle import TF215_PYTHON, requires_oracle
from tests.support import zygote

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@requires_oracle
def test_real_tf_estimator_is_driven_by_train_and_evaluate(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("TF_CONFIG", None)
    result = zygote.run(
        [TF215_PYTHON, os.path.join(ROOT, "tests", "oracle", "tf_estimator_driver.py"),
         str(tmp_path / "model")], capture_output=True, text=True, env=env,
        timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["tf_version"].startswith("2.15")
    assert report["global_step"] == 25
    assert report["evaluated_steps"] == [10, 20, 25]  # each checkpoint, final included
    assert report["rerun_step"] == 25  # a re-run returns the final metrics
    assert report["loss"] < 0.1
    assert report["export_ok"]
