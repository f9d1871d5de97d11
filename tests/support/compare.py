"""Comparing what estimator_lite wrote with what tf.estimator 2.15 wrote (not a test file).

The oracle tests train the same model on both libraries and compare the results:
evaluation metrics within a tolerance, checkpoint variables value by value, and the
signatures of exported SavedModels.
"""

import numpy as np
import pytest
import tensorflow as tf

# Same update rules, same data: the variables differ only by float rounding.
VARIABLE_RTOL = 1e-4
VARIABLE_ATOL = 1e-6


def signatures(export_dir):
    """The signatures of a SavedModel.

    Args:
      export_dir: a SavedModel directory with a `serve` MetaGraph.

    Returns:
      {signature key: (method name, {input: dtype}, {output: dtype})}.
    """
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        meta_graph = tf.compat.v1.saved_model.loader.load(session, ["serve"], export_dir)
    return {key: (sig.method_name,
                  {name: info.dtype for name, info in sig.inputs.items()},
                  {name: info.dtype for name, info in sig.outputs.items()})
            for key, sig in meta_graph.signature_def.items()}


def assert_metrics_close(actual, expected, tolerance, context=None):
    """Asserts two evaluations have the same metric names and values.

    Args:
      actual: {metric name: value}.
      expected: {metric name: value}.
      tolerance: relative and absolute tolerance of each value.
      context: what the failure message names first (e.g. the model's kind).
    """
    assert sorted(actual) == sorted(expected), context
    for key, value in expected.items():
        assert actual[key] == pytest.approx(value, rel=tolerance, abs=tolerance), (
            key if context is None else f"{context}: {key}")


def assert_same_variables(actual_dir, expected_dir, names, context=None):
    """Asserts the latest checkpoints of two model_dirs hold the same values.

    Args:
      actual_dir: a model_dir.
      expected_dir: the model_dir it must equal (within VARIABLE_RTOL/ATOL).
      names: the variables to compare.
      context: what the failure message names first (e.g. the model's kind).
    """
    for name in names:
        np.testing.assert_allclose(
            tf.train.load_variable(actual_dir, name),
            tf.train.load_variable(expected_dir, name), rtol=VARIABLE_RTOL,
            atol=VARIABLE_ATOL, err_msg=name if context is None else f"{context}: {name}")
