"""DNNEstimator, LinearEstimator, DNNLinearCombinedEstimator, BaselineEstimator:
canned models with a head the user chooses."""

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el

FC = tf.compat.v1.feature_column
X = np.random.RandomState(0).rand(64, 3).astype(np.float32)
Y = (X > 0.5).astype(np.int64)  # three independent labels: a multi-label head
COLUMNS = [FC.numeric_column("x", 3)]


def _input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(16)


@pytest.mark.parametrize("make", [
    lambda head: el.DNNEstimator(head, [8], COLUMNS),
    lambda head: el.LinearEstimator(head, COLUMNS),
    lambda head: el.DNNLinearCombinedEstimator(
        head, linear_feature_columns=COLUMNS, dnn_feature_columns=COLUMNS,
        dnn_hidden_units=[4]),
    el.BaselineEstimator,
], ids=["dnn", "linear", "combined", "baseline"])
def test_head_estimators_train_and_use_the_heads_metrics(make, tmp_path):
    est = make(el.MultiLabelHead(3))
    est.train(_input_fn, steps=40)
    first = est.evaluate(_input_fn, steps=4)
    assert sorted(first) == ["auc", "auc_precision_recall", "average_loss",
                             "global_step", "loss"]
    est.train(_input_fn, steps=40)
    assert est.evaluate(_input_fn, steps=4)["loss"] < first["loss"]


def test_a_head_is_required():
    with pytest.raises(TypeError, match="head must be an estimator_lite Head"):
        el.DNNEstimator("multi_label", [8], COLUMNS)
