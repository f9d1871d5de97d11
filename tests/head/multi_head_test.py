"""MultiHead: weighted total loss, per-head metrics, logits split, predictions, errors."""

import re

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite.head import BinaryClassHead, MultiHead, RegressionHead

LOGITS = np.array([[0.5, 1.0, -1.0], [-1.5, 0.0, 2.0], [2.0, 0.5, 0.5]], np.float32)
LABELS = {"click": np.array([[1], [0], [1]], np.int64),
          "price": np.array([[1.0, -1.0], [0.0, 2.5], [1.0, 0.0]], np.float32)}
NAME_ERROR = "All given heads must have name specified"
WEIGHTS_ERROR = "heads and head_weights must have the same size. Given len(heads): 2"


def _heads():
    return [BinaryClassHead(name="click"), RegressionHead(label_dimension=2, name="price")]


def _head_losses():
    p = 1 / (1 + np.exp(-LOGITS[:, 0].astype(np.float64)))
    y = LABELS["click"][:, 0]
    click = np.mean(-(y * np.log(p) + (1 - y) * np.log(1 - p)))
    price = np.mean((LOGITS[:, 1:] - LABELS["price"]) ** 2)
    return click, price


def test_total_loss_and_metrics(eval_in_graph):
    head = MultiHead(_heads(), head_weights=[1.0, 0.5])
    assert head.name == "click_price" and head.logits_dimension == 3
    loss, metrics = eval_in_graph(head, LOGITS, LABELS, regularization_losses=[0.25])
    click, price = _head_losses()
    np.testing.assert_allclose(loss, click + 0.5 * price + 0.25, rtol=1e-5)
    np.testing.assert_allclose(metrics["loss/click"], click, rtol=1e-5)
    np.testing.assert_allclose(metrics["loss/price"], price, rtol=1e-5)
    assert metrics["regularization_loss/click_price"] == pytest.approx(0.25)
    assert {"auc/click", "accuracy/click", "average_loss/price",
            "label/mean/price"} <= set(metrics)


def test_logits_dict_equals_concatenated_logits(run_in_graph):
    head = MultiHead(_heads())

    def build():
        labels = {k: tf.constant(v) for k, v in LABELS.items()}
        logits = tf.constant(LOGITS)
        return [head.loss(labels, logits),
                head.loss(labels, {"click": logits[:, :1], "price": logits[:, 1:]})]

    concatenated, split = run_in_graph(build)
    assert concatenated == pytest.approx(split)
    assert concatenated == pytest.approx(sum(_head_losses()), rel=1e-5)


def test_predictions_have_head_name_tuple_keys_and_export_outputs_per_head():
    head = MultiHead(_heads())
    with tf.Graph().as_default():
        predictions = head.predictions(tf.constant(LOGITS))
        outputs = head._export_outputs(predictions)  # noqa: SLF001
    assert ("click", "probabilities") in predictions
    assert ("price", "predictions") in predictions
    assert sorted(outputs) == sorted([
        "serving_default", "click", "click/classification", "click/regression",
        "click/predict", "price", "price/regression", "price/predict", "predict"])
    assert "click/logistic" in outputs["predict"].outputs
    assert outputs["serving_default"] is outputs["click"]


def test_estimator_trains_and_evaluates(tmp_path, linear_model_fn):
    x = np.eye(3, dtype=np.float32)
    estimator = el.Estimator(linear_model_fn(MultiHead(_heads()), 3),
                             model_dir=str(tmp_path / "model"))

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x}, LABELS)).repeat().batch(3)

    estimator.train(input_fn, steps=3)
    metrics = estimator.evaluate(input_fn, steps=1)
    assert metrics["global_step"] == 3
    assert {"loss", "loss/click", "loss/price", "auc/click",
            "average_loss/price"} <= set(metrics)


def test_estimator_predict_yields_tuple_keys(tmp_path, linear_model_fn):
    x = np.eye(3, dtype=np.float32)
    estimator = el.Estimator(linear_model_fn(MultiHead(_heads()), 3),
                             model_dir=str(tmp_path / "model"))
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices(
        ({"x": x}, LABELS)).batch(3), steps=1)
    prediction = next(estimator.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": x}).batch(3)))
    assert prediction[("click", "classes")] in (b"0", b"1")
    assert prediction[("price", "predictions")].shape == (2,)


@pytest.mark.parametrize(("make", "error", "message"), [
    (lambda: MultiHead([]), ValueError, "Must specify heads"),
    (lambda: MultiHead([BinaryClassHead()]), ValueError, NAME_ERROR),
    (lambda: MultiHead([BinaryClassHead(name="a"), BinaryClassHead(name="a")]),
     ValueError, "head names must be unique"),
    (lambda: MultiHead(_heads(), head_weights=[1.0]), ValueError, WEIGHTS_ERROR),
    (lambda: MultiHead(["click"]), TypeError, "heads must contain only"),
])
def test_bad_arguments(make, error, message):
    with pytest.raises(error, match=re.escape(message)):
        make()


def test_labels_must_have_every_head():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="missing"):
        MultiHead(_heads()).loss({"click": tf.constant(LABELS["click"])},
                                 tf.constant(LOGITS))
