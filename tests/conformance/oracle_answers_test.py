"""The recorded conformance answers are what tf.estimator 2.15 gives today.

Runs every scenario on the oracle (ESTIMATOR_LITE_TF215_PYTHON, installed by
.ci/run) and compares with tests/data/conformance_oracle.json, so the recording
that tests/conformance/conformance_test.py compares estimator_lite with cannot
drift from the oracle.
"""

import json

from tests.conformance import driver
from tests.conformance.conformance_test import run_driver
from tests.conformance.registry import differences
from tests.oracle import TF215_PYTHON, requires_oracle


@requires_oracle
def test_recorded_answers_are_the_oracles():
    with open(driver.RECORDED, encoding="utf-8") as f:
        recorded = json.load(f)
    live = run_driver(TF215_PYTHON, "oracle")
    assert sorted(live) == sorted(recorded), (
        "the scenarios changed: python tests/conformance/driver.py --record")
    drifted = {name: differences(recorded[name], live[name], rtol=1e-5)
               for name in live}
    drifted = {name: found for name, found in drifted.items() if found}
    assert not drifted, (f"{len(drifted)} recorded answers are not the oracle's: "
                         f"{json.dumps(drifted, indent=1)[:4000]}")
