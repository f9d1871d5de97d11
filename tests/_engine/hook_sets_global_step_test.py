"""A hook that sets the global step in after_run: training stops and saves there.

adanet 0.9.0 trains in hooks: its train op is `tf.no_op()` and a hook assigns the
global step in `after_run`. tf.estimator 2.15's StopAtStepHook and
CheckpointSaverHook read the variable again, so `train(max_steps=3)` stops at 3
and saves model.ckpt-3. estimator_lite saw only the step its train op left and
trained forever (adanet's loop never reached max_steps).
"""

import os

import numpy as np
import tensorflow as tf

import estimator_lite as el

v1 = tf.compat.v1


class _StepSetterHook(v1.train.SessionRunHook):
    """Trains in before_run's fetches, then sets the global step (adanet's way)."""

    def __init__(self):
        self.runs = 0

    def begin(self):
        self._count = v1.get_variable("my_steps", [], tf.int64,
                                      initializer=v1.zeros_initializer(),
                                      trainable=False)
        self._increment = v1.assign_add(self._count, 1)
        self._set_step = v1.assign(v1.train.get_global_step(), self._count)

    def before_run(self, run_context):
        return v1.train.SessionRunArgs(self._increment)

    def after_run(self, run_context, run_values):
        self.runs += 1
        run_context.session.run(self._set_step)


def _model_fn(features, labels, mode):
    weight = v1.get_variable("w", [1, 1])
    predictions = tf.matmul(features, weight)
    loss = v1.losses.mean_squared_error(labels, predictions)
    return el.EstimatorSpec(mode, loss=loss, train_op=tf.no_op())


def _input_fn():
    x = np.ones([4, 1], np.float32)
    return tf.data.Dataset.from_tensor_slices((x, 2 * x)).batch(2).repeat()


def test_train_stops_at_max_steps_a_hook_sets_and_saves_that_step(tmp_path):
    estimator = el.Estimator(_model_fn, model_dir=str(tmp_path))
    hook = _StepSetterHook()
    estimator.train(_input_fn, hooks=[hook], max_steps=3)
    assert hook.runs == 3
    assert estimator.get_variable_value("global_step") == 3
    assert os.path.basename(estimator.latest_checkpoint()) == "model.ckpt-3"
    # Again with a new hook: the step is already 3, nothing trains.
    again = _StepSetterHook()
    estimator.train(_input_fn, hooks=[again], max_steps=3)
    assert again.runs == 0
