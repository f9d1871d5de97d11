"""Records what a MultiWorkerMirroredStrategy job does under each fault, on either
library, for docs/reliability.md's "Collective jobs" table. Not a test file.

Each scenario starts `collective_job.py` on two workers (worker-only TF_CONFIG),
injects the fault once a checkpoint at step >= 200 exists, then watches for
`--window` seconds without restarting anything more: every process's exit code
(None: still running) and when it ended, and how often each log says it
recreated its session. tf.estimator (TF 2.15) needs ESTIMATOR_LITE_TF215_PYTHON:

    python -m tests.faults.collective_record --backend tf_estimator --window 60
    python -m tests.faults.collective_record --backend lite --window 60
"""

import os
import signal
import time

from tests.faults import recorder
from tests.faults.cluster import Cluster, wait_for

_JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "collective_job.py")
SCENARIOS = ("kill_worker1", "kill_restart_worker1", "kill_restart_worker0",
             "sigterm_worker0", "sigterm_worker1")


def run(scenario, backend, window_secs, work_dir):
    """Runs one scenario; returns what every process did."""
    cluster = Cluster(work_dir, ["--max-steps", "600", "--save-steps", "100",
                                 "--step-sleep-ms", "20"],
                      num_workers=2, num_ps=0, chief=False, program=_JOB,
                      python=recorder.python_of(backend),
                      env={"FAULTS_ESTIMATOR": backend})
    with cluster:
        cluster.start_all(["worker0", "worker1"])
        wait_for(lambda: cluster.latest_checkpoint_step() >= 200, 240, "step 200")
        kind, label = scenario.rsplit("_", 1)
        fault = time.monotonic()
        cluster.signal(label, signal.SIGTERM if kind == "sigterm" else signal.SIGKILL)
        ended = {}
        if kind == "kill_restart":
            cluster.wait_exit(label, 30)
            cluster.start(label)
        deadline = fault + window_secs
        while time.monotonic() < deadline:
            recorder.note_ended(cluster, ("worker0", "worker1"), fault, ended)
            time.sleep(0.2)
        result = {}
        for lab in ("worker0", "worker1"):
            for i in range(cluster.incarnations(lab)):
                text = cluster.log_text(lab, i)
                result[f"{lab}.{i}"] = {
                    "exit": ended.get(f"{lab}.{i}", (None, None))[0],
                    "secs_after_fault": ended.get(f"{lab}.{i}", (None, None))[1],
                    "session_recreations": sum(
                        "recreat" in line.lower() for line in text.splitlines()),
                }
        return result


def main():
    args = recorder.arguments(__doc__, window_secs=60, scenarios=SCENARIOS).parse_args()
    recorder.print_records(
        args.backend, args.scenarios,
        lambda scenario, work_dir: run(scenario, args.backend, args.window, work_dir))


if __name__ == "__main__":
    main()
