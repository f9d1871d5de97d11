"""Evaluation results are typed and ordered as tf.estimator 2.15's.

tf.estimator returns what `Session.run` gives (numpy.float32 metrics and loss,
numpy.int64 global_step, a metric's own dtype, numpy arrays, bytes), the names
sorted and then 'global_step', and logs them as 'Saving dict for global step N:
...'. Programs depend on it: google/model_search calls `.item()` on every value.
tests/oracle/eval_results_driver.py reports the types on one library; EXPECTED
is what tf.estimator 2.15 reported (the oracle test re-checks it when the
oracle is there).
"""

import logging as std_logging

import numpy as np
import pytest
import tensorflow as tf2

import estimator_lite as el
from tests.oracle import BOTH_SIDES, driver_path, run_driver_on
from tests.support import models

DRIVER = driver_path("eval_results_driver.py")


def _scalar(type_name, dtype):
    return {"type": f"numpy.{type_name}", "dtype": dtype, "shape": []}


# The driver's model_fn metrics (named so that its order is not sorted), as
# evaluate() returns them.
_METRICS = {
    "Bupper": _scalar("float32", "float32"),
    "acc": _scalar("float32", "float32"),
    "auc": _scalar("float32", "float32"),
    "bytes_metric": {"type": "builtins.bytes"},
    "float64_metric": _scalar("float64", "float64"),
    "int32_metric": _scalar("int32", "int32"),
    "int64_metric": _scalar("int64", "int64"),
    "keras_mean": _scalar("float32", "float32"),
    "loss": _scalar("float32", "float32"),
    "vector_metric": {"type": "numpy.ndarray", "dtype": "float32", "shape": [2]},
    "zz": _scalar("float32", "float32"),
    "global_step": _scalar("int64", "int64"),
}
_RESULTS = {"keys": list(_METRICS), "values": _METRICS}
# google/model_search's pattern: `.item()` of each value of an evaluation with
# metrics 'zz' (float32) and 'count' (int64).
_ITEMS = {"keys": ["count", "loss", "zz", "global_step"],
          "values": {"count": {"type": "builtins.int"},
                     "loss": {"type": "builtins.float"},
                     "zz": {"type": "builtins.float"},
                     "global_step": {"type": "builtins.int"}}}

EXPECTED = {
    "log_lines": [
        {"logger": "tensorflow", "level": "INFO",
         "message": "Saving dict for global step #: Bupper = #, acc = #, auc = #, "
                    "float64_metric = #, global_step = #, int32_metric = #, "
                    "int64_metric = #, keras_mean = #, loss = #, "
                    "vector_metric = [# #], zz = #"},
        {"logger": "tensorflow", "level": "INFO",
         "message": "Saving 'checkpoint_path' summary for global step #: "
                    "<dir>/model.ckpt-#"},
    ],
    "evaluate": _RESULTS,
    "evaluate_named": _RESULTS,
    "eval_events": [
        ["Bupper", "simple_value"], ["acc", "simple_value"], ["auc", "simple_value"],
        ["float64_metric", "simple_value"], ["int32_metric", "simple_value"],
        ["int64_metric", "simple_value"], ["keras_mean", "simple_value"],
        ["loss", "simple_value"], ["vector_metric", "tensor"], ["zz", "simple_value"],
        ["checkpoint_path", "tensor"]],
    "train_and_evaluate": {
        "type": "tuple",
        "metrics": _RESULTS,
        "export_results_type": "list",
        # The custom exporter's str, then BestExporter's export dir (bytes).
        "export_results": [{"type": "builtins.str"}, {"type": "builtins.bytes"}],
        # Evaluations at steps 2 and 4; BestExporter compares at the second.
        "exporter_eval_results": [_RESULTS, _RESULTS],
        "compare_fn_args": [{"best": _RESULTS, "current": _RESULTS}],
    },
    "item_subclass": _ITEMS,
    "item_subclass_train_and_evaluate": _ITEMS,
}


@pytest.mark.slow
@pytest.mark.parametrize("library", BOTH_SIDES)
def test_evaluation_results_have_tf_estimators_types_and_order(library):
    report = run_driver_on(library, DRIVER, library, timeout_secs=600)
    tf_version = report.pop("tf_version")
    if library == "oracle":
        assert tf_version.startswith("2.15")
    assert report == EXPECTED


# In-process checks (no driver) --------------------------------------------------


def _input_fn():
    x = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)
    return tf2.data.Dataset.from_tensor_slices(({"x": x}, 2.0 * x)).batch(2)


def _model_fn(features, labels, mode):
    w = tf2.compat.v1.get_variable("w", [1, 1],
                                   initializer=tf2.compat.v1.zeros_initializer())
    predictions = tf2.matmul(features["x"], w)

    def metrics():
        return {"mse": tf2.compat.v1.metrics.mean_squared_error(labels, predictions),
                "examples": (tf2.constant(4, tf2.int64), tf2.no_op())}

    return models.squared_error_spec(mode, predictions, labels, learning_rate=0.01,
                                     metrics_fn=metrics)


def test_model_search_estimator_turns_results_into_python_numbers(tmp_path, monkeypatch):
    """google/model_search's subclass: it lifts the no-override rule the way
    tf.estimator lets it (replacing `_assert_members_are_not_overridden`), then
    calls `.item()` on each value super().evaluate() returns."""
    monkeypatch.setattr(el.Estimator, "_assert_members_are_not_overridden",
                        staticmethod(lambda _: None))

    class ModelSearchEstimator(el.Estimator):
        def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None,
                     name=None):
            results = super().evaluate(input_fn=input_fn, steps=steps, hooks=hooks,
                                       checkpoint_path=checkpoint_path, name=name)
            return {k: v.item() for k, v in results.items()}

    estimator = ModelSearchEstimator(_model_fn, model_dir=str(tmp_path))
    estimator.train(lambda: _input_fn().repeat(), steps=3)
    results = estimator.evaluate(_input_fn)
    assert list(results) == ["examples", "loss", "mse", "global_step"]
    assert {k: type(v) for k, v in results.items()} == {
        "examples": int, "loss": float, "mse": float, "global_step": int}
    assert results["global_step"] == 3 and results["examples"] == 4
    # train_and_evaluate hands back what the subclass's evaluate() returned.
    metrics, exports = el.train_and_evaluate(
        estimator, el.TrainSpec(lambda: _input_fn().repeat(), max_steps=5),
        el.EvalSpec(_input_fn, steps=None, throttle_secs=0, start_delay_secs=0))
    assert {k: type(v) for k, v in metrics.items()} == {
        "examples": int, "loss": float, "mse": float, "global_step": int}
    assert metrics["global_step"] == 5 and exports == []


def test_overriding_a_member_is_still_an_error_without_lifting_the_rule(tmp_path):
    class Overriding(el.Estimator):
        def evaluate(self, *args, **kwargs):
            return super().evaluate(*args, **kwargs)

    with pytest.raises(ValueError, match=r"Overriding overrides \['evaluate'\]"):
        Overriding(_model_fn, model_dir=str(tmp_path))


def test_evaluate_logs_saving_dict_with_each_value_once(tmp_path):
    """The INFO line of tf.estimator, with the values evaluate() returns printed
    with str() (numpy.float32's shortest digits), then the checkpoint line."""
    messages = []

    class Collect(std_logging.Handler):
        def emit(self, record):
            if record.getMessage().startswith("Saving"):
                messages.append((record.name, record.levelname, record.getMessage()))

    logger = std_logging.getLogger("tensorflow")
    handler, old_level = Collect(), logger.level
    logger.addHandler(handler)
    logger.setLevel(std_logging.INFO)
    try:
        estimator = el.Estimator(_model_fn, model_dir=str(tmp_path))
        estimator.train(lambda: _input_fn().repeat(), steps=3)
        results = estimator.evaluate(_input_fn)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    checkpoint = estimator.latest_checkpoint()
    assert messages == [
        ("tensorflow", "INFO",
         f"Saving dict for global step 3: examples = 4, global_step = 3, "
         f"loss = {results['loss']!s}, mse = {results['mse']!s}"),
        ("tensorflow", "INFO",
         f"Saving 'checkpoint_path' summary for global step 3: {checkpoint}")]
    assert type(results["loss"]) is np.float32
