"""tf.estimator's head_utils (`_compat/head_utils.py`): the chooser and the assertions."""

import pytest
import tensorflow as tf

from estimator_lite._compat import head_utils


def test_head_utils_chooses_the_classifier_head_as_tf_estimator():
    binary = head_utils.binary_or_multi_class_head(2, "w", ["a", "b"], "sum")
    assert type(binary).__name__ == "BinaryClassHead" and binary.logits_dimension == 1
    multi = head_utils.binary_or_multi_class_head(4, None, None, "sum_over_batch_size")
    assert type(multi).__name__ == "MultiClassHead" and multi.logits_dimension == 4


def _test_case():
    """A tf.test.TestCase whose assertions the helpers call (defined here, so pytest
    does not collect it)."""
    class Case(tf.test.TestCase):
        def runTest(self):  # noqa: N802 - unittest's name
            """Nothing to run."""
    return Case()


def test_the_assertions_pass_and_fail_as_tf_estimators():
    case = _test_case()
    summary = tf.compat.v1.Summary(value=[tf.compat.v1.Summary.Value(
        tag="loss", simple_value=2.0)]).SerializeToString()
    head_utils._assert_simple_summaries(case, {"loss": 2.0}, summary)
    with pytest.raises(AssertionError):
        head_utils._assert_simple_summaries(case, {"loss": 3.0}, summary)
    with tf.Graph().as_default():
        tf.compat.v1.train.create_global_step()
        head = head_utils.binary_or_multi_class_head(2, None, None, "sum")
        spec = head.create_estimator_spec(
            features={}, mode="eval", logits=tf.constant([[0.3]]),
            labels=tf.constant([[1]]))
        head_utils._assert_no_hooks(case, spec)
        with tf.compat.v1.Session() as session, session.as_default():
            head_utils._initialize_variables(case, spec.scaffold)
    assert head_utils._DEFAULT_SERVING_KEY == "serving_default"
