"""Edge cases where the heads follow tf.estimator 2.15: label vocabularies of
other lengths on a binary head, labels of the wrong dtype, EVAL weights that
cannot broadcast, prediction keys, MultiHead.metrics(); each compared with the
oracle through tests/oracle/head_edges_driver.py."""

import inspect
import re

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from tests.oracle import driver_path, load_driver, requires_oracle, run_oracle_driver

EDGES_DRIVER = driver_path("head_edges_driver.py")
LOGITS = np.array([[1.0], [-0.5], [2.0]], np.float32)
BROADCAST_ERROR = "weights can not be broadcast to values"


def test_binary_head_takes_the_first_two_words_of_a_longer_vocabulary(run_in_graph):
    head = el.BinaryClassHead(label_vocabulary=["no", "yes", "maybe"])
    loss = run_in_graph(lambda: head.loss(tf.constant([["yes"], ["no"], ["yes"]]),
                                          tf.constant(LOGITS)))
    p = 1 / (1 + np.exp(-LOGITS[:, 0].astype(np.float64)))
    y = np.array([1.0, 0.0, 1.0])
    expected = np.mean(-(y * np.log(p) + (1 - y) * np.log(1 - p)))
    assert loss == pytest.approx(expected, rel=1e-5)
    # A label of the third word is class 2: out of range when the graph runs.
    with pytest.raises(tf.errors.InvalidArgumentError, match="Labels must be <="):
        run_in_graph(lambda: head.loss(tf.constant([["maybe"], ["no"], ["yes"]]),
                                       tf.constant(LOGITS)))
    predictions = run_in_graph(lambda: head.predictions(tf.constant(LOGITS)))
    assert predictions["classes"].ravel().tolist() == [b"yes", b"no", b"yes"]
    assert predictions["all_classes"].tolist() == [[b"no", b"yes", b"maybe"]] * 3


def test_binary_head_with_a_one_word_vocabulary_names_class_1_unk(run_in_graph):
    head = el.BinaryClassHead(label_vocabulary=["only"])
    classes = run_in_graph(lambda: head.predictions(tf.constant(LOGITS))["classes"])
    assert classes.ravel().tolist() == [b"UNK", b"only", b"UNK"]
    with pytest.raises(ValueError, match="label_vocabulary must not be empty"):
        el.BinaryClassHead(label_vocabulary=[])


def test_integer_labels_with_a_vocabulary():
    with tf.Graph().as_default(), pytest.raises(TypeError, match=re.escape(
            "labels must be strings when label_vocabulary is given")):
        el.BinaryClassHead(label_vocabulary=["a", "b"]).loss(
            tf.constant([[1], [0], [1]]), tf.constant(LOGITS))
    # tf.estimator's MultiClassHead says ValueError there.
    with tf.Graph().as_default(), pytest.raises(ValueError, match="must be strings"):
        el.MultiClassHead(3, label_vocabulary=["a", "b", "c"]).loss(
            tf.constant([[1], [0], [2]]), tf.ones([3, 3]))


def test_string_labels_of_a_regression_head_are_unimplemented_when_built():
    for head in (el.RegressionHead(), el.PoissonRegressionHead(),
                 el.LogisticRegressionHead()):
        with tf.Graph().as_default(), pytest.raises(tf.errors.UnimplementedError,
                                                    match="must be numbers"):
            head.loss(tf.constant([["1.0"], ["2.0"], ["0.0"]]), tf.constant(LOGITS))


def _eval_spec(head, weights, logits=LOGITS, labels=((1,), (0,), (1,))):
    return head.create_estimator_spec({"w": tf.constant(weights)}, "eval",
                                      tf.constant(logits), tf.constant(labels))


@pytest.mark.parametrize("make", [
    lambda: el.BinaryClassHead(weight_column="w"),
    lambda: el.RegressionHead(weight_column="w"),
])
def test_eval_refuses_weights_that_cannot_broadcast_when_built(make):
    two_columns = np.ones((3, 2), np.float32)
    with tf.Graph().as_default(), pytest.raises(ValueError, match=re.escape(
            "Mismatch at dim 1")):
        _eval_spec(make(), two_columns)
    with tf.Graph().as_default(), pytest.raises(ValueError, match=BROADCAST_ERROR):
        make().update_metrics(make().metrics(), {"w": tf.constant(two_columns)},
                              tf.constant(LOGITS), tf.constant([[1], [0], [1]]))
    # TRAIN builds, and the shape check fails when the step runs (as tf.estimator).
    with tf.Graph().as_default():
        loss = make().loss(tf.constant([[1], [0], [1]]), tf.constant(LOGITS),
                           features={"w": tf.constant(two_columns)})
        with tf.compat.v1.Session() as session, pytest.raises(
                tf.errors.InvalidArgumentError, match="weights shape must be"):
            session.run(loss)
    # Weights that fit build and run.
    with tf.Graph().as_default():
        spec = _eval_spec(make(), np.ones(3, np.float32))
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.local_variables_initializer())
            assert np.isfinite(session.run(spec.loss))


def test_a_multi_class_head_evaluates_until_its_weights_are_run():
    head = el.MultiClassHead(3, weight_column="w")
    with tf.Graph().as_default():
        spec = _eval_spec(head, np.ones((3, 2), np.float32), logits=np.ones((3, 3),
                                                                           np.float32))
        with tf.compat.v1.Session() as session, pytest.raises(
                tf.errors.InvalidArgumentError):
            session.run(tf.compat.v1.local_variables_initializer())
            session.run([op for _, op in spec.eval_metric_ops.values()])


def test_no_prediction_keys_means_every_prediction():
    with tf.Graph().as_default():
        logits = tf.constant(LOGITS)
        every = el.BinaryClassHead().predictions(logits)
        assert set(el.BinaryClassHead().predictions(logits, keys=[])) == set(every)
        assert len(every) == 7
        assert set(el.MultiClassHead(3).predictions(tf.ones([2, 3]), keys=())) == {
            "logits", "probabilities", "class_ids", "classes", "all_class_ids",
            "all_classes"}


def test_regression_heads_predictions_take_no_keys():
    for head_class in (el.RegressionHead, el.PoissonRegressionHead,
                       el.LogisticRegressionHead):
        assert list(inspect.signature(head_class.predictions).parameters) == [
            "self", "logits"]
    with tf.Graph().as_default():
        head = el.PoissonRegressionHead()
        assert set(head.predictions(tf.constant(LOGITS))) == {"predictions", "logits"}
        with pytest.raises(TypeError, match="keys"):
            head.predictions(tf.constant(LOGITS), keys=["predictions"])


def test_multi_head_metrics_are_the_losses_and_update_adds_each_heads():
    head = el.MultiHead([el.BinaryClassHead(name="a"), el.RegressionHead(name="b")])
    with tf.Graph().as_default():
        assert sorted(head.metrics()) == ["loss/a", "loss/b"]
        regularization = [tf.constant(0.5)]
        metrics = head.metrics(regularization_losses=regularization)
        assert sorted(metrics) == ["loss/a", "loss/b", "regularization_loss/a_b"]
        updated = head.update_metrics(
            metrics, {}, {"a": tf.constant(LOGITS), "b": tf.constant(LOGITS)},
            {"a": tf.constant([[1], [0], [1]]), "b": tf.constant([[1.0], [2.0], [0.0]])},
            regularization_losses=regularization)
        assert updated is metrics
        assert {"auc/a", "accuracy/a", "average_loss/b", "label/mean/b",
                "loss/a", "regularization_loss/a_b"} <= set(updated)
        ops = el.EstimatorSpec("eval", loss=tf.constant(0.0),
                               eval_metric_ops=updated).eval_metric_ops
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.local_variables_initializer())
            session.run([op for _, op in ops.values()])
            values = session.run({k: v for k, (v, _) in ops.items()})
    assert values["regularization_loss/a_b"] == pytest.approx(0.5)
    assert values["label/mean/b"] == pytest.approx(1.0)


def test_sequential_wrapper_of_a_regression_head_predicts():
    from estimator_lite.head.sequential_head import (  # noqa: PLC0415
        SequentialHeadWrapper,
    )

    wrapper = SequentialHeadWrapper(el.RegressionHead(), "mask")
    with tf.Graph().as_default():
        assert set(wrapper.predictions(tf.constant(LOGITS))) == {"predictions"}


# Where estimator_lite fails earlier on purpose: the same error class, raised when
# the graph is built rather than when it runs.
_RAISED_WHEN_BUILT = {"regression/string_labels", "poisson/string_labels"}


@requires_oracle
def test_edge_cases_match_tf_estimator():
    expected = run_oracle_driver(EDGES_DRIVER, timeout_secs=600)["result"]
    actual = load_driver(EDGES_DRIVER, "head_edges_driver").run(el)
    assert sorted(actual) == sorted(expected)
    for name, outcome in expected.items():
        if name in _RAISED_WHEN_BUILT:
            assert outcome == ["run", actual[name][1]] and actual[name][0] == "build"
        else:
            assert actual[name] == outcome, name
