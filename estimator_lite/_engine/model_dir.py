"""Every on-disk name in a model_dir, in one place.

A model_dir holds checkpoints (``model.ckpt-<step>.*`` and the ``checkpoint`` state
file), training event files, one eval dir per evaluation name (``eval`` or
``eval_<name>``), exports (``export/<exporter>/<timestamp>``), and the completion
markers (``training_complete.json``, ``workers_done/worker-<i>.json``). These
names match tf.estimator 2.15's wherever tf.estimator had the concept, so a
model_dir written by either can be read by the other.
"""

import os
import re

from estimator_lite._tf import tf

__all__ = [
    "CHECKPOINT_BASENAME", "CHECKPOINT_STATE_FILE", "EXPORT_DIR",
    "TRAINING_COMPLETE_FILE", "WORKERS_DONE_DIR", "BEST_EVAL_RESULT_FILE",
    "TEMP_EXPORT_PREFIX", "checkpoint_prefix", "checkpoint_path", "eval_dir_name",
    "eval_dir", "export_dir", "training_complete_path", "workers_done_dir",
    "worker_done_file", "parse_worker_done_file", "is_export_timestamp",
    "checkpoint_step", "checkpoint_paths", "latest_checkpoint", "EVENT_FILE_GLOB",
    "event_file_pattern", "OWNED_FILE_PATTERNS", "OWNED_DIR_PATTERNS",
    "MODEL_DIR_SIGNS",
]

CHECKPOINT_BASENAME = "model.ckpt"
CHECKPOINT_STATE_FILE = "checkpoint"
EXPORT_DIR = "export"
TRAINING_COMPLETE_FILE = "training_complete.json"
WORKERS_DONE_DIR = "workers_done"
BEST_EVAL_RESULT_FILE = "best_eval_result.json"
TEMP_EXPORT_PREFIX = "temp-"
EVENT_FILE_GLOB = "*.tfevents.*"
GRAPH_FILE = "graph.pbtxt"
_WORKER_DONE_RE = re.compile(r"^worker-(\d+)\.json$")


def checkpoint_prefix(model_dir):
    """The path prefix the Saver appends ``-<step>`` to: ``<model_dir>/model.ckpt``."""
    return os.path.join(model_dir, CHECKPOINT_BASENAME)


def checkpoint_path(model_dir, step):
    """The checkpoint the Saver writes for `step`: ``<model_dir>/model.ckpt-<step>``."""
    return f"{checkpoint_prefix(model_dir)}-{int(step)}"


def eval_dir_name(name=None):
    """``eval`` for an unnamed evaluation, ``eval_<name>`` for a named one.

    An empty name counts as no name (as in tf.estimator).
    """
    return f"eval_{name}" if name else "eval"


def eval_dir(model_dir, name=None):
    """The directory where evaluation `name` writes its summaries."""
    return os.path.join(model_dir, eval_dir_name(name))


def export_dir(model_dir, exporter_name):
    """Where an exporter of that name writes its timestamped SavedModels."""
    return os.path.join(model_dir, EXPORT_DIR, exporter_name)


def training_complete_path(model_dir):
    """The chief's completion marker."""
    return os.path.join(model_dir, TRAINING_COMPLETE_FILE)


def workers_done_dir(model_dir):
    """The directory of per-worker done markers."""
    return os.path.join(model_dir, WORKERS_DONE_DIR)


def worker_done_file(model_dir, task_id):
    """The done marker of worker `task_id`."""
    return os.path.join(workers_done_dir(model_dir), f"worker-{int(task_id)}.json")


def parse_worker_done_file(basename):
    """The worker index of a done-marker file name, or None for any other name."""
    match = _WORKER_DONE_RE.match(basename)
    return int(match.group(1)) if match else None


def is_export_timestamp(basename):
    """Whether `basename` is a finished export (all digits; temp dirs are not)."""
    return basename.rstrip("/").isdigit()


def latest_checkpoint(model_dir):
    """Path of the newest checkpoint listed in model_dir's state file, or None."""
    return tf.train.latest_checkpoint(model_dir)


def checkpoint_paths(model_dir):
    """Every checkpoint path the state file lists, oldest first (empty if none)."""
    state = tf.train.get_checkpoint_state(model_dir)
    if state is None:
        return []
    return [_absolute(model_dir, p) for p in state.all_model_checkpoint_paths]


def _absolute(model_dir, path):
    return path if os.path.isabs(path) or "://" in path else os.path.join(model_dir, path)


def checkpoint_step(checkpoint_path):
    """The global step stored in a checkpoint.

    With asynchronous workers a checkpoint's file name (the chief's last seen step)
    can lag the step saved inside it, and evaluations report the stored one, so that
    is the step to compare. Falls back to the file name's ``-<step>`` suffix only
    when the checkpoint has no readable global step.

    Raises:
      ValueError: neither the checkpoint nor its name gives a step.
    """
    if tf.train.checkpoint_exists(checkpoint_path):
        reader = tf.train.NewCheckpointReader(checkpoint_path)
        if reader.has_tensor(tf.GraphKeys.GLOBAL_STEP):
            return int(reader.get_tensor(tf.GraphKeys.GLOBAL_STEP))
    suffix = os.fspath(checkpoint_path).rsplit("-", 1)[-1]
    if not suffix.isdigit():
        raise ValueError(f"cannot tell the global step of checkpoint {checkpoint_path!r}: "
                         "it has no global_step variable and no '-<step>' suffix")
    return int(suffix)


def event_file_pattern(directory):
    """The glob matching every event file directly in `directory`."""
    return os.path.join(directory, EVENT_FILE_GLOB)


# What training writes directly in a model_dir (glob patterns on base names); the
# only entries `fresh_start` may remove.
OWNED_FILE_PATTERNS = (CHECKPOINT_STATE_FILE, f"{CHECKPOINT_BASENAME}-*", EVENT_FILE_GLOB,
                       GRAPH_FILE, TRAINING_COMPLETE_FILE)
OWNED_DIR_PATTERNS = (eval_dir_name(), eval_dir_name("*"), EXPORT_DIR, WORKERS_DONE_DIR)
# Entries that make a directory recognisably a model_dir.
MODEL_DIR_SIGNS = (CHECKPOINT_STATE_FILE, f"{CHECKPOINT_BASENAME}-*", EVENT_FILE_GLOB)
