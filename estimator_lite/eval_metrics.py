"""Reading evaluation results back from the event files an evaluation wrote."""

import collections
import os
import struct

from estimator_lite._tf import tf

__all__ = ["read_eval_metrics", "read_event_file_metrics"]


def read_event_file_metrics(pattern):
    """Reads scalar summaries from every event file matching `pattern`.

    Args:
      pattern: a glob such as ``<model_dir>/eval/*.tfevents.*``.

    Returns:
      An OrderedDict of global step to {tag: value}, sorted by step; a later event
      for the same step and tag wins. Steps with no scalar values are left out.
    """
    by_step = collections.defaultdict(dict)
    for path in sorted(tf.io.gfile.glob(pattern)):
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
    return read_event_file_metrics(os.path.join(eval_dir, "*.tfevents.*"))


def _events(path):
    """Yields the tf.Event protos of one event file.

    Reads the TFRecord framing directly (8-byte length, 4-byte CRC, payload,
    4-byte CRC) instead of the deprecated summary_iterator. A record that is cut
    short (a writer may still be appending) ends the file quietly: the records
    before it are complete.
    """
    with tf.io.gfile.GFile(path, "rb") as f:
        while True:
            header = f.read(12)
            if len(header) < 12:
                return
            (length,) = struct.unpack("<Q", header[:8])
            payload = f.read(length)
            if len(payload) < length or len(f.read(4)) < 4:
                return
            yield tf.Event.FromString(payload)
