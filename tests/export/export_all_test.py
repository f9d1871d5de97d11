"""experimental_export_all_saved_models writes tf.estimator 2.15's train/eval/serve
MetaGraphs: same tags, signature keys, methods, input and output names."""

import sys

import pytest

from tests.oracle import (
    TF215_PYTHON,
    driver_path,
    finish_driver,
    requires_oracle,
    start_driver,
)
from tests.support.tf_versions import tf2_only

DRIVER = driver_path("export_all_driver.py")


@pytest.fixture(scope="module")
def reports():
    """Both libraries' reports; the two processes run side by side."""
    started = {"lite": start_driver(sys.executable, DRIVER, "lite")}
    if TF215_PYTHON:
        started["oracle"] = start_driver(TF215_PYTHON, DRIVER, "oracle")
    return {name: finish_driver(process, timeout_secs=300)
            for name, process in started.items()}


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
