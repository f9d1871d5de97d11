"""Reading a dumped list of tf.estimator names and the "Deliberately absent" tables.

The tables are in docs/differences.md.

Shared by tests/repository/public_names_test.py (tf.estimator) and tests/compat/v1_test.py
(tf.compat.v1.estimator). Not a test file.
"""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def dumped_names(file_name, prefix):
    """The names in tests/data/<file_name>, without `prefix` (e.g. 'tf.estimator.')."""
    with open(os.path.join(ROOT, "tests", "data", file_name)) as f:
        return [line.strip()[len(prefix):] for line in f
                if line.strip() and not line.startswith("#")]


def resolves(module, dotted):
    """Whether `module.<dotted>` exists, attribute by attribute."""
    obj = module
    for part in dotted.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def documented_absent_names(heading, prefix):
    """Names (without `prefix`) in the first column of docs/differences.md's table under
    `heading`."""
    with open(os.path.join(ROOT, "docs", "differences.md")) as f:
        text = f.read()
    section = text.split(heading, 1)[1].split("\n#", 1)[0]
    return {m.group(1) for m in re.finditer(rf"^\| `{re.escape(prefix)}([\w.]+)`",
                                            section, re.M)}


def undocumented_missing_names(module, file_name, prefix, heading):
    """Names of tests/data/<file_name> (without `prefix`) that `module` lacks and
    docs/differences.md's table under `heading` does not list."""
    absent = documented_absent_names(heading, prefix)
    return [name for name in dumped_names(file_name, prefix)
            if not resolves(module, name) and name not in absent]


def stale_absent_names(module, prefix, heading):
    """Names docs/differences.md's table under `heading` lists as absent that
    `module` has after all."""
    return sorted(name for name in documented_absent_names(heading, prefix)
                  if resolves(module, name))
