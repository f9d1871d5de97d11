"""optuna-integration's TensorFlowPruningHook on an unchanged tf.estimator program.

Run through `python -m estimator_lite.run`: the hook's module imports
`tensorflow_estimator.python.estimator.early_stopping.read_eval_metrics` and
subclasses `tensorflow.estimator.SessionRunHook`; the program spells `tf.estimator`.
One trial completes (the hook reports each new evaluation's loss), one is pruned
at its first report. Prints `RESULT {json}`.
"""

import functools
import json
import sys
import warnings

import numpy as np
import optuna
import tensorflow as tf
from optuna_integration import TensorFlowPruningHook

MAX_STEPS = 30
SAVE_STEPS = 10


def input_fn():
    rng = np.random.RandomState(0)
    x = rng.rand(64, 2).astype(np.float32)
    y = (x @ np.array([[2.0], [-1.0]], np.float32) + 0.5).astype(np.float32)
    return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).repeat().batch(16)


def model_fn(features, labels, mode):
    w = tf.compat.v1.get_variable("w", [2, 1], initializer=tf.compat.v1.zeros_initializer())
    b = tf.compat.v1.get_variable("b", [1], initializer=tf.compat.v1.zeros_initializer())
    predictions = tf.matmul(features["x"], w) + b
    loss = tf.compat.v1.losses.mean_squared_error(labels, predictions)
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      predictions=predictions)


def objective(trial, model_dir):
    estimator = tf.estimator.Estimator(model_fn, config=tf.estimator.RunConfig(
        model_dir=f"{model_dir}/trial_{trial.number}", save_checkpoints_steps=SAVE_STEPS,
        save_summary_steps=SAVE_STEPS, log_step_count_steps=None))
    hook = TensorFlowPruningHook(trial, estimator, metric="loss", run_every_steps=1)
    train_spec = tf.estimator.TrainSpec(input_fn, max_steps=MAX_STEPS, hooks=[hook])
    eval_spec = tf.estimator.EvalSpec(input_fn, steps=2, start_delay_secs=0,
                                      throttle_secs=0)
    metrics, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    trial.set_user_attr("eval_dir", estimator.eval_dir())
    return float(metrics["loss"])


def main(model_dir):
    warnings.simplefilter("ignore")  # the hook is deprecated upstream (FutureWarning)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    results = {"hook_base": [c.__module__ for c in TensorFlowPruningHook.__mro__]}
    for label, pruner in (("kept", optuna.pruners.NopPruner()),
                          ("pruned", optuna.pruners.ThresholdPruner(upper=1e-9))):
        study = optuna.create_study(pruner=pruner)
        study.optimize(functools.partial(objective, model_dir=f"{model_dir}/{label}"),
                       n_trials=1)
        trial = study.trials[0]
        results[label] = {"state": trial.state.name, "value": trial.value,
                          "intermediate": {str(k): v for k, v in
                                           sorted(trial.intermediate_values.items())},
                          "eval_dir": trial.user_attrs.get("eval_dir")}
    print("RESULT " + json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1])
