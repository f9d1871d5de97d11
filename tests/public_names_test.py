"""Every public name of tf.estimator 2.15 is in estimator_lite or deliberately absent.

tests/data/tf_estimator_2_15_public_names.txt was dumped from the real tf.estimator
(tests/compat/dump_public_names.py). A name missing here must be listed, with its
reason, in README's "Deliberately absent" table.
"""

import os
import re

import estimator_lite as el

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAMES = os.path.join(ROOT, "tests", "data", "tf_estimator_2_15_public_names.txt")
PREFIX = "tf.estimator."


def _tf_estimator_names():
    with open(NAMES) as f:
        return [line.strip()[len(PREFIX):] for line in f
                if line.strip() and not line.startswith("#")]


def _resolves(dotted):
    obj = el
    for part in dotted.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def _readme_absent_names():
    """Names in the first column of README's 'Deliberately absent' table."""
    with open(os.path.join(ROOT, "README.md")) as f:
        text = f.read()
    section = text.split("### Deliberately absent", 1)[1].split("\n#", 1)[0]
    return {m.group(1) for m in re.finditer(r"^\| `tf\.estimator\.([\w.]+)`", section,
                                            re.M)}


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
