"""tf.estimator 2.15's ``canned.optimizers.get_optimizer_instance``, called the same way.

TF1-era model_fns import it by module path. tests/optimizers/v1_test.py calls
`report` with the function estimator_lite serves there (installed), and runs this
file with the TF 2.15 interpreter, where tensorflow_estimator serves it:

    python optimizer_instance_driver.py

prints one JSON line (`report`'s dict): per case, the optimizer's class and
learning rate, or the error's type.
"""

import importlib
import json

import tensorflow as tf

MODULE = "tensorflow_estimator.python.estimator.canned.optimizers"
NAMES = ("Adagrad", "Adam", "Ftrl", "RMSProp", "SGD")


def get_optimizer_instance():
    """The function, imported by its tf.estimator path."""
    return importlib.import_module(MODULE).get_optimizer_instance


def _learning_rate(optimizer):
    """The rate a tf.compat.v1.train optimizer was built with (classes name it apart)."""
    for name in ("_learning_rate", "_lr"):
        value = getattr(optimizer, name, None)
        if value is not None:
            return float(value)
    return None


def _cases():
    sgd = tf.compat.v1.train.GradientDescentOptimizer(0.3)
    cases = {f"name_{n}": ((n,), {"learning_rate": 0.1}) for n in NAMES}
    cases.update({
        "name_without_rate": (("Adam",), {}),
        "name_with_zero_rate": (("Adam",), {"learning_rate": 0}),
        "unknown_name": (("Nadam",), {"learning_rate": 0.1}),
        "lowercase_name": (("adam",), {"learning_rate": 0.1}),
        "instance": ((sgd,), {"learning_rate": 5.0}),
        "callable": ((lambda: sgd,), {}),
        "number": ((3,), {}),
        "none": ((None,), {}),
        "callable_of_number": ((lambda: 3,), {}),
    })
    return sgd, cases


def report(get_optimizer_instance):
    """{case: {"class", "learning_rate", "is_given"} or {"error"}}."""
    results = {}
    with tf.Graph().as_default():
        given, cases = _cases()
        for key, (args, kwargs) in cases.items():
            try:
                optimizer = get_optimizer_instance(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 - the type is what is compared
                results[key] = {"error": type(e).__name__}
                continue
            results[key] = {"class": type(optimizer).__name__,
                            "learning_rate": _learning_rate(optimizer),
                            "is_given": optimizer is given}
    return results


if __name__ == "__main__":
    out = report(get_optimizer_instance())
    out["tf_version"] = tf.__version__
    print(json.dumps(out))
