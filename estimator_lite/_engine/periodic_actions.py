"""What the training loop does periodically, one small object per concern.

As CLU's periodic actions: the loop owns the session and the step; each action
says which extra tensors it needs on the coming step and does its work with the
results. Only the chief saves checkpoints and writes summaries.

| object           | concern                                                      |
| ---------------- | ------------------------------------------------------------ |
| `CheckpointSaver`| save every N steps / secs, listeners around each save, final save |
| `TrainSummaries` | merged summaries every N steps; the event file writer        |
| `ReportProgress` | step rate, examples/sec, `step N/T (P%)` and ETA every N steps |
| `StepActions`    | the task's step actions, as the training loop runs them      |

A step action (`TrainSummaries`, `ReportProgress`) has `fetches(next_step, extra)`
(add what the coming step must fetch to `extra`) and `after_step(step, results)`.
When no action and no hook asks for anything, the loop keeps its one-callable
fast path.
"""

import datetime
import os
import time

import numpy as np

from estimator_lite._engine import model_dir
from estimator_lite._engine.atomic_file import write_atomic
from estimator_lite._engine.event_files import new_summary_writer, scalar_summary
from estimator_lite._engine.graph_text import graph_def_text
from estimator_lite._engine.timer import Timer
from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import logging, tf

__all__ = ["NOT_RESTORED", "CheckpointPolicy", "CheckpointSaver", "TrainSummaries",
           "ReportProgress", "StepActions", "add_default_saver", "remove_checkpoint_temps",
           "restoring_saver"]

# Graph collection of global variables that checkpoints save but a restore leaves
# at their initial values (the early-stopping flag: saved as tf.estimator saves it,
# but restored as True it would stop a resumed run's workers at once). Its key is
# not a string, so a MetaGraphDef never lists it (tf.estimator's have no such key).
NOT_RESTORED = ("estimator_lite", "not_restored")
# The `_RestoreExcept` of the Estimator's Saver, when NOT_RESTORED is not empty.
_RESTORERS = ("estimator_lite", "restorers")


def add_default_saver(scaffold, max_to_keep, keep_checkpoint_every_n_hours):
    """Adds the checkpoint Saver unless the model_fn brought its own.

    Called once the graph is complete (after the hooks' begin()), so variables
    that hooks create are saved too; those in NOT_RESTORED get a second Saver for
    restoring everything else (see `restoring_saver`).
    """
    if scaffold.saver is not None or tf.get_collection(tf.GraphKeys.SAVERS):
        return
    var_list = tf.global_variables() + tf.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS)
    saver = tf.train.Saver(
        var_list=var_list, sharded=True, max_to_keep=max_to_keep,
        keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
        save_relative_paths=True)
    tf.add_to_collection(tf.GraphKeys.SAVERS, saver)
    listed = {id(v) for v in var_list}
    not_restored = [v for v in tf.get_collection(NOT_RESTORED) if id(v) in listed]
    if not_restored:
        skipped = {id(v) for v in not_restored}
        # Only graphs with such a variable get these ops: the others keep
        # tf.estimator's graph.
        with tf.name_scope("restore_except_flags"):
            restorer = _RestoreExcept(
                saver, tf.train.Saver([v for v in var_list if id(v) not in skipped],
                                      sharded=True),
                tf.variables_initializer(not_restored, name="reset_flags"))
        tf.add_to_collection(_RESTORERS, restorer)


def restoring_saver(saver):
    """What restores a checkpoint for `saver`: the Estimator's Saver restores all but
    the NOT_RESTORED variables (given to SessionManager in its place); any other
    Saver restores itself."""
    for restorer in tf.get_collection(_RESTORERS):
        if restorer.saver is saver:
            return restorer
    return saver


class _RestoreExcept:
    """Restores a checkpoint of `saver` except the NOT_RESTORED variables, which
    start from their initial values; they are uninitialised until then, so no other
    task sees the model ready with a restored value.

    Has what SessionManager calls on a Saver when it restores: `restore` and
    `recover_last_checkpoints` (the Saver's, which deletes old checkpoints).
    """

    def __init__(self, saver, restore_saver, reset):
        """Args: saver: the Estimator's Saver; restore_saver: a Saver of its other
        variables; reset: the op initialising the NOT_RESTORED ones."""
        self.saver = saver
        self._restore_saver = restore_saver
        self._reset = reset

    def restore(self, sess, save_path):
        """Restores `save_path` into `sess`, then resets the NOT_RESTORED variables
        (a checkpoint without them restores too)."""
        self._restore_saver.restore(sess, save_path)
        sess.run(self._reset)

    def recover_last_checkpoints(self, checkpoint_paths):
        """The Estimator's Saver takes over the checkpoints to keep."""
        self.saver.recover_last_checkpoints(checkpoint_paths)


def remove_checkpoint_temps(checkpoint_dir):
    """Removes the temp dirs of sharded saves that did not finish (killed, or a
    full disk).

    Only the chief saves into checkpoint_dir; it calls this before it saves and
    after a save failed.
    """
    if not tf.io.gfile.isdir(checkpoint_dir):
        return
    for name in tf.io.gfile.listdir(checkpoint_dir):
        path = os.path.join(checkpoint_dir, name.rstrip("/"))
        if model_dir.is_checkpoint_temp(name) and tf.io.gfile.isdir(path):
            logging.warning("Removing %s, left by a checkpoint save that did not "
                            "finish.", path)
            tf.io.gfile.rmtree(path)


def _root_cause(error):
    """The first line of the innermost TensorFlow error message in `error`'s chain
    (the Saver re-raises a bare "No space left on device" after an op trace)."""
    cause = error
    while isinstance(cause.__context__, tf.errors.OpError):
        cause = cause.__context__
    lines = [line.strip() for line in str(cause.message).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def _same_class(error, message):
    """A TensorFlow error of `error`'s class (and code) saying `message`."""
    if type(error) is tf.errors.OpError:  # the base class also takes the code
        return tf.errors.OpError(error.node_def, None, message, error.error_code)
    return type(error)(error.node_def, None, message)


class CheckpointPolicy:
    """When and where the chief saves checkpoints.

    Attributes:
      checkpoint_dir: directory of `model.ckpt-<step>` files.
      save_steps: save every this many global steps, or None.
      save_secs: save every this many seconds, or None.
      listeners: CheckpointSaverListeners called around each save.
      save_graph_def: whether each save also writes the MetaGraphDef.
      estimator_name: the estimator's class name, for the hint of a checkpoint
        that does not fit the graph.
    """

    def __init__(self, checkpoint_dir, save_steps=None, save_secs=None, listeners=(),
                 save_graph_def=True, estimator_name=None):
        self.checkpoint_dir = checkpoint_dir
        self.estimator_name = estimator_name
        self.save_steps = save_steps
        self.save_secs = save_secs
        self.listeners = tuple(listeners)
        self.save_graph_def = save_graph_def

    @property
    def enabled(self):
        """Whether periodic saving is on (no saves at all when both are None)."""
        return bool(self.save_steps or self.save_secs)


class CheckpointSaver:
    """Saves checkpoints on the policy's schedule, with the listeners around each save.

    Built from a CheckpointPolicy (the chief), or from None (another task: never
    saves, restores nothing).
    """

    def __init__(self, policy=None, clock=time.time):
        """Args: policy: a CheckpointPolicy or None; clock: time source."""
        self._policy = policy
        self._timer = (Timer(policy.save_steps, policy.save_secs, clock) if policy
                       else Timer())
        self._graph_written = False
        # The last .meta file TensorFlow exported, to write again while it is current.
        self._meta_graph = None

    @property
    def checkpoint_dir(self):
        """Where checkpoints are restored from and saved to, or None."""
        return self._policy.checkpoint_dir if self._policy else None

    @property
    def estimator_name(self):
        """The estimator's class name (for a mismatched checkpoint's hint), or None."""
        return self._policy.estimator_name if self._policy else None

    @property
    def enabled(self):
        """Whether this task saves checkpoints."""
        return self._policy is not None and self._policy.enabled

    def _listeners(self):
        return self._policy.listeners if self._policy else ()

    def begin(self):
        """Calls every listener's begin() (once, while the graph can still change)."""
        for listener in self._listeners():
            listener.begin()

    def due(self, step):
        """Whether a periodic save is due at global step `step`."""
        return self._timer.due(step)

    def save(self, session, saver, step):
        """Saves a checkpoint of `step`; returns True when a listener asks to stop."""
        policy = self._policy
        if policy.save_graph_def and not self._graph_written:
            self._write_graph(session.graph)
        for listener in policy.listeners:
            listener.before_save(session, _step_value(step))
        prefix = model_dir.checkpoint_prefix(policy.checkpoint_dir)
        try:
            path = self._save_with_meta_graph(session, saver, prefix, step)
        except tf.errors.OpError as error:
            # The disk is full (ENOSPC: ResourceExhaustedError), a file-size limit
            # is hit (EFBIG: OutOfRangeError), the directory became read-only or
            # vanished...: say where first, clean up the half-written shards, keep
            # TensorFlow's class for `except` clauses. TensorFlow's own report is
            # an op-creation trace with the path at its end; its one meaningful
            # line is kept in the message.
            remove_checkpoint_temps(policy.checkpoint_dir)
            raise _same_class(error, f"could not save checkpoint {prefix}-{step} in "
                              f"model_dir {policy.checkpoint_dir}: "
                              f"{_root_cause(error)}") from None
        logging.info("Saved checkpoint for step %d: %s", step, path)
        self._timer.mark(step)
        stop = False
        for listener in policy.listeners:
            if listener.after_save(session, _step_value(step)):
                logging.info("A CheckpointSaverListener requested to stop training.")
                stop = True
        return stop

    def _save_with_meta_graph(self, session, saver, prefix, step):
        """`saver.save`, with the `.meta` file beside each checkpoint if asked.

        The graph is finalized, but its collections are not: a listener's
        before_save/after_save can still change them (`get_collection_ref`), and
        TensorFlow's Saver exports the MetaGraphDef anew at every save. Exporting
        costs about 7 ms for a small model's graph, so it is exported again only
        when the Saver or a collection changed since the last export; otherwise
        the last export's bytes are written again, through a temp file and a rename.
        """
        if not self._policy.save_graph_def:
            return saver.save(session, prefix, global_step=step, write_meta_graph=False)
        collections = _collections(session.graph)
        cached = self._meta_graph is not None and self._meta_graph.matches(saver,
                                                                           collections)
        path = saver.save(session, prefix, global_step=step, write_meta_graph=not cached)
        meta_path = f"{path}.meta"
        if cached:
            write_atomic(meta_path, self._meta_graph.data)
        else:
            with tf.io.gfile.GFile(meta_path, "rb") as f:
                self._meta_graph = _ExportedMetaGraph(saver, collections, f.read())
        return path

    def _write_graph(self, graph):
        """Writes `graph.pbtxt` beside the checkpoints, once per training run (as
        tf.estimator's CheckpointSaverHook does when its session is created):
        tools such as TensorBoard's graph view and users' scripts read it."""
        directory = self._policy.checkpoint_dir
        tf.io.gfile.makedirs(directory)
        write_atomic(os.path.join(directory, model_dir.GRAPH_FILE),
                     graph_def_text(graph.as_graph_def(add_shapes=True)))
        self._graph_written = True

    def saved_at(self, step):
        """Whether the last save was of `step`."""
        return self._timer.last_step == step

    def end(self, session, step):
        """Calls every listener's end() once training is over."""
        if self.enabled:
            for listener in self._listeners():
                listener.end(session, _step_value(step))


def _step_value(step):
    """The global step as listeners get it: tf.estimator's CheckpointSaverHook
    reads it with session.run, so a numpy.int64 (code may call `.item()` on it)."""
    return np.int64(step)


def _collections(graph):
    """{key: tuple of items} of the collections a MetaGraphDef exports (those with
    string keys), copied so that later changes to them show."""
    return {key: tuple(graph.get_collection_ref(key))
            for key in graph.get_all_collection_keys()}


class _ExportedMetaGraph:
    """A `.meta` file TensorFlow exported: its bytes, and what they were made of."""

    def __init__(self, saver, collections, data):
        """Args: saver: the Saver that exported it; collections: `_collections` of
        the graph then; data: the file's bytes."""
        self.saver = saver
        self.collections = collections
        self.data = data

    def matches(self, saver, collections):
        """Whether exporting for `saver` with `collections` would give the same bytes.

        Items are compared by identity: comparing a Tensor or Variable with `==`
        would build an op (the graph is finalized); an equal but new item (a string
        appended again) only costs one export more.
        """
        if saver is not self.saver or collections.keys() != self.collections.keys():
            return False
        for key, items in collections.items():
            exported = self.collections[key]
            if len(items) != len(exported) or any(
                    a is not b for a, b in zip_strict(items, exported)):
                return False
        return True


class TrainSummaries:
    """Writes the graph's merged summaries every `save_summary_steps` global steps.

    Also the one event file writer of training: `ReportProgress` adds its
    scalars through `add_scalars`.
    """

    def __init__(self, summary_dir, save_summary_steps, loss):
        """Adds a 'loss' scalar summary and merges every summary of the graph so far.

        Args:
          summary_dir: where the event file goes, or None (no summaries).
          save_summary_steps: summary period in steps (None/0 disables the
            merged summaries; the writer still takes progress scalars).
          loss: the scalar loss tensor.
        """
        self._summary_dir = summary_dir
        self._timer = Timer(save_summary_steps if summary_dir else None)
        self._op = None
        if self._timer.enabled:
            # A head's TRAIN spec already summarizes 'loss' (tf.estimator adds none
            # then either).
            if not any(summary.op.name == "loss"
                       for summary in tf.get_collection(tf.GraphKeys.SUMMARIES)):
                tf.summary.scalar("loss", loss)
            self._op = tf.summary.merge_all()
        self._writer = None

    def open(self, graph):
        """Opens the event file (with the graph); call once the session exists."""
        if self._summary_dir and self._writer is None:
            self._writer = new_summary_writer(self._summary_dir, graph=graph)

    def close(self):
        if self._writer is not None:
            self._writer.close()

    def fetches(self, next_step, extra):
        if self._op is not None and self._timer.due(next_step):
            extra["summary"] = self._op

    def after_step(self, step, results):
        if "summary" in results:
            self._writer.add_summary(results["summary"], step)
            self._timer.mark(step)

    def add_scalars(self, values, step):
        """Writes {tag: number} at `step` when the event file is open."""
        if self._writer is not None:
            self._writer.add_summary(scalar_summary(values), step)


class ReportProgress:
    """Logs loss, step rate, progress and ETA every `every_steps` global steps.

    `step N/T (P%)` and the ETA appear once the target step is known; the rate
    (and examples/sec with a known batch size) also goes to the summaries.
    """

    def __init__(self, every_steps, loss, examples_per_step=None, summaries=None,
                 clock=time.time):
        """Args: every_steps: log period (None/0 disables); loss: the loss tensor
        fetched on log steps; examples_per_step: batch size, when known;
        summaries: a TrainSummaries for the rate scalars, or None; clock: time."""
        self._timer = Timer(every_steps)
        self._loss = loss
        self._examples_per_step = examples_per_step
        self._summaries = summaries
        self._clock = clock
        self._rate_start = None
        self._target_step = None

    def start(self, step, target_step_fn=None):
        """(Re)starts the rate at `step`; asks `target_step_fn` once for the target."""
        self._rate_start = (step, self._clock())
        self._timer.mark(step)
        if self._target_step is None and target_step_fn is not None:
            self._target_step = target_step_fn(step)

    def fetches(self, next_step, extra):
        if self._timer.due(next_step):
            extra["loss"] = self._loss

    def after_step(self, step, results):
        if "loss" in results:
            self._report(step, results["loss"])

    def _report(self, step, loss):
        now = self._clock()
        start_step, start_time = self._rate_start
        elapsed = now - start_time
        rate = (step - start_step) / elapsed if elapsed > 0 else float("nan")
        values = {"global_step/sec": rate}
        speed = f"{rate:.1f} steps/sec"
        if self._examples_per_step:
            values["examples/sec"] = rate * self._examples_per_step
            speed += f", {values['examples/sec']:.0f} examples/sec"
        logging.info("%s: loss = %.6g (%s)%s", self._progress(step), loss, speed,
                     self._eta(step, rate))
        if self._summaries is not None and elapsed > 0:
            self._summaries.add_scalars(values, step)
        self._rate_start = (step, now)
        self._timer.mark(step)

    def _progress(self, step):
        """'step N', or 'step N/T (P%)' when the target step is known."""
        target = self._target_step
        if not target:
            return f"step {step}"
        return f"step {step}/{target} ({100 * step // target}%)"

    def _eta(self, step, rate):
        """', ETA h:mm:ss' from the recent rate when the target step is known."""
        target = self._target_step
        if not target or not rate > 0:
            return ""
        remaining_secs = max(0, target - step) / rate
        return f", ETA {datetime.timedelta(seconds=round(remaining_secs))}"


class StepActions:
    """The step actions of a task (its summaries and its progress log, each optional),
    as the training loop runs them: fetches before a step, results after it."""

    def __init__(self, summaries=None, progress=None):
        """Args: summaries: a TrainSummaries, or None; progress: a ReportProgress,
        or None."""
        self._summaries = summaries
        self._progress = progress
        # In fetch order; their bound `fetches` methods are kept so the per-step
        # check is one call each.
        self._actions = tuple(a for a in (summaries, progress) if a is not None)
        self._fetch_fns = tuple(a.fetches for a in self._actions)

    def open(self, graph):
        """Opens the summaries' event file; call once the session exists."""
        if self._summaries is not None:
            self._summaries.open(graph)

    def start(self, step, target_step_fn):
        """(Re)starts the progress log at `step` (see `ReportProgress.start`)."""
        if self._progress is not None:
            self._progress.start(step, target_step_fn)

    def fetches(self, next_step):
        """{key: tensor} the actions fetch on the step that ends at `next_step`."""
        extra = {}
        for fetches in self._fetch_fns:
            fetches(next_step, extra)
        return extra

    def after_step(self, step, results):
        """Gives every action the results of a step that fetched for them."""
        for action in self._actions:
            action.after_step(step, results)

    def close(self):
        """Closes the summaries' event file."""
        if self._summaries is not None:
            self._summaries.close()
