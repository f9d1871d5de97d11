"""tf.estimator's `estimator` module's private helpers that no working module needs.

tf.estimator's tests call these as
``tensorflow_estimator.python.estimator.estimator._<name>`` (served after
`estimator_lite.estimator`'s own names); they behave as tf.estimator's.
"""

from estimator_lite._engine import eval_loop, event_files
from estimator_lite._engine import model_dir as model_dir_lib
from estimator_lite._tf import logging, tf


def _write_dict_to_summary(output_dir, dictionary, current_global_step):
    """Writes an evaluation's metrics (without 'global_step') as summaries at
    `current_global_step` in `output_dir`, as `evaluate()` does.

    Args:
      output_dir: the directory of the event file.
      dictionary: {metric name: value}: numbers, arrays, serialized Summaries.
      current_global_step: the step the summaries are written at.
    """
    logging.info("Saving dict for global step %d: %s", current_global_step,
                 eval_loop.metrics_text(dictionary))
    values = {k: v for k, v in dictionary.items() if k != tf.GraphKeys.GLOBAL_STEP}
    # Successive calls add to one event file, as tf.estimator's cached writer does.
    writer = event_files.shared_summary_writer(output_dir)
    writer.add_summary(event_files.eval_summary(values), current_global_step)
    writer.flush()


def _load_global_step_from_checkpoint_dir(checkpoint_dir):
    """The global step of `checkpoint_dir`'s newest checkpoint, 0 without one."""
    latest = model_dir_lib.latest_checkpoint(checkpoint_dir)
    if latest is None:
        return 0
    reader = tf.train.NewCheckpointReader(latest)
    if not reader.has_tensor(tf.GraphKeys.GLOBAL_STEP):
        return 0
    return int(reader.get_tensor(tf.GraphKeys.GLOBAL_STEP))
