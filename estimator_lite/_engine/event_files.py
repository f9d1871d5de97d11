"""Event files: writing summaries with unique file names, reading scalars back.

Training and evaluation write TensorBoard event files; evaluations' scalars are
read back by the exporters, early stopping, the LR-plateau hook, re-runs and the
inspect tool.
"""

import collections
import itertools
import numbers
import os

import numpy as np

from estimator_lite._engine import model_dir
from estimator_lite._tf import ProtoDecodeError, gfile_glob, logging, tf

__all__ = ["new_summary_writer", "shared_summary_writer", "scalar_summary", "eval_summary",
           "is_real_scalar", "checkpoint_path_summary", "read_eval_metrics",
           "read_event_file_metrics"]

_WRITER_IDS = itertools.count()


def new_summary_writer(logdir, graph=None):
    """Returns a FileWriter whose file name is unique even within one second.

    Event file names carry a 1-second timestamp: two writers opened on the same
    directory in the same second would otherwise write (and clobber) one file.
    """
    return _writer_and_suffix(logdir, graph)[0]


def _writer_and_suffix(logdir, graph=None):
    suffix = f".{os.getpid()}.{next(_WRITER_IDS)}"
    with tf.Graph().as_default():  # FileWriter refuses to be built eagerly.
        return tf.summary.FileWriter(logdir, graph=graph, filename_suffix=suffix), suffix


# shared_summary_writer's writers: {(pid, logdir): (writer, its event file's glob)}.
_SHARED_WRITERS = {}


def shared_summary_writer(logdir):
    """The process's one open writer for `logdir` (what tf.compat.v1's
    FileWriterCache gives tf.estimator), so that successive calls add to one event
    file; a new one when that file is gone (the directory was deleted)."""
    key = (os.getpid(), logdir)  # a forked child opens its own
    writer, pattern = _SHARED_WRITERS.get(key, (None, None))
    if writer is not None and gfile_glob(pattern):
        return writer
    if writer is not None:
        _close_quietly(writer)
    writer, suffix = _writer_and_suffix(logdir)
    writer.flush()  # the file exists from now on: its glob tells whether it still does
    _SHARED_WRITERS[key] = (writer, os.path.join(logdir, "*" + suffix))
    return writer


def _close_quietly(writer):
    try:
        writer.close()
    except tf.errors.OpError as error:  # its directory is gone: nothing left to save
        logging.warning("Closing the summary writer of %s failed: %s",
                        writer.get_logdir(), error)


def scalar_summary(values):
    """A Summary proto of the real-number scalars in `values` ({tag: value}).

    Entries that are not scalar real numbers (arrays, strings) are left out.
    """
    summary = tf.Summary()
    for tag, value in values.items():
        if isinstance(value, numbers.Real) or (
                hasattr(value, "ndim") and value.ndim == 0
                and isinstance(value.item(), numbers.Real)):
            summary.value.add(tag=tag, simple_value=float(value))
    return summary


def is_real_scalar(value):
    """Whether an evaluation's `value` is a real number (summarised as a simple
    value): a Python or numpy number or a 0-d numeric array, not a bool."""
    if isinstance(value, (bool, np.bool_)):
        return False
    return isinstance(value, numbers.Real) or (
        isinstance(value, np.ndarray) and value.ndim == 0
        and np.issubdtype(value.dtype, np.number))


def eval_summary(values):
    """The Summary proto of an evaluation's metrics, as tf.estimator writes it.

    Real scalars become simple values; a serialized Summary (a metric whose value
    is, e.g., an image summary) contributes its values, tagged ``<name>/<i>``; an
    array becomes a tensor value (TensorBoard shows it through a plugin only).
    Anything else is left out with a warning.

    Args:
      values: {metric name: value} without 'global_step'.

    Returns:
      A tf.compat.v1.Summary.
    """
    summary = tf.Summary()
    for tag, value in values.items():
        if is_real_scalar(value):
            summary.value.add(tag=tag, simple_value=float(value))
        elif isinstance(value, bytes):
            try:
                parsed = tf.Summary.FromString(value)
            except ProtoDecodeError:
                logging.warning("Skipping summary for %s: its bytes are not a "
                                "serialized Summary.", tag)
                continue
            for i, item in enumerate(parsed.value):
                item.tag = f"{tag}/{i}"
            summary.value.extend(parsed.value)
        elif isinstance(value, np.ndarray):
            summary.value.add(tag=tag, node_name=tag,
                              tensor=tf.make_tensor_proto(value))
        else:
            logging.warning("Skipping summary for %s: a metric value must be a "
                            "number, an array or a serialized Summary, got %r.",
                            tag, value)
    return summary


def checkpoint_path_summary(checkpoint_path):
    """A Summary holding the evaluated checkpoint's path as a string tensor, tagged
    'checkpoint_path' (what tf.estimator's evaluate adds to the eval dir)."""
    summary = tf.Summary()
    summary.value.add(tag="checkpoint_path",
                      tensor=tf.make_tensor_proto(checkpoint_path, dtype=tf.string))
    return summary


def read_event_file_metrics(pattern):
    """Reads scalar summaries from every event file matching `pattern`.

    Args:
      pattern: a glob such as ``<model_dir>/eval/*.tfevents.*``.

    Returns:
      An OrderedDict of global step to {tag: value}, sorted by step; a later event
      for the same step and tag wins. Steps with no scalar values are left out.
    """
    by_step = collections.defaultdict(dict)
    for path in sorted(gfile_glob(pattern)):
        for event in _events(path):
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    by_step[event.step][value.tag] = value.simple_value
    return collections.OrderedDict(sorted((s, m) for s, m in by_step.items() if m))


def read_eval_metrics(eval_dir):
    """Reads the metrics an Estimator's `evaluate` wrote into `eval_dir`.

    Args:
      eval_dir: ``estimator.eval_dir(name)``, e.g. ``<model_dir>/eval_holdout``.

    Returns:
      An OrderedDict of global step to {metric name: value}, sorted by step.
    """
    return read_event_file_metrics(model_dir.event_file_pattern(eval_dir))


def _events(path):
    """Yields the tf.Event protos of one event file, up to a damaged record.

    Read with ``tf.compat.v1.train.summary_iterator``, looked up at each call as
    tf.estimator does (tests replace it there). A record that fails its checks (cut
    short while a writer appends, or corrupt) raises DataLossError: like
    tf.estimator, the rest of that file is skipped with a warning, and the records
    before it count.
    """
    try:
        yield from tf.train.summary_iterator(path)
    except tf.errors.DataLossError as error:
        logging.warning("Skipping the rest of event file %s: it is damaged (%s)",
                        path, error)
