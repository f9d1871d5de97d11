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
