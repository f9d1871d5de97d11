"""The Python types and order of what the Estimator hands to user code, as
tf.estimator 2.15 hands them (found by the conformance suite's typed observations,
tests/conformance/scenarios_types.py): listeners' global steps, hooks' run
arguments and values, predictions filtered by predict_keys, heads' predictions and
export outputs, exporters' `is_the_final_export`, evaluate()'s metrics."""

import numpy as np
import tensorflow as tf

import estimator_lite as est

X = np.array([[1.0, 2.0], [0.5, -1.0], [-1.5, 0.25], [2.0, 1.0]], np.float32)
Y = np.array([[1.0], [0.0], [0.0], [1.0]], np.float32)


def input_fn(epochs=None, labels=True):
    def fn():
        data = ({"x": X}, Y) if labels else {"x": X}
        return tf.data.Dataset.from_tensor_slices(data).repeat(epochs).batch(2)
    return fn


def model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [2, 1])
    y = tf.matmul(features["x"], w)
    predictions = {"z": y, "a": 2 * y, "m": 3 * y}
    if mode == est.ModeKeys.PREDICT:
        return est.EstimatorSpec(mode, predictions=predictions)
    loss = tf.reduce_mean(tf.square(y - labels))
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return est.EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)


def estimator(tmp_path, **config):
    return est.Estimator(model_fn, model_dir=str(tmp_path / "model"),
                         config=est.RunConfig(tf_random_seed=1, **config))


class RecordingHook(tf.compat.v1.train.SessionRunHook):
    def __init__(self):
        self.fetches = []
        self.values = []

    def before_run(self, run_context):
        self.fetches.append(run_context.original_args.fetches)

    def after_run(self, run_context, run_values):
        self.values.append(run_values)


def test_saving_listeners_get_the_global_step_as_a_numpy_int64(tmp_path):
    seen = []

    class Listener(tf.compat.v1.train.CheckpointSaverListener):
        def before_save(self, session, global_step_value):
            seen.append(global_step_value)

        def after_save(self, session, global_step_value):
            seen.append(global_step_value)

        def end(self, session, global_step_value):
            seen.append(global_step_value)

    estimator(tmp_path, save_checkpoints_steps=2).train(
        input_fn(), steps=2, saving_listeners=[Listener()])
    assert [(type(v), v.item()) for v in seen] == [(np.int64, s) for s in (0, 0, 2, 2, 2)]


def test_hooks_get_run_options_and_metadata_protos_in_every_after_run(tmp_path):
    model = estimator(tmp_path)
    hooks = {mode: RecordingHook() for mode in ("train", "eval", "predict")}
    model.train(input_fn(), steps=2, hooks=[hooks["train"]])
    model.evaluate(input_fn(epochs=1), hooks=[hooks["eval"]])
    list(model.predict(input_fn(epochs=1, labels=False), hooks=[hooks["predict"]]))
    for hook in hooks.values():
        assert hook.values
        for values in hook.values:
            assert isinstance(values, tf.compat.v1.train.SessionRunValues)
            assert isinstance(values.options, tf.compat.v1.RunOptions)
            assert isinstance(values.run_metadata, tf.compat.v1.RunMetadata)


def test_train_hooks_see_the_train_op_and_the_loss_as_the_runs_fetches(tmp_path):
    hook = RecordingHook()
    estimator(tmp_path).train(input_fn(), steps=1, hooks=[hook])
    fetches = hook.fetches[0]
    assert isinstance(fetches, list)
    assert [type(f).__name__ for f in fetches][0] == "Operation"
    assert isinstance(fetches[1], tf.Tensor) and fetches[1].shape.rank == 0


def test_evaluation_hooks_see_a_list_of_fetches_holding_the_update_op(tmp_path):
    model = estimator(tmp_path)
    model.train(input_fn(), steps=1)
    hook = RecordingHook()
    model.evaluate(input_fn(epochs=1), hooks=[hook])
    assert isinstance(hook.fetches[0], list)
    assert isinstance(hook.fetches[0][0], tf.Operation)


def test_predict_keys_select_predictions_in_the_model_fns_order(tmp_path):
    model = estimator(tmp_path)
    model.train(input_fn(), steps=1)
    item = next(model.predict(input_fn(epochs=1, labels=False), predict_keys=["m", "z"]))
    assert list(item) == ["z", "m"]
    batch = next(model.predict(input_fn(epochs=1, labels=False), predict_keys=["m", "z"],
                               yield_single_examples=False))
    assert list(batch) == ["z", "m"]


def test_head_predictions_for_keys_are_in_the_heads_order():
    with tf.Graph().as_default():
        predictions = est.BinaryClassHead().predictions(
            tf.constant([[0.5], [-1.0]]), keys=["classes", "logits"])
    assert list(predictions) == ["logits", "classes"]


def test_binary_head_export_outputs_in_tf_estimators_order():
    with tf.Graph().as_default():
        spec = est.BinaryClassHead().create_estimator_spec(
            features={"x": tf.constant([[1.0]])}, mode=est.ModeKeys.PREDICT,
            logits=tf.constant([[0.5]]))
    assert list(spec.export_outputs) == [
        "serving_default", "classification", "regression", "predict"]


def test_exporters_get_is_the_final_export_as_the_steps_numpy_bool(tmp_path):
    calls = []

    class Recorder(est.Exporter):
        name = "recorder"

        def export(self, estimator, export_path, checkpoint_path, eval_result,
                   is_the_final_export):
            calls.append(is_the_final_export)

    model = estimator(tmp_path, save_checkpoints_steps=2)
    est.train_and_evaluate(
        model, est.TrainSpec(input_fn(), max_steps=4),
        est.EvalSpec(input_fn(epochs=1), steps=None, exporters=[Recorder()],
                     throttle_secs=0, start_delay_secs=0))
    # global_step >= max_steps, as tf.estimator computes it.
    assert [(type(c), bool(c)) for c in calls] == [(np.bool_, False), (np.bool_, True)]


def test_an_estimator_subclass_can_call_item_on_its_evaluate_results(tmp_path):
    # google/model_search's phoenix.py pattern (it overrides evaluate itself, with
    # the member check switched off; a method of another name needs no switch).
    class Plain(est.Estimator):
        def evaluate_plain(self, *args, **kwargs):
            results = super().evaluate(*args, **kwargs)
            return {k: v.item() for k, v in results.items()}

    model = Plain(model_fn, model_dir=str(tmp_path / "model"))
    model.train(input_fn(), steps=2)
    results = model.evaluate_plain(input_fn(epochs=1))
    assert list(results) == ["loss", "global_step"]
    assert type(results["loss"]) is float and results["global_step"] == 2
