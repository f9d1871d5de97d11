"""The one module of role facts: names, which train, which are unique, which mark done."""

import ast
import re

import pytest

from estimator_lite._engine import roles

ERR_EVALUATOR_INDEX = "only one evaluator (index 0) is supported, got index 1"


def test_task_type_spells_the_same_names():
    from estimator_lite.run_config import TaskType  # noqa: PLC0415
    assert (TaskType.CHIEF, TaskType.MASTER, TaskType.WORKER, TaskType.PS,
            TaskType.EVALUATOR) == ("chief", "master", "worker", "ps", "evaluator")
    assert set(roles.ALL) == {"chief", "master", "worker", "ps", "evaluator"}


def test_role_facts():
    assert [r for r in roles.ALL if roles.trains(r)] == ["chief", "worker", "master"]
    assert [r for r in roles.ALL if roles.is_unique(r)] == ["chief", "master", "evaluator"]
    assert set(roles.MARKS_TRAINING_COMPLETE) == set(roles.CHIEFS)
    assert roles.MARKS_WORKER_DONE == ("worker",)


def test_evaluator_index_check():
    roles.check_evaluator_index("evaluator", 0)
    roles.check_evaluator_index("worker", 3)
    with pytest.raises(ValueError, match=re.escape(ERR_EVALUATOR_INDEX)):
        roles.check_evaluator_index("evaluator", 1)


def test_roles_imports_nothing():
    # launch and local_cluster read it without loading TensorFlow.
    with open(roles.__file__) as f:
        tree = ast.parse(f.read())
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
