"""Every public name of tf.compat.v1.estimator 2.15 is in estimator_lite.compat.v1.

tests/data/tf_compat_v1_estimator_2_15_public_names.txt was dumped from the real
tf.compat.v1.estimator (`tests/oracle/dump_public_names.py compat.v1`). A name missing
here must be listed, with its reason, in docs/differences.md's "Deliberately absent
from compat.v1" table.
"""

import estimator_lite as el
from estimator_lite.canned import v1 as canned_v1
from estimator_lite.compat import v1
from tests.support.public_names import documented_absent_names, dumped_names, resolves

PREFIX = "tf.compat.v1.estimator."
V1_ONLY_CANNED = ("DNNClassifier", "DNNRegressor", "DNNEstimator", "LinearClassifier",
                  "LinearRegressor", "LinearEstimator", "DNNLinearCombinedClassifier",
                  "DNNLinearCombinedRegressor", "DNNLinearCombinedEstimator",
                  "BaselineClassifier", "BaselineRegressor", "BaselineEstimator")


def _v1_names():
    return dumped_names("tf_compat_v1_estimator_2_15_public_names.txt", PREFIX)


def _resolves(dotted):
    return resolves(v1, dotted)


def _readme_absent_names():
    return documented_absent_names("## Deliberately absent from compat.v1", PREFIX)


def test_the_list_is_the_real_one():
    names = _v1_names()
    assert len(names) > 80 and "Estimator" in names
    assert "experimental.dnn_logit_fn_builder" in names and "tpu.TPUEstimator" in names


def test_every_name_is_present_or_deliberately_absent():
    absent = _readme_absent_names()
    missing = [n for n in _v1_names() if not _resolves(n) and n not in absent]
    assert missing == []


def test_absent_table_lists_only_names_that_are_really_absent():
    stale = sorted(n for n in _readme_absent_names() if _resolves(n))
    assert stale == []


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
