"""tf.estimator's estimator-module helpers (`_compat/estimator_module.py`)."""

import os

import numpy as np

import estimator_lite as el
from estimator_lite import model_fn as model_fn_module
from estimator_lite._compat import estimator_module
from estimator_lite._tf import tf
from tests.support import models


def test_tf_estimators_private_module_helpers(tmp_path):
    # Libraries and tf.estimator's own tests import these by private path.
    assert model_fn_module.LOSS_METRIC_KEY == "loss"
    assert estimator_module._load_global_step_from_checkpoint_dir(str(tmp_path)) == 0
    est = models.make_estimator(tmp_path)
    est.train(models.input_fn(), steps=3)
    assert estimator_module._load_global_step_from_checkpoint_dir(str(tmp_path)) == 3
    eval_dir = str(tmp_path / "eval_written")
    estimator_module._write_dict_to_summary(
        eval_dir, {"loss": 0.5, "global_step": 7, "v": np.array([1.0, 2.0])}, 7)
    assert el.read_eval_metrics(eval_dir) == {7: {"loss": 0.5}}
    # Successive calls add to one event file (tf.estimator 2.15, checked on the
    # oracle: its FileWriterCache), also after the directory was deleted.
    estimator_module._write_dict_to_summary(eval_dir, {"loss": 0.25}, 8)
    assert len(tf.io.gfile.glob(os.path.join(eval_dir, "events.out.tfevents.*"))) == 1
    assert el.read_eval_metrics(eval_dir) == {7: {"loss": 0.5}, 8: {"loss": 0.25}}
    tf.io.gfile.rmtree(eval_dir)
    estimator_module._write_dict_to_summary(eval_dir, {"loss": 0.125}, 9)
    assert el.read_eval_metrics(eval_dir) == {9: {"loss": 0.125}}
