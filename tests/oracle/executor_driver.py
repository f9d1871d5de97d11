"""How _TrainingExecutor calls the estimator: the arguments of train() and evaluate().

Run as a script by the TF 2.15 interpreter (ESTIMATOR_LITE_TF215_PYTHON) it uses
tf.estimator's Estimator and training module and prints one JSON line;
tests/training_test.py imports it and calls `run` with estimator_lite. The
Estimator's train/evaluate/latest_checkpoint are replaced on the instance by
recorders, so only the calls are compared (positional count, keyword names).

Usage: executor_driver.py WORK_DIR
"""

import json
import os
import sys
import types

import tensorflow as tf


def _input_fn():
    return tf.data.Dataset.from_tensors(({"x": [1.0]}, [1.0]))


def _model_fn(features, labels, mode):
    raise AssertionError("not called: train and evaluate are recorders")


def run(lib, work_dir):
    """Runs a local train_and_evaluate; returns the recorded calls."""
    calls = []
    estimator = lib.Estimator(_model_fn, model_dir=work_dir)
    checkpoint = os.path.join(work_dir, "model.ckpt-5")

    def train(*args, **kwargs):
        calls.append({"method": "train", "positional": len(args),
                      "keywords": sorted(kwargs)})
        listeners = list(kwargs.get("saving_listeners") or ())
        for listener in listeners:
            listener.begin()
        for listener in listeners:
            listener.after_save(None, 0)
        for listener in listeners:
            listener.end(None, 5)
        return estimator

    def evaluate(*args, **kwargs):
        calls.append({"method": "evaluate", "positional": len(args),
                      "keywords": sorted(kwargs),
                      "steps": kwargs.get("steps"), "name": kwargs.get("name"),
                      "checkpoint_path": os.path.basename(kwargs["checkpoint_path"])})
        return {"global_step": 5, "loss": 1.0}

    estimator.train = train
    estimator.evaluate = evaluate
    estimator.latest_checkpoint = lambda: checkpoint
    executor = lib.training._TrainingExecutor(
        estimator, lib.TrainSpec(_input_fn, max_steps=5),
        lib.EvalSpec(_input_fn, steps=2, name="held_out", throttle_secs=0))
    metrics, _ = executor.run_local()
    return {"calls": calls, "metrics": {k: float(v) for k, v in metrics.items()}}


def main(work_dir):
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    from tensorflow_estimator.python.estimator import training  # noqa: PLC0415
    lib = types.SimpleNamespace(Estimator=tf.estimator.Estimator, training=training,
                                TrainSpec=tf.estimator.TrainSpec,
                                EvalSpec=tf.estimator.EvalSpec)
    print(json.dumps({"tf_version": tf.__version__, "result": run(lib, work_dir)}))


if __name__ == "__main__":
    main(sys.argv[1])
