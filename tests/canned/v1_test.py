"""estimator_lite.canned.v1 (TF 1.x's canned estimators): arguments, defaults, and a
model_dir of one flavor opened with the other (numbers against TF 2.15's
tf.compat.v1.estimator are in v1_compat_test.py)."""

import inspect
import os

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite.canned import v1

WRONG_FLAVOR_TO_V1 = "open it with the v1 flavor, estimator_lite.compat.v1.DNNClassifier"
WRONG_FLAVOR_TO_V2 = "open it with the TF2 flavor, estimator_lite.DNNClassifier"


def _input_fn():
    x = np.random.RandomState(0).randn(16, 2).astype(np.float32)
    return tf.data.Dataset.from_tensor_slices(
        ({"x": x}, (x[:, 0] > 0).astype(np.int64))).repeat().batch(8)


def _columns():
    return [tf.feature_column.numeric_column("x", shape=(2,))]


def test_v1_signatures_and_defaults():
    params = inspect.signature(v1.DNNClassifier).parameters
    assert params["loss_reduction"].default == tf.compat.v1.losses.Reduction.SUM
    assert "input_layer_partitioner" in params
    assert "partitioner" in inspect.signature(v1.LinearRegressor).parameters
    combined = inspect.signature(v1.DNNLinearCombinedClassifier).parameters
    assert list(combined)[:4] == ["model_dir", "linear_feature_columns",
                                  "linear_optimizer", "dnn_feature_columns"]
    assert v1.combined_linear_learning_rate(4) == 0.005
    assert v1.combined_linear_learning_rate(10 ** 6) == pytest.approx(0.001)


def test_optimizer_arguments():
    with pytest.raises(ValueError, match="optimizer must be one of"):
        v1.DNNClassifier([2], _columns(), optimizer="Adadelta")
    with pytest.raises(TypeError, match="tf.compat.v1.train.Optimizer"):
        v1.LinearClassifier(_columns(), optimizer=3)
    with pytest.raises(TypeError, match="partitioner must be None"):
        v1.LinearClassifier(_columns(), partitioner="fixed")


def _dir_files(path):
    return {n: os.path.getmtime(os.path.join(path, n)) for n in os.listdir(path)}


@pytest.mark.parametrize("writer,reader,expected", [
    (v1.DNNClassifier, el.DNNClassifier, WRONG_FLAVOR_TO_V1),
    (el.DNNClassifier, v1.DNNClassifier, WRONG_FLAVOR_TO_V2)])
def test_a_model_dir_of_the_other_flavor_is_a_clear_error(tmp_path, writer, reader,
                                                          expected):
    writer([3], _columns(), model_dir=str(tmp_path)).train(_input_fn, max_steps=1)
    before = _dir_files(str(tmp_path))
    with pytest.raises(ValueError) as info:
        reader([3], _columns(), model_dir=str(tmp_path)).train(_input_fn, max_steps=2)
    message = str(info.value)
    assert expected in message and str(tmp_path) in message
    assert "lacks" in message and "Adagrad" in message
    assert _dir_files(str(tmp_path)) == before  # nothing written


def test_logit_fn_builders_build_v1_variables_in_the_callers_scope():
    from estimator_lite.compat.v1 import experimental

    columns = _columns()
    with tf.Graph().as_default():
        features = {"x": tf.compat.v1.placeholder(tf.float32, [None, 2])}
        partitioner = tf.compat.v1.min_max_variable_partitioner(max_partitions=1)
        with tf.compat.v1.variable_scope("dnn", partitioner=partitioner):
            dnn_logits = experimental.dnn_logit_fn_builder(
                units=3, hidden_units=[4], feature_columns=columns,
                activation_fn=tf.nn.relu, dropout=None, input_layer_partitioner=None,
                batch_norm=True)(features=features, mode="train")
        with tf.compat.v1.variable_scope("linear"):
            linear_logits = experimental.linear_logit_fn_builder(
                units=3, feature_columns=columns)(features=features)
        names = sorted(v.op.name for v in tf.compat.v1.global_variables())
        updates = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
    assert dnn_logits.shape.as_list() == linear_logits.shape.as_list() == [None, 3]
    assert "dnn/hiddenlayer_0/kernel/part_0" in names
    assert "dnn/hiddenlayer_0/batchnorm_0/moving_mean" in names  # never partitioned
    assert "linear/linear_model/x/weights" in names
    assert len(updates) == 2  # the moving mean and variance
