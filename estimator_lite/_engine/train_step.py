"""The training step of a session call: one step, or a K-step loop (`step_loop`).

`train_setup` chooses the part once (a `step_loop.TrainLoop` was built, or not)
and hands it to `TrainSession`, which never asks which one it has. Both build the
step guard (the one tensor every call fetches, `build_step_guard`), keep the
session's callables of it, and say what the next call runs:

| part         | a call runs                     | its feeds                         |
| ------------ | ------------------------------- | --------------------------------- |
| `SingleStep` | one step                        | none                              |
| `LoopStep`   | K steps, fewer before the target | none for a full loop; else its    |
|              | step (`step_loop`)              | length and the step to stop at    |

A call that no hook and no periodic action fetches from runs the guard's
callable alone (`run`); otherwise it runs through the hooks (`run_with_hooks`).
A loop's hooks run between loops, wrapped in `step_loop.LoopHook`.
"""

import math

from estimator_lite._engine import hook_protocol, step_loop
from estimator_lite._tf import tf

__all__ = ["NAN_STEP", "LoopStep", "SingleStep", "build_step_guard"]

# What the step guard gives when the loss was not finite.
NAN_STEP = -1


def build_step_guard(global_step, train_op, loss, finite=None):
    """Builds the one tensor fetched every step (or every multi-step loop).

    Args:
      global_step: the global step variable.
      train_op: the op that trains one step (or runs the loop).
      loss: the scalar loss of that step.
      finite: a bool tensor saying the loss was finite (a loop's, for all its
        steps), or None to test `loss`.

    Returns:
      An int64 scalar: the global step read after `train_op` ran, or -1 when
      `loss` is NaN or infinite.
    """
    with tf.control_dependencies([train_op]):
        step_after = tf.identity(global_step)
    # An integer loss cannot be NaN (and is_finite rejects integer dtypes).
    if finite is None:
        finite = (tf.reduce_all(tf.is_finite(loss)) if loss.dtype.is_floating
                  else tf.constant(True))
    return tf.where(finite, tf.cast(step_after, tf.int64),
                    tf.constant(NAN_STEP, tf.int64), name="step_guard")


class SingleStep:
    """One training step per session call."""

    def __init__(self, global_step, train_op, loss, finite=None):
        """Builds the step guard (in the default graph, before the hooks begin).

        Args:
          global_step: the global step variable.
          train_op: the training op.
          loss: the scalar loss tensor.
          finite: see `build_step_guard`.
        """
        self.global_step = global_step
        self.guard = build_step_guard(global_step, train_op, loss, finite)
        # What hooks see as the run's fetches (run_context.original_args.fetches):
        # tf.estimator runs [train_op, loss].
        self.hook_fetches = [train_op, loss]
        self._run = None

    def wrap_hooks(self, hooks):
        """The hooks as the session runs them (here: as they are), as a tuple."""
        return tuple(hooks)

    def open(self, session):
        """Makes the session's callable of the step guard."""
        self._run = session.make_callable(self.guard)

    def close(self):
        """Drops the closed session's callables."""
        self._run = None

    def plan(self, last_step, target_step):
        """(steps, feeds) of the next call: one step, nothing fed.

        Args:
          last_step: the global step before the call.
          target_step: the step training ends at, or None.
        """
        del last_step, target_step
        return 1, None

    def run(self, feeds):
        """Runs a call that no hook and no periodic action fetches from.

        Args:
          feeds: the plan's feeds.

        Returns:
          What the step guard gave.
        """
        del feeds
        return self._run()

    def run_with_hooks(self, session, hooks, last_step, extra, feeds, after_step_fn):
        """Runs a call through the hooks (`hook_protocol.run_with_hooks`).

        Args:
          session: the training session.
          hooks: the hooks (`wrap_hooks`).
          last_step: the global step before the call.
          extra: {key: tensor} the periodic actions fetch; without them (and
            without feeds) a call that no hook fetches from takes `run`'s callable.
          feeds: the plan's feeds.
          after_step_fn: called with the guard's value and the `extra` results
            before the hooks' after_run.

        Returns:
          (the new global step, whether a hook asked to stop).
        """
        results, stop = hook_protocol.run_with_hooks(
            session, hooks, {"step": self.guard, "extra": extra},
            original_fetches=self.hook_fetches,
            fast_fn=None if extra or feeds is not None else self._guard_only,
            feed_dict=feeds,
            before_after_run_fn=lambda r: after_step_fn(r["step"], r["extra"]))
        step = results["step"]
        if step == last_step:
            # A train op that does not move the global step may leave that to a
            # hook (adanet's trains in hooks and sets the step in after_run);
            # tf.estimator's StopAtStepHook and CheckpointSaverHook then read the
            # variable again, so the stop and the final save see the hook's step.
            # Only then is it read.
            step = int(session.run(self.global_step))
        return step, stop

    def _guard_only(self):
        """What the hooked run returns when only the step guard is fetched."""
        return {"step": self.run(None), "extra": {}}

    def nan_message(self, session, last_step, steps):
        """What NanLossDuringTrainingError says of a call whose loss was not finite."""
        del session, steps
        return f"NaN or infinite loss during training after global step {last_step}"

    def step_after_input_end(self, session, step):
        """The global step when the input ended during a call that began at `step`."""
        del session
        return step


class LoopStep(SingleStep):
    """Up to K training steps per session call (a `step_loop.TrainLoop`)."""

    def __init__(self, loop, global_step, train_op, loss):
        """Builds the loop's step guard.

        Args:
          loop: the `step_loop.TrainLoop` (train_op and loss are its spec's).
          global_step: the global step variable.
          train_op: the loop's op.
          loss: the loop's last loss.
        """
        super().__init__(global_step, train_op, loss, finite=loop.guard_parts[1])
        self._loop = loop
        self._run_short = None

    def wrap_hooks(self, hooks):
        """The hooks, each run at loop boundaries (`step_loop.LoopHook`)."""
        return tuple(step_loop.LoopHook(h, self._loop) for h in hooks)

    def open(self, session):
        """Makes the session's callables: a full loop, and a fed shorter one."""
        super().open(session)
        self._run_short = session.make_callable(
            self.guard, feed_list=[self._loop.length, self._loop.stop_at])

    def close(self):
        """Drops the closed session's callables."""
        super().close()
        self._run_short = None

    def plan(self, last_step, target_step):
        """(steps, feeds) of the next loop: K steps, or fewer to end exactly at the
        target step (which the loop then also stops at: a train op may move the
        global step by more than one). A full loop without a target feeds nothing.

        Args:
          last_step: the global step before the loop.
          target_step: the step training ends at, or None.
        """
        length = self._loop.steps_per_loop
        if target_step is not None:
            # A float target (steps=1.5) stops at the first whole step past it.
            length = max(1, min(length, math.ceil(target_step - last_step)))
        if length == self._loop.steps_per_loop and target_step is None:
            return length, None
        stop_at = step_loop.NO_STOP if target_step is None else math.ceil(target_step)
        return length, {self._loop.length: length, self._loop.stop_at: stop_at}

    def run(self, feeds):
        """Runs a loop that no hook and no periodic action fetches from.

        Args:
          feeds: the plan's feeds.

        Returns:
          What the step guard gave.
        """
        if feeds is None:
            return self._run()
        return self._run_short(feeds[self._loop.length], feeds[self._loop.stop_at])

    def nan_message(self, session, last_step, steps):
        """What NanLossDuringTrainingError says of a loop whose loss was not finite:
        the loop's steps, and where the global step stopped."""
        at = int(session.run(self.global_step))
        return (f"NaN or infinite loss during training in the loop of global steps "
                f"{last_step + 1} to {last_step + steps}: at global step {at}")

    def step_after_input_end(self, session, step):
        """The global step when the input ended: the loop's earlier steps trained."""
        return int(session.run(self.global_step))
