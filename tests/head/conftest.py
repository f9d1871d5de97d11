"""Helpers for the head tests: run a head's spec in a plain graph, or in an Estimator."""

import pytest
import tensorflow as tf


def _initialize(session):
    session.run([tf.compat.v1.global_variables_initializer(),
                 tf.compat.v1.local_variables_initializer(),
                 tf.compat.v1.tables_initializer()])


def _eval_in_graph(head, logits, labels, features=None, regularization_losses=None):
    """Runs create_estimator_spec(EVAL) on one batch; returns (loss, metrics dict).

    `regularization_losses` are floats, made constants in the graph.
    """
    with tf.Graph().as_default():
        tf.compat.v1.train.get_or_create_global_step()
        features = {k: tf.constant(v) for k, v in (features or {}).items()}
        labels = labels() if callable(labels) else tf.nest.map_structure(
            tf.constant, labels)
        spec = head.create_estimator_spec(
            features, "eval", tf.constant(logits, tf.float32), labels=labels,
            regularization_losses=None if regularization_losses is None else [
                tf.constant(loss, tf.float32) for loss in regularization_losses])
        with tf.compat.v1.Session() as session:
            _initialize(session)
            session.run([op for _, op in spec.eval_metric_ops.values()])
            loss, metrics = session.run(
                [spec.loss, {k: v for k, (v, _) in spec.eval_metric_ops.items()}])
    return float(loss), {k: float(v) for k, v in metrics.items()}


def _run_in_graph(build_fn):
    """Runs the tensors `build_fn()` returns in a fresh graph and session."""
    with tf.Graph().as_default():
        tf.compat.v1.train.get_or_create_global_step()
        fetches = build_fn()
        with tf.compat.v1.Session() as session:
            _initialize(session)
            return session.run(fetches)


@pytest.fixture
def eval_in_graph():
    return _eval_in_graph


@pytest.fixture
def run_in_graph():
    return _run_in_graph


def _linear_model_fn(head, n_outputs, learning_rate=0.1):
    """A model_fn: logits = x @ w + b, trained by the head with plain SGD."""
    def model_fn(features, labels, mode):
        x = features["x"]
        w = tf.compat.v1.get_variable("w", [x.shape[-1], n_outputs],
                                      initializer=tf.compat.v1.zeros_initializer())
        b = tf.compat.v1.get_variable("b", [n_outputs],
                                      initializer=tf.compat.v1.zeros_initializer())
        return head.create_estimator_spec(
            features, mode, tf.matmul(x, w) + b, labels=labels,
            optimizer=tf.compat.v1.train.GradientDescentOptimizer(learning_rate))
    return model_fn


def _signature_keys(export_dir):
    """{signature key: (method name, sorted output names)} of a SavedModel."""
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        meta_graph = tf.compat.v1.saved_model.load(session, ["serve"], export_dir)
        return {key: (sig.method_name, sorted(sig.outputs))
                for key, sig in meta_graph.signature_def.items()}


@pytest.fixture
def linear_model_fn():
    return _linear_model_fn


@pytest.fixture
def signature_keys():
    return _signature_keys
