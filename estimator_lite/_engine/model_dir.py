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
import tempfile

from estimator_lite._keras import save_slice_info
from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import logging, tf

__all__ = [
    "CHECKPOINT_BASENAME", "CHECKPOINT_STATE_FILE", "EXPORT_DIR",
    "TRAINING_COMPLETE_FILE", "WORKERS_DONE_DIR", "BEST_EVAL_RESULT_FILE",
    "TEMP_EXPORT_PREFIX", "checkpoint_prefix", "checkpoint_path", "eval_dir_name",
    "eval_dir", "export_dir", "training_complete_path", "workers_done_dir",
    "worker_done_file", "parse_worker_done_file", "is_export_timestamp",
    "checkpoint_step", "checkpoint_paths", "latest_checkpoint", "EVENT_FILE_GLOB",
    "event_file_pattern", "OWNED_FILE_PATTERNS", "OWNED_DIR_PATTERNS",
    "MODEL_DIR_SIGNS", "resolve_model_dir", "CheckpointLacksVariablesError",
    "CheckpointMismatchError",
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


def resolve_model_dir(model_dir, config_model_dir):
    """The model_dir an Estimator uses: the argument, the config's, or a new temp dir.

    Raises:
      TypeError: model_dir is not a str or os.PathLike.
      ValueError: both are given and differ.
    """
    if model_dir is not None and not isinstance(model_dir, (str, bytes, os.PathLike)):
        raise TypeError(f"model_dir must be a str or os.PathLike, got {model_dir!r}")
    # A bytes path is decoded: tf.estimator accepted one.
    model_dir = os.fsdecode(model_dir) if model_dir is not None else None
    if model_dir and config_model_dir and (os.path.abspath(model_dir) !=
                                           os.path.abspath(config_model_dir)):
        raise ValueError(f"model_dir {model_dir!r} differs from config.model_dir "
                         f"{config_model_dir!r}; give one or make them equal "
                         "(`model_dir` are set both in constructor and `RunConfig`, "
                         "but with different values)")
    resolved = model_dir or config_model_dir
    if not resolved:
        resolved = tempfile.mkdtemp(prefix="estimator_lite_")
        logging.warning("No model_dir given; using temporary directory %s", resolved)
    return resolved


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


def is_stale_export_temp(basename):
    """Whether `basename` is an export temp dir (``temp-<timestamp>``)."""
    name = basename.rstrip("/")
    return (name.startswith(TEMP_EXPORT_PREFIX)
            and name[len(TEMP_EXPORT_PREFIX):].isdigit())


def is_checkpoint_temp(basename):
    """Whether `basename` is the Saver's temp dir of a sharded save
    (``model.ckpt-<step>_temp...``), left behind when a save was killed."""
    name = basename.rstrip("/")
    prefix = f"{CHECKPOINT_BASENAME}-"
    if not name.startswith(prefix) or "_temp" not in name:
        return False
    return name[len(prefix):].split("_temp", 1)[0].isdigit()


def latest_checkpoint(model_dir):
    """Path of the newest checkpoint listed in model_dir's state file, or None."""
    return tf.train.latest_checkpoint(model_dir)


def checkpoint_paths(model_dir):
    """Every checkpoint path the state file lists, oldest first (empty if none)."""
    state = tf.train.get_checkpoint_state(model_dir)
    if state is None:
        return []
    # get_checkpoint_state already puts model_dir in front of relative entries.
    return list(state.all_model_checkpoint_paths)


def checkpoint_exists(checkpoint_path):
    """Whether a checkpoint's files are there (V2: the `.index` file; V1: the file)."""
    return (tf.io.gfile.exists(f"{checkpoint_path}.index")
            or tf.io.gfile.exists(checkpoint_path))


def checkpoint_is_readable(checkpoint_path):
    """Whether every tensor of the checkpoint can be read back right now.

    False when the checkpoint vanished (garbage-collected), or its index or data
    is truncated or corrupt. Reads all the data: call it on a failure path only.
    """
    # What a vanished, truncated or corrupt checkpoint raises when read (the reader
    # turns a short read into IndexError).
    broken = (tf.errors.OpError, ValueError, IndexError)
    try:
        if not checkpoint_exists(checkpoint_path):
            return False
        reader = tf.train.NewCheckpointReader(checkpoint_path)
        for name in reader.get_variable_to_shape_map():
            reader.get_tensor(name)
    except broken:
        return False
    return True


# Optimizer slot names in checkpoints. TF2's canned estimators (Keras-style
# optimizers) keep theirs under ``training/<Optimizer>/``; TF 1.x's canned
# estimators (tf.compat.v1.train optimizers) put them beside the variable
# (``<var>/Adagrad``, ``<var>/t_0/Adagrad``, ``<var>/part_0/Ftrl_1``, ``.../beta1_power``).
_KERAS_SLOT_RE = re.compile(r"^training/\w+/")
_V1_SLOT_RE = re.compile(r"/(Adagrad|Adam|Adam_1|Ftrl|Ftrl_1|RMSProp|RMSProp_1|Momentum|"
                         r"beta1_power(_\d+)?|beta2_power(_\d+)?)$")
_MISSING_SHOWN = 5


def _checkpoint_name_and_shape(variable):
    """The name and full shape a variable is saved under (a partition: its whole).

    The shape is None for a variable created without a fixed shape
    (``validate_shape=False``, e.g. KMeans' centers), and may hold None dimensions.
    """
    info = save_slice_info(variable)
    if info is not None:
        return info.full_name, list(info.full_shape)
    shape = variable.shape
    return variable.op.name, (shape.as_list() if shape.ndims is not None else None)


def _shapes_differ(saved, graph_shape):
    """Whether a saved shape contradicts the graph's (unknown dimensions match any)."""
    if graph_shape is None:
        return False
    return len(saved) != len(graph_shape) or any(
        dim is not None and dim != saved_dim
        for saved_dim, dim in zip_strict(saved, graph_shape))


def _flavor_hint(missing, saved, estimator_name):
    """Which flavor of the canned estimators wrote the checkpoint, if its names show it.

    Args:
      missing: names the graph needs and the checkpoint lacks.
      saved: the checkpoint's names.
      estimator_name: the class name of the estimator opening it, or None.

    Returns:
      A sentence (starting with a space) or ''.
    """
    canned = estimator_name not in (None, "Estimator")
    name = estimator_name if canned else "<canned class>"
    v1_saved = any(_V1_SLOT_RE.search(n) for n in saved)
    keras_saved = any(_KERAS_SLOT_RE.match(n) for n in saved)
    if v1_saved and any(_KERAS_SLOT_RE.match(n) for n in missing):
        return (" Its optimizer slots (e.g. '<variable>/Adagrad', '<variable>/t_0/"
                "Adagrad') are those of TF 1.x's tf.estimator / tf.compat.v1.estimator "
                "canned estimators: open it with the v1 flavor, "
                f"estimator_lite.compat.v1.{name}.")
    if keras_saved and any(_V1_SLOT_RE.search(n) for n in missing):
        return (" Its optimizer slots ('training/<Optimizer>/...') are those of TF 2.x's "
                "tf.estimator canned estimators: open it with the TF2 flavor, "
                f"estimator_lite.{name}.")
    return ""


class CheckpointLacksVariablesError(ValueError, tf.errors.NotFoundError):
    """A checkpoint lacks variables the model needs: a ValueError saying so, and the
    `tf.errors.NotFoundError` tf.estimator's restore raised (tfgan's tests catch it).
    """

    def __init__(self, message):
        tf.errors.NotFoundError.__init__(self, None, None, message)
        self.args = (message,)


class CheckpointMismatchError(ValueError, tf.errors.InvalidArgumentError):
    """A checkpoint variable has another shape or dtype than the model's: a
    ValueError saying so, and the `tf.errors.InvalidArgumentError` tf.estimator's
    restore raised."""

    def __init__(self, message):
        tf.errors.InvalidArgumentError.__init__(self, None, None, message)
        self.args = (message,)


def check_checkpoint_matches(checkpoint_path, variables, model_dir, require_all=True,
                             estimator_name=None):
    """Checks that a checkpoint holds these variables with the same shapes and dtypes.

    Run before restoring, so that a different model (or a model_dir written by the
    other flavor of the canned estimators) pointed at an existing model_dir fails
    before anything is written there, instead of a raw NotFoundError mid-restore.

    Args:
      checkpoint_path: the checkpoint about to be restored.
      variables: the graph's variables the Saver restores.
      model_dir: for the message.
      require_all: whether every variable must be in the checkpoint (False when a
        user's own Saver decides what is restored).
      estimator_name: the estimator's class name, for the hint in the message.

    Raises:
      CheckpointLacksVariablesError: (a ValueError and a tf.errors.NotFoundError) a
        variable is missing from the checkpoint (names the model_dir, a few missing
        names and, when the names show it, which class to use).
      CheckpointMismatchError: (a ValueError and a tf.errors.InvalidArgumentError)
        a variable in both has another shape or dtype (names the variable, both
        shapes or dtypes and the model_dir).
    """
    reader = tf.train.NewCheckpointReader(checkpoint_path)
    shapes = reader.get_variable_to_shape_map()
    dtypes = reader.get_variable_to_dtype_map()
    missing = []
    for variable in variables:
        name, graph_shape = _checkpoint_name_and_shape(variable)
        if name not in shapes:
            if name not in missing:
                missing.append(name)
            continue
        if _shapes_differ(list(shapes[name]), graph_shape):
            raise CheckpointMismatchError(
                f"variable {name!r} has shape {graph_shape} in the model but "
                f"{list(shapes[name])} in checkpoint {checkpoint_path!r}: model_dir "
                f"{model_dir!r} holds a different model; use another model_dir (or "
                "estimator_lite.fresh_start to clear it)")
        graph_dtype = variable.dtype.base_dtype
        if dtypes[name].base_dtype != graph_dtype:
            raise CheckpointMismatchError(
                f"variable {name!r} has dtype {graph_dtype.name} in the model but "
                f"{dtypes[name].name} in checkpoint {checkpoint_path!r}: model_dir "
                f"{model_dir!r} holds a different model")
    if missing and require_all:
        shown = ", ".join(repr(n) for n in sorted(missing)[:_MISSING_SHOWN])
        more = (f" and {len(missing) - _MISSING_SHOWN} more"
                if len(missing) > _MISSING_SHOWN else "")
        raise CheckpointLacksVariablesError(
            f"model_dir {model_dir!r} holds a different model: checkpoint "
            f"{checkpoint_path!r} lacks {len(missing)} variable(s) this model needs: "
            f"{shown}{more}.{_flavor_hint(missing, shapes, estimator_name)} Otherwise "
            "use another model_dir (or estimator_lite.fresh_start to clear it).")


def checkpoint_step(checkpoint_path):
    """The global step stored in a checkpoint.

    With asynchronous workers a checkpoint's file name (the chief's last seen step)
    can lag the step saved inside it, and evaluations report the stored one, so that
    is the step to compare. Falls back to the file name's ``-<step>`` suffix only
    when the checkpoint has no readable global step.

    Raises:
      ValueError: neither the checkpoint nor its name gives a step.
    """
    if checkpoint_exists(checkpoint_path):
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
