"""Strategy jobs as real processes on 127.0.0.1: every role must end by itself.

The multi-worker tutorial (examples/migration/multi_worker_tutorial.py) runs as two
workers with a worker-only TF_CONFIG and as chief + worker + evaluator under
`train_and_evaluate`; a v1 ParameterServerStrategy program runs as ps + chief +
worker (tests/distribute/cases.py). On estimator_lite every role must exit 0 within
the job's deadline (a role still running then is SIGKILLed and the test fails,
printing every role's log tail), reach the final global_step, and give
tf.estimator 2.15's answers, recorded in tests/data/distribute_oracle.json (the
oracle test re-runs the jobs on tf.estimator to check the recording).
"""

import pytest

from tests.distribute import cases, jobs
from tests.oracle import requires_oracle

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def oracle_answers():
    return cases.load_oracle_answers()


def test_recorded_answers_cover_every_case_and_role(oracle_answers):
    assert sorted(oracle_answers) == sorted(c.name for c in cases.CASES)
    for job_case in cases.CASES:
        recorded = oracle_answers[job_case.name]
        labels = {label for label, _ in job_case.roles()}
        assert set(recorded["exit_codes"]) == labels, job_case.name
        # Every role tf.estimator ended has the facts the case compares.
        for label, keys in job_case.exact.items():
            assert set(keys) <= set(recorded["results"][label]), (job_case.name, label)
        assert cases.check(job_case, recorded, jobs.ORACLE) == []


def test_tf_estimators_ps_never_exits_and_the_others_do(oracle_answers):
    # What estimator_lite must do better: every role ends.
    codes = oracle_answers["ps_chief_worker"]["exit_codes"]
    assert codes == {"ps0": None, "chief0": 0, "worker0": 0}


@pytest.mark.parametrize("job_case", cases.CASES, ids=lambda c: c.name)
def test_job_ends_by_itself_with_tf_estimators_answers(job_case, oracle_answers,
                                                      tmp_path):
    run = job_case.run(jobs.LITE, str(tmp_path))
    shown = cases.answers(job_case, run)
    problems = (cases.check(job_case, shown, jobs.LITE)
                + cases.compare(job_case, shown, oracle_answers[job_case.name]))
    assert problems == [], "\n".join(problems + run.failures())


@requires_oracle
@pytest.mark.parametrize("job_case", cases.CASES, ids=lambda c: c.name)
def test_tf_estimator_gives_the_recorded_answers(job_case, oracle_answers, tmp_path):
    run = job_case.run(jobs.ORACLE, str(tmp_path))
    shown = cases.answers(job_case, run)
    recorded = oracle_answers[job_case.name]
    problems = (cases.check(job_case, shown, jobs.ORACLE)
                + cases.compare(job_case, shown, recorded))
    assert problems == [], "\n".join(problems + run.failures())
    assert shown["exit_codes"] == recorded["exit_codes"]
