"""The multi-process strategy jobs of tests/distribute/ and what each must show.

A Case names a program, the roles of its cluster, and which facts of each role's
`MIGRATION_RESULT` line must equal tf.estimator 2.15's. tf.estimator's answers
are recorded in tests/data/distribute_oracle.json, so estimator_lite is checked
against them with or without the oracle installed; the oracle test re-runs the
jobs on tf.estimator and checks the recording still holds. Not a test file.

Record again (needs ESTIMATOR_LITE_TF215_PYTHON; about a minute per job):

    python -m tests.distribute.cases --record
"""

import argparse
import dataclasses
import json
import math
import os
import re
import sys
import tempfile
from collections.abc import Callable

from tests.distribute import jobs
from tests.migration import runner

__all__ = ["Case", "CASES", "ORACLE_ANSWERS_PATH", "answers", "check", "compare",
           "case", "load_oracle_answers"]

_HERE = os.path.dirname(os.path.abspath(__file__))
TUTORIAL = os.path.join(runner.PROGRAM_DIR, "multi_worker_tutorial.py")
PS_PROGRAM = os.path.join(_HERE, "ps_strategy_program.py")
ORACLE_ANSWERS_PATH = os.path.join(runner.ROOT, "tests", "data", "distribute_oracle.json")
_CHECKPOINT_LINE = re.compile(r'^model_checkpoint_path: "(?:.*/)?model\.ckpt-(\d+)"$',
                              re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class Case:
    """One job and what it must show.

    Attributes:
      name: the key in the recorded answers.
      program: the program every role runs.
      roles: makes [(label, TF_CONFIG dict)] on fresh ports.
      args: more arguments for every role.
      global_steps: (lowest, highest) final global_step each role reports and the
        newest checkpoint holds (equal bounds: exactly).
      exact: label -> result keys that must equal tf.estimator's.
      close: label -> {metric: runner.Tolerance} compared with tf.estimator's.
      maximums: label -> {metric: highest acceptable value} on either backend.
      oracle_may_hang: roles tf.estimator never ends (estimator_lite must).
      oracle_ends_early: roles whose tf.estimator run may end before the chief's
        final checkpoint, so their reported global_step (the newest checkpoint's
        when they end) is only bounded above there; estimator_lite's must wait for
        it and meet `global_steps` in full.
      timeout_secs: the whole job's deadline.
    """
    name: str
    program: str
    roles: Callable
    args: tuple = ()
    global_steps: tuple = (0, 0)
    exact: dict = dataclasses.field(default_factory=dict)
    close: dict = dataclasses.field(default_factory=dict)
    maximums: dict = dataclasses.field(default_factory=dict)
    oracle_may_hang: tuple = ()
    oracle_ends_early: tuple = ()
    timeout_secs: int = 300

    def run(self, backend, work_dir):
        """Runs the job on `backend` under `work_dir`; returns a jobs.JobRun."""
        return jobs.run_job(
            self.program, self.roles(), backend, work_dir, self.timeout_secs,
            args=self.args, may_hang=self.oracle_may_hang if backend == jobs.ORACLE else ())


_TRAINER_FACTS = ("global_step", "num_replicas_in_sync", "task")
_EXPORTER_FACTS = (*_TRAINER_FACTS, "signatures")

CASES = (
    # The tutorial as TFJob started it: two workers, no chief, no evaluator. Each
    # worker reads half the data (InputContext); 512 examples / batch 64 each.
    Case("mwms_two_workers", TUTORIAL, lambda: jobs.worker_only(2),
         global_steps=(8, 8),
         exact={"worker0": _EXPORTER_FACTS, "worker1": _TRAINER_FACTS}),
    # chief + worker training, an evaluator task evaluating as checkpoints appear;
    # max_steps lets the evaluator know when to stop (without it, tf.estimator's
    # evaluator waits for new checkpoints forever).
    Case("mwms_chief_worker_evaluator", TUTORIAL, jobs.chief_worker_evaluator,
         args=("--max-steps", "8", "--start-delay-secs", "0", "--throttle-secs", "0"),
         global_steps=(8, 8),
         exact={"chief0": _EXPORTER_FACTS, "worker0": _TRAINER_FACTS,
                "evaluator0": _TRAINER_FACTS},
         close={"evaluator0": {"loss": runner.Tolerance(why=(
             "synchronous training from constant weights on fixed shards: "
             "deterministic up to float rounding"))}},
         maximums={"evaluator0": {"loss": 2.3}}),
    # v1 ParameterServerStrategy: asynchronous trainers, so the last step can
    # overshoot max_steps=200 by one per trainer. tf.estimator's ps never exits, and
    # its worker does not wait for the chief's final checkpoint (seen: it reported
    # step 152 once under load).
    Case("ps_chief_worker", PS_PROGRAM, lambda: jobs.ps_chief_worker(1),
         args=("--max-steps", "200"), global_steps=(200, 202),
         exact={"chief0": ("num_replicas_in_sync", "task", "signatures"),
                "worker0": ("num_replicas_in_sync", "task")},
         oracle_may_hang=("ps0",), oracle_ends_early=("worker0",)),
)


def case(name):
    """The Case called `name`."""
    for candidate in CASES:
        if candidate.name == name:
            return candidate
    raise ValueError(f"no distribute case named {name!r}; valid: "
                     f"{[c.name for c in CASES]}")


def _fact(result, key):
    metrics = result.get("metrics", {})
    return metrics[key] if key in metrics else result.get(key)


def _checkpoint_step(model_dir):
    """The step of the newest checkpoint the model_dir's state file names, or None."""
    try:
        with open(os.path.join(model_dir, "checkpoint"), encoding="utf-8") as f:
            match = _CHECKPOINT_LINE.search(f.read())
    except FileNotFoundError:
        return None
    return int(match.group(1)) if match else None


def answers(job_case, job_run):
    """What a job run showed, JSON-ready: exit codes, compared facts, checkpoint step.

    Args:
      job_case: the Case.
      job_run: its jobs.JobRun.

    Returns:
      {"exit_codes": {label: code or None (hung)}, "checkpoint_step": int or None,
       "results": {label: {fact: value}}} with the facts named by the case (and
       global_step) of every role that printed a result.
    """
    results = {}
    for label, role in job_run.roles.items():
        if role.result is None:
            continue
        keys = ("global_step", *job_case.exact.get(label, ()),
                *job_case.close.get(label, {}), *job_case.maximums.get(label, {}))
        results[label] = {key: _fact(role.result, key) for key in dict.fromkeys(keys)}
    return {"exit_codes": job_run.exit_codes(),
            "checkpoint_step": _checkpoint_step(job_run.model_dir),
            "results": results}


def check(job_case, shown, backend):
    """What is wrong with one backend's answers on their own; [] when nothing.

    Every role exits 0 (on tf.estimator, `oracle_may_hang` roles may hang), every
    role that exited 0 printed a result, the global steps are in bounds, and the
    maximums hold.
    """
    problems = []
    allowed_hang = job_case.oracle_may_hang if backend == jobs.ORACLE else ()
    low, high = job_case.global_steps
    for label, code in shown["exit_codes"].items():
        if code is None and label in allowed_hang:
            continue
        if code != 0:
            problems.append(f"{label} {'hung' if code is None else f'exited {code}'}")
        elif label not in shown["results"]:
            problems.append(f"{label} exited 0 without a MIGRATION_RESULT line")
    if not low <= (shown["checkpoint_step"] or -1) <= high:
        problems.append(f"newest checkpoint at step {shown['checkpoint_step']}, "
                        f"expected {low}..{high}")
    ends_early = job_case.oracle_ends_early if backend == jobs.ORACLE else ()
    for label, facts in shown["results"].items():
        lowest = 0 if label in ends_early else low
        if not lowest <= facts["global_step"] <= high:
            problems.append(f"{label}: global_step {facts['global_step']}, "
                            f"expected {lowest}..{high}")
        for key, highest in job_case.maximums.get(label, {}).items():
            if not facts.get(key, math.inf) <= highest:
                problems.append(f"{label}: {key} = {facts.get(key)} > {highest}")
    return [f"{backend}: {problem}" for problem in problems]


def compare(job_case, shown, oracle):
    """Differences from tf.estimator's answers `oracle`; [] when they agree.

    Roles tf.estimator finished must have exited the same way and agree on the
    case's exact and close facts; roles it left hanging are not compared (`check`
    requires estimator_lite to end them).
    """
    problems = []
    for label, code in oracle["exit_codes"].items():
        if code is None:
            continue
        if shown["exit_codes"].get(label) != code:
            problems.append(f"{label}: exit code {shown['exit_codes'].get(label)}, "
                            f"tf.estimator {code}")
        mine, theirs = shown["results"].get(label, {}), oracle["results"].get(label, {})
        for key in job_case.exact.get(label, ()):
            if mine.get(key) != theirs.get(key):
                problems.append(f"{label}: {key} = {mine.get(key)!r}, tf.estimator "
                                f"{theirs.get(key)!r}")
        for key, tol in job_case.close.get(label, {}).items():
            a, b = mine.get(key), theirs.get(key)
            if a is None or b is None or not math.isclose(a, b, rel_tol=tol.rel,
                                                          abs_tol=tol.abs):
                problems.append(f"{label}: {key} = {a}, tf.estimator {b} (tolerance "
                                f"rel {tol.rel} abs {tol.abs})")
    return problems


def load_oracle_answers():
    """The recorded tf.estimator answers: {case name: answers}."""
    with open(ORACLE_ANSWERS_PATH, encoding="utf-8") as f:
        return json.load(f)


def main(argv):
    """Runs cases on tf.estimator; prints their answers, or records them."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--record", action="store_true",
                        help=f"write the answers to {ORACLE_ANSWERS_PATH}")
    parser.add_argument("names", nargs="*", help="cases (default: all)")
    args = parser.parse_args(argv)
    recorded = load_oracle_answers() if os.path.exists(ORACLE_ANSWERS_PATH) else {}
    problems = []
    for name in args.names or [c.name for c in CASES]:
        job_case = case(name)
        with tempfile.TemporaryDirectory(prefix=f"distribute_{name}_") as work_dir:
            run = job_case.run(jobs.ORACLE, work_dir)
            shown = answers(job_case, run)
            found = check(job_case, shown, jobs.ORACLE)
            if found:
                print("\n".join(run.failures()))
        problems.extend(f"{name}: {p}" for p in found)
        recorded[name] = shown
        print(f"{name} ({run.seconds:.0f} s): {json.dumps(shown, sort_keys=True)}",
              flush=True)
    if args.record and not problems:
        with open(ORACLE_ANSWERS_PATH, "w", encoding="utf-8") as f:
            json.dump(recorded, f, indent=1, sort_keys=True)
            f.write("\n")
    print("\n".join(problems) or "ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
