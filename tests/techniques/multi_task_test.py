"""multi_task_spec: weighted loss, <task>/<metric> names, predictions, exclusions."""

import pytest

import estimator_lite as el
from estimator_lite._tf import tf


def _tasks(validate_b=True):
    a_loss, b_loss = tf.constant(2.0), tf.constant(3.0)
    labels = tf.constant([1.0, 0.0])
    return [
        el.Task("a", loss=a_loss, weight=0.5, predictions={"p": labels},
                eval_metric_ops={"mean": tf.metrics.mean(labels)}),
        el.Task("b", loss=b_loss, weight=2.0, predictions=labels * 2.0,
                eval_metric_ops={"auc": tf.metrics.auc(labels, labels)},
                validate=validate_b),
    ]


def test_train_combines_weighted_losses():
    with tf.Graph().as_default():
        tf.train.create_global_step()
        w = tf.get_variable("w", [], initializer=tf.ones_initializer())
        tasks = [el.Task("a", loss=w * 2.0, weight=0.5), el.Task("b", loss=w * 3.0)]
        spec = el.multi_task_spec(el.ModeKeys.TRAIN, tasks,
                                  optimizer=tf.train.GradientDescentOptimizer(0.1))
        summaries = {op.name for op in tf.get_collection(tf.GraphKeys.SUMMARIES)}
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            assert session.run(spec.loss) == pytest.approx(0.5 * 2.0 + 3.0)
            session.run(spec.train_op)
            assert session.run(w) == pytest.approx(1.0 - 0.1 * (0.5 * 2.0 + 3.0))
        assert {"a/loss:0", "b/loss:0"} <= summaries


def test_eval_metric_names_and_validated_loss():
    with tf.Graph().as_default():
        spec = el.multi_task_spec(el.ModeKeys.EVAL, _tasks())
        assert sorted(spec.eval_metric_ops) == ["a/loss", "a/mean", "b/auc", "b/loss"]
        assert sorted(spec.predictions) == ["a/p", "b"]
        excluded = el.multi_task_spec(el.ModeKeys.EVAL, _tasks(validate_b=False))
        assert sorted(excluded.eval_metric_ops) == ["a/loss", "a/mean"]
        with tf.Session() as session:
            assert session.run(spec.loss) == pytest.approx(0.5 * 2.0 + 2.0 * 3.0)
            assert session.run(excluded.loss) == pytest.approx(0.5 * 2.0)


def test_predict_keys_by_task():
    with tf.Graph().as_default():
        spec = el.multi_task_spec(el.ModeKeys.PREDICT, [
            el.Task("a", predictions={"p": tf.constant([1.0])}),
            el.Task("b", predictions=tf.constant([2.0]))])
        assert sorted(spec.predictions) == ["a/p", "b"]
        assert list(spec.export_outputs) == ["serving_default"]


def test_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="unique names"):
            el.multi_task_spec(el.ModeKeys.EVAL, [el.Task("a", tf.constant(1.0)),
                                                  el.Task("a", tf.constant(1.0))])
        with pytest.raises(ValueError, match="at least one task with validate=True"):
            el.multi_task_spec(el.ModeKeys.EVAL, [el.Task("a", tf.constant(1.0),
                                                          validate=False)])
        with pytest.raises(ValueError, match="exactly one of optimizer and train_op_fn"):
            el.multi_task_spec(el.ModeKeys.TRAIN, [el.Task("a", tf.constant(1.0))])
        with pytest.raises(ValueError, match=r"tasks \['b'\] have no loss"):
            el.multi_task_spec(el.ModeKeys.EVAL, [el.Task("a", tf.constant(1.0)),
                                                  el.Task("b")])
    with pytest.raises(ValueError, match="without '/'"):
        el.Task("a/b")
    with pytest.raises(ValueError, match="weight must be a number >= 0"):
        el.Task("a", weight=-1)
