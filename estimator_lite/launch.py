"""Run a training script as a local cluster: one process per role, TF_CONFIG each.

    python -m estimator_lite.launch --ps 1 --workers 2 --evaluator \\
        [--model-dir DIR] [--max-restarts N] -- python train.py ARGS
    python -m estimator_lite.launch --ps 0 --workers 2 --no-chief ...   # collective

Starts a chief (unless `--no-chief`: a worker-only TF_CONFIG, worker 0 the chief,
as MultiWorkerMirroredStrategy jobs are written), the workers, the ps tasks and
optionally an evaluator on free 127.0.0.1 ports, each with its own TF_CONFIG (and
`model_dir` in it when given). Every output line is prefixed with its role
(``[chief]``, ``[worker:0]``, ...).

By default (``--network auto``) the roles run in a private network namespace where
the OS allows it, so no other host reaches their unauthenticated gRPC ports
(estimator_lite._engine.private_network); one line says which it is.

A role that exits non-zero is restarted under the restart policy
(`--max-restarts N`, as torchrun's: N restarts in the whole job; see
`estimator_lite._engine.restart_policy`); a job without ps tasks is collective and
restarts its whole worker group together. Each restart is logged with the role,
its exit code and the newest checkpoint. When no restart is left, every process
is stopped and the launcher exits non-zero naming the role that kept failing.
Ctrl-C stops every process; after the chief and workers finish, the launcher waits
for the ps tasks and the evaluator to exit by themselves (they do: see
estimator_lite/_engine/completion.py).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import NoReturn

from estimator_lite._engine import local_cluster as cluster_lib
from estimator_lite._engine import private_network, restart_policy, roles

__all__ = ["main", "Role", "plan_roles"]

_POLL_SECS = 0.2
_KILL_GRACE_SECS = 10


class Role:
    """One process of the local cluster."""

    def __init__(self, task_type: str, index: int) -> None:
        self.task_type = task_type
        self.index = index
        self.process: subprocess.Popen[str] | None = None
        self.pump: threading.Thread | None = None
        self.pumps: list[threading.Thread] = []

    @property
    def label(self) -> str:
        """Unique roles (`chief`, `evaluator`) show no index; others do."""
        if roles.is_unique(self.task_type):
            return self.task_type
        return f"{self.task_type}:{self.index}"

    @property
    def trains(self) -> bool:
        """Whether this role runs the training loop (chief, workers)."""
        return roles.trains(self.task_type)


def plan_roles(num_ps: int, num_workers: int, evaluator: bool,
               chief: bool = True) -> list[Role]:
    """Returns the Roles to start: chief, workers, ps tasks, then the evaluator.

    With `chief=False` (a worker-only cluster), worker 0 is the chief.
    """
    planned = [Role(roles.CHIEF, 0)] if chief else []
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
                        help="number of workers besides the chief (with --no-chief: "
                             "all the workers)")
    parser.add_argument("--no-chief", dest="chief", action="store_false",
                        help="a worker-only TF_CONFIG, worker 0 being the chief (as "
                             "MultiWorkerMirroredStrategy jobs are written)")
    parser.add_argument("--evaluator", action="store_true",
                        help="also start an evaluator task")
    parser.add_argument("--model-dir", default=None,
                        help="put this model_dir into every TF_CONFIG")
    parser.add_argument("--timeout-secs", type=float, default=None,
                        help="stop everything and fail after this long")
    parser.add_argument("--shutdown-timeout-secs", type=float, default=300,
                        help="after training, how long ps/evaluator may take to exit")
    parser.add_argument("--max-restarts", type=int, default=0,
                        help="restart roles that exit non-zero, at most this many "
                             "times in the whole job (a job without ps restarts its "
                             "whole worker group together); 0: a failure ends the job")
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
    if not args.chief and args.workers < 1:
        parser.error(f"--no-chief needs --workers >= 1 (worker 0 is the chief), got "
                     f"{args.workers}")
    if args.max_restarts < 0:
        parser.error(f"--max-restarts must be >= 0, got {args.max_restarts}")
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

    def pump(self, process, label):
        for line in process.stdout:
            self.line(label, line.rstrip("\n"))


def _start(role, command, cluster, model_dir, printer):
    extra = {"model_dir": model_dir} if model_dir else {}
    env = dict(os.environ, PYTHONUNBUFFERED="1",
               TF_CONFIG=cluster_lib.tf_config(cluster, role.task_type, role.index,
                                               **extra))
    role.process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        bufsize=1, start_new_session=True)
    role.pump = threading.Thread(target=printer.pump, args=(role.process, role.label),
                                 daemon=True)
    role.pumps.append(role.pump)
    role.pump.start()
    printer.line("launch", f"started {role.label} (pid {role.process.pid})")


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


def _supervise(roles, args, printer, policy, start_fn):
    """Waits for the roles, restarting failed ones under `policy`; returns the exit
    code of the whole run."""
    start = time.monotonic()
    training_done_at = None
    while True:
        codes = {r.label: r.process.poll() for r in roles}
        failed = [(label, c) for label, c in codes.items() if c not in (None, 0)]
        if failed:
            decision = policy.on_failure(failed)
            if decision.gives_up:
                printer.line("launch", decision.message)
                _stop(roles, printer)
                return decision.exit_code
            _restart([r for r in roles if r.label in decision.restart], decision,
                     args, printer, start_fn)
            continue
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


def _restart(group, decision, args, printer, start_fn):
    """Stops what still runs of `group` (a collective job's other workers), then
    starts every role of it again; logs the newest checkpoint they resume from."""
    _stop(group, printer)
    printer.line("launch", f"{decision.message}, resuming from "
                           f"{restart_policy.newest_checkpoint(args.model_dir)}")
    for role in group:
        start_fn(role)


def main(argv: Sequence[str] | None = None) -> int:
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
    # A collective job's evaluator is listed in the cluster, as in TF's multi-worker
    # tutorial: MultiWorkerMirroredStrategy() fails in an evaluator task without it.
    cluster = cluster_lib.local_cluster_spec(num_ps=args.ps, num_workers=args.workers,
                                             chief=args.chief,
                                             evaluator=args.evaluator and not args.ps)
    roles = plan_roles(args.ps, args.workers, args.evaluator, chief=args.chief)
    trainers = [r.label for r in roles if r.trains]
    # No ps: the trainers are one collective group (MultiWorkerMirroredStrategy).
    group = trainers if not args.ps and len(trainers) > 1 else ()
    policy = restart_policy.RestartPolicy(args.max_restarts, group)
    printer = _Printer(sys.stdout)
    printer.line("launch", network_line)
    printer.line("launch", f"cluster {cluster}")
    printer.line("launch", policy.describe())
    if network is not None:
        # Restarted roles run the same wrapped command: in the same namespace.
        command = network.wrap(command)

    def start_fn(role):
        _start(role, command, cluster, args.model_dir, printer)

    try:
        for role in roles:
            start_fn(role)
        code = _supervise(roles, args, printer, policy, start_fn)
    except KeyboardInterrupt:
        printer.line("launch", "interrupted; stopping all")
        _stop(roles, printer)
        code = 130
    finally:
        if network is not None:
            network.close()
    for role in roles:
        for pump in role.pumps:
            pump.join(timeout=5)
    return code


def run() -> NoReturn:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    run()
