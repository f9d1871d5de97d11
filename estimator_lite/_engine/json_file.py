"""Small JSON state files in model_dir, written atomically (temp file, then rename).

Used for completion markers and BestExporter's best result: a reader on another
task never sees half a file. Works on local disks and on GCS/HDFS through gfile.
"""

import json

from estimator_lite._engine.atomic_file import write_atomic
from estimator_lite._tf import tf

__all__ = ["write_json", "read_json"]


def write_json(path, payload):
    """Writes `payload` as JSON to `path` through a temp file and a rename."""
    write_atomic(path, json.dumps(payload))


def read_json(path):
    """Returns the decoded JSON in `path`, or None when the file does not exist."""
    if not tf.io.gfile.exists(path):
        return None
    with tf.io.gfile.GFile(path) as f:
        return json.loads(f.read())
