"""The launcher's restart policy: which roles to restart when one fails, and when to stop.

As torchrun's `--max-restarts`: a role that exits non-zero is restarted, at most
`max_restarts` times in the whole job (every restart counts, whichever role). A
ps-style job restarts the failed role alone: a worker rejoins, the chief
resumes from the newest checkpoint (or keeps the live model on the ps), a new ps
gets the newest checkpoint restored into it, the evaluator (a listener) goes on
with the newest checkpoint. A collective job (MultiWorkerMirroredStrategy: no ps)
restarts its whole worker group together, since collectives formed with a lost
process can never be rejoined. A role that exits 0 is never restarted for
itself. Nothing here imports TensorFlow (the launcher does not).
"""

import os
import re
import signal

__all__ = ["Decision", "RestartPolicy", "describe_exit", "newest_checkpoint"]

# The `checkpoint` state file's newest entry (a text protocol buffer).
_NEWEST = re.compile(r'^model_checkpoint_path:\s*"((?:[^"\\]|\\.)*)"', re.M)
_STEP = re.compile(r"-(\d+)$")


class Decision:
    """What the launcher does about failed roles.

    Attributes:
      restart: the labels of the roles to (stop and) start again, in plan order;
        empty when the job gives up.
      message: one line for the launcher's log.
      exit_code: the launcher's exit code when giving up (None when restarting).
    """

    def __init__(self, restart, message, exit_code=None):
        self.restart = tuple(restart)
        self.message = message
        self.exit_code = exit_code

    @property
    def gives_up(self):
        """Whether the job ends (no restart is left)."""
        return not self.restart


def describe_exit(code):
    """'exit code 3', or 'exit code -9 (SIGKILL)' for a process ended by a signal."""
    if code is not None and code < 0:
        try:
            return f"exit code {code} ({signal.Signals(-code).name})"
        except ValueError:
            pass
    return f"exit code {code}"


def newest_checkpoint(model_dir):
    """'<path> (global step N)' of model_dir's newest checkpoint, or why it is unknown.

    Reads the `checkpoint` state file as text (local model_dirs; a remote one is
    read by the roles themselves, so the launcher only names it).
    """
    if not model_dir:
        return "unknown (the launcher was given no --model-dir)"
    if "://" in model_dir:
        return f"the newest in {model_dir} (not read by the launcher)"
    try:
        with open(os.path.join(model_dir, "checkpoint"), encoding="utf-8") as f:
            found = _NEWEST.search(f.read())
    except OSError:
        found = None
    if found is None:
        return f"none yet in {model_dir} (the roles start from scratch)"
    path = found.group(1)
    if not os.path.isabs(path):
        path = os.path.join(model_dir, path)
    step = _STEP.search(path)
    return f"{path} (global step {step.group(1)})" if step else path


class RestartPolicy:
    """Counts restarts and decides, for each failure, what to restart."""

    def __init__(self, max_restarts, group=()):
        """Prepares the policy.

        Args:
          max_restarts: restarts allowed in the whole job (int >= 0; 0: a failure
            ends the job, as before restart policies).
          group: labels of the roles restarted together when any of them fails
            (a collective job's trainers); empty for a ps-style job.

        Raises:
          TypeError / ValueError: max_restarts is not an int >= 0.
        """
        if isinstance(max_restarts, bool) or not isinstance(max_restarts, int):
            raise TypeError(f"max_restarts must be an int, got {max_restarts!r}")
        if max_restarts < 0:
            raise ValueError(f"max_restarts must be >= 0, got {max_restarts}")
        self.max_restarts = max_restarts
        self.group = tuple(group)
        self.used = 0
        self.failures = {}

    def describe(self):
        """One line saying what the policy does."""
        if not self.max_restarts:
            return "restart policy: none (--max-restarts 0): a failed role ends the job"
        scope = (f"the worker group ({', '.join(self.group)}) restarts together when "
                 "one of them fails (a collective job: no ps)" if self.group else
                 "a failed role restarts alone")
        return (f"restart policy: up to {self.max_restarts} restarts in the job; "
                f"{scope}; the evaluator and ps restart alone")

    def on_failure(self, failed):
        """Decides what to do about roles that exited non-zero.

        Args:
          failed: [(label, exit code)] of the roles found failed at once, in plan
            order (the first is the one the decision names).

        Returns:
          A Decision.
        """
        for label, _ in failed:
            self.failures[label] = self.failures.get(label, 0) + 1
        label, code = failed[0]
        others = "".join(f", {other} {describe_exit(c)}" for other, c in failed[1:])
        if self.used >= self.max_restarts:
            return Decision((), self._give_up_message(label, code, others),
                            code if code > 0 else 1)
        self.used += 1
        labels = [name for name, _ in failed]
        if any(name in self.group for name in labels):
            restart = list(self.group) + [n for n in labels if n not in self.group]
            what = f"the worker group ({', '.join(self.group)})"
        else:
            restart, what = labels, ", ".join(labels)
        return Decision(restart, f"restart {self.used} of {self.max_restarts}: {label} "
                                 f"failed with {describe_exit(code)}{others}; "
                                 f"restarting {what}")

    def _give_up_message(self, label, code, others):
        message = f"{label} failed with {describe_exit(code)}{others}; stopping all"
        if not self.max_restarts:
            return message
        times = self.failures[label]
        return (f"{message}: no restart left ({self.used} of --max-restarts "
                f"{self.max_restarts} used); {label} kept failing ({times} failure"
                f"{'s' if times != 1 else ''})")
