"""Small JSON state files in model_dir, written atomically (temp file, then rename).

Used for completion markers and BestExporter's best result: a reader on another
task never sees half a file. Works on local disks and on GCS/HDFS through gfile.
"""

import json
import os

from estimator_lite._tf import tf

__all__ = ["write_json", "read_json"]


def write_json(path, payload):
    """Writes `payload` as JSON to `path` through a temp file and a rename."""
    temp = f"{path}.tmp-{os.getpid()}"
    with tf.io.gfile.GFile(temp, "w") as f:
        f.write(json.dumps(payload))
    tf.io.gfile.rename(temp, path, overwrite=True)


def read_json(path):
    """Returns the decoded JSON in `path`, or None when the file does not exist."""
    if not tf.io.gfile.exists(path):
        return None
    with tf.io.gfile.GFile(path) as f:
        return json.loads(f.read())
