"""RunConfig(train_distribute=...): single-device strategies, and the refusals.

Multi-device strategies run in a fresh interpreter (logical CPUs must be set up
before TensorFlow starts): tests/_engine/distribute_strategies_test.py.
"""

import os
import sys

import pytest
import tensorflow as tf

import estimator_lite as el
from tests.support import models, zygote

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ERR_OTHER = "train_distribute=_DefaultDistributionStrategy is not supported"
ERR_NOT_STRATEGY = "train_distribute must be a tf.distribute strategy or None"


class _DeviceRecorder(tf.compat.v1.train.SessionRunHook):
    def begin(self):
        graph = tf.compat.v1.get_default_graph()
        self.devices = {v.op.name: v.device for v in tf.compat.v1.global_variables()}
        self.graph = graph


def _two_cpu_config(tmp_path, **kwargs):
    session_config = tf.compat.v1.ConfigProto(device_count={"CPU": 2},
                                              allow_soft_placement=True)
    return el.RunConfig(model_dir=str(tmp_path), session_config=session_config,
                        save_checkpoints_steps=10, **kwargs)


def test_one_device_strategy_places_the_model_on_its_device(tmp_path):
    strategy = tf.distribute.OneDeviceStrategy("/cpu:1")
    est = el.Estimator(models.linear_model_fn, params={},
                       config=_two_cpu_config(tmp_path, train_distribute=strategy,
                                              eval_distribute=strategy))
    recorder = _DeviceRecorder()
    est.train(models.input_fn(), hooks=[recorder], max_steps=20)
    assert recorder.devices["w"].endswith("device:CPU:1")
    assert recorder.devices["global_step"].endswith("device:CPU:1")
    assert est.evaluate(models.input_fn(epochs=1))["global_step"] == 20


def test_other_strategies_are_refused():
    with pytest.raises(ValueError, match=ERR_OTHER):
        el.RunConfig(train_distribute=tf.distribute.get_strategy())
    with pytest.raises(TypeError, match=ERR_NOT_STRATEGY):
        el.RunConfig(train_distribute="mirrored")
    with pytest.raises(ValueError, match="experimental_distribute"):
        el.RunConfig(experimental_distribute=object())


REPLICA_ERROR_PROGRAM = """
import tensorflow as tf
import estimator_lite as el
# tf.config.experimental's spelling: TF 1.15 has no other (TF 2 keeps it).
devices = tf.config.experimental
cpus = devices.list_physical_devices("CPU")
devices.set_virtual_device_configuration(
    cpus[0], [devices.VirtualDeviceConfiguration()] * 2)


class ShapeError(Exception):
    def __init__(self, name, shape):  # AutoGraph cannot rebuild this one
        super().__init__(f"feature {name!r} has the wrong shape {shape}")


def make_model_fn(error):
    def model_fn(features, labels, mode):
        raise error
    return model_fn


strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
for error in (ValueError("my model_fn is broken: feature 'x' has the wrong shape"),
              ShapeError("x", [2]), KeyError("x")):
    est = el.Estimator(make_model_fn(error),
                       config=el.RunConfig(train_distribute=strategy))
    try:
        est.train(lambda: tf.data.Dataset.from_tensors(({"x": [[1.0]]}, [[1.0]])).repeat(),
                  steps=1)
    except Exception as raised:
        print("RAISED", type(raised).__name__, raised is error)
        print("MESSAGE", str(raised).splitlines()[0])
        print("NOTES", getattr(raised, "__notes__", []))
"""


def test_an_error_in_a_replica_shows_the_users_message_first(tmp_path):
    # TensorFlow runs every replica through AutoGraph, whose error starts with "in
    # user code:" and the library's frames (tf.estimator 2.15 shows that, checked on
    # the oracle: a ValueError or KeyError "in user code:", a StagingError for an
    # exception class AutoGraph cannot rebuild); the model_fn's own error comes out.
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    ran = zygote.run([sys.executable, "-c", REPLICA_ERROR_PROGRAM], capture_output=True,
                     text=True, env=env, cwd=tmp_path, timeout=300, check=False)
    assert ran.returncode == 0, ran.stderr[-3000:]
    lines = [line.split(" ", 1) for line in ran.stdout.splitlines()
             if line.startswith(("RAISED", "MESSAGE", "NOTES"))]
    assert [value for key, value in lines if key == "RAISED"] == [
        "ValueError True", "ShapeError True", "KeyError True"]
    assert [value for key, value in lines if key == "MESSAGE"] == [
        "my model_fn is broken: feature 'x' has the wrong shape",
        "feature 'x' has the wrong shape [2]", "'x'"]
    if sys.version_info >= (3, 11):
        for key, notes in lines:
            if key == "NOTES":
                assert "in model_fn" in notes and "in user code" not in notes
