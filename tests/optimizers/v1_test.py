"""tf.estimator's ``canned.optimizers.get_optimizer_instance`` (its v1 helper).

With `install_as_tf_estimator()`, ``tensorflow_estimator.python.estimator.canned.
optimizers.get_optimizer_instance`` is estimator_lite's
(`estimator_lite.optimizers.v1`). tests/oracle/optimizer_instance_driver.py calls
it the same way on both libraries: same optimizer classes and learning rates, the
given instance returned as it is, the same error types.
"""


import pytest
import tensorflow as tf

from estimator_lite.optimizers import v1
from tests.oracle import driver_path, load_driver, requires_oracle, run_oracle_driver
from tests.support.installed import installed_as_tf_estimator

DRIVER_PATH = driver_path("optimizer_instance_driver.py")

driver = load_driver(DRIVER_PATH, "optimizer_instance_driver")


@pytest.fixture
def installed_function():
    """The function served at tf.estimator's path while the test runs."""
    with installed_as_tf_estimator():
        yield driver.get_optimizer_instance()


def test_the_path_serves_estimator_lites_function(installed_function):
    assert installed_function is v1.get_optimizer_instance


@requires_oracle
def test_get_optimizer_instance_does_what_tf_estimators_does(installed_function):
    expected = run_oracle_driver(DRIVER_PATH)
    expected.pop("tf_version")
    assert driver.report(installed_function) == expected


def test_a_name_gives_the_v1_optimizer_with_the_rate():
    optimizer = v1.get_optimizer_instance("Ftrl", learning_rate=0.2)
    assert isinstance(optimizer, tf.compat.v1.train.FtrlOptimizer)
    assert driver._learning_rate(optimizer) == pytest.approx(0.2)


@pytest.mark.parametrize("args,message", [
    (("Adam",), "learning_rate is required"),
    (("Nadam", 0.1), r"opt must be one of \('Adagrad', 'Adam', 'Ftrl', 'RMSProp', "
                     r"'SGD'\) when given as a name, got 'Nadam'"),
    ((tf.keras.optimizers.SGD,), "opt must be a tf.compat.v1.train.Optimizer.*"
                                 "a Keras optimizer"),
])
def test_errors_name_the_argument_and_the_value(args, message):
    with pytest.raises(ValueError, match=message):
        v1.get_optimizer_instance(*args)
