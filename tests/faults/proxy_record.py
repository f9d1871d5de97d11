"""Records what tf.estimator 2.15 (or estimator_lite) does under the fault proxy's
scenarios, for docs/reliability.md's "A bad network" table. Not a test file.

The same jobs as faults_proxy_test.py (job.py through netns_job.py for the ps
cluster, collective_job.py for the MultiWorkerMirroredStrategy one), the same
faults, then `--window` seconds of watching, nothing restarted: every process's
exit code (None: still running) and when it ended, the last error line of each
process that failed, the trainers' session recreations, whether the newest
checkpoint restores. The logs stay under ``--work-dir``. tf.estimator needs
ESTIMATOR_LITE_TF215_PYTHON:

    python -m tests.faults.proxy_record --backend tf_estimator --window 90
"""

import os
import tempfile
import time

from tests.faults import recorder
from tests.faults.cluster import restores, wait_for
from tests.faults.netns import LIBRARY_ENV, ORACLE_LIBRARY
from tests.faults.proxied import ProxiedCluster

_HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = ("ps_resets", "ps_short_hole", "ps_long_hole", "collective_resets",
             "collective_short_hole", "collective_long_hole")
_RESET_EVERY_SECS = 3
_SHORT_HOLE_SECS = 3
# estimator_lite's and tf.estimator's words for a session recreated after an error.
_RECREATION_WORDS = ("recreat", "a new session will be created")


def _recreations(text):
    return sum(any(w in line.lower() for w in _RECREATION_WORDS)
               for line in text.splitlines())


def _last_error(text):
    """The last line naming an error, or None."""
    lines = [line for line in text.splitlines()
             if "Error" in line and not line.startswith(("I0000", "W0000", " "))]
    return lines[-1][:300] if lines else None


def _cluster(scenario, backend, work_dir, collective_steps=300):
    oracle = backend == "tf_estimator"
    python = recorder.python_of(backend)
    if scenario.startswith("ps"):
        env = {LIBRARY_ENV: ORACLE_LIBRARY} if oracle else {}
        return ProxiedCluster(work_dir, ["--max-steps", "600", "--step-sleep-ms", "20",
                                         "--operation-timeout-ms", "8000"],
                              program=os.path.join(_HERE, "netns_job.py"),
                              python=python, env=env)
    return ProxiedCluster(work_dir, ["--max-steps", str(collective_steps),
                                     "--save-steps", "50",
                                     "--step-sleep-ms", "20"],
                          num_workers=2, num_ps=0, chief=False,
                          program=os.path.join(_HERE, "collective_job.py"),
                          python=python, env={"FAULTS_ESTIMATOR": backend})


def run(scenario, backend, window_secs, work_dir, collective_steps=300):
    """Runs one scenario; returns what every process did."""
    cluster = _cluster(scenario, backend, work_dir, collective_steps)
    collective = scenario.startswith("collective")
    labels = ["worker0", "worker1"] if collective else cluster.labels()
    trainers = ["worker0", "worker1"] if collective else ["chief0", "worker0"]
    cut_off = "worker1" if collective else "worker0"
    with cluster:
        cluster.start_all(labels)
        wait_for(lambda: cluster.latest_checkpoint_step() >= 50, 240, "step 50")
        fault = time.monotonic()
        if scenario.endswith("resets"):
            for link in cluster.proxy.links:
                link.set(reset_every_secs=_RESET_EVERY_SECS)
        else:
            secs = _SHORT_HOLE_SECS if scenario.endswith("short_hole") else None
            for link in cluster.links_of(cut_off):
                link.black_hole(secs)
        ended = {}
        while time.monotonic() < fault + window_secs and len(ended) < len(labels):
            for label in labels:
                code = cluster.process(label).poll()
                if code is not None and label not in ended:
                    ended[label] = (code, round(time.monotonic() - fault, 1))
            time.sleep(0.2)
        paths = cluster.checkpoint_paths()
        return {
            "exit": {label: ended.get(label, (None, None))[0] for label in labels},
            "secs_after_fault": {label: ended.get(label, (None, None))[1]
                                 for label in labels},
            "session_recreations": {label: _recreations(cluster.log_text(label))
                                    for label in trainers},
            "errors": {label: _last_error(cluster.log_text(label)) for label in labels
                       if ended.get(label, (0,))[0]},
            "steps_lost": {label: cluster.steps_lost(label) for label in trainers},
            "newest_checkpoint": paths[-1] if paths else None,
            "restores": bool(paths) and restores(paths[-1])[0],
            "resets": sum(link.connections_reset for link in cluster.proxy.links),
        }


def main():
    parser = recorder.arguments(__doc__, window_secs=90, scenarios=SCENARIOS)
    parser.add_argument("--work-dir", default=None, help="kept; default: a new temp dir")
    parser.add_argument("--collective-steps", type=int, default=300,
                        help="max_steps of the collective job (more: more resets land)")
    args = parser.parse_args()
    recorder.print_records(
        args.backend, args.scenarios,
        lambda scenario, work_dir: run(scenario, args.backend, args.window, work_dir,
                                       args.collective_steps),
        keep_dir=args.work_dir or tempfile.mkdtemp(prefix="proxy_record_"))


if __name__ == "__main__":
    main()
