"""Builds heads with tf.estimator's private v1 head factories and dumps what they do.

Written once for both libraries: run by the oracle interpreter it uses
`tensorflow_estimator.python.estimator.canned.head`; run with `lite` it uses
`estimator_lite._compat.canned_head`. Per case: the EVAL spec's loss and metrics, the
TRAIN spec's loss (with a `train_op_fn`), the prediction keys, and the error class
of bad arguments. Prints one JSON line.

Usage: v1_head_factories_driver.py [lite]
"""

import json
import sys

import numpy as np
import tensorflow as tf

if len(sys.argv) > 1 and sys.argv[1] == "lite":
    from estimator_lite._compat import canned_head as head_lib
    from estimator_lite.model_fn import ModeKeys
else:
    from tensorflow_estimator.python.estimator.canned import head as head_lib
    from tensorflow_estimator.python.estimator.mode_keys import ModeKeys

_RNG = np.random.RandomState(3)
_N = 6


def _cases():
    binary = _RNG.randint(0, 2, size=(_N, 1)).astype(np.int64)
    class3 = _RNG.randint(0, 3, size=(_N, 1)).astype(np.int64)
    real2 = _RNG.randn(_N, 2).astype(np.float32)
    weights = (_RNG.rand(_N, 1) + 0.5).astype(np.float32)
    return {
        "binary": (head_lib._binary_logistic_head_with_sigmoid_cross_entropy_loss,
                   1, binary),
        "binary_weighted_thresholds": (
            lambda: head_lib._binary_logistic_head_with_sigmoid_cross_entropy_loss(
                weight_column="w", thresholds=[0.3, 0.7]), 1, binary),
        "binary_mean": (
            lambda: head_lib._binary_logistic_head_with_sigmoid_cross_entropy_loss(
                loss_reduction=tf.compat.v1.losses.Reduction.MEAN, name="b"), 1, binary),
        "multi_class": (
            lambda: head_lib._multi_class_head_with_softmax_cross_entropy_loss(
                3, weight_column="w"), 3, class3),
        "regression": (lambda: head_lib._regression_head(label_dimension=2), 2, real2),
        "regression_inverse_link": (
            lambda: head_lib._regression_head(label_dimension=2,
                                              inverse_link_fn=tf.math.exp), 2, real2),
        "chooser_2": (lambda: head_lib._binary_logistic_or_multi_class_head(
            2, None, None, tf.compat.v1.losses.Reduction.SUM), 1, binary),
        "chooser_3": (lambda: head_lib._binary_logistic_or_multi_class_head(
            3, None, None, tf.compat.v1.losses.Reduction.SUM), 3, class3),
    }, weights


def _run(make_head, logits_dimension, labels, weights):
    out = {}
    logits = _RNG.randn(_N, logits_dimension).astype(np.float32)
    for mode in (ModeKeys.EVAL, ModeKeys.TRAIN):
        with tf.Graph().as_default():
            tf.compat.v1.train.create_global_step()
            head = make_head()
            spec = head.create_estimator_spec(
                features={"w": tf.constant(weights)}, mode=mode,
                logits=tf.constant(logits), labels=tf.constant(labels),
                train_op_fn=lambda loss: tf.no_op())
            with tf.compat.v1.Session() as session:
                session.run([tf.compat.v1.global_variables_initializer(),
                             tf.compat.v1.local_variables_initializer()])
                if mode == ModeKeys.EVAL:
                    session.run([op for _, op in spec.eval_metric_ops.values()])
                    out["metrics"] = {k: float(session.run(v))
                                      for k, (v, _) in spec.eval_metric_ops.items()}
                    out["eval_loss"] = float(session.run(spec.loss))
                    out["prediction_keys"] = sorted(spec.predictions)
                    out["logits_dimension"] = head.logits_dimension
                    out["name"] = head.name
                else:
                    out["train_loss"] = float(session.run(spec.loss))
    return out


def _error(make):
    try:
        make()
    except Exception as e:  # noqa: BLE001 - the class is the observation
        return type(e).__name__
    return None


def main():
    cases, weights = _cases()
    report = {"tf_version": tf.__version__}
    for name, (make_head, dim, labels) in cases.items():
        report[name] = _run(make_head, dim, labels, weights)
    factory = head_lib._binary_logistic_head_with_sigmoid_cross_entropy_loss
    report["errors"] = {
        "binary_vocab_str": _error(lambda: factory(label_vocabulary="ab")),
        "binary_threshold": _error(lambda: factory(thresholds=[1.5])),
        "binary_reduction_none": _error(
            lambda: factory(loss_reduction=tf.compat.v1.losses.Reduction.NONE)),
        "multi_class_2": _error(
            lambda: head_lib._multi_class_head_with_softmax_cross_entropy_loss(2)),
        "regression_dim_0": _error(lambda: head_lib._regression_head(label_dimension=0)),
    }
    print(json.dumps(report, sort_keys=True))


if __name__ == "__main__":
    main()
