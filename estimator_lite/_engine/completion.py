"""Completion markers in model_dir, so every role knows when training is over.

TF Estimator's ps tasks `join()` forever and its evaluator cannot tell the final
checkpoint when `max_steps` is None. Here the chief writes
``<model_dir>/training_complete.json`` after its last checkpoint, and each worker
writes ``<model_dir>/workers_done/worker-<i>.json`` when it stops; ps tasks and the
evaluator poll for them. Files are written to a temp name and renamed, so a reader
never sees half a marker (this works on local disks and on GCS/HDFS through gfile).
"""

import os

from estimator_lite._engine import model_dir as model_dir_lib
from estimator_lite._engine.json_file import read_json, write_json
from estimator_lite._tf import tf

__all__ = ["TrainingComplete", "write_training_complete", "read_training_complete",
           "clear_markers", "write_worker_done", "workers_done", "CompletionWatcher"]


class TrainingComplete:
    """What the chief's marker says: the final step and the max_steps it trained to."""

    def __init__(self, global_step, max_steps, time_secs):
        self.global_step = global_step
        self.max_steps = max_steps
        self.time_secs = time_secs

    def matches(self, max_steps):
        """Whether the marker belongs to a run with this `max_steps`."""
        return self.max_steps == max_steps

    def __repr__(self):
        return (f"TrainingComplete(global_step={self.global_step}, "
                f"max_steps={self.max_steps})")


def write_training_complete(model_dir, global_step, max_steps, time_secs):
    """Marks training as complete at `global_step` (called by the chief).

    A `global_step` of None (the last checkpoint's step could not be read) still
    ends the other roles; the evaluator then treats the newest checkpoint as final.
    """
    tf.io.gfile.makedirs(model_dir)
    write_json(model_dir_lib.training_complete_path(model_dir), {
        "global_step": None if global_step is None else int(global_step),
        "max_steps": max_steps,
        "time_secs": float(time_secs)})


def read_training_complete(model_dir):
    """Returns the chief's TrainingComplete marker, or None if there is none."""
    payload = read_json(model_dir_lib.training_complete_path(model_dir))
    if payload is None:
        return None
    return TrainingComplete(payload["global_step"], payload["max_steps"],
                            payload["time_secs"])


def clear_markers(model_dir):
    """Removes this module's markers (only those files) before a new run."""
    chief = model_dir_lib.training_complete_path(model_dir)
    if tf.io.gfile.exists(chief):
        tf.io.gfile.remove(chief)
    workers = model_dir_lib.workers_done_dir(model_dir)
    if tf.io.gfile.isdir(workers):
        for name in tf.io.gfile.listdir(workers):
            if model_dir_lib.parse_worker_done_file(name) is not None:
                tf.io.gfile.remove(os.path.join(workers, name))


def write_worker_done(model_dir, task_id, global_step):
    """Marks worker `task_id` as stopped (called by each worker)."""
    tf.io.gfile.makedirs(model_dir_lib.workers_done_dir(model_dir))
    write_json(model_dir_lib.worker_done_file(model_dir, task_id),
               {"global_step": int(global_step)})


def workers_done(model_dir):
    """Returns the set of worker indices that have marked themselves done."""
    workers = model_dir_lib.workers_done_dir(model_dir)
    if not tf.io.gfile.isdir(workers):
        return set()
    indices = (model_dir_lib.parse_worker_done_file(name)
               for name in tf.io.gfile.listdir(workers))
    return {index for index in indices if index is not None}


class CompletionWatcher:
    """Tells a ps task or the evaluator when the chief has finished this run.

    A marker left by an earlier run must not end a new one, and a role started
    after the run ended (a restarted pod) must still end. A marker counts when
    - the watcher saw the file absent before (the new chief clears it at start), or
      it was written after the watcher started: it is this run's; or
    - it says the run reached this run's `max_steps`: no run with the same
      `max_steps` can train past it, so whichever run wrote it, training is over; or
    - it was already there and stayed unchanged for `grace_secs`: a new run's chief
      would have cleared it by then (only needed when max_steps is None).
    """

    def __init__(self, model_dir, max_steps, clock, grace_secs=60):
        """Args: model_dir; the run's max_steps; clock, a no-argument time source;
        grace_secs, how long an old marker must stay before it is believed."""
        self._model_dir = model_dir
        self._max_steps = max_steps
        self._clock = clock
        self._grace_secs = grace_secs
        self._start_secs = clock()
        self._seen_absent = False
        self._first_seen = None  # (marker time, clock) of a pre-existing marker
        self.poll()  # the grace period of a pre-existing marker starts now

    def poll(self):
        """Returns the TrainingComplete marker of this run, or None."""
        marker = read_training_complete(self._model_dir)
        if marker is None:
            self._seen_absent = True
            self._first_seen = None
            return None
        if not marker.matches(self._max_steps):
            return None
        if self._seen_absent or marker.time_secs >= self._start_secs:
            return marker
        if (self._max_steps is not None and marker.global_step is not None
                and marker.global_step >= self._max_steps):
            return marker
        return marker if self._old_marker_settled(marker) else None

    def _old_marker_settled(self, marker):
        if self._first_seen is None or self._first_seen[0] != marker.time_secs:
            self._first_seen = (marker.time_secs, self._clock())
        return self._clock() - self._first_seen[1] >= self._grace_secs
