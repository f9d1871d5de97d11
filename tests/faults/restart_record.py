"""Records what a Kubernetes-style restart policy (a TFJob's `OnFailure`) does for
each library, for docs/reliability.md's launcher table. Not a test file.

tf.estimator has no launcher; on Kubernetes its roles restart one pod at a time.
This plays the operator: after one SIGKILL mid-training it restarts every process
that exits non-zero, alone, at once, at most `--max-restarts` times in the job
(`backoffLimit`), and watches for `--window` seconds. It prints, per scenario, every
process's exit code (None: still running at the end of the window) and when it
ended (seconds after the fault), the restarts, the steps lost, whether every listed
checkpoint restores, the final step, and (ps job) the newest evaluation and export.

    python -m tests.faults.restart_record --backend tf_estimator  # needs the oracle
    python -m tests.faults.restart_record --backend lite
"""

import os
import signal
import time

from tests.faults import recorder
from tests.faults.cluster import Cluster, export_step, restores, wait_for

_HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = ("ps:worker0", "ps:chief0", "ps:ps0", "ps:evaluator0",
             "collective:worker1", "collective:worker0")
_TRAINERS = {"ps": ("chief0", "worker0"), "collective": ("worker0", "worker1")}


def _cluster(kind, backend, work_dir):
    oracle = backend == "tf_estimator"
    python = recorder.python_of(backend)
    if kind == "ps":
        # Every checkpoint kept: tf.estimator's evaluator dies of one deleted under it.
        return Cluster(work_dir, ["--max-steps", "600", "--step-sleep-ms", "5",
                                  "--keep-checkpoint-max", "100"],
                       python=python, program=os.path.join(_HERE, "netns_job.py"),
                       env={"FAULTS_JOB_LIBRARY": "tf.estimator" if oracle
                            else "estimator_lite"})
    return Cluster(work_dir, ["--max-steps", "600", "--save-steps", "100",
                              "--step-sleep-ms", "20", "--session-timeout-secs", "240"],
                   num_workers=2, num_ps=0, chief=False,
                   program=os.path.join(_HERE, "collective_job.py"), python=python,
                   env={"FAULTS_ESTIMATOR": backend})


def _watch(cluster, labels, fault, window_secs, max_restarts):
    """Restarts what exits non-zero (OnFailure) until all exited 0 or the window
    ends; returns ({'label.i': (exit, secs after fault)}, restarts)."""
    ended, restarts = {}, 0
    deadline = fault + window_secs
    while time.monotonic() < deadline:
        for label, i, code in recorder.note_ended(cluster, labels, fault, ended):
            last = i == cluster.incarnations(label) - 1
            if code != 0 and last and restarts < max_restarts:
                restarts += 1
                cluster.start(label)
        if all(cluster.process(label).poll() == 0 for label in labels):
            break
        time.sleep(0.1)
    for label in labels:
        for i in range(cluster.incarnations(label)):
            ended.setdefault(f"{label}.{i}", (None, None))
    return ended, restarts


def run(scenario, backend, window_secs, max_restarts, work_dir):
    """Runs one scenario; returns what happened."""
    kind, label = scenario.split(":")
    cluster = _cluster(kind, backend, work_dir)
    trainers = _TRAINERS[kind]
    labels = [*trainers, *(("ps0", "evaluator0") if kind == "ps" else ())]
    with cluster:
        cluster.start_all(labels)
        at_least = 150 if kind == "ps" else 200
        wait_for(lambda: cluster.latest_checkpoint_step() >= at_least, 300,
                 f"a checkpoint at step >= {at_least}")
        if kind == "collective":  # half-way between two saves
            saved = cluster.latest_checkpoint_step()
            wait_for(lambda: (cluster.step_seen("worker0") or 0) >= saved + 50, 300,
                     "half-way")
        newest = cluster.latest_checkpoint_step()
        reached = max(cluster.step_seen(t) or 0 for t in trainers)
        cluster.signal(label, signal.SIGKILL)
        fault = time.monotonic()
        ended, restarts = _watch(cluster, labels, fault, window_secs, max_restarts)
        paths = cluster.checkpoint_paths()
        restored = [restores(p) for p in paths]
        if kind == "ps":
            lost = max(cluster.steps_lost(t) for t in trainers)
        else:
            lost = max(reached - newest, 0)
        result = {"processes": ended, "restarts": restarts,
                  "newest_checkpoint_at_fault": newest, "steps_lost": lost,
                  "all_checkpoints_restore": all(ok for ok, _ in restored),
                  "final_step": restored[-1][1] if restored else None}
        if kind == "ps":
            exports = cluster.exports()
            result["evaluated"] = max(cluster.eval_steps(), default=None)
            result["newest_export_step"] = export_step(exports[-1]) if exports else None
            result["temp_exports_left"] = len(cluster.temp_exports())
        return result


def main():
    parser = recorder.arguments(__doc__, window_secs=120, scenarios=SCENARIOS)
    parser.add_argument("--max-restarts", type=int, default=6)
    args = parser.parse_args()
    recorder.print_records(
        args.backend, args.scenarios,
        lambda scenario, work_dir: run(scenario, args.backend, args.window,
                                       args.max_restarts, work_dir))


if __name__ == "__main__":
    main()
