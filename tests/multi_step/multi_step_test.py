"""Multi-step training loops: RunConfig(experimental_steps_per_loop=K).

Each semantic is checked against the same training done one step per session call
(K=1, itself tf.estimator's loop; the first test compares with tf.estimator 2.15).
"""

import glob
import json
import logging
import os
import sys

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite import tpu
from tests.oracle import driver_path, load_driver, requires_oracle, run_oracle_driver

tf1 = tf.compat.v1
HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER_PATH = driver_path("multi_step_adam_driver.py")
driver = load_driver(DRIVER_PATH, "multi_step_adam_driver")


def train(model_dir, steps_per_loop, hooks=None, **train_args):
    config = el.RunConfig(model_dir=str(model_dir), save_checkpoints_steps=20,
                          experimental_steps_per_loop=steps_per_loop)
    estimator = el.Estimator(driver.model_fn, config=config)
    estimator.train(train_args.pop("input_fn", driver.input_fn()), hooks=hooks,
                    **train_args)
    return estimator


def checkpoint_steps(model_dir):
    return sorted(int(p.rsplit("-", 1)[1].split(".")[0])
                  for p in glob.glob(os.path.join(str(model_dir), "model.ckpt-*.index")))


def variables(estimator):
    return {name: estimator.get_variable_value(name) for name in ("w", "b", "global_step")}


class CountRuns(tf1.train.SessionRunHook):
    def __init__(self):
        self.after_runs = 0

    def after_run(self, run_context, run_values):
        self.after_runs += 1


@requires_oracle
def test_k_step_loops_train_what_tf_estimator_trains_one_step_at_a_time(tmp_path):
    oracle = run_oracle_driver(DRIVER_PATH, "oracle", tmp_path / "oracle")
    estimator = train(tmp_path / "lite", 7, max_steps=driver.MAX_STEPS)
    first = variables(estimator)
    estimator.train(driver.input_fn(epochs=3), steps=100)
    for got, want in ((first, oracle["first"]),
                      (variables(estimator), oracle["input_end"])):
        assert int(got["global_step"]) == want["global_step"]
        np.testing.assert_allclose(got["w"], want["w"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got["b"], want["b"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("steps_per_loop", [3, 7, 100])
def test_variables_and_global_step_match_single_steps(tmp_path, steps_per_loop):
    one = variables(train(tmp_path / "one", 1, max_steps=30))
    looped = variables(train(tmp_path / "loop", steps_per_loop, max_steps=30))
    assert looped["global_step"] == one["global_step"] == 30  # max_steps not overshot
    for name in ("w", "b"):
        np.testing.assert_array_equal(looped[name], one[name])


def test_hooks_and_checkpoints_run_at_loop_boundaries(tmp_path):
    hook = CountRuns()
    train(tmp_path, 7, hooks=[hook], max_steps=30)
    # Loops of 7, 7, 7, 7 and a last one of 2 (so max_steps=30 is not overshot).
    assert hook.after_runs == 5
    # Step 0 at session creation, the first boundary past 20, the final step.
    assert checkpoint_steps(tmp_path) == [0, 21, 30]


def test_steps_counts_from_the_restored_step(tmp_path):
    estimator = train(tmp_path, 7, steps=10)
    estimator.train(driver.input_fn(), steps=10)
    assert estimator.get_variable_value("global_step") == 20


def test_input_ending_mid_loop_ends_training_at_the_right_step(tmp_path):
    one = variables(train(tmp_path / "one", 1, input_fn=driver.input_fn(epochs=3),
                          steps=100))
    looped_dir = tmp_path / "loop"
    looped = variables(train(looped_dir, 5, input_fn=driver.input_fn(epochs=3),
                             steps=100))
    # 3 epochs of 8 batches: 24 steps, the input ends in the fifth loop.
    assert looped["global_step"] == one["global_step"] == 24
    np.testing.assert_array_equal(looped["w"], one["w"])
    assert checkpoint_steps(looped_dir)[-1] == 24


def test_nan_loss_inside_a_loop_names_the_steps(tmp_path):
    def model_fn(features, labels, mode):
        step = tf1.train.get_global_step()
        w = tf1.get_variable("w", [4, 1], initializer=tf1.zeros_initializer())
        loss = tf.reduce_mean(tf.matmul(features, w)) + tf.where(
            tf.equal(step, 12), np.float32(np.nan), np.float32(0.0))
        # The loss reads the step before the train op increments it: without the
        # dependency the read races the increment and step 12 may be skipped.
        with tf1.control_dependencies([loss]):
            train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, step)
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op)

    config = el.RunConfig(model_dir=str(tmp_path), experimental_steps_per_loop=5)
    estimator = el.Estimator(model_fn, config=config)
    with pytest.raises(tf1.train.NanLossDuringTrainingError,
                       match="global steps 11 to 15: at global step 13"):
        estimator.train(driver.input_fn(), max_steps=30)
    assert checkpoint_steps(tmp_path) == [0]



@pytest.mark.parametrize("extra, raises", [(1e39, False), (np.inf, True), (np.nan, True)])
def test_a_float64_loss_stops_a_loop_only_when_it_is_not_finite(tmp_path, extra, raises):
    # A float64 loss beyond float32's range is still finite: single steps train on,
    # and so must a loop (whose loss is float32), stopping only at inf or NaN.
    def model_fn(features, labels, mode):
        step = tf1.train.get_global_step()
        w = tf1.get_variable("w", [4, 1], initializer=tf1.zeros_initializer())
        loss = tf.cast(tf.reduce_mean(tf.matmul(features, w)), tf.float64) + tf.where(
            tf.equal(step, 6), np.float64(extra), np.float64(0.0))
        with tf1.control_dependencies([loss]):
            train_op = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, step)
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op)

    estimator = el.Estimator(model_fn, config=el.RunConfig(
        model_dir=str(tmp_path), experimental_steps_per_loop=4))
    if raises:
        with pytest.raises(tf1.train.NanLossDuringTrainingError,
                           match="global steps 5 to 8: at global step 7"):
            estimator.train(driver.input_fn(), max_steps=12)
    else:
        estimator.train(driver.input_fn(), max_steps=12)
        assert estimator.get_variable_value("global_step") == 12

def test_loss_hooks_and_summaries_see_the_loop_boundaries(tmp_path, caplog):
    def model_fn(features, labels, mode):
        spec = driver.model_fn(features, labels, mode)
        return spec._replace(training_hooks=[tf1.train.LoggingTensorHook(
            {"the_loss": spec.loss}, every_n_iter=1)])

    config = el.RunConfig(model_dir=str(tmp_path), experimental_steps_per_loop=10,
                          save_summary_steps=10, log_step_count_steps=10)
    with caplog.at_level(logging.INFO):
        el.Estimator(model_fn, config=config).train(driver.input_fn(), max_steps=30)
    assert sum("the_loss" in r.getMessage() for r in caplog.records) == 3
    tags = {}
    for path in glob.glob(str(tmp_path / "events.out.tfevents.*")):
        for event in tf1.train.summary_iterator(path):
            for value in event.summary.value:
                tags.setdefault(value.tag, []).append(event.step)
    assert tags["loss"] == [10, 20, 30]
    assert tags["w_sum"] == [10, 20, 30]


def test_a_hook_fetching_another_tensor_of_the_loop_is_a_clear_error(tmp_path):
    def model_fn(features, labels, mode):
        spec = driver.model_fn(features, labels, mode)
        return spec._replace(training_hooks=[tf1.train.LoggingTensorHook(
            {"features": features}, every_n_iter=1)])

    config = el.RunConfig(model_dir=str(tmp_path), experimental_steps_per_loop=4)
    with pytest.raises(ValueError, match="inside the multi-step training loop"):
        el.Estimator(model_fn, config=config).train(driver.input_fn(), max_steps=8)


def test_tensor_inputs_fall_back_to_single_steps_with_a_warning(tmp_path, caplog):
    def input_fn():
        return tf1.data.make_one_shot_iterator(driver.input_fn()()).get_next()

    hook = CountRuns()
    with caplog.at_level(logging.WARNING):
        estimator = train(tmp_path, 5, hooks=[hook], input_fn=input_fn, max_steps=10)
    assert hook.after_runs == 10
    assert estimator.get_variable_value("global_step") == 10
    assert any("experimental_steps_per_loop=5 ignored" in r.getMessage()
               for r in caplog.records)


def test_train_and_evaluate_with_loops(tmp_path):
    config = el.RunConfig(model_dir=str(tmp_path), experimental_steps_per_loop=6,
                          save_checkpoints_steps=12)
    estimator = el.Estimator(driver.model_fn, config=config)
    metrics, _ = el.train_and_evaluate(
        estimator, el.TrainSpec(driver.input_fn(), max_steps=20),
        el.EvalSpec(driver.input_fn(epochs=1), steps=None, throttle_secs=0))
    assert metrics["global_step"] == 20


@pytest.mark.parametrize("value, error", [(0, ValueError), ("2", TypeError),
                                          (True, TypeError), (None, TypeError)])
def test_run_config_checks_steps_per_loop(value, error):
    with pytest.raises(error, match="experimental_steps_per_loop"):
        el.RunConfig(experimental_steps_per_loop=value)


def test_run_config_replace_keeps_steps_per_loop():
    config = el.RunConfig(experimental_steps_per_loop=50)
    assert config.replace(save_summary_steps=3).experimental_steps_per_loop == 50
    assert el.RunConfig().experimental_steps_per_loop == 1


def _tpu_estimator(model_dir, iterations, **run_config):
    def model_fn(features, labels, mode, params):
        del params
        spec = driver.model_fn(features, labels, mode)
        return tpu.TPUEstimatorSpec(mode, loss=spec.loss, train_op=spec.train_op)

    config = tpu.RunConfig(model_dir=str(model_dir), tpu_config=tpu.TPUConfig(
        iterations_per_loop=iterations), **run_config)
    return tpu.TPUEstimator(model_fn, config=config, use_tpu=False, train_batch_size=8)


def _tpu_input_fn(params):
    del params
    return driver.input_fn()()


def test_tpu_estimator_honours_iterations_per_loop_when_asked(tmp_path):
    hook = CountRuns()
    estimator = _tpu_estimator(tmp_path / "honoured", 10,
                               experimental_honor_iterations_per_loop=True)
    assert estimator.config.experimental_steps_per_loop == 10
    assert estimator.config.log_step_count_steps == 100  # not scaled: steps
    estimator.train(_tpu_input_fn, hooks=[hook], max_steps=30)
    assert hook.after_runs == 3
    default_hook = CountRuns()
    default = _tpu_estimator(tmp_path / "default", 10)
    default.train(_tpu_input_fn, hooks=[default_hook], max_steps=30)
    assert default_hook.after_runs == 30  # tf.estimator's CPU/GPU behaviour
    np.testing.assert_array_equal(estimator.get_variable_value("w"),
                                  default.get_variable_value("w"))


@pytest.mark.parametrize("run_config, message", [
    ({"experimental_honor_iterations_per_loop": "yes"}, "must be a bool"),
])
def test_tpu_run_config_checks_the_flag(tmp_path, run_config, message):
    with pytest.raises(TypeError, match=message):
        tpu.RunConfig(**run_config)


def test_tpu_estimator_rejects_a_duration_or_a_conflict(tmp_path):
    with pytest.raises(ValueError, match="duration"):
        _tpu_estimator(tmp_path, "60s", experimental_honor_iterations_per_loop=True)
    with pytest.raises(ValueError, match="conflicts"):
        _tpu_estimator(tmp_path, 10, experimental_honor_iterations_per_loop=True,
                       experimental_steps_per_loop=5)
    config = tpu.RunConfig(experimental_honor_iterations_per_loop=True)
    assert config.replace(save_summary_steps=5).experimental_honor_iterations_per_loop


def test_driver_report_is_json_serialisable(tmp_path):
    estimator = train(tmp_path, 4, max_steps=8)
    report = driver.report(estimator.get_variable_value, str(tmp_path))
    assert json.loads(json.dumps(report))["global_step"] == 8


@pytest.mark.slow
@pytest.mark.parametrize("strategy", [False, True], ids=["device_setter", "ps_strategy"])
def test_a_ps_chief_worker_evaluator_job_trains_in_loops(tmp_path, strategy):
    from tests.distribute import jobs  # noqa: PLC0415 - multi-process helpers

    run = jobs.run_job(os.path.join(HERE, "ps_loop_program.py"),
                       jobs.ps_chief_worker(num_workers=1, evaluator=True), jobs.LITE,
                       str(tmp_path), timeout_secs=400,
                       args=["--strategy"] if strategy else [])
    assert run.failures() == []
    # Two trainers share the global step; loops never pass max_steps=60.
    assert run.roles["chief0"].result["global_step"] == 60
    assert run.roles["evaluator0"].result["global_step"] == 60


def _two_cpu_config(model_dir, steps_per_loop, **kwargs):
    session_config = tf1.ConfigProto(device_count={"CPU": 2}, allow_soft_placement=True)
    return el.RunConfig(model_dir=str(model_dir), session_config=session_config,
                        experimental_steps_per_loop=steps_per_loop, **kwargs)


def _tower_model_fn(features, labels, mode):
    w = tf1.get_variable("w", [4, 1], initializer=tf1.zeros_initializer())
    loss = tf1.losses.mean_squared_error(labels, tf.matmul(features, w))
    optimizer = el.TowerOptimizer(tf1.train.GradientDescentOptimizer(0.1))
    return el.EstimatorSpec(mode, loss=loss, train_op=optimizer.minimize(
        loss, tf1.train.get_global_step()))


@pytest.mark.parametrize("setup", ["towers", "one_device_strategy"])
def test_towers_and_a_one_device_strategy_train_in_loops(tmp_path, setup):
    def estimator(steps_per_loop):
        if setup == "towers":
            model_fn = el.replicate_model_fn(
                _tower_model_fn, devices=["/cpu:0", "/cpu:1"])
            kwargs = {}
        else:
            model_fn = driver.model_fn
            kwargs = {"train_distribute": tf.distribute.OneDeviceStrategy("/cpu:1")}
        return el.Estimator(model_fn, config=_two_cpu_config(
            tmp_path / str(steps_per_loop), steps_per_loop, **kwargs))

    one, looped = estimator(1), estimator(6)
    hook = CountRuns()
    one.train(driver.input_fn(), max_steps=20)
    looped.train(driver.input_fn(), hooks=[hook], max_steps=20)
    assert hook.after_runs == 4
    assert looped.get_variable_value("global_step") == 20
    np.testing.assert_allclose(looped.get_variable_value("w"),
                               one.get_variable_value("w"), rtol=1e-6)


MIRRORED_PROGRAM = """
import numpy as np
import tensorflow as tf
import estimator_lite as el
cpus = tf.config.list_physical_devices("CPU")
tf.config.set_logical_device_configuration(
    cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)
tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.WARN)

def model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [4, 1])
    loss = tf.reduce_mean(tf.square(tf.matmul(features, w) - labels))
    optimizer = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    return el.EstimatorSpec(mode, loss=loss, train_op=optimizer.minimize(
        loss, tf.compat.v1.train.get_global_step()))

x = np.ones((16, 4), np.float32)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
est = el.Estimator(model_fn, config=el.RunConfig(train_distribute=strategy,
                                                 experimental_steps_per_loop=5))
est.train(lambda: tf.data.Dataset.from_tensor_slices((x, x[:, :1])).repeat().batch(4),
          max_steps=7)
print("STEP", est.get_variable_value("global_step"))
"""


def test_a_replicating_strategy_trains_one_step_per_call_with_a_warning(tmp_path):
    from tests.support import zygote  # noqa: PLC0415 - the fork server only when one runs

    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(HERE)),
               TF_CPP_MIN_LOG_LEVEL="2")
    env.pop("TF_CONFIG", None)
    ran = zygote.run([sys.executable, "-c", MIRRORED_PROGRAM], capture_output=True,
                     text=True, env=env, cwd=tmp_path, timeout=300, check=False)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "STEP 7" in ran.stdout
    assert "experimental_steps_per_loop=5 ignored" in ran.stderr


def test_tpu_host_call_runs_with_every_step_of_a_loop(tmp_path):
    def model_fn(features, labels, mode, params):
        step = tf.reshape(tf1.train.get_global_step(), [1])
        # The step is read before the train op increments it: unordered, the read
        # races the increment and a step may be reported twice and another never.
        with tf1.control_dependencies([step]):
            spec = driver.model_fn(features, labels, mode)

        def host_fn(step, loss):
            with tf.summary.create_file_writer(params["host_dir"]).as_default(), \
                    tf.summary.record_if(True):
                return [tf.summary.scalar("host_loss", loss[0], step=step[0])]

        return tpu.TPUEstimatorSpec(mode, loss=spec.loss, train_op=spec.train_op,
                                    host_call=(host_fn, [step, tf.reshape(spec.loss, [1])]))

    host_dir = str(tmp_path / "host")
    config = tpu.RunConfig(model_dir=str(tmp_path), tpu_config=tpu.TPUConfig(
        iterations_per_loop=5), experimental_honor_iterations_per_loop=True)
    estimator = tpu.TPUEstimator(model_fn, config=config, use_tpu=False,
                                 train_batch_size=8, params={"host_dir": host_dir})
    estimator.train(_tpu_input_fn, max_steps=12)
    steps = [event.step for path in glob.glob(host_dir + "/events.out.tfevents.*")
             for event in tf1.train.summary_iterator(path) if event.summary.value]
    assert sorted(steps) == list(range(12))


@pytest.mark.parametrize("family", ["dnn", "wide_deep"])
def test_canned_estimators_train_in_loops_as_in_single_steps(tmp_path, family):
    # Canned heads return predictions in TRAIN mode too; they live in the loop's
    # body and must not break the loop's spec.
    rng = np.random.RandomState(0)
    x = rng.rand(64, 3).astype(np.float32)
    color = rng.choice(["red", "green", "blue"], 64)
    y = (x.sum(axis=1) > 1.5).astype(np.int64)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices(({"x": x, "color": color}, y)).repeat(
        ).batch(8)

    numeric = tf.feature_column.numeric_column("x", shape=(3,))
    colors = tf.feature_column.categorical_column_with_vocabulary_list(
        "color", ["red", "green", "blue"])

    def build(model_dir, steps_per_loop):
        config = el.RunConfig(model_dir=str(model_dir), tf_random_seed=1,
                              experimental_steps_per_loop=steps_per_loop)
        if family == "dnn":
            return el.DNNClassifier([4], [numeric, tf.feature_column.indicator_column(
                colors)], config=config)
        return el.DNNLinearCombinedClassifier(
            linear_feature_columns=[colors], dnn_feature_columns=[numeric],
            dnn_hidden_units=[4], config=config)

    one = build(tmp_path / "one", 1)
    one.train(input_fn, max_steps=20)
    looped = build(tmp_path / "loop", 5)
    looped.train(input_fn, max_steps=20)
    names = one.get_variable_names()
    assert looped.get_variable_names() == names
    for name in names:
        np.testing.assert_allclose(looped.get_variable_value(name),
                                   one.get_variable_value(name), rtol=1e-5, err_msg=name)
    assert looped.get_variable_value("global_step") == 20
    # What the loop trained evaluates and predicts as usual.
    assert looped.evaluate(input_fn, steps=2)["global_step"] == 20
    first = next(looped.predict(input_fn, yield_single_examples=False))
    assert first["probabilities"].shape == (8, 2)
