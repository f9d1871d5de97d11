"""Binary classifiers trained and evaluated on soft (float in [0, 1]) labels.

Run as a script by the TF 2.15 interpreter (ESTIMATOR_LITE_TF215_PYTHON) it uses
tf.estimator and tf.compat.v1.estimator; tests/head/binary_class_head_test.py
imports it and calls `run` with estimator_lite. LinearClassifier starts from zero
weights, so both libraries train the same numbers: per model, the evaluate()
metrics after a few steps are printed as one JSON line.

Usage: soft_labels_driver.py WORK_DIR
"""

import json
import os
import sys
import types

import numpy as np
import tensorflow as tf

STEPS = 5
X = np.array([[-1.0], [0.5], [2.0], [-0.3], [1.2], [-2.0], [0.1], [0.9]], np.float32)
SOFT_LABELS = np.array([[0.8], [0.4], [0.0], [1.0], [0.6], [0.3], [0.9], [0.2]],
                       np.float32)
WEIGHTS = np.array([[1.0], [2.0], [0.5], [1.0], [3.0], [1.5], [1.0], [0.7]], np.float32)


def input_fn():
    """All examples in one batch, repeated."""
    features = {"x": X, "w": WEIGHTS}
    return tf.data.Dataset.from_tensor_slices((features, SOFT_LABELS)).batch(8).repeat()


def run(lib, work_dir):
    """{model: evaluate() metrics}; `lib` has `v2` and `v1` estimator namespaces."""
    x = tf.feature_column.numeric_column("x")
    models = {
        "linear_v2": lambda d: lib.v2.LinearClassifier([x], model_dir=d,
                                                       weight_column="w"),
        "linear_v1": lambda d: lib.v1.LinearClassifier([x], model_dir=d,
                                                       weight_column="w"),
        "linear_v2_adagrad": lambda d: lib.v2.LinearClassifier(
            [x], model_dir=d, optimizer="Adagrad"),
    }
    results = {}
    for name, make in models.items():
        estimator = make(os.path.join(work_dir, name))
        estimator.train(input_fn, steps=STEPS)
        metrics = estimator.evaluate(input_fn, steps=2)
        results[name] = {k: float(v) for k, v in metrics.items()}
    return results


def main(work_dir):
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    lib = types.SimpleNamespace(v2=tf.estimator, v1=tf.compat.v1.estimator)
    print(json.dumps({"tf_version": tf.__version__, "results": run(lib, work_dir)}))


if __name__ == "__main__":
    main(sys.argv[1])
