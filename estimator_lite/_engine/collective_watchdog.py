"""Collective jobs (MultiWorkerMirroredStrategy) end by themselves when a peer is lost.

Every training step of a collective job all-reduces with every other worker. When
one worker dies, the others wait inside that all-reduce forever (the graph-mode
collective ops TensorFlow builds for MultiWorkerMirroredStrategy carry no
timeout), and once a collective failed in a process, nothing in that process can
run collectives again: the session cannot be recreated, the program must restart.

So a worker of a collective job:

* runs a watchdog thread that, while a step (or session creation) is running
  longer than a few seconds, probes the peers' addresses from the cluster spec;
  a peer that does not accept connections twice in a row, a peer whose server
  answers with another incarnation than when the collectives were formed (it was
  restarted: it can never join them; `peer_incarnation`), or a step that ran
  longer than the bound (`RunConfig.experimental_collective_timeout_secs`;
  session creation and the first step: `session_creation_timeout_secs`, since
  peers may still be starting), ends the process: it logs which task was lost
  and the newest checkpoint, then exits with `EXIT_CODE` (the main thread is
  blocked inside TensorFlow, so only `os._exit` can end it);
* treats a failed step or session creation (Aborted, Unavailable, a peer's
  restart seen as an incarnation mismatch) as the end of this process rather
  than recreating the session (`lost_error`).

The orchestrator then restarts the job, which resumes from the newest checkpoint.
"""

import contextlib
import os
import socket
import sys
import threading
import time

from estimator_lite._engine import model_dir as model_dir_lib
from estimator_lite._engine import peer_incarnation, roles
from estimator_lite._tf import logging, tf

__all__ = ["EXIT_CODE", "CollectiveWatchdog", "for_config", "is_collective_loss",
           "lost_error", "peers"]

EXIT_CODE = 1
# A step waiting this long starts the probes (steps are far shorter; a worker also
# waits out the chief's checkpoint save in its next step, with the chief answering).
_PROBE_AFTER_SECS = 5.0
_POLL_SECS = 1.0
_CONNECT_TIMEOUT_SECS = 1.0
# Consecutive failed probes of one peer that mean it is gone (not a slow accept).
_MISSES_TO_LOSE = 2
_LOSS_ERRORS = (tf.errors.AbortedError, tf.errors.UnavailableError,
                tf.errors.DeadlineExceededError, tf.errors.CancelledError)


def peers(cluster_spec, task_type, task_id):
    """The other trainers of a collective job: [(label, 'host:port')].

    Args:
      cluster_spec: a tf.train.ClusterSpec (or None).
      task_type / task_id: this task.
    """
    if cluster_spec is None:
        return []
    jobs = cluster_spec.as_dict()
    result = []
    for job in (roles.CHIEF, roles.WORKER):
        tasks = jobs.get(job, [])
        items = tasks.items() if isinstance(tasks, dict) else enumerate(tasks)
        for index, address in sorted(items):
            if (job, int(index)) != (task_type, task_id):
                result.append((f"{job} {index}", address))
    return result


def _reachable(address):
    """Whether `host:port` accepts a TCP connection now."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)),
                                      timeout=_CONNECT_TIMEOUT_SECS):
            return True
    except (OSError, ValueError):
        return False


def _newest_checkpoint(checkpoint_dir):
    """'<path> (global step N)' of the newest checkpoint, or a note that none exists."""
    try:
        latest = model_dir_lib.latest_checkpoint(checkpoint_dir) if checkpoint_dir else None
    except tf.errors.OpError:
        latest = None
    if latest is None:
        return "no checkpoint yet (a restart starts from scratch)"
    return (f"{latest} (global step {model_dir_lib.checkpoint_step(latest)}), which a "
            "restart of the job resumes from")


def is_collective_loss(error):
    """Whether a step's or session creation's error means a peer (or this task's
    collectives) was lost: the errors a dead or restarted peer gives."""
    if isinstance(error, _LOSS_ERRORS):
        return True
    return (isinstance(error, tf.errors.FailedPreconditionError)
            and "incarnation" in str(error))


def lost_error(error, peer_list, checkpoint_dir, task):
    """The error to end this task with after a collective failure.

    Returns:
      An error of `error`'s type whose message names the unreachable peers, the
      newest checkpoint and what to do, followed by the original message.
    """
    lost = [f"{label} ({address})" for label, address in peer_list
            if not _reachable(address)]
    message = (f"{task} of a MultiWorkerMirroredStrategy job lost its collectives "
               f"({type(error).__name__}): {_who(lost)}. Collectives cannot be resumed "
               "in this process, so it ends instead of recreating its session; restart "
               f"every worker of the job. Newest checkpoint: "
               f"{_newest_checkpoint(checkpoint_dir)}. Original error: "
               f"{str(error).splitlines()[0] if str(error) else ''}")
    logging.error("%s", message)
    return type(error)(getattr(error, "node_def", None), getattr(error, "op", None),
                       message)


def for_config(config, checkpoint_dir, start_timeout_secs):
    """The watchdog of a collective job's trainer, or None when it has no peers.

    Args:
      config: the RunConfig (cluster spec, task, `experimental_collective_timeout_secs`).
      checkpoint_dir: the model_dir.
      start_timeout_secs: the bound of session creation and the first step.
    """
    peer_list = peers(config.cluster_spec, config.task_type, config.task_id)
    if not peer_list:
        return None  # one worker: its collectives are all local
    return CollectiveWatchdog(
        peer_list, f"{config.task_type} {config.task_id}", checkpoint_dir,
        getattr(config, "experimental_collective_timeout_secs", None),
        start_timeout_secs)


def _who(lost):
    if lost:
        return "lost " + ", ".join(lost) + " (not answering at its address)"
    return ("every peer answers at its address, so a task of the job was restarted "
            "(a restarted task cannot join collectives begun with its previous "
            "incarnation)")


class CollectiveWatchdog:
    """Ends the process when a watched call waits on lost peers.

    `watch(fn, first)` returns fn wrapped so that, while it runs, the watchdog
    thread probes the peers and enforces the bound; nothing runs between calls.
    """

    def __init__(self, peer_list, task, checkpoint_dir, step_timeout_secs,
                 start_timeout_secs, clock=time.monotonic, exit_fn=os._exit,
                 reachable=_reachable, poll_secs=_POLL_SECS,
                 probe_after_secs=_PROBE_AFTER_SECS,
                 incarnation=peer_incarnation.incarnation):
        """Prepares the watchdog (its thread starts with `start`).

        Args:
          peer_list: [(label, 'host:port')] of the other trainers (`peers`).
          task: this task, for messages (e.g. "worker 0").
          checkpoint_dir: the model_dir, to name the newest checkpoint.
          step_timeout_secs: the longest a step may run (None: no bound).
          start_timeout_secs: the longest session creation and the first step may
            run (None or inf: no bound).
          clock, exit_fn, reachable, poll_secs, probe_after_secs, incarnation:
            injectable (`incarnation(address)` answers a peer's incarnation ids,
            or None when unknown).
        """
        self._peers = list(peer_list)
        self._task = task
        self._checkpoint_dir = checkpoint_dir
        self._step_timeout = step_timeout_secs
        self._start_timeout = start_timeout_secs
        self._clock = clock
        self._exit_fn = exit_fn
        self._reachable = reachable
        self._poll_secs = poll_secs
        self._probe_after = probe_after_secs
        self._incarnation = incarnation
        # Each peer's incarnation once a call succeeded (the collectives are formed
        # with it); read by the thread, so a dead peer never blocks a step.
        self._formed = False
        self._known = {}
        # (start time, what, bound, probe for losses) of the running call, or None.
        self._running = None
        self._misses = {}
        self._stop = threading.Event()
        self._thread = None

    peer_list = property(lambda self: list(self._peers))
    task = property(lambda self: self._task)
    checkpoint_dir = property(lambda self: self._checkpoint_dir)

    def start(self):
        """Starts the watchdog thread (a daemon: it never keeps the process alive)."""
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, daemon=True,
                                            name="estimator_lite-collective-watchdog")
            self._thread.start()

    def stop(self):
        """Stops the watchdog thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def watch(self, fn, what, first=False):
        """fn wrapped: while it runs, a lost peer or the bound ends the process.

        Args:
          fn: the call (a step, session creation).
          what: its name, for messages.
          first: session creation or the first step after it (peers may still be
            starting: only `start_timeout_secs` applies, no probes).
        """
        def watched(*args):
            bound = self._start_timeout if first else self._step_timeout
            self._running = (self._clock(), what, bound, not first)
            try:
                result = fn(*args)
            finally:
                self._running = None
                self._misses.clear()
            self._formed = True
            return result
        return watched

    def _loop(self):
        while not self._stop.wait(self._poll_secs):
            self.check()

    def check(self):
        """One look at the running call (the thread's loop; callable in tests)."""
        running = self._running
        if self._formed and len(self._known) < len(self._peers):
            self._learn_incarnations()
        if running is None:
            return
        started, what, bound, probe = running
        elapsed = self._clock() - started
        if probe and elapsed >= self._probe_after:
            lost = self._probe()
            if lost:
                self._end(what, elapsed, "a peer stopped answering or was restarted: "
                          "lost " + ", ".join(lost))
                return
        if bound is not None and elapsed >= bound:
            self._end(what, elapsed, f"the {what} ran past its {bound:g} s bound; " +
                      _who(self._unreachable()))

    def _learn_incarnations(self):
        for label, address in self._peers:
            if label not in self._known:
                answer = self._incarnation(address)
                if answer is not None:
                    self._known[label] = answer

    def _restarted(self, label, address):
        """Whether the peer now answers with another incarnation than it had."""
        known = self._known.get(label)
        if known is None:
            return False
        answer = self._incarnation(address)
        return answer is not None and answer != known

    def _probe(self):
        """The peers that failed `_MISSES_TO_LOSE` probes in a row, or that answer
        as a new incarnation (at once: a restart is certain, not a slow accept)."""
        lost = []
        for label, address in self._peers:
            if self._reachable(address):
                self._misses.pop(label, None)
                if self._restarted(label, address):
                    lost.append(f"{label} ({address}), which was restarted: it answers "
                                "as a new incarnation, which cannot join the collectives "
                                "formed with its previous one")
                continue
            self._misses[label] = self._misses.get(label, 0) + 1
            if self._misses[label] >= _MISSES_TO_LOSE:
                lost.append(f"{label} ({address})")
        return lost

    def _unreachable(self):
        return [f"{label} ({address})" for label, address in self._peers
                if not self._reachable(address)]

    def _end(self, what, elapsed, cause):
        logging.error(
            "%s of a MultiWorkerMirroredStrategy job, %.0f s into its %s: %s. "
            "Collectives cannot be resumed in this process: exiting with code %d so "
            "that the job is restarted (every worker). Newest checkpoint: %s.",
            self._task, elapsed, what, cause, EXIT_CODE,
            _newest_checkpoint(self._checkpoint_dir))
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        self._exit_fn(EXIT_CODE)
