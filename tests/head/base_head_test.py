"""The Head base class and the checks every head makes, as tf.estimator 2.15's.

Subclassing `Head` on tf.estimator's abstract interface; what heads do with odd
logits, labels and weights (compared with the oracle through
tests/oracle/head_inputs_driver.py); the summaries of a TRAIN spec.
"""

import glob
import os
import re

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite.tpu import TPUEstimatorSpec
from tests.oracle import driver_path, load_driver, requires_oracle, run_oracle_driver

INPUTS_DRIVER = driver_path("head_inputs_driver.py")
ERR_SUBCLASS = ("Subclasses of Head must implement `create_estimator_spec()` or "
                "_create_tpu_estimator_spec().")


class InterfaceHead(el.Head):
    """A user's head on tf.estimator's abstract interface, no constructor."""

    name = property(lambda self: "mine")
    logits_dimension = property(lambda self: 1)
    loss_reduction = property(lambda self: "sum")

    def loss(self, labels, logits, features=None, mode=None,
             regularization_losses=None):
        return tf.reduce_sum(tf.cast(labels, tf.float32) - logits)

    def predictions(self, logits, keys=None):
        return {"logits": logits}

    def metrics(self, regularization_losses=None):
        return {}

    def update_metrics(self, eval_metrics, features, logits, labels,
                       regularization_losses=None):
        return eval_metrics


class SpecHead(InterfaceHead):
    def __init__(self):
        super().__init__()  # no arguments, as tf.estimator's Head takes none
        self.calls = 0

    def create_estimator_spec(self, features, mode, logits, labels=None, **kwargs):
        self.calls += 1
        return el.EstimatorSpec(mode, loss=self.loss(labels, logits),
                                predictions=self.predictions(logits))


class TPUSpecHead(InterfaceHead):
    def _create_tpu_estimator_spec(self, features, mode, logits, labels=None, **kwargs):
        return TPUEstimatorSpec(mode=mode, loss=self.loss(labels, logits))


def _spec(head):
    with tf.Graph().as_default():
        return head.create_estimator_spec({}, "eval", tf.constant([[1.0]]),
                                          tf.constant([[3.0]]))


def test_head_is_abstract_and_subclassable_without_arguments():
    # tf.estimator 2.15 (recorded): Head() and a subclass without `predictions` are
    # TypeErrors; a subclass builds its spec itself, or through
    # _create_tpu_estimator_spec; one that does neither gets NotImplementedError.
    with pytest.raises(TypeError):
        el.Head()

    class Empty(el.Head):
        pass

    with pytest.raises(TypeError):
        Empty()
    head = SpecHead()
    spec = _spec(head)
    assert isinstance(spec, el.EstimatorSpec) and head.calls == 1
    assert (head.name, head.logits_dimension, head.loss_reduction) == ("mine", 1, "sum")
    tpu = _spec(TPUSpecHead())
    assert isinstance(tpu, el.EstimatorSpec) and tpu.mode == "eval"
    with pytest.raises(NotImplementedError, match=re.escape(ERR_SUBCLASS)):
        _spec(InterfaceHead())


def _loss(head, logits, labels, features=None):
    with tf.Graph().as_default():
        loss = head.loss(tf.constant(labels), tf.constant(logits),
                         {k: tf.constant(v) for k, v in (features or {}).items()})
        with tf.compat.v1.Session() as session:
            return session.run(loss)


def test_integer_logits_are_cast():
    loss = _loss(el.RegressionHead(), np.array([[1], [3]], np.int32),
                 np.array([[0.0], [1.0]], np.float32))
    assert loss == pytest.approx((1.0 + 4.0) / 2)


def test_rank_1_logits_are_refused():
    with pytest.raises(ValueError, match=re.escape(
            "logits shape must be [D0, D1, ... DN, logits_dimension]")):
        _loss(el.BinaryClassHead(), np.zeros([2], np.float32), np.array([[1], [0]]))


def test_labels_of_another_batch_size_are_refused_not_broadcast():
    # A [1, 1] label would broadcast over both logits into a wrong loss.
    with pytest.raises(ValueError, match="logits and labels must have the same shape"):
        _loss(el.RegressionHead(), np.zeros([2, 1], np.float32),
              np.array([[1.0]], np.float32))


def test_float_labels_of_multi_class_head_are_refused_not_truncated():
    with pytest.raises(ValueError, match="Labels dtype should be integer"):
        _loss(el.MultiClassHead(3), np.zeros([2, 3], np.float32),
              np.array([[1.5], [0.0]], np.float32))


def test_labels_one_rank_below_rank_3_logits_get_a_last_dimension():
    loss = _loss(el.MultiClassHead(3), np.zeros([2, 4, 3], np.float32),
                 np.zeros([2, 4], np.int64))
    assert loss == pytest.approx(np.log(3.0), rel=1e-6)


def test_per_logit_weights_only_for_regression():
    weights = {"w": np.array([[1.0, 2.0], [1.0, 1.0]], np.float32)}
    loss = _loss(el.RegressionHead(2, weight_column="w"), np.zeros([2, 2], np.float32),
                 np.ones([2, 2], np.float32), weights)
    assert loss == pytest.approx(5.0 / 4)
    # tf.estimator fails when the graph runs.
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=re.escape("weights shape must be [D0, D1, ... DN] or "
                                       "[D0, D1, ... DN, 1]")):
        _loss(el.MultiLabelHead(2, weight_column="w"), np.zeros([2, 2], np.float32),
              np.ones([2, 2], np.int64), weights)


def test_train_summaries_reach_tensorboard(tmp_path):
    # tf.estimator 2.15 (recorded): the head's 'loss/<name>' and
    # 'regularization_loss/<name>', and the Estimator's own 'loss' (only one).
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [1, 1])
        return el.BinaryClassHead(name="h").create_estimator_spec(
            features, mode, tf.matmul(features["x"], w), labels,
            train_op_fn=lambda loss: tf.compat.v1.assign_add(
                tf.compat.v1.train.get_global_step(), 1),
            regularization_losses=[tf.reduce_sum(w * w)])

    def input_fn():
        return tf.data.Dataset.from_tensors(({"x": [[1.0], [2.0]]}, [[1], [0]])).repeat()

    estimator = el.Estimator(model_fn, model_dir=str(tmp_path),
                             config=el.RunConfig(save_summary_steps=1))
    estimator.train(input_fn, steps=3)
    tags = set()
    for path in glob.glob(os.path.join(str(tmp_path), "events.out.tfevents*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            tags.update(value.tag for value in event.summary.value)
    assert tags == {"loss", "loss/h", "regularization_loss/h"}


@pytest.mark.slow
@requires_oracle
def test_inputs_and_train_summaries_match_tf_estimator():
    expected = run_oracle_driver(INPUTS_DRIVER, timeout_secs=600)["result"]
    actual = load_driver(INPUTS_DRIVER, "head_inputs_driver").run(el)
    for part in ("inputs", "train_summaries"):
        assert sorted(actual[part]) == sorted(expected[part])
        for key, value in expected[part].items():
            assert actual[part][key] == value, (part, key)


def _train_summaries(head, logits, labels, features):
    with tf.Graph().as_default():
        tf.compat.v1.train.get_or_create_global_step()
        head.create_estimator_spec(
            {k: tf.constant(v) for k, v in features.items()}, "train",
            tf.constant(logits), labels=tf.constant(labels),
            train_op_fn=lambda loss: tf.no_op(), regularization_losses=[tf.constant(0.25)])
        summaries = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.SUMMARIES)
        with tf.compat.v1.Session() as session:
            values = session.run(summaries)
    return {v.tag: v.simple_value for value in values
            for v in tf.compat.v1.Summary.FromString(value).value}


@pytest.mark.parametrize(("make_head", "labels", "expected"), [
    (lambda: el.BinaryClassHead(weight_column="w", loss_reduction="weighted_sum"),
     [[1], [0], [1]], {"loss": 1.41406, "average_loss": 0.33259}),
    (lambda: el.RegressionHead(weight_column="w", loss_reduction="weighted_sum"),
     [[1.0], [0.0], [2.0]], {"loss": 2.5, "average_loss": 0.64286}),
])
def test_v1_sum_reduction_also_summarizes_the_average_loss(make_head, labels, expected):
    # TF 1.x's heads (tf.compat.v1's canned estimators, SUM reduction), recorded on
    # tf.estimator 2.15: 'average_loss' = weighted loss sum / weight sum.
    tags = _train_summaries(make_head(), [[0.5], [-1.0], [2.0]], labels,
                            {"w": np.array([[1.0], [2.0], [0.5]], np.float32)})
    assert sorted(tags) == ["average_loss", "loss", "regularization_loss"]
    for tag, value in expected.items():
        assert tags[tag] == pytest.approx(value, abs=1e-5)
    assert tags["regularization_loss"] == pytest.approx(0.25)


def test_labels_shape_error_names_the_dimensions_that_differ():
    # tf.estimator 2.15's MultiClassHead says "... Received: labels.shape=(3,) and
    # logits.shape=(2, 3)" (seen on the oracle); its tests match the two shapes in
    # that order. The class ids' leading dimensions are named here the same way.
    with pytest.raises(ValueError, match=re.escape(
            "got labels shape (3, 1) (leading dimensions (3,)) and logits shape (2, 3) "
            "(leading dimensions (2,))")):
        _loss(el.MultiClassHead(3), np.zeros([2, 3], np.float32),
              np.array([[1], [1], [1]], np.int64))
