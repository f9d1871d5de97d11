"""Whole-file writes that a reader never sees half done: a temp file, then a rename.

Works on local disks and on GCS/HDFS through gfile. The temp file sits beside the
target (same directory, so the rename stays on one file system) and carries the
writer's pid, so two processes writing the same path never share a temp file.
"""

import os

from estimator_lite._tf import tf

__all__ = ["write_atomic"]


def write_atomic(path, contents):
    """Writes `contents` to `path` through a temp file and a rename.

    Args:
      path: the file to write; an existing file is replaced.
      contents: `bytes` (written as is) or `str` (written as UTF-8 text).

    Raises:
      TypeError: `contents` is neither bytes nor str.
      OSError, tf.errors.OpError: the write or the rename failed; `path` keeps what
        it held and the temp file is removed.
    """
    if isinstance(contents, bytes):
        mode = "wb"
    elif isinstance(contents, str):
        mode = "w"
    else:
        raise TypeError(f"contents must be bytes or str, got {type(contents).__name__}")
    temp = f"{path}.tmp-{os.getpid()}"
    try:
        with tf.io.gfile.GFile(temp, mode) as f:
            f.write(contents)
        tf.io.gfile.rename(temp, path, overwrite=True)
    except BaseException:
        # The temp file is this writer's own, beside `path`: nothing else to lose.
        if tf.io.gfile.exists(temp):
            tf.io.gfile.remove(temp)
        raise
