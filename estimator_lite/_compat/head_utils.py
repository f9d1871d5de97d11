"""tf.estimator's `head/head_utils` module: the classifier head chooser and the
small assertions its head tests share.

tf.estimator's head tests (and programs written for tf.estimator) import these by
the private path ``tensorflow_estimator.python.estimator.head.head_utils``; no
working module needs them, so they live here, never in `head/`.
"""

from estimator_lite._tf import tf
from estimator_lite.head.binary_class_head import BinaryClassHead
from estimator_lite.head.multi_class_head import MultiClassHead

__all__ = ["binary_or_multi_class_head"]

_DEFAULT_SERVING_KEY = tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY


def binary_or_multi_class_head(n_classes, weight_column, label_vocabulary,
                               loss_reduction):
    """A BinaryClassHead for two classes, else a MultiClassHead (which checks
    `n_classes`).

    Returns:
      The head.
    """
    if n_classes == 2:
        return BinaryClassHead(weight_column=weight_column,
                               label_vocabulary=label_vocabulary,
                               loss_reduction=loss_reduction)
    return MultiClassHead(n_classes, weight_column=weight_column,
                          label_vocabulary=label_vocabulary,
                          loss_reduction=loss_reduction)


def _initialize_variables(test_case, scaffold):
    """Finalizes `scaffold` and runs its init and local init in the default session,
    checking the readiness reports and that it has a saver and no custom init."""
    scaffold.finalize()
    test_case.assertIsNone(scaffold.init_feed_dict)
    test_case.assertIsNone(scaffold.init_fn)
    session = tf.get_default_session()
    session.run(scaffold.init_op)
    session.run(scaffold.ready_for_local_init_op)
    session.run(scaffold.local_init_op)
    session.run(scaffold.ready_op)
    test_case.assertIsNotNone(scaffold.saver)


def _assert_simple_summaries(test_case, expected_summaries, summary_str, tol=1e-6):
    """Asserts the simple values of serialized Summary `summary_str` ({tag: value})."""
    summary = tf.Summary()
    summary.ParseFromString(summary_str)
    test_case.assertAllClose(expected_summaries,
                             {value.tag: value.simple_value for value in summary.value},
                             rtol=tol, atol=tol)


def _assert_no_hooks(test_case, spec):
    """Asserts that a head's spec brings no training hooks."""
    test_case.assertAllEqual([], spec.training_chief_hooks)
    test_case.assertAllEqual([], spec.training_hooks)
