"""A CheckpointSaverHook given to train() saves instead of the Estimator.

tf.estimator 2.15 adds no saver of its own when the hooks (or the model_fn's
training_chief_hooks) hold a CheckpointSaverHook: that hook saves on its own
schedule and the saving_listeners join its listeners (adanet's
`test_checkpoint_saver_hooks_not_decorated_during_training` reads
`hook._listeners`). estimator_lite saved on the RunConfig's schedule beside it and
called the listeners itself.
"""

import os

import numpy as np
import tensorflow as tf

import estimator_lite as el

v1 = tf.compat.v1


class _Listener(v1.train.CheckpointSaverListener):
    def __init__(self):
        self.saved_steps = []

    def after_save(self, session, global_step_value):
        self.saved_steps.append(int(global_step_value))


def _model_fn(features, labels, mode):
    weight = v1.get_variable("w", [1, 1])
    loss = v1.losses.mean_squared_error(labels, tf.matmul(features, weight))
    train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=v1.train.get_global_step())
    return el.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _input_fn():
    x = np.ones([4, 1], np.float32)
    return tf.data.Dataset.from_tensor_slices((x, 2 * x)).batch(2).repeat()


def _checkpoint_steps(model_dir):
    return sorted(int(name.split("-")[1].split(".")[0]) for name in os.listdir(model_dir)
                  if name.startswith("model.ckpt-") and name.endswith(".index"))


def test_the_callers_saver_hook_saves_and_takes_the_listeners(tmp_path):
    model_dir = str(tmp_path / "model")
    config = el.RunConfig(save_checkpoints_steps=2)
    estimator = el.Estimator(_model_fn, model_dir=model_dir, config=config)
    hook = v1.train.CheckpointSaverHook(model_dir, save_steps=4)
    listener = _Listener()
    estimator.train(_input_fn, hooks=[hook], max_steps=6, saving_listeners=[listener])
    assert hook._listeners == [listener]
    # The hook's schedule (4 steps, and the last), not the RunConfig's (2).
    assert _checkpoint_steps(model_dir) == [0, 4, 6]
    assert listener.saved_steps == [0, 4, 6]


def test_listeners_with_a_saver_hook_need_no_checkpoint_period(tmp_path):
    model_dir = str(tmp_path / "model")
    config = el.RunConfig(save_checkpoints_steps=None, save_checkpoints_secs=None)
    estimator = el.Estimator(_model_fn, model_dir=model_dir, config=config)
    hook = v1.train.CheckpointSaverHook(model_dir, save_steps=2)
    listener = _Listener()
    estimator.train(_input_fn, hooks=[hook], max_steps=3, saving_listeners=[listener])
    assert _checkpoint_steps(model_dir) == [0, 2, 3]
    assert listener.saved_steps == [0, 2, 3]
