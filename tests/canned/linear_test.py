"""LinearClassifier / LinearRegressor and the linear model's sparse combiners."""

import re

import numpy as np
import pytest
import tensorflow as tf

from estimator_lite import canned
from estimator_lite.canned import feature_layers

MULTI_METRICS = {"accuracy", "average_loss", "loss", "global_step"}
MULTI_PREDICTIONS = {"logits", "probabilities", "class_ids", "classes", "all_class_ids",
                     "all_classes"}
SPARSE_COMBINER = "sparse_combiner must be one of"
DUPLICATE_COLUMNS = "has several columns named ['x']"


def _table(n=64, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 2).astype(np.float32)
    tags = np.array(["a", "b", "c"])[rng.randint(0, 3, n)]
    return {"x": x, "tag": tags}, rng


def _tag_column():
    return tf.feature_column.categorical_column_with_vocabulary_list("tag", ["a", "b", "c"])


def test_linear_regressor_recovers_the_true_weights(tmp_path):
    features, _ = _table()
    y = (features["x"] @ np.array([2.0, -1.0]) + 0.5 +
         (features["tag"] == "b") * 1.5).astype(np.float32)
    estimator = canned.LinearRegressor(
        [tf.feature_column.numeric_column("x", shape=(2,)), _tag_column()],
        model_dir=str(tmp_path), optimizer="SGD")  # SGD at tf.estimator's rate 0.2.
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices((features, y))
                    .repeat().batch(16), steps=300)
    weights = estimator.get_variable_value("linear/linear_model/x/weights")
    np.testing.assert_allclose(weights[:, 0], [2.0, -1.0], atol=0.05)
    tag = estimator.get_variable_value("linear/linear_model/tag/weights")[:, 0]
    bias = estimator.get_variable_value("linear/linear_model/bias_weights")[0]
    np.testing.assert_allclose(tag + bias, [0.5, 2.0, 0.5], atol=0.05)
    assert estimator.get_variable_value("training/SGD/learning_rate") == pytest.approx(0.2)


def test_linear_classifier_multiclass_with_vocabulary(tmp_path):
    features, _ = _table()
    labels = np.array(["lo", "mid", "hi"])[np.digitize(features["x"][:, 0], [-0.5, 0.5])]
    estimator = canned.LinearClassifier(
        [tf.feature_column.numeric_column("x", shape=(2,)), _tag_column()],
        model_dir=str(tmp_path), n_classes=3, label_vocabulary=["lo", "mid", "hi"],
        sparse_combiner="sqrtn")

    def input_fn(epochs=None):
        return tf.data.Dataset.from_tensor_slices((features, labels)).repeat(
            epochs).batch(16)

    estimator.train(input_fn, steps=60)
    metrics = estimator.evaluate(lambda: input_fn(1))
    assert set(metrics) == MULTI_METRICS
    assert metrics["accuracy"] > 0.8
    prediction = next(iter(estimator.predict(
        lambda: tf.data.Dataset.from_tensor_slices(features).batch(4))))
    assert set(prediction) == MULTI_PREDICTIONS
    assert prediction["classes"][0].decode() == labels[0]


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_sparse_combiners_combine_multi_valued_ids(combiner):
    ids = tf.compat.v1.SparseTensorValue(indices=[[0, 0], [0, 1], [1, 0]],
                                         values=["a", "c", "b"], dense_shape=[2, 2])
    weights = np.array([[1.0, -1.0], [2.0, 0.5], [4.0, 3.0]], np.float32)
    with tf.Graph().as_default():
        features = {"tag": tf.compat.v1.sparse_placeholder(tf.string)}
        logits = feature_layers.linear_logits(features, [_tag_column()], 2, combiner)
        variable = tf.compat.v1.global_variables("linear_model/tag/weights")[0]
        with tf.compat.v1.Session() as session:
            session.run([tf.compat.v1.global_variables_initializer(),
                         tf.compat.v1.tables_initializer()])
            session.run(variable.assign(weights))
            got = session.run(logits, {features["tag"]: ids})
    scale = {"sum": 1.0, "mean": 0.5, "sqrtn": 1.0 / np.sqrt(2.0)}[combiner]
    np.testing.assert_allclose(got, [(weights[0] + weights[2]) * scale, weights[1]],
                               rtol=1e-6)


def test_bad_arguments_are_rejected():
    x = tf.feature_column.numeric_column("x")
    with pytest.raises(ValueError, match=SPARSE_COMBINER):
        canned.LinearClassifier([x], sparse_combiner="max")
    with pytest.raises(ValueError, match=re.escape(DUPLICATE_COLUMNS)):
        canned.LinearRegressor([x, tf.feature_column.numeric_column("x", shape=(2,))])
