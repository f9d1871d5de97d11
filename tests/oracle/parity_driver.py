"""Runs tf.estimator 2.15 parity cases on one library and prints what each gave.

`python parity_driver.py lite` uses estimator_lite; `python parity_driver.py oracle`
(TF 2.15 + tensorflow-estimator 2.15) uses tf.estimator. Each case prints the
exception class it raised, or what it returned (a type name); tests/parity/cases_test.py
asserts that both libraries give the same.
"""

import json
import os
import sys
import tempfile

import tensorflow as tf

if sys.argv[1] == "lite":
    import estimator_lite as tf_estimator
    from estimator_lite import _evaluation as training_lib  # tf.estimator's training
else:
    from tensorflow import estimator as tf_estimator
    from tensorflow_estimator.python.estimator import training as training_lib


def _outcome(fn):
    try:
        result = fn()
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__
    return f"ok:{result if isinstance(result, str) else type(result).__name__}"


def _run_config_with(tf_config):
    os.environ["TF_CONFIG"] = json.dumps(tf_config)
    try:
        return tf_estimator.RunConfig()
    finally:
        del os.environ["TF_CONFIG"]


def _best_exporter(compare_fn):
    return tf_estimator.BestExporter(
        serving_input_receiver_fn=lambda: None, compare_fn=compare_fn)


def _both_named(best_eval_result, current_eval_result):
    return best_eval_result["loss"] > current_eval_result["loss"]


def _model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [2, 1],
                                  initializer=tf.compat.v1.zeros_initializer())
    predictions = tf.matmul(features["x"], w)
    if mode == tf_estimator.ModeKeys.PREDICT:
        return tf_estimator.EstimatorSpec(mode, predictions={"y": predictions})
    loss = tf.reduce_mean(tf.square(predictions - labels))
    global_step = tf.compat.v1.train.get_global_step()
    with tf.control_dependencies(_global_step_fetch(global_step)):
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=global_step)
    return tf_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _global_step_fetch(global_step):
    """On tf.estimator, the tensor a hook fetching `global_step` reads, else nothing.

    tf.estimator's stop hook fetches the global step beside the train op, and on
    the thread pool that read races the increment (CI saw stops at 40, 42 and 44,
    not 41). Ordering the update after the read gives the oracle its usual,
    uncontended answer every time. estimator_lite runs the model_fn as written:
    its read comes first without help, which the test checks.
    """
    if sys.argv[1] == "lite":
        return []
    return [tf.compat.v1.get_default_graph().as_graph_element(global_step)]


def _export_type():
    estimator = tf_estimator.Estimator(_model_fn, model_dir=tempfile.mkdtemp())
    estimator.train(lambda: tf.data.Dataset.from_tensors(
        ({"x": [[1.0, 2.0]]}, [[1.0]])).repeat(), steps=2)
    def receiver_fn():
        x = tf.compat.v1.placeholder(tf.float32, [None, 2], name="x")
        return tf_estimator.export.ServingInputReceiver({"x": x}, {"x": x})

    path = estimator.export_saved_model(tempfile.mkdtemp(), receiver_fn)
    # What programs do with it: decode, then load.
    tf.saved_model.load(path.decode("utf-8"))
    return type(path).__name__


def _early_stop_step():
    """The global step at which a stop rule true on its 5th check stops training."""
    estimator = tf_estimator.Estimator(_model_fn, model_dir=tempfile.mkdtemp())
    checks = []
    hook = tf_estimator.experimental.make_early_stopping_hook(
        estimator, lambda: checks.append(1) or len(checks) >= 5, run_every_secs=None,
        run_every_steps=10)
    estimator.train(lambda: tf.data.Dataset.from_tensors(
        ({"x": [[1.0, 2.0]]}, [[1.0]])).repeat(), hooks=[hook], max_steps=1000)
    return str(estimator.get_variable_value("global_step"))


def main():
    eval_result = training_lib._EvalResult  # noqa: SLF001 - a documented seam
    evaluated = training_lib._EvalStatus.EVALUATED  # noqa: SLF001
    cases = {
        "chief_without_cluster": lambda: _run_config_with(
            {"task": {"type": "chief", "index": 0}}),
        "ps_without_cluster": lambda: _run_config_with(
            {"task": {"type": "ps", "index": 0}}),
        "worker1_without_cluster": lambda: _run_config_with(
            {"task": {"type": "worker", "index": 1}}),
        "worker0_without_cluster": lambda: _run_config_with(
            {"task": {"type": "worker", "index": 0}}),
        "compare_fn_positional_names": lambda: _best_exporter(lambda a, b: True),
        "compare_fn_named": lambda: _best_exporter(_both_named),
        "eval_metrics_not_a_dict": lambda: eval_result(
            status=evaluated, metrics=[("loss", 1.0), ("global_step", 1)],
            checkpoint_path="model.ckpt-1"),
        "export_returns": _export_type,
        "early_stop_step": _early_stop_step,
    }
    print(json.dumps({name: _outcome(case) for name, case in cases.items()}))


if __name__ == "__main__":
    main()
