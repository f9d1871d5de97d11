"""The evaluation loop: metric fetches, batch counting, running until the input ends."""

import logging as std_logging

import numpy as np
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
    # As the Estimator: the local init op then covers the eval step too.
    scaffold = eval_loop.scaffold_initialising_late_locals(
        tf.train.Scaffold(local_init_op=local_init))
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
    # As tf.estimator: Session.run's numpy scalars, names sorted, global_step last.
    assert list(metrics) == ["loss", "total", "global_step"]
    assert type(metrics["loss"]) is np.float32
    assert type(metrics["total"]) is np.float32
    assert type(metrics["global_step"]) is np.int64


def test_metric_fetches_sort_the_names_then_global_step():
    with tf.Graph().as_default():
        global_step = tf.train.get_or_create_global_step()
        value = tf.constant(1.0)
        _, values = eval_loop.metric_fetches(
            {"zz": tf.metrics.mean(value), "acc": tf.metrics.mean(value),
             "Bb": tf.metrics.mean(value)}, value, global_step)
    assert list(values) == ["Bb", "acc", "loss", "zz", "global_step"]


def test_log_metrics_says_saving_dict_as_tf_estimator():
    """The INFO line of tf.estimator (checked on the oracle by
    tests/_engine/eval_results_test.py): names sorted, str() of each value,
    bytes left out."""
    records = []

    class Collect(std_logging.Handler):
        def emit(self, record):
            records.append(record)

    logger = std_logging.getLogger("tensorflow")
    handler, old_level = Collect(), logger.level
    logger.addHandler(handler)
    logger.setLevel(std_logging.INFO)
    try:
        eval_loop.log_metrics({"loss": np.float32(0.42773223), "b": b"x",
                               "acc": np.float32(0.75),
                               "vec": np.array([1.0, 2.0], np.float32),
                               "global_step": np.int64(3)})
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    assert [(r.levelname, r.getMessage()) for r in records] == [
        ("INFO", "Saving dict for global step 3: acc = 0.75, global_step = 3, "
                 "loss = 0.42773223, vec = [1. 2.]")]


def test_run_evaluation_of_an_empty_input_gives_the_metrics_of_no_data(caplog):
    # tf.estimator 2.15: loss 0.0 (the mean of nothing) and the metrics' values
    # with no update; here with a warning saying no batch ran.
    with tf.Graph().as_default():
        update_op, values, scaffold, cardinality = _scaffold_and_update(0)
        with caplog.at_level(std_logging.WARNING, logger="tensorflow"):
            metrics = eval_loop.run_evaluation(
                update_op=update_op, values=values, scaffold=scaffold, hooks=[],
                checkpoint_path=None, session_config=None, master="",
                cardinality=cardinality, steps=None)
    assert metrics == {"loss": 0.0, "total": 0.0, "global_step": 0}
    assert type(metrics["loss"]) is np.float32
    assert any("Evaluation ran no batch" in r.getMessage() for r in caplog.records
               if r.levelno == std_logging.WARNING)


def test_hooks_see_the_eval_step_as_tf_estimator():
    # tf.estimator 2.15 (checked on the oracle by the conformance scenarios
    # hooks/evaluate/eval_step/*): each batch also adds one to an int64 local
    # 'eval_step' in GraphKeys.EVAL_STEP; hooks see [update_op, update_eval_step].
    seen = []

    class Hook(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(run_context.original_args.fetches)

        def after_run(self, run_context, run_values):
            seen.append(run_values.results)

    with tf.Graph().as_default():
        update_op, values, scaffold, cardinality = _scaffold_and_update(3)
        (step,) = tf.get_collection(tf.GraphKeys.EVAL_STEP)
        assert step in tf.local_variables() and step not in tf.trainable_variables()
        assert step.op.name == "eval_step" and step.dtype.base_dtype == tf.int64
        metrics = eval_loop.run_evaluation(
            update_op=update_op, values=values, scaffold=scaffold, hooks=[Hook()],
            checkpoint_path=None, session_config=None, master="",
            cardinality=cardinality, steps=None)
        assert eval_loop.eval_step() is step  # found, not created again
    assert metrics["loss"] == 1.0
    assert seen == [[None, 1], [None, 2], [None, 3]]
    assert all(type(value) is np.int64 for _, value in seen)


def test_two_eval_steps_are_an_error_as_in_tensorflow():
    with tf.Graph().as_default():
        for _ in range(2):
            tf.add_to_collection(tf.GraphKeys.EVAL_STEP, tf.constant(0, tf.int64))
        with pytest.raises(ValueError, match="Multiple tensors added to "
                                             "tf.GraphKeys.EVAL_STEP"):
            eval_loop.eval_step()
