"""RunConfig(train_distribute=...): what flag helpers pass by default keeps working."""

import subprocess
import sys
import textwrap

import pytest
import tensorflow as tf

import estimator_lite as el
from tests import models

ERR_MULTI_DEVICE = "replicate_model_fn(model_fn, devices="
ERR_OTHER = "train_distribute must be None, a OneDeviceStrategy"


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


def test_mirrored_strategy_over_one_device_trains(tmp_path):
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    est = el.Estimator(models.linear_model_fn, params={},
                       config=_two_cpu_config(tmp_path, train_distribute=strategy))
    est.train(models.input_fn(), max_steps=5)
    assert est.get_variable_value("global_step") == 5


def test_multi_device_mirrored_strategy_says_what_to_write():
    # Two logical CPUs must be configured before TF initialises its devices, which
    # this process already did: run the check in a fresh interpreter.
    program = textwrap.dedent("""
        import tensorflow as tf
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        import estimator_lite as el
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        try:
            el.RunConfig(train_distribute=strategy)
        except ValueError as e:
            print("ERROR:", e)
    """)
    result = subprocess.run([sys.executable, "-c", program], capture_output=True,
                            text=True, timeout=120, check=True)
    assert "ERROR: train_distribute=MirroredStrategy over 2 devices" in result.stdout
    assert ERR_MULTI_DEVICE in result.stdout


def test_other_strategies_are_refused():
    with pytest.raises(ValueError, match=ERR_OTHER):
        el.RunConfig(train_distribute=tf.distribute.get_strategy())
    with pytest.raises(ValueError, match="experimental_distribute"):
        el.RunConfig(experimental_distribute=object())
