"""Model averaging on a real in-process cluster: one ps, two workers in threads."""

import threading

import numpy as np
import pytest

from estimator_lite._engine import local_cluster as cluster_lib
from estimator_lite._tf import tf
from estimator_lite.techniques.model_average import (
    ModelAverageCustomGetter,
    ModelAverageOptimizer,
)

LEARNING_RATE = 0.1
INTERVAL = 3


def _worker_batch(index):
    rng = np.random.RandomState(10 + index)
    x = rng.randn(8, 4).astype(np.float32)
    return x, (x @ np.array([[1.0], [2.0], [-1.0], [0.5]], np.float32) * (index + 1))


def _sgd_step(w, index):
    """One local SGD step of mean((xw - y)^2) on worker `index`'s batch, in numpy."""
    x, y = _worker_batch(index)
    return w - LEARNING_RATE * (2.0 / len(x)) * x.T @ (x @ w - y)


def _run_worker(index, cluster, server, chief_ready, record, errors, use_resource):
    try:
        graph = tf.Graph()
        with graph.as_default():
            tf.set_random_seed(100 + index)  # local copies start out different
            worker_device = f"/job:worker/task:{index}"
            getter = ModelAverageCustomGetter(worker_device)
            with tf.device(tf.train.replica_device_setter(
                    cluster=tf.train.ClusterSpec(cluster), worker_device=worker_device)):
                global_step = tf.train.get_or_create_global_step()
                with tf.variable_scope("", custom_getter=getter):
                    w = tf.get_variable("w", [4, 1],
                                        initializer=tf.random_normal_initializer(),
                                        use_resource=use_resource)
                x, y = _worker_batch(index)
                loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(x), w) - y))
                optimizer = ModelAverageOptimizer(
                    tf.train.GradientDescentOptimizer(LEARNING_RATE), num_worker=2,
                    is_chief=index == 0, ma_custom_getter=getter,
                    interval_steps=INTERVAL)
                train_op = optimizer.minimize(loss, global_step=global_step)
            center = getter.pairs[0][1]
            record["devices", index] = (w.device, center.device)
            if index == 1:
                chief_ready.wait(60)
            with tf.train.MonitoredTrainingSession(
                    master=server.target, is_chief=index == 0,
                    hooks=[optimizer.make_session_run_hook()]) as session:
                if index == 0:
                    chief_ready.set()
                for step in range(INTERVAL + 1):
                    record["local", index, step], record["center", index, step] = (
                        session.run([w, center]))
                    if step < INTERVAL:
                        session.run(train_op)
    except Exception as e:  # noqa: BLE001 - reported to the main thread
        errors.append((index, repr(e)))
        chief_ready.set()


@pytest.mark.parametrize("use_resource", [True, False], ids=["resource", "reference"])
def test_workers_average_into_the_center_every_interval(use_resource):
    """TF1 code creates reference variables (use_resource=False); both kinds work."""
    cluster = cluster_lib.local_cluster_spec(num_ps=1, num_workers=2, chief=False)
    spec = tf.train.ClusterSpec(cluster)
    servers = [tf.train.Server(spec, job_name=job, task_index=i)
               for job in ("ps", "worker") for i in range(len(cluster[job]))]
    record, errors = {}, []
    chief_ready = threading.Event()
    threads = [threading.Thread(target=_run_worker, daemon=True, args=(
        i, cluster, servers[1 + i], chief_ready, record, errors, use_resource))
        for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a worker is stuck"
    assert errors == []
    for index in range(2):
        local_device, center_device = record["devices", index]
        assert f"/job:worker/task:{index}" in local_device
        assert "/job:ps/task:0" in center_device
    start = record["center", 0, 0]
    # Local copies start from the center, whatever their own initializer said.
    for index in range(2):
        np.testing.assert_allclose(record["local", index, 0], start, atol=1e-6)
    # Non-interval steps train locally and leave the center untouched.
    for index in range(2):
        for step in range(1, INTERVAL):
            np.testing.assert_allclose(record["center", index, step], start, atol=1e-6)
            expected = start
            for _ in range(step):
                expected = _sgd_step(expected, index)
            np.testing.assert_allclose(record["local", index, step], expected, atol=1e-5)
    # At the interval: the center is the mean of both workers' pre-averaging values,
    # and every local copy equals it.
    pre_average = [_sgd_step(record["local", i, INTERVAL - 1], i) for i in range(2)]
    mean = (pre_average[0] + pre_average[1]) / 2
    assert not np.allclose(pre_average[0], pre_average[1], atol=1e-3)
    for index in range(2):
        np.testing.assert_allclose(record["center", index, INTERVAL], mean, atol=1e-5)
        np.testing.assert_allclose(record["local", index, INTERVAL], mean, atol=1e-5)


def test_errors():
    with tf.Graph().as_default():
        getter = ModelAverageCustomGetter("/job:worker/task:0")
        with tf.variable_scope("", custom_getter=getter):
            w = tf.get_variable("w", [1])
        other = tf.get_variable("plain", [1])
        optimizer = ModelAverageOptimizer(tf.train.GradientDescentOptimizer(0.1), 1, True,
                                          getter)
        with pytest.raises(ValueError, match="needs global_step"):
            optimizer.apply_gradients([(tf.ones([1]), w)])
        with pytest.raises(ValueError, match="var list is empty"):
            optimizer.apply_gradients([(tf.ones([1]), other)],
                                      global_step=tf.train.get_or_create_global_step())
        with pytest.raises(ValueError, match="before make_session_run_hook"):
            optimizer.make_session_run_hook()
    with pytest.raises(TypeError, match="ma_custom_getter"):
        ModelAverageOptimizer(tf.train.GradientDescentOptimizer(0.1), 2, True, None)
    with pytest.raises(ValueError, match="interval_steps must be >= 1"):
        ModelAverageOptimizer(tf.train.GradientDescentOptimizer(0.1), 2, True, getter,
                              interval_steps=0)


def test_center_keeps_the_name_and_is_what_checkpoints_hold():
    with tf.Graph().as_default():
        getter = ModelAverageCustomGetter("/job:worker/task:0")
        with tf.variable_scope("layer", custom_getter=getter):
            local = tf.get_variable("w", [2])
        assert local.op.name == "model_average_local/layer/w"
        assert [v.op.name for v in tf.global_variables()] == ["layer/w"]
        assert [v.op.name for v in tf.trainable_variables()] == [local.op.name]
        assert local in tf.local_variables()
