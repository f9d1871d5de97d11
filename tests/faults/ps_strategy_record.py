"""Records what a ParameterServerStrategy job does under each fault, on either
library, for docs/reliability.md's "ParameterServerStrategy jobs" table. Not a
test file.

Each scenario starts `job.py --strategy ps` (through netns_job.py, which makes the
job's library tf.estimator with ``FAULTS_JOB_LIBRARY=tf.estimator``) as ps, chief,
worker and evaluator, waits for a checkpoint at step >= 150 of 600 and both
trainers half a save period past it, injects the fault, restarts the faulted role
(at once after a SIGKILL, once it exited after a SIGTERM), then waits until every role but
the ps ended (tf.estimator's ps serves forever) and the ps for `--ps-grace` more
seconds, at most `--window` seconds after the fault. Prints one JSON line per
scenario: every process's exit code (None: still running when the recording
stopped) and when it ended (seconds after the fault), the newest checkpoint at the
fault, the global steps lost (the trainers' logged rollbacks), the final listed
checkpoint's step and whether every listed one restores, the evaluated steps and
the newest export's step. All checkpoints are kept (`--keep-checkpoint-max 100`):
tf.estimator's evaluator dies of a checkpoint garbage-collected under it otherwise,
whatever the fault. tf.estimator needs ESTIMATOR_LITE_TF215_PYTHON:

    python -m tests.faults.ps_strategy_record --backend tf_estimator
    python -m tests.faults.ps_strategy_record --backend lite
"""

import os
import signal
import time

from tests.faults import recorder
from tests.faults.cluster import Cluster, export_step, restores, wait_for

_JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "netns_job.py")
SCENARIOS = ("kill_worker0", "kill_chief0", "kill_ps0", "sigterm_chief0")
SAVE_STEPS = 20
TRAINERS = ("chief0", "worker0")
_POLL_SECS = 0.1


def _cluster(backend, work_dir, step_sleep_ms, strategy):
    oracle = backend == "tf_estimator"
    return Cluster(
        work_dir, ["--strategy", strategy, "--max-steps", "600",
                   "--step-sleep-ms", str(step_sleep_ms),
                   "--save-steps", str(SAVE_STEPS), "--keep-checkpoint-max", "100"],
        program=_JOB, python=recorder.python_of(backend),
        env={"FAULTS_JOB_LIBRARY": "tf.estimator"} if oracle else {})


def _outcome(cluster):
    """What the model_dir holds at the end."""
    paths = cluster.checkpoint_paths()
    restored = [restores(p) for p in paths]
    exports = cluster.exports()
    try:
        evaluated = cluster.eval_steps()
    except Exception as e:  # noqa: BLE001 - recorded, not raised
        evaluated = f"{type(e).__name__}: {e}"
    return {
        "final_checkpoint": restored[-1][1] if restored else None,
        "all_restore": all(ok for ok, _ in restored),
        "evaluated_final": bool(restored) and restored[-1][1] in (
            evaluated if isinstance(evaluated, list) else []),
        "newest_export_step": export_step(exports[-1]) if exports else None,
        "temp_exports": len(cluster.temp_exports()),
    }


def run(scenario, backend, window_secs, ps_grace_secs, work_dir, step_sleep_ms,
        strategy="ps"):
    """Runs one scenario; returns what every process did."""
    cluster = _cluster(backend, work_dir, step_sleep_ms, strategy)
    kind, label = scenario.split("_", 1)
    with cluster:
        cluster.start_all()
        wait_for(lambda: cluster.latest_checkpoint_step() >= 150, 240, "step 150")
        wait_for(lambda: min(cluster.step_seen(lab) or 0 for lab in TRAINERS) >=
                 cluster.latest_checkpoint_step() + SAVE_STEPS // 2, 240, "half-way")
        saved = cluster.latest_checkpoint_step()
        fault = time.monotonic()
        cluster.signal(label, signal.SIGTERM if kind == "sigterm" else signal.SIGKILL)
        ended = {}
        cluster.wait_exit(label, 30)
        recorder.note_ended(cluster, cluster.started_labels(), fault, ended)
        at_exit = {"reached": cluster.step_seen(label) if label != "ps0" else None,
                   "newest_checkpoint": cluster.latest_checkpoint_step()}
        cluster.start(label)
        deadline = fault + window_secs
        others_done = None
        while time.monotonic() < deadline:
            recorder.note_ended(cluster, cluster.started_labels(), fault, ended)
            if others_done is None and all(
                    not cluster.running(lab) for lab in cluster.started_labels()
                    if lab != "ps0"):
                others_done = time.monotonic()
            if others_done is not None and (not cluster.running("ps0") or
                                            time.monotonic() > others_done + ps_grace_secs):
                break
            time.sleep(_POLL_SECS)
        result = {"strategy": strategy, "saved_at_fault": saved, "at_exit": at_exit,
                  "steps_lost": max(cluster.steps_lost(lab) for lab in TRAINERS)}
        for lab in cluster.started_labels():
            for i in range(cluster.incarnations(lab)):
                result[f"{lab}.{i}"] = ended.get(f"{lab}.{i}", (None, None))
        result.update(_outcome(cluster))
        return result


def main():
    parser = recorder.arguments(__doc__, window_secs=120, scenarios=SCENARIOS)
    parser.add_argument("--ps-grace", type=float, default=10)
    parser.add_argument("--step-sleep-ms", type=float, default=100,
                        help="tf.estimator's worker joins ~30 s after the chief "
                             "(its session manager's retry interval): slow enough "
                             "steps keep the training going until then")
    parser.add_argument("--strategy", choices=("ps", "none"), default="ps",
                        help="none: the plain ps-style job, for comparison")
    parser.add_argument("--keep", help="run under this dir and keep the logs")
    args = parser.parse_args()
    recorder.print_records(
        args.backend, args.scenarios,
        lambda scenario, work_dir: run(scenario, args.backend, args.window,
                                       args.ps_grace, work_dir, args.step_sleep_ms,
                                       args.strategy),
        keep_dir=args.keep, name=f"{args.backend}-{args.strategy}")


if __name__ == "__main__":
    main()
