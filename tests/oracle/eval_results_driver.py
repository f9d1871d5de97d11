"""Reports the Python types and key order of evaluation results on one library.

`python eval_results_driver.py lite` uses estimator_lite; `python
eval_results_driver.py oracle` (TF 2.15 + tensorflow-estimator 2.15) uses
tf.estimator. It prints one JSON report: for `evaluate()`, `train_and_evaluate()`,
the `eval_result` an Exporter's `export()` receives and what a BestExporter's
compare_fn receives, each value's type, dtype and shape and the dicts' key order;
the INFO lines the evaluation logs (numbers masked) with their logger and level;
the eval summaries' tags and kinds; and what an Estimator subclass returning
`{k: v.item() ...}` of `super().evaluate()` (google/model_search's pattern) gives.
tests/_engine/eval_results_test.py asserts that both libraries report the same.
"""

import json
import logging
import re
import sys
import tempfile

import numpy as np
import tensorflow as tf

if sys.argv[1] == "lite":
    import estimator_lite as tf_estimator
else:
    from tensorflow import estimator as tf_estimator


def _describe(value):
    """type name, dtype and shape of one value (numpy's module name kept)."""
    described = {"type": f"{type(value).__module__}.{type(value).__name__}"}
    if hasattr(value, "dtype"):
        described["dtype"] = str(value.dtype)
        described["shape"] = list(value.shape)
    return described


def _describe_dict(results):
    return {"keys": list(results),
            "values": {k: _describe(v) for k, v in results.items()}}


def _input_fn():
    x = np.array([[1.0, 2.0], [3.0, 4.0], [0.5, -1.0], [2.0, 0.0]], np.float32)
    y = np.array([[1], [0], [1], [0]], np.int64)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(2)


def _linear_logits(features):
    w = tf.compat.v1.get_variable("w", [2, 1],
                                  initializer=tf.compat.v1.zeros_initializer())
    return tf.matmul(features["x"], w)


def _train_op(loss):
    return tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())


def _model_fn(features, labels, mode):
    """Metrics of many kinds, named so that the model_fn's order is not sorted."""
    logits = _linear_logits(features)
    prob = tf.sigmoid(logits)
    if mode == tf_estimator.ModeKeys.PREDICT:
        return tf_estimator.EstimatorSpec(mode, predictions={"p": prob})
    loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
    keras_mean = tf.keras.metrics.Mean()
    keras_mean.update_state(prob)
    metrics = {
        "zz": tf.compat.v1.metrics.mean(prob),
        "acc": tf.compat.v1.metrics.accuracy(labels, tf.cast(prob > 0.5, tf.int64)),
        "auc": tf.compat.v1.metrics.auc(labels, prob),
        "keras_mean": keras_mean,
        "int32_metric": (tf.constant(7, tf.int32), tf.no_op()),
        "int64_metric": (tf.constant(8, tf.int64), tf.no_op()),
        "float64_metric": (tf.constant(1.5, tf.float64), tf.no_op()),
        "vector_metric": (tf.constant([1.0, 2.0]), tf.no_op()),
        "Bupper": tf.compat.v1.metrics.mean(prob),
        "bytes_metric": (tf.constant(b"abc"), tf.no_op()),
    }
    return tf_estimator.EstimatorSpec(mode, loss=loss, train_op=_train_op(loss),
                                      eval_metric_ops=metrics)


def _scalar_model_fn(features, labels, mode):
    """Only scalar metrics, so every value has `.item()`."""
    logits = _linear_logits(features)
    loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
    metrics = {"zz": tf.compat.v1.metrics.mean(tf.sigmoid(logits)),
               "count": (tf.constant(4, tf.int64), tf.no_op())}
    return tf_estimator.EstimatorSpec(mode, loss=loss, train_op=_train_op(loss),
                                      eval_metric_ops=metrics)


class _ItemEstimator(tf_estimator.Estimator):
    """google/model_search's Estimator: it lifts the rule against overriding
    Estimator members (as model_search does), and its evaluate() returns Python
    numbers made with `.item()`."""

    def __init__(self, *args, **kwargs):
        tf_estimator.Estimator._assert_members_are_not_overridden = staticmethod(
            lambda _: None)
        super().__init__(*args, **kwargs)

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None,
                 name=None):
        results = super().evaluate(input_fn, steps=steps, hooks=hooks,
                                   checkpoint_path=checkpoint_path, name=name)
        return {k: v.item() for k, v in results.items()}


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append(record)


def _masked(message):
    """A log message with its numbers and temp paths masked (values may differ in
    the last digit between TensorFlow releases; the format may not)."""
    message = re.sub(r"/\S*/model\.ckpt-", "<dir>/model.ckpt-", message)
    return re.sub(r"(?<![\w.])-?\d+(\.\d*)?(e[-+]?\d+)?", "#", message)


def _eval_log_lines(run):
    """The tensorflow logger's INFO lines about the evaluation's results."""
    records = _Records()
    logger = logging.getLogger("tensorflow")
    logger.addHandler(records)
    try:
        result = run()
    finally:
        logger.removeHandler(records)
    lines = [{"logger": r.name, "level": r.levelname, "message": _masked(r.getMessage())}
             for r in records.records
             if r.getMessage().startswith(("Saving dict", "Saving 'checkpoint_path'"))]
    return result, lines


def _eval_events(eval_dir):
    """(tag, kind) of every summary value in `eval_dir`'s event files, in order."""
    values = []
    for path in sorted(tf.io.gfile.glob(f"{eval_dir}/events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            values.extend([value.tag, value.WhichOneof("value")]
                          for value in event.summary.value)
    return values


class _RecordingExporter(tf_estimator.Exporter):
    """Records the eval_result it is given; returns a str (export results may be
    anything an exporter returns)."""

    def __init__(self, seen):
        self._seen = seen

    @property
    def name(self):
        return "recording"

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        self._seen.append(_describe_dict(eval_result))
        return "exported"


def _serving_input_receiver_fn():
    x = tf.compat.v1.placeholder(tf.float32, [None, 2])
    return tf_estimator.export.ServingInputReceiver({"x": x}, {"x": x})


def _train_and_evaluate():
    exported, compared = [], []

    def compare_fn(best_eval_result, current_eval_result):
        compared.append({"best": _describe_dict(best_eval_result),
                         "current": _describe_dict(current_eval_result)})
        return best_eval_result["loss"] > current_eval_result["loss"]

    estimator = tf_estimator.Estimator(
        _model_fn, model_dir=tempfile.mkdtemp(),
        config=tf_estimator.RunConfig(save_checkpoints_steps=2))
    best = tf_estimator.BestExporter(serving_input_receiver_fn=_serving_input_receiver_fn,
                                     compare_fn=compare_fn)
    result = tf_estimator.train_and_evaluate(
        estimator, tf_estimator.TrainSpec(lambda: _input_fn().repeat(), max_steps=4),
        tf_estimator.EvalSpec(_input_fn, steps=None,
                              exporters=[_RecordingExporter(exported), best],
                              start_delay_secs=0, throttle_secs=0))
    metrics, export_results = result
    return {"type": type(result).__name__, "metrics": _describe_dict(metrics),
            "export_results_type": type(export_results).__name__,
            "export_results": [_describe(r) for r in export_results],
            "exporter_eval_results": exported, "compare_fn_args": compared}


def main():
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    report = {"tf_version": tf.__version__}
    estimator = tf_estimator.Estimator(_model_fn, model_dir=tempfile.mkdtemp())
    estimator.train(lambda: _input_fn().repeat(), steps=3)
    results, report["log_lines"] = _eval_log_lines(lambda: estimator.evaluate(_input_fn))
    report["evaluate"] = _describe_dict(results)
    report["evaluate_named"] = _describe_dict(
        estimator.evaluate(_input_fn, steps=1, name="holdout"))
    report["eval_events"] = _eval_events(estimator.eval_dir())
    report["train_and_evaluate"] = _train_and_evaluate()

    # Last: it changes the Estimator class for the rest of the process.
    items = _ItemEstimator(_scalar_model_fn, model_dir=tempfile.mkdtemp())
    items.train(lambda: _input_fn().repeat(), steps=2)
    report["item_subclass"] = _describe_dict(items.evaluate(_input_fn))
    metrics, _ = tf_estimator.train_and_evaluate(
        items, tf_estimator.TrainSpec(lambda: _input_fn().repeat(), max_steps=4),
        tf_estimator.EvalSpec(_input_fn, steps=None, start_delay_secs=0,
                              throttle_secs=0))
    report["item_subclass_train_and_evaluate"] = _describe_dict(metrics)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
