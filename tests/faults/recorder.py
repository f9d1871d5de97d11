"""What the `*_record.py` scripts share: their command line, each backend's
interpreter, when each process ended, one JSON line per scenario. Not a test file.

A recorder runs fault scenarios on either library (`--backend lite|tf_estimator`)
for docs/reliability.md's tables; tf.estimator runs on the TF 2.15 interpreter
named by ESTIMATOR_LITE_TF215_PYTHON.
"""

import argparse
import json
import os
import sys
import tempfile
import time

BACKENDS = ("lite", "tf_estimator")


def python_of(backend):
    """The interpreter a backend's roles run on: this one, or the oracle's."""
    if backend == "tf_estimator":
        return os.environ["ESTIMATOR_LITE_TF215_PYTHON"]
    return sys.executable


def note_ended(cluster, labels, fault_secs, ended):
    """Notes every process of `labels` (each incarnation) that ended since last time.

    Args:
      cluster: a faults.cluster.Cluster.
      labels: the roles to look at, e.g. ["worker0", "worker1"].
      fault_secs: `time.monotonic()` when the fault was injected.
      ended: {"<label>.<incarnation>": (exit code, seconds after the fault)}, updated.

    Returns:
      [(label, incarnation, exit code)] of the processes that ended since last time.
    """
    newly = []
    for label in labels:
        for i in range(cluster.incarnations(label)):
            code = cluster.process_of(label, i).poll()
            if f"{label}.{i}" not in ended and code is not None:
                ended[f"{label}.{i}"] = (code, round(time.monotonic() - fault_secs, 1))
                newly.append((label, i, code))
    return newly


def arguments(doc, window_secs, scenarios):
    """The recorders' command line: --backend, --window and --scenarios.

    Args:
      doc: the recorder's module docstring (its first line describes it).
      window_secs: how long to watch after the fault, by default.
      scenarios: every scenario, the default selection.

    Returns:
      An argparse.ArgumentParser a recorder may add its own options to.
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--backend", choices=BACKENDS, required=True)
    parser.add_argument("--window", type=float, default=window_secs)
    parser.add_argument("--scenarios", nargs="*", default=scenarios)
    return parser


def print_records(backend, scenarios, run_scenario, keep_dir=None, name=None):
    """Runs each scenario in its own work dir; prints one JSON line for each.

    Args:
      backend: "lite" or "tf_estimator", printed with each result.
      scenarios: the scenarios to run, in order.
      run_scenario: `run_scenario(scenario, work_dir)` returns a JSON-able dict.
      keep_dir: where the work dirs stay (`<keep_dir>/<name>-<scenario>`); None:
        each is a temporary dir, removed after its scenario.
      name: the work dirs' prefix; default: the backend.
    """
    for scenario in scenarios:
        if keep_dir:
            work_dir = os.path.join(keep_dir, f"{name or backend}-{scenario}")
            result = {"work_dir": work_dir, **run_scenario(scenario, work_dir)}
        else:
            with tempfile.TemporaryDirectory() as work_dir:
                result = run_scenario(scenario, work_dir)
        print(json.dumps({"backend": backend, "scenario": scenario, **result}),
              flush=True)
