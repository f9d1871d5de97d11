"""_TrainingExecutor's roles with a mocked Estimator, as library tests write them.

A `mock.Mock(spec=Estimator)` has a Mock (not a path) as model_dir, a Mock
latest_checkpoint() and train(); code that tests its use of train_and_evaluate
this way must see the same calls, sleeps, server arguments and errors. Run as a
script by the TF 2.15 interpreter (ESTIMATOR_LITE_TF215_PYTHON) it uses
tf.estimator and prints one JSON line; tests/training_test.py imports it and calls
`run` with estimator_lite.

Usage: mock_executor_driver.py WORK_DIR
"""

import json
import os
import sys
import time
import types
from unittest import mock

import tensorflow as tf

CLUSTER = {"chief": ["host0:0"], "ps": ["host1:1", "host2:2"],
           "worker": ["host3:3", "host4:4"]}


def _input_fn():
    return tf.data.Dataset.from_tensors(({"x": [1.0]}, [1.0]))


class _Hook(tf.compat.v1.train.SessionRunHook):
    pass


def _config(lib, task_type, index):
    tf_config = {"cluster": CLUSTER, "task": {"type": task_type, "index": index}}
    with mock.patch.dict(os.environ, {"TF_CONFIG": json.dumps(tf_config)}):
        return lib.RunConfig()


def _server_module():
    """TensorFlow's module that defines the Server class (what tests patch)."""
    return sys.modules[tf.compat.v1.train.Server.__module__]


def _timer_module():
    """TensorFlow's module that defines SecondOrStepTimer (what tests patch)."""
    return sys.modules[tf.compat.v1.train.SecondOrStepTimer.__module__]


def _throttle(lib):
    """Which checkpoint saves local training evaluates when TensorFlow's
    SecondOrStepTimer (patched in its module) decides the eval throttle."""
    estimator = mock.Mock(spec=lib.Estimator)
    timer = mock.Mock()

    def train(saving_listeners, **kwargs):
        del kwargs
        listener = saving_listeners[-1]
        listener.begin()
        for step, due in ((1, True), (2, True), (3, False), (4, True)):
            timer.should_trigger_for_step.return_value = due
            listener.after_save(session=None, global_step_value=step)

    estimator.train = train
    estimator.latest_checkpoint.side_effect = ["ckpt-2", "ckpt-4"]
    estimator.evaluate.side_effect = [{"global_step": 2}, {"global_step": 4}]
    exporter = mock.Mock(spec=lib.Exporter)
    exporter.name = "latest"
    train_spec = lib.TrainSpec(_input_fn, max_steps=4)
    eval_spec = lib.EvalSpec(_input_fn, steps=1, exporters=exporter, throttle_secs=10)
    with mock.patch.object(_timer_module(), "SecondOrStepTimer",
                           return_value=timer) as timer_class:
        executor = lib.training._TrainingExecutor(estimator, train_spec, eval_spec)
        metrics, _ = executor.run_local()
    return {"timer_kwargs": timer_class.call_args[1],
            "asked": [c[0][0] for c in timer.should_trigger_for_step.call_args_list],
            "marked": [c[0][0] for c in timer.update_last_triggered_step.call_args_list],
            "evaluated": [c[1]["checkpoint_path"]
                          for c in estimator.evaluate.call_args_list],
            "final_exports": [c[1]["is_the_final_export"]
                              for c in exporter.export.call_args_list],
            "metrics": metrics}


def _training_role(lib, task_type, index):
    """Runs run_<task_type> with a mocked estimator, server and sleep."""
    estimator = mock.Mock(spec=lib.Estimator)
    estimator.config = _config(lib, task_type, index)
    hook = _Hook()
    train_spec = lib.TrainSpec(_input_fn, max_steps=2, hooks=[hook])
    executor = lib.training._TrainingExecutor(estimator, train_spec, None)
    with mock.patch.object(_server_module(), "Server") as server, \
            mock.patch.object(time, "sleep") as sleep:
        getattr(executor, "run_" + task_type)()
    server_kwargs = server.call_args[1]
    train_kwargs = estimator.train.call_args[1]
    return {"server": {"job_name": server_kwargs["job_name"],
                       "task_index": server_kwargs["task_index"],
                       "protocol": server_kwargs["protocol"],
                       "start": server_kwargs["start"],
                       "started": server.return_value.start.called,
                       "joined": server.return_value.join.called},
            "sleeps": [c[0][0] for c in sleep.call_args_list],
            "train_keywords": sorted(train_kwargs),
            "hooks_are_the_spec's": train_kwargs["hooks"] == [hook],
            "saving_listeners": (None if train_kwargs["saving_listeners"] is None
                                 else len(train_kwargs["saving_listeners"])),
            "evaluated": estimator.evaluate.called}


def _ps(lib):
    estimator = mock.Mock(spec=lib.Estimator)
    estimator.config = _config(lib, "ps", 1)
    train_spec = mock.Mock(spec=lib.TrainSpec)
    executor = lib.training._TrainingExecutor(estimator, train_spec, None)
    with mock.patch.object(_server_module(), "Server") as server:
        executor.run_ps()
    return {"started": server.return_value.start.called,
            "joined": server.return_value.join.called}


def _evaluator(lib, work_dir):
    """The evaluator loop on a bytes model_dir, with an exporter."""
    estimator = mock.Mock(spec=lib.Estimator)
    estimator.model_dir = os.fsencode(work_dir)
    estimator.evaluate.side_effect = [{"global_step": 100}, {"global_step": 200}]
    estimator.latest_checkpoint.side_effect = ["path_1", "path_2"]
    train_spec = mock.Mock(spec=lib.TrainSpec)
    train_spec.max_steps = 200
    exports = []

    def export(**kwargs):
        exports.append({"path": os.path.relpath(kwargs["export_path"], work_dir),
                        "final": kwargs["is_the_final_export"],
                        "checkpoint": kwargs["checkpoint_path"]})
        return "exported"

    exporter = mock.Mock(spec=lib.Exporter)
    exporter.name = "best"
    exporter.export = export
    hook = _Hook()
    eval_spec = lib.EvalSpec(_input_fn, steps=3, name="held_out", hooks=[hook],
                             exporters=exporter, start_delay_secs=0, throttle_secs=0)
    executor = lib.training._TrainingExecutor(estimator, train_spec, eval_spec)
    executor.run_evaluator()
    evaluate_kwargs = estimator.evaluate.call_args[1]
    return {"evaluations": estimator.evaluate.call_count,
            "evaluate_keywords": sorted(evaluate_kwargs),
            "hooks_are_the_spec's": evaluate_kwargs["hooks"] == eval_spec.hooks,
            "exports": exports, "written": sorted(os.listdir(work_dir))}


def _server_errors(lib):
    """What a config without a cluster, type or index raises, per role."""
    errors = {}
    for task_type, spec, master, task_id in (
            ("worker", None, "grpc://x", 2), ("chief", {"worker": ["a", "b"]}, "", 0),
            ("ps", {"ps": ["a"]}, "", 0), ("master", {"master": ["a"]}, "grpc://x", None)):
        estimator = mock.Mock(spec=lib.Estimator)
        estimator.config = mock.PropertyMock(spec=lib.RunConfig)
        estimator.config.cluster_spec = (tf.train.ClusterSpec(spec) if spec else None)
        estimator.config.master = master
        estimator.config.task_type = task_type
        estimator.config.task_id = task_id
        train_spec = mock.Mock(spec=lib.TrainSpec)
        train_spec.saving_listeners = ()
        eval_spec = mock.Mock(spec=lib.EvalSpec)
        executor = lib.training._TrainingExecutor(estimator, train_spec, eval_spec)
        try:
            getattr(executor, "run_" + task_type)()
            errors[task_type] = None
        except Exception as e:  # noqa: BLE001 - the type is the observation
            errors[task_type] = [type(e).__name__,
                                 str(e).startswith("Could not start server;")]
        errors[task_type + " trained"] = estimator.train.called
    return errors


def _stop_at_secs(lib):
    hook = lib.training._StopAtSecsHook(100)
    stops = []
    with tf.Graph().as_default():
        no_op = tf.no_op()
        with mock.patch.object(time, "time") as clock:
            clock.return_value = 1000.0
            with tf.compat.v1.train.MonitoredSession(hooks=[hook]) as session:
                for secs in (10, 80, 9, 1):
                    clock.return_value += secs
                    session.run(no_op)
                    stops.append(session.should_stop())
                    if session.should_stop():
                        break
    return stops


def run(lib, work_dir):
    """Runs each scenario; returns what it observed."""
    return {"chief": _training_role(lib, "chief", 0),
            "worker": _training_role(lib, "worker", 1),
            "ps": _ps(lib), "evaluator": _evaluator(lib, work_dir),
            "server_errors": _server_errors(lib), "stop_at_secs": _stop_at_secs(lib),
            "throttle": _throttle(lib)}


def main(work_dir):
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    from tensorflow_estimator.python.estimator import training  # noqa: PLC0415
    os.makedirs(work_dir, exist_ok=True)
    lib = types.SimpleNamespace(
        Estimator=tf.estimator.Estimator, training=training,
        RunConfig=tf.estimator.RunConfig,
        TrainSpec=tf.estimator.TrainSpec, EvalSpec=tf.estimator.EvalSpec,
        Exporter=tf.estimator.Exporter)
    print(json.dumps({"tf_version": tf.__version__, "result": run(lib, work_dir)}))


if __name__ == "__main__":
    main(sys.argv[1])
