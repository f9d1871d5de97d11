"""The evaluation loop: metric fetches, batch counting, running until the input ends."""

import pytest

from estimator_lite._engine import eval_loop
from estimator_lite._tf import tf


def _scaffold_and_update(num_elements):
    global_step = tf.train.get_or_create_global_step()
    dataset = tf.data.Dataset.range(num_elements).map(lambda x: tf.cast(x, tf.float32))
    iterator = tf.data.make_initializable_iterator(dataset)
    value = iterator.get_next()
    update_op, values = eval_loop.metric_fetches(
        {"total": tf.metrics.mean(value * 2.0)}, value, global_step)
    local_init = tf.group(tf.local_variables_initializer(), iterator.initializer)
    scaffold = tf.train.Scaffold(local_init_op=local_init)
    return update_op, values, scaffold, tf.data.experimental.cardinality(dataset)


@pytest.mark.parametrize("steps, expected_loss", [(None, 2.0), (3, 1.0)])
def test_run_evaluation_runs_to_the_end_or_steps(steps, expected_loss):
    with tf.Graph().as_default():
        update_op, values, scaffold, cardinality = _scaffold_and_update(5)
        metrics = eval_loop.run_evaluation(
            update_op=update_op, values=values, scaffold=scaffold, hooks=[],
            checkpoint_path=None, session_config=None, master="",
            cardinality=cardinality, steps=steps)
    assert metrics == {"loss": expected_loss, "total": 2 * expected_loss,
                       "global_step": 0}
    assert isinstance(metrics["loss"], float)  # numpy scalars become Python numbers


def test_run_evaluation_of_an_empty_input_is_an_error():
    with tf.Graph().as_default():
        update_op, values, scaffold, cardinality = _scaffold_and_update(0)
        with pytest.raises(ValueError, match="evaluation ran no batch"):
            eval_loop.run_evaluation(
                update_op=update_op, values=values, scaffold=scaffold, hooks=[],
                checkpoint_path=None, session_config=None, master="",
                cardinality=cardinality, steps=None)
