"""A training job whose checkpoints outgrow its disk (tests/faults/full_disk_test.py).

    python full_disk_job.py MODEL_DIR BALLAST_FLOATS SAVE_STEPS MAX_STEPS

`BALLAST_FLOATS` untrained float32s ride along in every checkpoint, so the test
chooses when the disk fills: at the first save or a later one. With
FULL_DISK_JOB_FSIZE=<bytes> in the environment, the job limits the size of the
files it writes instead (``ulimit -f``; no root needed): writing past it fails with
EFBIG ("File too large") once SIGXFSZ is ignored.
"""

import os
import resource
import signal
import sys

import tensorflow as tf

import estimator_lite as el


def main(model_dir, ballast_floats, save_steps, max_steps):
    def model_fn(features, labels, mode):
        tf.compat.v1.get_variable("ballast", [ballast_floats],
                                  initializer=tf.compat.v1.zeros_initializer())
        w = tf.compat.v1.get_variable("w", [2, 1])
        loss = tf.reduce_mean(tf.square(tf.matmul(features["x"], w) - labels))
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step())
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def input_fn():
        return tf.data.Dataset.from_tensors(({"x": [[1.0, 2.0]]}, [[1.0]])).repeat()

    est = el.Estimator(model_fn, model_dir=model_dir, config=el.RunConfig(
        save_checkpoints_steps=save_steps, keep_checkpoint_max=10))
    est.train(input_fn, max_steps=max_steps)
    print("trained to", est.get_variable_value("global_step"))


if __name__ == "__main__":
    if os.environ.get("FULL_DISK_JOB_FSIZE"):
        limit = int(os.environ["FULL_DISK_JOB_FSIZE"])
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # fail the write, keep running
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    main(sys.argv[1], *map(int, sys.argv[2:]))
