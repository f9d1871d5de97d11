"""add_metrics adds evaluation metrics to an existing estimator."""

import pytest
import tensorflow as tf

import estimator_lite as el
from tests.support import models


def test_add_metrics_adds_and_replaces_metrics(tmp_path):
    est = models.make_estimator(tmp_path)
    est.train(models.input_fn(), max_steps=20)

    def metric_fn(labels, predictions):
        return {"rmse": tf.compat.v1.metrics.root_mean_squared_error(
                    labels, predictions["y"]),
                "mae": tf.compat.v1.metrics.mean(tf.constant(42.0))}

    extended = el.add_metrics(est, metric_fn)
    assert extended.model_dir == est.model_dir
    metrics = extended.evaluate(models.input_fn(epochs=1))
    assert metrics["mae"] == 42.0  # replaced the model's own mae
    assert metrics["rmse"] == pytest.approx(metrics["loss"] ** 0.5, rel=1e-3)
    assert metrics["global_step"] == 20
    extended.train(models.input_fn(), max_steps=25)  # training is unchanged
    assert est.get_variable_value("global_step") == 25


def test_add_metrics_checks_its_arguments(tmp_path):
    est = models.make_estimator(tmp_path)
    with pytest.raises(TypeError, match="estimator must be an estimator_lite Estimator"):
        el.add_metrics("est", lambda labels: {})
    with pytest.raises(TypeError, match="metric_fn must be callable"):
        el.add_metrics(est, None)
    with pytest.raises(ValueError, match=r"unknown arguments \['mode'\]"):
        el.add_metrics(est, lambda mode: {})
    est.train(models.input_fn(), max_steps=1)
    with pytest.raises(TypeError, match="metric_fn must return a dict"):
        el.add_metrics(est, lambda labels: [1]).evaluate(models.input_fn(epochs=1))
