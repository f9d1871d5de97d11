"""tf.estimator's private v1 head factories (`_compat/canned_head.py`) against the oracle's.

tests/oracle/v1_head_factories_driver.py builds each head with the factory of
tf.estimator 2.15 (oracle interpreter) and of estimator_lite, and dumps the EVAL
loss and metrics, the TRAIN loss, prediction keys and bad arguments' errors.
"""

import inspect
import json
import os
import sys

import pytest

from estimator_lite._compat import canned_head as head_lib
from estimator_lite.canned import flavors
from tests.oracle import driver_path, requires_oracle, run_oracle_driver
from tests.support import zygote

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DRIVER = driver_path("v1_head_factories_driver.py")

# tf.estimator 2.15's signatures (tensorflow_estimator/python/estimator/canned/head.py).
SIGNATURES = {
    "_binary_logistic_head_with_sigmoid_cross_entropy_loss":
        "(weight_column=None, thresholds=None, label_vocabulary=None, "
        "loss_reduction='weighted_sum', loss_fn=None, name=None)",
    "_multi_class_head_with_softmax_cross_entropy_loss":
        "(n_classes, weight_column=None, label_vocabulary=None, "
        "loss_reduction='weighted_sum', loss_fn=None, name=None)",
    "_regression_head":
        "(weight_column=None, label_dimension=1, loss_reduction='weighted_sum', "
        "loss_fn=None, inverse_link_fn=None, name=None)",
    "_binary_logistic_or_multi_class_head":
        "(n_classes, weight_column, label_vocabulary, loss_reduction)",
}


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_factories_have_tf_estimators_signatures(name):
    assert str(inspect.signature(getattr(head_lib, name))) == SIGNATURES[name]


def test_the_binary_head_is_the_v1_classifiers():
    head = head_lib._binary_logistic_head_with_sigmoid_cross_entropy_loss()
    assert isinstance(head, flavors.V1BinaryClassHead)


def _close(lite, oracle, path=""):
    """Where two dumps differ (floats within 1e-5 relative)."""
    if isinstance(oracle, dict):
        assert sorted(lite) == sorted(oracle), path
        return [d for k in oracle for d in _close(lite[k], oracle[k], f"{path}/{k}")]
    if isinstance(oracle, float):
        return [] if lite == pytest.approx(oracle, rel=1e-5) else [(path, lite, oracle)]
    return [] if lite == oracle else [(path, lite, oracle)]


@pytest.mark.slow
@requires_oracle
def test_heads_behave_as_tf_estimators_v1_heads():
    oracle = run_oracle_driver(DRIVER)
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    result = zygote.run([sys.executable, DRIVER, "lite"], capture_output=True,
                        text=True, env=env, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    lite = json.loads(result.stdout.strip().splitlines()[-1])
    oracle.pop("tf_version")
    lite.pop("tf_version")
    assert not _close(lite, oracle)
