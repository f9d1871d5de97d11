"""A user's own Keras optimizer classes in canned estimators and heads, as users write.

Run by several interpreters with the same code, then compared
(tests/canned/user_optimizer_test.py):

  * the oracle (TF 2.15 + tensorflow-estimator 2.15): flavor ``oracle``, the classes
    derive from ``tf.keras.optimizers.legacy.Optimizer`` (what tf.estimator 2.15
    trained), and the head model_fn ties ``optimizer.iterations`` to the global
    step itself (tf.estimator's heads never did);
  * estimator_lite with tf-keras (TF_USE_LEGACY_KERAS=1): flavor ``legacy``, the
    same classes, the head model_fn leaving ``iterations`` untied (estimator_lite
    ties it), and the linear model trained in two train() calls with the same
    optimizer instance (tf.estimator 2.15 refused the second call);
  * estimator_lite with Keras 3: flavor ``keras3``, HandSGD derives from
    ``tf.keras.optimizers.Optimizer``; there it cannot own the global step, so the
    head model_fn's HandSGD advances it itself.

The classes:
  * HandSGD defines ``get_updates(loss, params)``: plain gradient descent written
    by hand, which tf.estimator 2.15 called to train;
  * UserMomentum (legacy Keras only) is a minimal OptimizerV2: ``_create_slots``,
    ``_resource_apply_dense`` and hyperparameters, trained through Keras' own
    gradient application;
  * ClippedSGD (legacy Keras only) overrides ``get_gradients``, which Keras'
    ``get_updates`` calls.

    python user_optimizer_driver.py <workdir> <flavor>

prints one JSON line {"tf_version", "results": {case: result}}; a result is
{"variables": {name: value}, "metrics": {...}} or {"error": message}.
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf

TRAIN_STEPS = 10
FIRST_CALL_STEPS = 6  # The ``legacy`` flavor's first train() call of two.
_N = 16
# Every step trains on the whole table, so two train() calls (the input_fn starts
# again in each) reach what one call of as many steps reaches.
BATCH_SIZE = _N


def data():
    """A small deterministic table: x (2 numbers), y = 2 x0 - x1 + 0.5, a 3-class label."""
    rng = np.random.RandomState(0)
    x = rng.randn(_N, 2).astype(np.float32)
    y = (2.0 * x[:, :1] - x[:, 1:] + 0.5).astype(np.float32)
    return x, y, np.digitize(y[:, 0], [-0.5, 1.0]).astype(np.int64)


def input_fn(label_kind, epochs=None):
    """An input_fn over the table (one batch of all of it per step)."""
    def fn():
        x, y, classes = data()
        labels = {"y": y, "class": classes}[label_kind]
        return tf.data.Dataset.from_tensor_slices(({"x": x}, labels)).repeat(
            epochs).batch(BATCH_SIZE)
    return fn


def _legacy(flavor):
    return flavor in ("oracle", "legacy")


def hand_sgd(flavor, rate, bump_global_step=False):
    """A HandSGD instance: gradient descent written in the user's get_updates."""
    legacy = _legacy(flavor)
    base = tf.keras.optimizers.legacy.Optimizer if legacy else tf.keras.optimizers.Optimizer

    class HandSGD(base):
        def __init__(self, rate, name="HandSGD"):
            if legacy:
                super().__init__(name)
            else:
                super().__init__(learning_rate=rate, name=name)
            self.rate = rate

        def get_updates(self, loss, params):
            grads = tf.gradients(loss, params)
            steps = [p.assign_sub(self.rate * g)
                     for p, g in zip(params, grads, strict=True)]
            with tf.control_dependencies(steps):
                if bump_global_step:  # Keras 3: the global step is not its counter.
                    return [tf.compat.v1.train.get_global_step().assign_add(1).op]
                if legacy:
                    return [self.iterations.assign_add(1).op]
                return [tf.group(*steps)]  # estimator_lite advances the global step.

        def get_config(self):
            return {**super().get_config(), "rate": self.rate}

    return HandSGD(rate)


def user_momentum(learning_rate, momentum):
    """A UserMomentum instance: a minimal legacy OptimizerV2 subclass."""

    class UserMomentum(tf.keras.optimizers.legacy.Optimizer):
        def __init__(self, learning_rate, momentum, name="UserMomentum"):
            super().__init__(name)
            self._set_hyper("learning_rate", learning_rate)
            self._set_hyper("momentum", momentum)

        def _create_slots(self, var_list):
            for var in var_list:
                self.add_slot(var, "velocity")

        def _resource_apply_dense(self, grad, var, apply_state=None):
            dtype = var.dtype.base_dtype
            velocity = self.get_slot(var, "velocity")
            new_velocity = velocity.assign(
                self._get_hyper("momentum", dtype) * velocity
                - self._get_hyper("learning_rate", dtype) * grad)
            return var.assign_add(new_velocity)

        def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
            raise NotImplementedError("dense features only")

        def get_config(self):
            return {**super().get_config(),
                    "learning_rate": self._serialize_hyperparameter("learning_rate"),
                    "momentum": self._serialize_hyperparameter("momentum")}

    return UserMomentum(learning_rate, momentum)


def clipped_sgd(learning_rate):
    """A legacy SGD whose get_gradients (called by Keras' get_updates) clips."""

    class ClippedSGD(tf.keras.optimizers.legacy.SGD):
        def get_gradients(self, loss, params):
            return [tf.clip_by_value(g, -0.1, 0.1) for g in tf.gradients(loss, params)]

    return ClippedSGD(learning_rate)


def _x():
    return [tf.feature_column.numeric_column("x", shape=(2,))]


def _linear_hand_sgd(est, flavor, model_dir):
    return est.LinearRegressor(_x(), model_dir=model_dir,
                               optimizer=hand_sgd(flavor, 0.05)), "y"


def _baseline_hand_sgd(est, flavor, model_dir):
    return est.BaselineClassifier(n_classes=3, model_dir=model_dir,
                                  optimizer=hand_sgd(flavor, 0.2)), "class"


def _linear_only_combined_hand_sgd(est, flavor, model_dir):
    return est.DNNLinearCombinedRegressor(
        model_dir=model_dir, linear_feature_columns=_x(),
        linear_optimizer=hand_sgd(flavor, 0.05)), "y"


def _linear_user_momentum(est, flavor, model_dir):
    del flavor
    return est.LinearRegressor(_x(), model_dir=model_dir,
                               optimizer=user_momentum(0.05, 0.5)), "y"


def _linear_clipped_sgd(est, flavor, model_dir):
    del flavor
    return est.LinearRegressor(_x(), model_dir=model_dir,
                               optimizer=clipped_sgd(0.5)), "y"


def _head_hand_sgd(est, flavor, model_dir):
    # Made outside the model_fn: a Keras 3 optimizer made in the graph would put
    # its own variables there.
    optimizer = hand_sgd(flavor, 0.05, bump_global_step=not _legacy(flavor))

    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.zeros_initializer())
        b = tf.compat.v1.get_variable("b", [1], initializer=tf.zeros_initializer())
        logits = tf.matmul(features["x"], w) + b
        if mode == est.ModeKeys.TRAIN and flavor == "oracle":
            # tf.estimator's heads never tied it (estimator_lite's do).
            optimizer.iterations = tf.compat.v1.train.get_global_step()
        return est.RegressionHead().create_estimator_spec(
            features=features, mode=mode, logits=logits, labels=labels,
            optimizer=optimizer if mode == est.ModeKeys.TRAIN else None,
            trainable_variables=[w, b])
    return est.Estimator(model_fn, model_dir=model_dir), "y"


CASES = {"linear_hand_sgd": _linear_hand_sgd,
         "baseline_hand_sgd": _baseline_hand_sgd,
         "linear_only_combined_hand_sgd": _linear_only_combined_hand_sgd,
         "head_hand_sgd": _head_hand_sgd,
         "linear_user_momentum": _linear_user_momentum,
         "linear_clipped_sgd": _linear_clipped_sgd}
# Keras 3 has no OptimizerV2 (nor get_gradients) to derive from.
LEGACY_ONLY = ("linear_user_momentum", "linear_clipped_sgd")


def cases(flavor):
    """The case names run for `flavor`."""
    return [name for name in CASES if _legacy(flavor) or name not in LEGACY_ONLY]


def run_case(est, name, flavor, workdir):
    """Trains one case TRAIN_STEPS steps, evaluates it; returns its result dict."""
    model_dir = os.path.join(workdir, flavor, name)
    estimator, label_kind = CASES[name](est, flavor, model_dir)
    if flavor == "legacy" and name == "linear_hand_sgd":
        # The same optimizer instance in a second train() (a new graph).
        estimator.train(input_fn(label_kind), steps=FIRST_CALL_STEPS)
    estimator.train(input_fn(label_kind), max_steps=TRAIN_STEPS)
    variables = {n: np.asarray(estimator.get_variable_value(n)).tolist()
                 for n in estimator.get_variable_names()}
    metrics = estimator.evaluate(input_fn(label_kind, 1))
    return {"variables": variables, "metrics": {k: float(v) for k, v in metrics.items()}}


def run(est, flavor, workdir):
    """{case: result or {"error": ...}} for every case of `flavor`."""
    results = {}
    for name in cases(flavor):
        try:
            results[name] = run_case(est, name, flavor, workdir)
        except Exception as error:  # noqa: BLE001 (reported by its test)
            results[name] = {"error": f"{type(error).__name__}: {error}"}
    return results


def main(argv):
    workdir, flavor = argv[1], argv[2]
    if flavor == "oracle":
        est = tf.estimator
    else:
        import estimator_lite as est  # noqa: PLC0415 (only outside the oracle)
    print(json.dumps({"tf_version": tf.__version__, "results": run(est, flavor, workdir)}))


if __name__ == "__main__":
    main(sys.argv)
