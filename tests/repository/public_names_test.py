"""Every public name of tf.estimator 2.15 is in estimator_lite or deliberately absent.

tests/data/tf_estimator_2_15_public_names.txt was dumped from the real tf.estimator
(tests/oracle/dump_public_names.py). A name missing here must be listed, with its
reason, in docs/differences.md's "Deliberately absent" table.
"""

import estimator_lite as el
from tests.support.public_names import (
    dumped_names,
    stale_absent_names,
    undocumented_missing_names,
)

PREFIX = "tf.estimator."
NAMES_FILE = "tf_estimator_2_15_public_names.txt"
ABSENT_HEADING = "## Deliberately absent\n"


def test_the_list_is_the_real_one():
    names = dumped_names(NAMES_FILE, PREFIX)
    assert len(names) > 70 and "Estimator" in names and "export.EvalOutput" in names


def test_every_name_is_present_or_deliberately_absent():
    assert undocumented_missing_names(el, NAMES_FILE, PREFIX, ABSENT_HEADING) == []


def test_absent_table_lists_only_names_that_are_really_absent():
    assert stale_absent_names(el, PREFIX, ABSENT_HEADING) == []
