"""The digits classifier as data-parallel towers with replicate_model_fn.

Runs one tower per GPU when there are GPUs; otherwise on --towers logical CPU
devices (how multi-device code is tested without GPUs). Each training batch of 64
is split into equal shards; gradients are summed and applied once by
TowerOptimizer. The last eval batch (359 = 5 * 64 + 39 test images) splits
unevenly, which evaluation allows.

    python examples/multi_tower.py [--towers 2] [--max-steps 1000]
"""

import argparse
import os
import sys
import tempfile

import tensorflow.compat.v1 as tf

import estimator_lite as el

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import digits  # noqa: E402 - the sibling example, importable once its folder is on the path


def tower_devices(count):
    """All GPUs if there are any, else `count` logical CPU devices."""
    gpus = tf.config.experimental.list_logical_devices("GPU")
    if gpus:
        return [gpu.name for gpu in gpus], None
    return ([f"/device:CPU:{i}" for i in range(count)],
            tf.ConfigProto(device_count={"CPU": count}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--towers", type=int, default=2)
    parser.add_argument("--max-steps", type=int, default=1000)
    parser.add_argument("--model-dir", default=None)
    args = parser.parse_args(argv)
    tf.logging.set_verbosity(tf.logging.INFO)
    devices, session_config = tower_devices(args.towers)
    model_dir = args.model_dir or tempfile.mkdtemp(prefix="digits_towers_")
    x_train, y_train, x_test, y_test = digits.load_digits()
    config = el.RunConfig(model_dir=model_dir, save_checkpoints_steps=500,
                          log_step_count_steps=250, session_config=session_config)
    # digits.model_fn unchanged, its optimizer wrapped in TowerOptimizer.
    estimator = el.Estimator(el.replicate_model_fn(digits.model_fn, devices=devices),
                             config=config, params={"learning_rate": 0.01,
                                                    "wrap_optimizer": el.TowerOptimizer})
    metrics, exports = el.train_and_evaluate(
        estimator, el.TrainSpec(digits.make_input_fn(x_train, y_train, batch_size=64),
                                max_steps=args.max_steps),
        el.EvalSpec(digits.make_input_fn(x_test, y_test, epochs=1, shuffle=False),
                    steps=None, throttle_secs=0,
            exporters=[el.FinalExporter("final", digits.serving_input_receiver_fn)]))
    reloaded = digits.saved_model_accuracy(exports[0].decode("utf-8"), x_test, y_test)
    print(f"{len(devices)} towers on {devices}: test accuracy "
          f"{metrics['accuracy']:.4f} (evaluate), {reloaded:.4f} (reloaded SavedModel) "
          f"at step {metrics['global_step']}")


if __name__ == "__main__":
    main()
