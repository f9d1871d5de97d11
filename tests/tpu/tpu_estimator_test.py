"""TPUEstimator(use_tpu=False) against tf.estimator 2.15's, plus its argument checks.

The oracle test runs tests/oracle/bert_classifier_driver.py (a run_classifier.py-shaped
program) with estimator_lite here and with tf.compat.v1.estimator.tpu in the TF 2.15
interpreter, at the same time, and compares what they report.
"""


import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite import tpu
from tests.oracle import driver_path, load_driver, requires_oracle, run_oracle_beside

DRIVER = driver_path("bert_classifier_driver.py")
# Same graph, same data, same pre-trained checkpoint: only float rounding differs.
METRIC_TOLERANCE = 1e-5


def model_fn(features, labels, mode, params):
    del features, labels, mode, params


def input_fn_without_params():
    return {}


@requires_oracle
def test_bert_style_program_matches_tf_estimator(tmp_path):
    oracle_dir, lite_dir = tmp_path / "oracle", tmp_path / "lite"
    oracle_dir.mkdir()
    lite_dir.mkdir()
    expected, lite = run_oracle_beside(
        lambda: load_driver(DRIVER, "bert_classifier_driver").run("lite", str(lite_dir)),
        DRIVER, "oracle", oracle_dir, timeout_secs=600)

    for key in ("metrics", "warm_metrics"):
        assert sorted(lite[key]) == sorted(expected[key])
        for name, value in expected[key].items():
            assert lite[key][name] == pytest.approx(value, abs=METRIC_TOLERANCE), name
    np.testing.assert_allclose(lite["predictions"], expected["predictions"],
                               atol=METRIC_TOLERANCE)
    assert lite["signatures"] == expected["signatures"]
    assert lite["host_call_summaries"] == expected["host_call_summaries"] == 12
    # params per call, export included; tf.estimator calls the model_fn once more to
    # export the 'serve,tpu' MetaGraph, which is not written here.
    assert expected["params_seen"][-1] == expected["params_seen"][-2]
    assert lite["params_seen"] == expected["params_seen"][:-1]


def test_use_tpu_true_fails_at_construction_saying_what_to_do():
    with pytest.raises(ValueError, match="Pass use_tpu=False") as info:
        tpu.TPUEstimator(model_fn, config=tpu.RunConfig(), train_batch_size=8)
    assert "tf.distribute.TPUStrategy" in str(info.value)


@pytest.mark.parametrize("kwargs,error,message", [
    ({"config": el.RunConfig()}, ValueError, "estimator_lite.tpu.RunConfig"),
    ({"params": {"batch_size": 4}}, ValueError, "reserved keys"),
    ({"params": {"context": 1}}, ValueError, "reserved keys"),
    ({"embedding_config_spec": object()}, ValueError, "needs a TPU"),
    ({"export_saved_model_api_version": 3}, ValueError, "should be 1 or 2"),
])
def test_bad_arguments(kwargs, error, message):
    args = {"config": tpu.RunConfig(), "use_tpu": False}
    args.update(kwargs)
    with pytest.raises(error, match=message):
        tpu.TPUEstimator(model_fn, **args)


@pytest.mark.parametrize("version", [1, 2, "V1", "V2"])
def test_export_saved_model_api_version_takes_the_enum_or_its_value(version):
    from estimator_lite.tpu import tpu_estimator  # noqa: PLC0415
    if isinstance(version, str):
        version = tpu_estimator.ExportSavedModelApiVersion[version]
    tpu.TPUEstimator(model_fn, config=tpu.RunConfig(), use_tpu=False,
                     export_saved_model_api_version=version)


def test_batch_sizes_are_taken_as_given_without_a_tpu(tmp_path):
    """tf.estimator checks them only with use_tpu=True: adanet's CPU tests pass
    train_batch_size=0, and params['batch_size'] is 0 in both functions."""
    seen = []

    def input_fn(params):
        seen.append(("input_fn", params["batch_size"]))
        x = np.ones([4, 1], np.float32)
        return tf.data.Dataset.from_tensor_slices((x, 2 * x)).batch(2).repeat()

    def batch_model_fn(features, labels, mode, params):
        seen.append(("model_fn", params["batch_size"]))
        weight = tf.compat.v1.get_variable("w", [1, 1])
        loss = tf.compat.v1.losses.mean_squared_error(labels, tf.matmul(features, weight))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step())
        return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    estimator = tpu.TPUEstimator(
        batch_model_fn, config=tpu.RunConfig(model_dir=str(tmp_path)), use_tpu=False,
        train_batch_size=0, eval_batch_size=2.0)
    estimator.train(input_fn, max_steps=2)
    assert seen == [("input_fn", 0), ("model_fn", 0)]


def test_input_fn_must_take_params(tmp_path):
    estimator = tpu.TPUEstimator(model_fn, config=tpu.RunConfig(model_dir=str(tmp_path)),
                                 use_tpu=False, train_batch_size=2)
    with pytest.raises(ValueError, match=r'params\["batch_size"\]'):
        estimator.train(input_fn_without_params, max_steps=1)


def test_export_needs_the_cpu_graph(tmp_path):
    for export_to_tpu, message in ((True, "export_to_cpu=True"), (False, "One of")):
        estimator = tpu.TPUEstimator(
            model_fn, config=tpu.RunConfig(model_dir=str(tmp_path)), use_tpu=False,
            export_to_cpu=False, export_to_tpu=export_to_tpu)
        with pytest.raises(ValueError, match=message):
            estimator.export_saved_model(str(tmp_path / "export"), lambda: None)


def test_iterations_per_loop_sets_the_step_rate_log_period(tmp_path):
    def estimator(iterations, log_steps=100):
        config = tpu.RunConfig(model_dir=str(tmp_path), log_step_count_steps=log_steps,
                               tpu_config=tpu.TPUConfig(iterations_per_loop=iterations))
        return tpu.TPUEstimator(model_fn, config=config, use_tpu=False)

    assert estimator(3).config.log_step_count_steps == 34  # ceil(100 / 3)
    assert estimator(1000).config.log_step_count_steps == 1
    assert estimator("60s").config.log_step_count_steps == 100
    assert estimator(3, log_steps=None).config.log_step_count_steps is None
    assert estimator(3).config.tpu_config.iterations_per_loop == 3


@pytest.mark.parametrize("value,error", [(0, ValueError), ("ten", ValueError),
                                         (2.5, TypeError), ("0s", ValueError)])
def test_tpu_config_rejects_bad_iterations_per_loop(value, error):
    with pytest.raises(error, match="iterations_per_loop"):
        tpu.TPUConfig(iterations_per_loop=value)


def test_tpu_config_maps_the_legacy_booleans():
    pipeline = tpu.InputPipelineConfig
    assert tpu.TPUConfig().per_host_input_for_training == pipeline.PER_HOST_V1
    assert (tpu.TPUConfig(per_host_input_for_training=False).per_host_input_for_training
            == pipeline.PER_SHARD_V1)
    with pytest.raises(ValueError, match="per_host_input_for_training"):
        tpu.TPUConfig(per_host_input_for_training=9)


def test_run_config_replace_keeps_the_tpu_fields(tmp_path):
    config = tpu.RunConfig(tpu_config=tpu.TPUConfig(iterations_per_loop=7),
                           master="grpc://10.0.0.2:8470", save_summary_steps=10)
    replaced = config.replace(model_dir=str(tmp_path))
    assert isinstance(replaced, tpu.RunConfig)
    assert (replaced.tpu_config.iterations_per_loop, replaced.master,
            replaced.save_summary_steps, replaced.model_dir) == (
                7, "grpc://10.0.0.2:8470", 10, str(tmp_path))
    assert config.replace(tpu_config=tpu.TPUConfig(5)).tpu_config.iterations_per_loop == 5
    with pytest.raises(TypeError, match="tpu_config"):
        tpu.RunConfig(tpu_config={"iterations_per_loop": 2})


def test_spec_checks_eval_metrics_as_tf_estimator():
    def metric_fn(labels, logits):
        return {}

    with pytest.raises(RuntimeError, match="length of tensors 1 does not match"):
        tpu.TPUEstimatorSpec("eval", eval_metrics=(metric_fn, [1]))
    with pytest.raises(ValueError, match="two elements"):
        tpu.TPUEstimatorSpec("eval", eval_metrics=(metric_fn,))
    with pytest.raises(TypeError, match="callable"):
        tpu.TPUEstimatorSpec("eval", host_call=(1, []))
    with pytest.raises(TypeError, match="SessionRunHook"):
        tpu.TPUEstimatorSpec("train", training_hooks=[object()])
    spec = tpu.TPUEstimatorSpec("eval", eval_metrics=(metric_fn, {"labels": 1,
                                                                   "logits": 2}))
    assert spec.eval_metrics[1] == {"labels": 1, "logits": 2}


def test_as_estimator_spec_calls_metric_fn_with_dict_tensors_and_scaffold_fn():
    calls = {}

    def metric_fn(labels, predictions):
        calls["metric_fn"] = (labels, predictions)
        return {"acc": tf.compat.v1.metrics.accuracy(labels, predictions)}

    def host_fn(loss):
        return [tf.identity(loss)]

    scaffold = tf.compat.v1.train.Scaffold()
    with tf.Graph().as_default():
        labels = tf.constant([1, 0])
        predictions = tf.constant([1, 1])
        loss = tf.constant(0.5)
        spec = tpu.TPUEstimatorSpec(
            "eval", loss=loss, scaffold_fn=lambda: scaffold,
            eval_metrics=(metric_fn, {"predictions": predictions, "labels": labels}),
            host_call=(host_fn, [tf.reshape(loss, [1])])).as_estimator_spec()
    assert isinstance(spec, el.EstimatorSpec)
    assert calls["metric_fn"] == (labels, predictions)
    assert sorted(spec.eval_metric_ops) == ["acc"]
    assert spec.scaffold is scaffold
    # host_call runs with every step in each mode, as tf.estimator's CPU path did.
    assert len(spec.evaluation_hooks) == len(spec.training_hooks) == 1
    assert len(spec.prediction_hooks) == 1
