"""DNNLinearCombined estimators: two parts, two optimizers; baseline estimators."""

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite import canned

NO_COLUMNS = "Either linear_feature_columns or dnn_feature_columns must be defined"
NO_HIDDEN_UNITS = "dnn_hidden_units must be defined"
COMBINER = "linear_sparse_combiner must be one of"


def _input_fn(epochs=None, regression=False):
    rng = np.random.RandomState(1)
    x = rng.randn(64, 3).astype(np.float32)
    tags = np.array(["a", "b", "c", "d"])[rng.randint(0, 4, 64)]
    score = x[:, 0] + (tags == "a") - 0.5
    labels = score.astype(np.float32) if regression else (score > 0).astype(np.int64)
    return tf.data.Dataset.from_tensor_slices(
        ({"x": x, "tag": tags}, labels)).repeat(epochs).batch(16)


def _columns():
    tag = tf.feature_column.categorical_column_with_hash_bucket("tag", 10)
    return (tf.feature_column.numeric_column("x", shape=(3,)), tag,
            tf.feature_column.embedding_column(tag, 2))


def test_both_parts_train_with_their_own_optimizers(tmp_path):
    x, tag, tag_embedding = _columns()
    estimator = canned.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path), linear_feature_columns=[tag, x],
        dnn_feature_columns=[x, tag_embedding], dnn_hidden_units=[8, 4],
        dnn_optimizer=tf.keras.optimizers.Adagrad(0.1), linear_optimizer="Adagrad",
        # Seeded: unseeded initial weights sometimes stayed at 0.58 after 30 steps.
        config=el.RunConfig(tf_random_seed=42))
    estimator.train(_input_fn, steps=30)
    metrics = estimator.evaluate(lambda: _input_fn(1))
    assert metrics["accuracy"] > 0.75
    # The DNN's optimizer owns the global step; the linear one counts its own steps.
    # Two optimizers of one class get Keras' scopes: training/Adagrad, .../Adagrad_1.
    assert estimator.get_variable_value("global_step") == 30
    assert estimator.get_variable_value("training/Adagrad_1/iter") == 30
    assert estimator.get_variable_value("training/Adagrad/learning_rate") == (
        pytest.approx(0.1))
    assert estimator.get_variable_value("training/Adagrad_1/learning_rate") == (
        pytest.approx(0.005))  # tf.estimator's rate for the linear part's name.
    names = estimator.get_variable_names()
    assert "training/Adagrad_1/linear/linear_model/tag/weights/accumulator" in names
    assert "training/Adagrad/dnn/hiddenlayer_1/kernel/accumulator" in names


@pytest.mark.parametrize("part", ["linear", "dnn"])
def test_one_part_alone(tmp_path, part):
    x, _, _ = _columns()
    kwargs = ({"linear_feature_columns": [x], "linear_optimizer": "SGD"}
              if part == "linear" else
              {"dnn_feature_columns": [x], "dnn_hidden_units": [4],
               "dnn_optimizer": "SGD"})
    estimator = canned.DNNLinearCombinedRegressor(model_dir=str(tmp_path), **kwargs)
    estimator.train(lambda: _input_fn(regression=True), steps=5)
    names = estimator.get_variable_names()
    assert any(n.startswith(part + "/") for n in names)
    assert not any(n.startswith({"linear": "dnn/", "dnn": "linear/"}[part])
                   for n in names)
    assert "training/SGD/iter" not in names  # The only optimizer owns the global step.


def test_bad_arguments_are_rejected():
    x, _, _ = _columns()
    with pytest.raises(ValueError, match=NO_COLUMNS):
        canned.DNNLinearCombinedClassifier()
    with pytest.raises(ValueError, match=NO_HIDDEN_UNITS):
        canned.DNNLinearCombinedClassifier(dnn_feature_columns=[x])
    with pytest.raises(ValueError, match=COMBINER):
        canned.DNNLinearCombinedRegressor(linear_feature_columns=[x],
                                          linear_sparse_combiner="max")


def test_baseline_regressor_learns_the_label_mean(tmp_path):
    labels = np.full((32, 2), [3.0, -1.0], np.float32)
    estimator = canned.BaselineRegressor(model_dir=str(tmp_path), label_dimension=2,
                                         optimizer="SGD")
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices(
        ({"x": np.zeros(32, np.float32)}, labels)).repeat().batch(8), steps=40)
    np.testing.assert_allclose(estimator.get_variable_value("baseline/bias"), [3.0, -1.0],
                               atol=1e-3)


def test_baseline_classifier_predicts_the_class_prior(tmp_path):
    labels = np.array([0] * 20 + [1] * 8 + [2] * 4, np.int64)
    estimator = canned.BaselineClassifier(model_dir=str(tmp_path), n_classes=3,
                                          optimizer=tf.keras.optimizers.SGD(1.0))

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(
            ({"x": np.zeros(32, np.float32)}, labels)).repeat().batch(32)

    estimator.train(input_fn, steps=200)
    prediction = next(iter(estimator.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": np.zeros(2, np.float32)})
        .batch(2))))
    np.testing.assert_allclose(prediction["probabilities"], [20 / 32, 8 / 32, 4 / 32],
                               atol=0.02)
