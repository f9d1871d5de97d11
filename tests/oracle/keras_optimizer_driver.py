"""Keras optimizers and learning rates in heads and canned estimators, as users write.

Run by three interpreters with the same code, then compared (tests/head/
keras_optimizer_test.py, tests/canned/keras_learning_rate_test.py):

  * the oracle (TF 2.15 + tensorflow-estimator 2.15, ``tf.keras`` = Keras 2): flavor
    ``oracle``, ``tf.keras.optimizers.legacy.*`` as tf.estimator 2.15 required, and
    ``optimizer.iterations`` tied to the global step in head model_fns (without it
    tf.estimator 2.15 never advanced the global step);
  * estimator_lite with Keras 3: flavor ``keras`` (``tf.keras.optimizers.*``);
  * estimator_lite with tf-keras (TF_USE_LEGACY_KERAS=1): flavors ``keras`` (tf-keras'
    own optimizers) and ``legacy`` (``tf.keras.optimizers.legacy.*``, iterations not
    tied: estimator_lite ties them).

    python keras_optimizer_driver.py <workdir> <group>[,<group>] <flavor>[,...]

(groups: heads, canned)

prints one JSON line {"tf_version", "results": {flavor: {case: result}}}; a result is
{"variables": {name: value}, "metrics": {...}} or {"error": message}.
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf

TRAIN_STEPS = 10
BATCH_SIZE = 4
_N = 16
HIDDEN_UNITS = 4


def data():
    """A small deterministic table: x (2 numbers) and a 3-class label."""
    rng = np.random.RandomState(0)
    x = rng.randn(_N, 2).astype(np.float32)
    score = x[:, 0] - 0.5 * x[:, 1]
    return x, np.digitize(score, [-0.5, 0.5]).astype(np.int64)


def input_fn(label_kind, epochs=None):
    """An input_fn over the table, in order (every run sees the same batches)."""
    def fn():
        x, classes = data()
        labels = {"class": classes, "binary": (classes > 0).astype(np.int64)}[label_kind]
        return tf.data.Dataset.from_tensor_slices(({"x": x}, labels)).repeat(
            epochs).batch(BATCH_SIZE)
    return fn


def optimizers_module(flavor):
    """Where the user's optimizer classes come from for `flavor`."""
    if flavor in ("oracle", "legacy"):
        return tf.keras.optimizers.legacy
    return tf.keras.optimizers


def decayed_rate(flavor, initial, decay_steps, decay_rate, keras3_callable=True):
    """The docstring's exponential_decay on the global step, as the user passes it.

    Keras 3 refuses a tensor learning rate in its constructor; in a model_fn its
    users pass the same expression as a zero-argument callable (which Keras 3
    accepts). Inside a canned estimator's optimizer callable estimator_lite makes
    Keras 3 take the tensor itself (keras3_callable=False: the docstring as written).
    """
    def rate():
        return tf.compat.v1.train.exponential_decay(
            initial, global_step=tf.compat.v1.train.get_global_step(),
            decay_steps=decay_steps, decay_rate=decay_rate)
    if flavor == "keras" and not _tf_keras() and keras3_callable:
        return rate
    return rate()


def _tf_keras():
    return os.environ.get("TF_USE_LEGACY_KERAS") == "1" or tf.__version__.startswith(
        "2.15")


def schedules():
    return tf.keras.optimizers.schedules


# Head cases: name -> (head kind, label kind, optimizer builder(flavor), whether a
# tf-keras legacy user ties iterations to the global step as on tf.estimator 2.15).
HEAD_CASES = {
    "binary_adam_constant": (
        "binary", "binary", lambda f: optimizers_module(f).Adam(learning_rate=0.05), True),
    "multi_adam_exponential_decay_tensor": (
        "multi", "class",
        lambda f: optimizers_module(f).Adam(learning_rate=decayed_rate(f, 0.1, 3, 0.5)),
        False),
    "binary_sgd_momentum_piecewise_schedule": (
        "binary", "binary",
        lambda f: optimizers_module(f).SGD(
            learning_rate=schedules().PiecewiseConstantDecay([3, 6], [0.5, 0.2, 0.05]),
            momentum=0.9), False),
}


def _head(est, kind):
    if kind == "binary":
        return est.BinaryClassHead()
    return est.MultiClassHead(n_classes=3)


def head_model_fn(est, flavor, head_kind, build_optimizer, user_ties):
    """A TF2-style model_fn: fixed-weight linear logits, a head, a Keras optimizer."""
    head = _head(est, head_kind)

    def model_fn(features, labels, mode):
        n = head.logits_dimension
        w = tf.compat.v1.get_variable(
            "w", initializer=tf.constant(np.linspace(-0.3, 0.4, 2 * n).reshape(2, n),
                                         tf.float32))
        b = tf.compat.v1.get_variable("b", initializer=tf.zeros([n]))
        logits = tf.matmul(features["x"], w) + b
        optimizer = None
        if mode == "train":  # ModeKeys.TRAIN in both libraries.
            optimizer = build_optimizer(flavor)
            if flavor == "oracle" or (flavor == "legacy" and user_ties):
                # What tf.estimator 2.15's users had to write (estimator_lite ties it
                # when they did not).
                optimizer.iterations = tf.compat.v1.train.get_or_create_global_step()
        return head.create_estimator_spec(features, mode, logits, labels,
                                          optimizer=optimizer, trainable_variables=[w, b])
    return model_fn


def initial_checkpoint(path):
    """Writes the DNN's starting weights (warm-started by both libraries)."""
    os.makedirs(path)
    rng = np.random.RandomState(1)
    shapes = {"dnn/hiddenlayer_0/kernel": (2, HIDDEN_UNITS),
              "dnn/hiddenlayer_0/bias": (HIDDEN_UNITS,),
              "dnn/logits/kernel": (HIDDEN_UNITS, 3), "dnn/logits/bias": (3,)}
    with tf.Graph().as_default():
        for name, shape in shapes.items():
            tf.compat.v1.Variable(rng.uniform(-0.5, 0.5, shape).astype(np.float32),
                                  name=name)
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, os.path.join(path, "model.ckpt"))
    return path


def _canned_dnn(est, flavor, model_dir, init_dir):
    # DNNClassifier's own docstring example (exponential_decay on the global step).
    return est.DNNClassifier(
        hidden_units=[HIDDEN_UNITS], n_classes=3, model_dir=model_dir,
        feature_columns=[tf.feature_column.numeric_column("x", shape=(2,))],
        optimizer=lambda: optimizers_module(flavor).Adam(
            learning_rate=decayed_rate(flavor, 0.1, 4, 0.96, keras3_callable=False)),
        warm_start_from=init_dir), "class"


def user_optimizer_class(flavor):
    """A user's own optimizer class, defined in their program: SGD, other defaults.

    tf.estimator 2.15 took any subclass of a (legacy) Keras optimizer; the class
    is made here, so its module is the user's (`__main__` when run as a script).
    """
    class UserSGD(optimizers_module(flavor).SGD):
        def __init__(self, learning_rate=0.3, momentum=0.5, **kwargs):
            super().__init__(learning_rate=learning_rate, momentum=momentum, **kwargs)
    return UserSGD


def _canned_dnn_user_optimizer(est, flavor, model_dir, init_dir):
    return est.DNNClassifier(
        hidden_units=[HIDDEN_UNITS], n_classes=3, model_dir=model_dir,
        feature_columns=[tf.feature_column.numeric_column("x", shape=(2,))],
        optimizer=user_optimizer_class(flavor)(), warm_start_from=init_dir), "class"


def _canned_combined(est, flavor, model_dir, init_dir):
    x = tf.feature_column.numeric_column("x", shape=(2,))
    return est.DNNLinearCombinedClassifier(
        model_dir=model_dir, n_classes=3, linear_feature_columns=[x],
        linear_optimizer=lambda: optimizers_module(flavor).SGD(
            learning_rate=schedules().ExponentialDecay(0.2, 3, 0.5)),
        dnn_feature_columns=[x], dnn_hidden_units=[HIDDEN_UNITS],
        dnn_optimizer=lambda: optimizers_module(flavor).Adagrad(
            learning_rate=decayed_rate(flavor, 0.2, 5, 0.5)),
        warm_start_from=est.WarmStartSettings(init_dir, vars_to_warm_start="dnn/.*")
    ), "class"


CANNED_CASES = {"dnn_adam_exponential_decay_tensor": _canned_dnn,
                "combined_sgd_schedule_adagrad_tensor": _canned_combined,
                "dnn_user_sgd_subclass": _canned_dnn_user_optimizer}


def _variables(estimator):
    return {name: np.asarray(estimator.get_variable_value(name)).tolist()
            for name in estimator.get_variable_names()}


def _metrics(results):
    return {k: float(v) for k, v in results.items()}


def run_case(est, group, name, flavor, workdir):
    """Trains one case TRAIN_STEPS steps, evaluates it; returns its result dict."""
    model_dir = os.path.join(workdir, flavor, name)
    config = est.RunConfig(tf_random_seed=1, save_summary_steps=1000)
    if group == "heads":
        head_kind, label_kind, build, user_ties = HEAD_CASES[name]
        estimator = est.Estimator(head_model_fn(est, flavor, head_kind, build, user_ties),
                                  model_dir=model_dir, config=config)
    else:
        init_dir = os.path.join(workdir, "init")
        if not os.path.exists(init_dir):
            initial_checkpoint(init_dir)
        estimator, label_kind = CANNED_CASES[name](est, flavor, model_dir, init_dir)
    estimator.train(input_fn(label_kind), max_steps=TRAIN_STEPS)
    return {"variables": _variables(estimator),
            "metrics": _metrics(estimator.evaluate(input_fn(label_kind, 1)))}


def run(est, groups, flavors, workdir):
    """{flavor: {case: result or {"error": ...}}} for every case of `groups`."""
    results = {}
    for flavor in flavors:
        results[flavor] = {}
        for group in groups:
            for name in HEAD_CASES if group == "heads" else CANNED_CASES:
                try:
                    results[flavor][name] = run_case(est, group, name, flavor, workdir)
                except Exception as error:  # noqa: BLE001 (reported by its test)
                    results[flavor][name] = {"error": f"{type(error).__name__}: {error}"}
    return results


def main(argv):
    workdir, groups, flavors = argv[1], argv[2].split(","), argv[3].split(",")
    if "oracle" in flavors:
        est = tf.estimator
    else:
        import estimator_lite as est  # noqa: PLC0415 (only outside the oracle)
    results = run(est, groups, flavors, workdir)
    print(json.dumps({"tf_version": tf.__version__, "results": results}))


if __name__ == "__main__":
    main(sys.argv)
