"""An explicit fresh start: remove a previous run's files from model_dir, and only those.

TF Estimator users often `rm -rf` model_dir by hand or in scripts; a typo there
deletes the wrong directory. `fresh_start(model_dir)` removes only what training
writes (checkpoints, event files, eval dirs, exports, completion markers), only
directly inside `model_dir`, and refuses paths that cannot be a model dir.
"""

import fnmatch
import os

from estimator_lite._engine import model_dir as model_dir_lib
from estimator_lite._tf import logging, tf

__all__ = ["fresh_start"]



def _refuse(model_dir, reason):
    return ValueError(f"fresh_start refuses model_dir {model_dir!r}: {reason}")


def fresh_start(model_dir):
    """Deletes the checkpoints, events, eval dirs and exports in `model_dir`.

    Anything else in the directory (data, configs, notes) is left alone, and
    nothing outside it is touched.

    Args:
      model_dir: the Estimator's model_dir.

    Returns:
      The sorted list of removed paths ([] when model_dir does not exist or is empty).

    Raises:
      ValueError: model_dir is '/', the home directory, or a non-empty directory
        with no checkpoint or event file (it does not look like a model dir).
    """
    if not isinstance(model_dir, (str, os.PathLike)) or not os.fspath(model_dir):
        raise ValueError(f"fresh_start needs a model_dir path, got {model_dir!r}")
    model_dir = os.fspath(model_dir)
    real = os.path.realpath(model_dir)
    if real == os.path.realpath(os.sep):
        raise _refuse(model_dir, "it is the root directory")
    if real == os.path.realpath(os.path.expanduser("~")):
        raise _refuse(model_dir, "it is the home directory")
    if not tf.io.gfile.isdir(model_dir):
        return []
    names = [n.rstrip("/") for n in tf.io.gfile.listdir(model_dir)]
    if not names:
        return []
    if not any(fnmatch.fnmatch(n, p) for n in names for p in model_dir_lib.MODEL_DIR_SIGNS):
        raise _refuse(model_dir, "it has no checkpoint or event file, so it does not "
                                 f"look like a model dir (it has {sorted(names)[:10]})")
    removed = []
    for name in names:
        path = os.path.join(model_dir, name)
        is_dir = tf.io.gfile.isdir(path)
        patterns = (model_dir_lib.OWNED_DIR_PATTERNS if is_dir
                    else model_dir_lib.OWNED_FILE_PATTERNS)
        if not any(fnmatch.fnmatch(name, p) for p in patterns):
            continue
        if os.path.islink(path):
            os.remove(path)  # the link itself, never what it points to
        elif is_dir:
            tf.io.gfile.rmtree(path)
        else:
            tf.io.gfile.remove(path)
        removed.append(path)
    logging.info("fresh_start removed %d entries from %s", len(removed), model_dir)
    return sorted(removed)
