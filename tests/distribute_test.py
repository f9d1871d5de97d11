"""RunConfig(train_distribute=...): single-device strategies, and the refusals.

Multi-device strategies run in a fresh interpreter (logical CPUs must be set up
before TensorFlow starts): tests/strategy_test.py.
"""

import pytest
import tensorflow as tf

import estimator_lite as el
from tests import models

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
