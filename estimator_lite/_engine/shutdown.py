"""Graceful shutdown: SIGTERM/SIGINT during training become a clean, bounded stop.

Kubernetes sends SIGTERM on preemption and eviction and waits a grace period
(30 s by default) before SIGKILL. Training catches the signal, finishes the step
it is in, saves a checkpoint (chief), runs the listeners' `end`, and then exits
non-zero so the orchestrator restarts the task. A watchdog ends the process if
that takes longer than the grace period (`ESTIMATOR_LITE_SHUTDOWN_GRACE_SECS`,
default 25 s), so a hung save never outlives the grace period.
"""

import os
import signal
import threading

from estimator_lite._engine import validation
from estimator_lite._tf import logging

__all__ = ["GracefulShutdown", "grace_secs_from_env"]

GRACE_ENV = "ESTIMATOR_LITE_SHUTDOWN_GRACE_SECS"
_DEFAULT_GRACE_SECS = 25.0
# A handler we may replace: only Python's defaults, never the user's own.
_DEFAULT_HANDLERS = {signal.SIGTERM: signal.SIG_DFL,
                     signal.SIGINT: signal.default_int_handler}


def grace_secs_from_env():
    """The shutdown grace period in seconds.

    Raises:
      ValueError: the environment variable is not a positive number.
    """
    return validation.seconds_from_env(GRACE_ENV, _DEFAULT_GRACE_SECS, allow_zero=False)


class GracefulShutdown:
    """A context that records SIGTERM/SIGINT instead of dying mid-step.

    Outside the main thread (signals are delivered there only) or when the user
    installed their own handler, it installs nothing and `signum` stays None.
    """

    def __init__(self, grace_secs):
        self._grace_secs = grace_secs
        self._previous = {}
        self._watchdog = None
        self.signum = None

    def __enter__(self):
        if threading.current_thread() is not threading.main_thread():
            return self
        for signum, default in _DEFAULT_HANDLERS.items():
            if signal.getsignal(signum) is default:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, exc_type, exc, tb):
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()
        if self._watchdog is not None:
            self._watchdog.cancel()
        return False

    def _handle(self, signum, frame):
        del frame
        if self.signum is not None:
            return  # a second signal changes nothing; the watchdog is running
        self.signum = signum
        logging.warning("Received %s: finishing the current step, saving and stopping "
                        "(at most %.0f s).", signal.Signals(signum).name,
                        self._grace_secs)
        self._watchdog = threading.Timer(self._grace_secs, self._give_up)
        self._watchdog.daemon = True
        self._watchdog.start()

    def _give_up(self):
        logging.error("Clean shutdown took longer than %.0f s; exiting now.",
                      self._grace_secs)
        os._exit(128 + self.signum)

    def raise_if_signalled(self):
        """After the clean stop: exit as the signal asked, non-zero.

        Raises:
          KeyboardInterrupt: for SIGINT (what Ctrl-C users expect).
          SystemExit: with code 128 + signal number for SIGTERM (143).
        """
        if self.signum == signal.SIGINT:
            raise KeyboardInterrupt
        if self.signum is not None:
            raise SystemExit(128 + self.signum)
