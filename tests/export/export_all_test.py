"""experimental_export_all_saved_models writes tf.estimator 2.15's train/eval/serve
MetaGraphs: same tags, signature keys, methods, input and output names."""

import json
import os
import subprocess
import sys

import pytest

from tests.oracle import TF215_PYTHON, requires_oracle
from tests.support import zygote
from tests.support.tf_versions import tf2_only

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVER = os.path.join(ROOT, "tests", "oracle", "export_all_driver.py")


def _start(python, library):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_CONFIG", None)
    return zygote.Popen([python, DRIVER, library], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True, env=env)


def _report(process):
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err[-4000:]
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def reports():
    """Both libraries' reports; the two processes run side by side."""
    started = {"lite": _start(sys.executable, "lite")}
    if TF215_PYTHON:
        started["oracle"] = _start(TF215_PYTHON, "oracle")
    return {name: _report(process) for name, process in started.items()}


def test_three_meta_graphs_share_the_trained_variables(reports):
    lite = reports["lite"]
    assert lite["path_type"] == "bytes"
    tags = [m["tags"] for m in lite["meta_graphs"]]
    assert tags == [["train"], ["eval"], ["serve"]]
    assert lite["w"]["train"] == lite["w"]["eval"] == lite["w"]["serve"] == (
        lite["w_trained"])
    train, evaluation, _ = lite["meta_graphs"]
    assert train["signatures"]["train"]["method"] == "tensorflow/supervised/training"
    assert evaluation["signatures"]["eval"]["method"] == "tensorflow/supervised/eval"
    assert train["train_op"]
    assert set(train["signatures"]["train"]["outputs"]) == {
        "loss", "predictions/y", "metrics/mae/value", "metrics/mae/update_op"}
    assert set(train["signatures"]["train"]["inputs"]) == {"x", "label"}


@requires_oracle
@tf2_only("the driver's receiver templates are eager tensors on TF 2; on TF 1.15 they "
          "are graph tensors, whose op names name the inputs (Const:0, as "
          "tf.estimator 1.15 names them too)")
def test_meta_graphs_match_tf_estimator(reports):
    assert reports["lite"]["meta_graphs"] == reports["oracle"]["meta_graphs"]
