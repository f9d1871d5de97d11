"""Heads: logits to predictions, loss, eval metrics and an EstimatorSpec.

The same classes, arguments, keys and export signatures as tf.estimator 2.15's
heads (`tf.estimator.BinaryClassHead` etc.), built from tf.compat.v1 ops.
"""

from estimator_lite.head.base_head import Head
from estimator_lite.head.binary_class_head import BinaryClassHead
from estimator_lite.head.multi_class_head import MultiClassHead
from estimator_lite.head.multi_head import MultiHead
from estimator_lite.head.multi_label_head import MultiLabelHead
from estimator_lite.head.regression_head import (
    LogisticRegressionHead,
    PoissonRegressionHead,
    RegressionHead,
)

__all__ = [
    "BinaryClassHead",
    "Head",
    "LogisticRegressionHead",
    "MultiClassHead",
    "MultiHead",
    "MultiLabelHead",
    "PoissonRegressionHead",
    "RegressionHead",
]
