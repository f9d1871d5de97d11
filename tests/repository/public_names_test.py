"""Every public name of tf.estimator 2.15 is in estimator_lite or deliberately absent.

tests/data/tf_estimator_2_15_public_names.txt was dumped from the real tf.estimator
(tests/oracle/dump_public_names.py). A name missing here must be listed, with its
reason, in docs/differences.md's "Deliberately absent" table.
"""

import estimator_lite as el
from tests.support.public_names import documented_absent_names, dumped_names, resolves

PREFIX = "tf.estimator."


def _tf_estimator_names():
    return dumped_names("tf_estimator_2_15_public_names.txt", PREFIX)


def _resolves(dotted):
    return resolves(el, dotted)


def _readme_absent_names():
    return documented_absent_names("## Deliberately absent\n", PREFIX)


def test_the_list_is_the_real_one():
    names = _tf_estimator_names()
    assert len(names) > 70 and "Estimator" in names and "export.EvalOutput" in names


def test_every_name_is_present_or_deliberately_absent():
    absent = _readme_absent_names()
    missing = [n for n in _tf_estimator_names() if not _resolves(n) and n not in absent]
    assert missing == []


def test_absent_table_lists_only_names_that_are_really_absent():
    stale = sorted(n for n in _readme_absent_names() if _resolves(n))
    assert stale == []
