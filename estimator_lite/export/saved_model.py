"""Writing SavedModels: signature maps, timestamped export dirs, atomic writes."""

import os
import time

from estimator_lite._engine import model_dir
from estimator_lite._tf import logging, tf

__all__ = ["build_signature_defs", "make_export_dir", "write_atomically",
           "remove_stale_temp_dirs"]


def build_signature_defs(export_outputs, receiver_tensors, alternatives=None):
    """Builds the SignatureDef map for a SavedModel.

    Args:
      export_outputs: dict of signature name to ExportOutput (with a default key).
      receiver_tensors: dict of input name to Tensor.
      alternatives: optional dict of alternative name to receiver tensors dict; each
        adds signatures named ``<alternative>:<output name>``.

    Returns:
      A dict of signature name to SignatureDef.
    """
    signatures = {name: output.as_signature_def(receiver_tensors)
                  for name, output in export_outputs.items()}
    for alt_name, alt_tensors in (alternatives or {}).items():
        for name, output in export_outputs.items():
            signatures[f"{alt_name}:{name}"] = output.as_signature_def(alt_tensors)
    return signatures


def make_export_dir(export_dir_base):
    """Returns a new `<export_dir_base>/<unix seconds>` path, newer than every export.

    When exports land faster than one a second the timestamp is bumped instead of
    waiting, so it can run ahead of the clock; the next one must still be greater
    than every existing one (also those written ahead, or being written as
    ``temp-<stamp>``), or garbage collection, which keeps the largest, would delete
    the newest export.
    """
    stamp = int(time.time())
    if tf.io.gfile.isdir(export_dir_base):
        taken = [int(name.rstrip("/").rsplit("-", 1)[-1])
                 for name in tf.io.gfile.listdir(export_dir_base)
                 if model_dir.is_export_timestamp(name)
                 or model_dir.is_stale_export_temp(name)]
        stamp = max([stamp] + [t + 1 for t in taken])
    return os.path.join(export_dir_base, str(stamp))


def write_atomically(final_dir, write_fn):
    """Runs `write_fn(temp_dir)` and renames temp_dir to `final_dir` on success.

    The temp dir sits beside `final_dir` (named ``temp-<name>``) so the rename
    stays on one file system; a failed write removes only that temp dir.

    Args:
      final_dir: destination directory; must not exist yet.
      write_fn: callable writing the full content into the directory it is given.

    Returns:
      `final_dir`.
    """
    parent, name = os.path.split(final_dir)
    temp_dir = os.path.join(parent, f"{model_dir.TEMP_EXPORT_PREFIX}{name}")
    tf.io.gfile.makedirs(parent)
    try:
        write_fn(temp_dir)
        tf.io.gfile.rename(temp_dir, final_dir)
    except BaseException:
        if tf.io.gfile.exists(temp_dir):
            logging.warning("Export to %s failed; removing %s", final_dir, temp_dir)
            tf.io.gfile.rmtree(temp_dir)
        raise
    return final_dir


def remove_stale_temp_dirs(export_dir_base):
    """Removes ``temp-<timestamp>`` dirs that a killed export left in `export_dir_base`.

    Call it only where no export into `export_dir_base` can be running (the
    evaluator at start: it is the only writer of its exporters' dirs). Nothing but
    that exact name pattern is touched.

    Returns:
      The removed paths.
    """
    if not tf.io.gfile.isdir(export_dir_base):
        return []
    removed = []
    for name in tf.io.gfile.listdir(export_dir_base):
        if model_dir.is_stale_export_temp(name):
            path = os.path.join(export_dir_base, name.rstrip("/"))
            logging.warning("Removing %s, left by an export that did not finish.", path)
            tf.io.gfile.rmtree(path)
            removed.append(path)
    return removed
