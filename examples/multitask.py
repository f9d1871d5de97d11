"""Two heads on one dataset, with early stopping and a learning-rate cut on plateau.

Head "digit" classifies the 10 digits; head "parity" says odd or even. Both share a
hidden layer; their losses are combined by multi_task_spec, their metrics are
reported as digit/accuracy, parity/accuracy, ... The learning rate halves when the
digit loss stops improving for 2 evaluations, and training stops early when digit
accuracy has not improved for 600 steps. Runs locally, or on a cluster through the
launcher (every role runs this same script):

    python examples/multitask.py --model-dir /tmp/multitask --fresh-start
    python -m estimator_lite.launch --ps 1 --workers 1 --evaluator -- \\
        python examples/multitask.py --model-dir /tmp/multitask_cluster
"""

import argparse
import os
import sys
import tempfile

import tensorflow.compat.v1 as tf

import estimator_lite as el

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import digits  # noqa: E402 - the sibling example, importable once its folder is on the path

PLATEAU = el.ReduceLearningRateOnPlateau("digit/loss", factor=0.5, patience=2,
                                         run_every_secs=None, run_every_steps=50)


def _head(hidden, labels, classes, name, mode):
    logits = digits._dense(hidden, classes, f"{name}_logits")
    predicted = tf.argmax(logits, axis=1)
    if mode == el.ModeKeys.PREDICT:
        return el.Task(name, predictions=predicted)
    return el.Task(name, loss=tf.losses.sparse_softmax_cross_entropy(labels, logits),
                   predictions=predicted,
                   eval_metric_ops={"accuracy": tf.metrics.accuracy(labels, predicted)})


def model_fn(features, labels, mode, params):
    hidden = digits._dense(features["pixels"], 128, "shared", tf.nn.relu)
    tasks = [_head(hidden, labels, digits.NUM_CLASSES, "digit", mode),
             _head(hidden, None if labels is None else labels % 2, 2, "parity", mode)]
    tasks[1] = tasks[1]._replace(weight=0.5)
    learning_rate = PLATEAU.learning_rate(params["learning_rate"])
    return el.multi_task_spec(mode, tasks,
                              optimizer=tf.train.AdamOptimizer(learning_rate))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--max-steps", type=int, default=3000)
    parser.add_argument("--fresh-start", action="store_true",
                        help="first remove checkpoints/events/exports of an earlier run")
    args = parser.parse_args(argv)
    tf.logging.set_verbosity(tf.logging.INFO)
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="multitask_")
    config = el.RunConfig(model_dir=model_dir, save_checkpoints_steps=200,
                          log_step_count_steps=200, experimental_max_worker_delay_secs=2)
    if args.fresh_start and config.is_chief:
        el.fresh_start(model_dir)
    x_train, y_train, x_test, y_test = digits.load_digits()
    estimator = el.Estimator(model_fn, config=config, params={"learning_rate": 0.01})
    hooks = [PLATEAU.make_hook(estimator),
             el.stop_if_no_increase_hook(estimator, "digit/accuracy", 600,
                                         run_every_secs=None, run_every_steps=50)]
    metrics, _ = el.train_and_evaluate(
        estimator,
        el.TrainSpec(digits.make_input_fn(x_train, y_train), max_steps=args.max_steps,
                     hooks=hooks),
        el.EvalSpec(digits.make_input_fn(x_test, y_test, epochs=1, shuffle=False),
                    steps=None, start_delay_secs=1, throttle_secs=0))
    if metrics is not None:
        role = config.task_type if os.environ.get("TF_CONFIG") else "local"
        print(f"{role}: digit accuracy {metrics['digit/accuracy']:.4f}, "
              f"parity accuracy {metrics['parity/accuracy']:.4f} at step "
              f"{metrics['global_step']}")


if __name__ == "__main__":
    main()
