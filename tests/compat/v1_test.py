"""Every public name of tf.compat.v1.estimator 2.15 is in estimator_lite.compat.v1.

tests/data/tf_compat_v1_estimator_2_15_public_names.txt was dumped from the real
tf.compat.v1.estimator (`tests/oracle/dump_public_names.py compat.v1`). A name missing
here must be listed, with its reason, in docs/differences.md's "Deliberately absent
from compat.v1" table.
"""

import estimator_lite as el
from estimator_lite.canned import v1 as canned_v1
from estimator_lite.compat import v1
from tests.support.public_names import (
    dumped_names,
    stale_absent_names,
    undocumented_missing_names,
)

PREFIX = "tf.compat.v1.estimator."
V1_ONLY_CANNED = ("DNNClassifier", "DNNRegressor", "DNNEstimator", "LinearClassifier",
                  "LinearRegressor", "LinearEstimator", "DNNLinearCombinedClassifier",
                  "DNNLinearCombinedRegressor", "DNNLinearCombinedEstimator",
                  "BaselineClassifier", "BaselineRegressor", "BaselineEstimator")


NAMES_FILE = "tf_compat_v1_estimator_2_15_public_names.txt"
ABSENT_HEADING = "## Deliberately absent from compat.v1"


def _v1_names():
    return dumped_names(NAMES_FILE, PREFIX)


def test_the_list_is_the_real_one():
    names = _v1_names()
    assert len(names) > 80 and "Estimator" in names
    assert "experimental.dnn_logit_fn_builder" in names and "tpu.TPUEstimator" in names


def test_every_name_is_present_or_deliberately_absent():
    assert undocumented_missing_names(v1, NAMES_FILE, PREFIX, ABSENT_HEADING) == []


def test_absent_table_lists_only_names_that_are_really_absent():
    assert stale_absent_names(v1, PREFIX, ABSENT_HEADING) == []


def test_no_extra_names():
    top = {n for n in _v1_names() if "." not in n}
    assert set(v1.__all__) <= top


def test_canned_estimators_are_the_v1_ones_and_the_rest_is_shared():
    for name in V1_ONLY_CANNED:
        assert getattr(v1, name) is getattr(canned_v1, name)
        assert getattr(v1, name) is not getattr(el, name)
    for name in ("Estimator", "RunConfig", "EstimatorSpec", "BinaryClassHead",
                 "train_and_evaluate", "export", "inputs"):
        assert getattr(v1, name) is getattr(el, name)
    assert hasattr(v1.Estimator, "export_savedmodel")
