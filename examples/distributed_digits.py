"""The digits job on a cluster: chief, workers, ps and evaluator from TF_CONFIG.

Run it through the launcher, which starts one process per role on 127.0.0.1:

    python -m estimator_lite.launch --ps 1 --workers 2 --evaluator -- \\
        python examples/distributed_digits.py --model-dir /tmp/digits_cluster

Every process runs this same script; `train_and_evaluate` picks the role from
TF_CONFIG. Variables live on the ps; the chief checkpoints; the evaluator
evaluates each new checkpoint and exports; every process exits when done.

`--strategy multi_worker_mirrored` trains with MultiWorkerMirroredStrategy
instead (no ps; worker-only TF_CONFIG, worker 0 the chief), e.g. with restarts:

    python -m estimator_lite.launch --ps 0 --workers 2 --no-chief --evaluator \\
        --max-restarts 3 --model-dir /tmp/digits_mwms -- \\
        python examples/distributed_digits.py --model-dir /tmp/digits_mwms \\
        --strategy multi_worker_mirrored
"""

import argparse
import os
import sys

import tensorflow as tf

import estimator_lite as el

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import digits  # noqa: E402 - the sibling example, importable once its folder is on the path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", required=True, help="shared by every role")
    parser.add_argument("--max-steps", type=int, default=1000)
    parser.add_argument("--strategy", choices=("none", "multi_worker_mirrored"),
                        default="none", help="how the trainers share the model")
    args = parser.parse_args(argv)
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    x_train, y_train, x_test, y_test = digits.load_digits()
    strategy = None
    if args.strategy == "multi_worker_mirrored":
        # Graph mode first, as TF's multi-worker Estimator tutorial does.
        tf.compat.v1.disable_eager_execution()
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
    config = el.RunConfig(model_dir=args.model_dir, save_checkpoints_steps=250,
                          log_step_count_steps=100, experimental_max_worker_delay_secs=2,
                          train_distribute=strategy)
    estimator = el.Estimator(digits.model_fn, config=config,
                             params={"learning_rate": 0.01})
    train_spec = el.TrainSpec(digits.make_input_fn(x_train, y_train),
                              max_steps=args.max_steps)
    eval_spec = el.EvalSpec(
        digits.make_input_fn(x_test, y_test, epochs=1, shuffle=False), steps=None,
        exporters=[el.LatestExporter("latest", digits.serving_input_receiver_fn,
                                     exports_to_keep=3)],
        start_delay_secs=1, throttle_secs=2)
    metrics, exports = el.train_and_evaluate(estimator, train_spec, eval_spec)
    if metrics is not None:
        print(f"{config.task_type}: accuracy {metrics['accuracy']:.4f} at step "
              f"{metrics['global_step']}; exports "
              f"{[path.decode('utf-8') for path in exports]}")
    else:
        print(f"{config.task_type}:{config.task_id} done")


if __name__ == "__main__":
    main()
