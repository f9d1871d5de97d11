"""Run a training script as a local cluster: one process per role, TF_CONFIG each.

    python -m estimator_lite.launch --ps 1 --workers 2 --evaluator \\
        [--model-dir DIR] -- python train.py ARGS

Starts a chief, the workers, the ps tasks and optionally an evaluator on free
127.0.0.1 ports, each with its own TF_CONFIG (and `model_dir` in it when given).
By default (``--network auto``) the roles run in a private network namespace
where the OS allows it, so no other host reaches their unauthenticated gRPC
ports (estimator_lite._engine.private_network); one line says which it is.
Every output line is prefixed with its role (``[chief]``, ``[worker:0]``, ...).
Exits non-zero if any role fails; stops every process on Ctrl-C or when one fails;
after the chief and workers finish, waits for the ps tasks and the evaluator to
exit by themselves (they do: see estimator_lite.completion).
"""

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

from estimator_lite._engine import local_cluster as cluster_lib
from estimator_lite._engine import private_network, roles

__all__ = ["main", "Role", "plan_roles"]

_POLL_SECS = 0.2
_KILL_GRACE_SECS = 10


class Role:
    """One process of the local cluster."""

    def __init__(self, task_type, index):
        self.task_type = task_type
        self.index = index
        self.process = None
        self.pump = None

    @property
    def label(self):
        """Unique roles (`chief`, `evaluator`) show no index; others do."""
        if roles.is_unique(self.task_type):
            return self.task_type
        return f"{self.task_type}:{self.index}"

    @property
    def trains(self):
        """Whether this role runs the training loop (chief, workers)."""
        return roles.trains(self.task_type)


def plan_roles(num_ps, num_workers, evaluator):
    """Returns the Roles to start: chief, workers, ps tasks, then the evaluator."""
    planned = [Role(roles.CHIEF, 0)]
    planned += [Role(roles.WORKER, i) for i in range(num_workers)]
    planned += [Role(roles.PS, i) for i in range(num_ps)]
    if evaluator:
        planned.append(Role(roles.EVALUATOR, 0))
    return planned


def _parse(argv):
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(
        prog="python -m estimator_lite.launch",
        usage="%(prog)s [options] -- COMMAND [ARGS]",
        description="Run COMMAND as a local TF_CONFIG cluster on 127.0.0.1 (the "
                    "command after '--' is run once per role).")
    parser.add_argument("--ps", type=int, default=1, help="number of ps tasks")
    parser.add_argument("--workers", type=int, default=1,
                        help="number of workers besides the chief")
    parser.add_argument("--evaluator", action="store_true",
                        help="also start an evaluator task")
    parser.add_argument("--model-dir", default=None,
                        help="put this model_dir into every TF_CONFIG")
    parser.add_argument("--timeout-secs", type=float, default=None,
                        help="stop everything and fail after this long")
    parser.add_argument("--shutdown-timeout-secs", type=float, default=300,
                        help="after training, how long ps/evaluator may take to exit")
    parser.add_argument("--network", choices=private_network.MODES, default="auto",
                        help="private: the roles run in their own network namespace "
                             "(Linux), unreachable from other hosts; host: they share "
                             "this machine's network; auto (default): private where "
                             "the OS allows it, unless --model-dir or an argument of "
                             "the command is a URL (gs://...)")
    args = parser.parse_args(argv[:split])
    command = argv[split + 1:]
    if not command:
        parser.error("no command after '--'")
    if args.ps < 0 or args.workers < 0:
        parser.error(f"--ps and --workers must be >= 0, got {args.ps} and {args.workers}")
    return args, command


class _Printer:
    """Prefixes each line with its role; one lock so lines never interleave."""

    def __init__(self, stream):
        self._stream = stream
        self._lock = threading.Lock()

    def line(self, label, text):
        with self._lock:
            self._stream.write(f"[{label}] {text}\n")
            self._stream.flush()

    def pump(self, role):
        for line in role.process.stdout:
            self.line(role.label, line.rstrip("\n"))


def _start(role, command, cluster, model_dir, printer):
    extra = {"model_dir": model_dir} if model_dir else {}
    env = dict(os.environ, PYTHONUNBUFFERED="1",
               TF_CONFIG=cluster_lib.tf_config(cluster, role.task_type, role.index,
                                               **extra))
    role.process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        bufsize=1, start_new_session=True)
    role.pump = threading.Thread(target=printer.pump, args=(role,), daemon=True)
    role.pump.start()


def _stop(roles, printer):
    """SIGTERM to every live process group, then SIGKILL after a grace period."""
    live = [r for r in roles if r.process and r.process.poll() is None]
    for role in live:
        printer.line("launch", f"stopping {role.label}")
        _signal_group(role.process, signal.SIGTERM)
    deadline = time.monotonic() + _KILL_GRACE_SECS
    for role in live:
        try:
            role.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(role.process, signal.SIGKILL)
            role.process.wait()


def _signal_group(process, sig):
    with contextlib.suppress(ProcessLookupError):  # already gone
        os.killpg(process.pid, sig)


def _supervise(roles, args, printer):
    """Waits for the roles; returns the exit code of the whole run."""
    start = time.monotonic()
    training_done_at = None
    while True:
        codes = {r.label: r.process.poll() for r in roles}
        failed = [(label, c) for label, c in codes.items() if c not in (None, 0)]
        if failed:
            label, code = failed[0]
            printer.line("launch", f"{label} failed with exit code {code}; stopping all")
            _stop(roles, printer)
            return code if code > 0 else 1
        if all(c == 0 for c in codes.values()):
            printer.line("launch", "all roles finished")
            return 0
        now = time.monotonic()
        if training_done_at is None and all(codes[r.label] == 0 for r in roles if r.trains):
            training_done_at = now
            printer.line("launch", "training finished; waiting for ps/evaluator to exit")
        if training_done_at is not None and (
                now - training_done_at > args.shutdown_timeout_secs):
            printer.line("launch", "ps/evaluator did not exit in time; stopping them")
            _stop(roles, printer)
            return 1
        if args.timeout_secs is not None and now - start > args.timeout_secs:
            printer.line("launch", f"timeout after {args.timeout_secs} s; stopping all")
            _stop(roles, printer)
            return 1
        time.sleep(_POLL_SECS)


def main(argv=None):
    """Runs the command once per role; returns the process exit code."""
    args, command = _parse(list(sys.argv[1:] if argv is None else argv))
    if shutil.which(command[0]) is None:
        print(f"estimator-lite-launch: command not found: {command[0]!r} (the command "
              "after '--' must be an executable on PATH, e.g. python)", file=sys.stderr)
        return 127
    try:
        network, network_line = private_network.open_network(
            args.network, args.model_dir, command)
    except RuntimeError as e:
        print(f"estimator-lite-launch: {e}", file=sys.stderr)
        return 1
    cluster = cluster_lib.local_cluster_spec(num_ps=args.ps, num_workers=args.workers)
    roles = plan_roles(args.ps, args.workers, args.evaluator)
    printer = _Printer(sys.stdout)
    printer.line("launch", network_line)
    printer.line("launch", f"cluster {cluster}")
    if network is not None:
        command = network.wrap(command)
    try:
        for role in roles:
            _start(role, command, cluster, args.model_dir, printer)
        code = _supervise(roles, args, printer)
    except KeyboardInterrupt:
        printer.line("launch", "interrupted; stopping all")
        _stop(roles, printer)
        code = 130
    finally:
        if network is not None:
            network.close()
    for role in roles:
        if role.pump is not None:
            role.pump.join(timeout=5)
    return code


def run():
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    run()
