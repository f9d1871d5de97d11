"""What TensorBoard shows for a run, read with TensorBoard's own event reader.

One local `el.train_and_evaluate` run with the learning-rate plateau hook writes the
train dir and ``eval/``; evaluations named ``holdout`` of every checkpoint write
``eval_holdout/``. TensorBoard's EventAccumulator must find the training scalars
(`loss`, `global_step/sec`, `learning_rate`), the graph, and every eval metric at
every evaluated step.
"""

import pytest
import tensorflow as tf

import estimator_lite as el
from estimator_lite._engine import model_dir as names
from tests.support import models

# TensorFlow >= 2.21 no longer installs TensorBoard; the `test` extra does. A
# TensorBoard that fails inside its import (one older than a TF pre-release) skips
# too, saying why: pytest.importorskip lets through any ImportError but a missing
# module.
try:
    from tensorboard.backend.event_processing import event_accumulator
except ImportError as error:
    pytest.skip(f"needs TensorBoard's event reader: pip install tensorboard (the `test` "
                f"extra installs it); importing it raised {error!r}",
                allow_module_level=True)

MAX_STEPS = 30
EVAL_NAME = "holdout"
BASE_LEARNING_RATE = 0.1
EVAL_METRICS = {"loss", "mae"}


def _plateau_model_fn(plateau):
    def model_fn(features, labels, mode):
        w = tf.compat.v1.get_variable("w", [models.NUM_FEATURES, 1],
                                      initializer=tf.compat.v1.zeros_initializer())
        predictions = tf.matmul(features["x"], w)
        loss = tf.reduce_mean(tf.square(predictions - labels))
        optimizer = tf.compat.v1.train.GradientDescentOptimizer(
            plateau.learning_rate(BASE_LEARNING_RATE))
        train_op = optimizer.minimize(loss,
                                      global_step=tf.compat.v1.train.get_global_step())
        metrics = {"mae": tf.compat.v1.metrics.mean_absolute_error(labels, predictions)}
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                eval_metric_ops=metrics)
    return model_fn


def _reader(directory):
    accumulator = event_accumulator.EventAccumulator(directory)
    accumulator.Reload()
    return accumulator


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """(model_dir, {eval dir basename: {step: metrics evaluate() returned}})."""
    model_dir = str(tmp_path_factory.mktemp("tensorboard"))
    plateau = el.ReduceLearningRateOnPlateau(metric_name="loss", patience=100)
    config = el.RunConfig(model_dir=model_dir, save_checkpoints_steps=10,
                          save_summary_steps=5, log_step_count_steps=5)
    estimator = el.Estimator(_plateau_model_fn(plateau), config=config)
    eval_input_fn = models.input_fn(epochs=1)
    metrics, _ = el.train_and_evaluate(
        estimator, el.TrainSpec(models.input_fn(), max_steps=MAX_STEPS,
                                hooks=[plateau.make_hook(estimator)]),
        el.EvalSpec(eval_input_fn, steps=None, throttle_secs=0))
    assert metrics["global_step"] == MAX_STEPS
    returned = {names.eval_dir_name(None): {}, names.eval_dir_name(EVAL_NAME): {}}
    for path in names.checkpoint_paths(model_dir):
        result = estimator.evaluate(eval_input_fn, name=EVAL_NAME, checkpoint_path=path)
        returned[names.eval_dir_name(EVAL_NAME)][result["global_step"]] = result
    # The unnamed evaluations' results, as train_and_evaluate's listener saw them.
    for step, values in el.read_eval_metrics(names.eval_dir(model_dir)).items():
        returned[names.eval_dir_name(None)][step] = values
    assert returned[names.eval_dir_name(None)][MAX_STEPS]["loss"] == pytest.approx(
        metrics["loss"], rel=1e-6)
    return model_dir, returned


def test_train_dir_has_loss_step_rate_learning_rate_and_graph(run):
    model_dir, _ = run
    reader = _reader(model_dir)
    tags = reader.Tags()
    # `learning_rate` is ReduceLearningRateOnPlateau's summary (its docstring's name).
    assert set(tags["scalars"]) >= {"loss", "global_step/sec", "learning_rate"}
    assert tags["graph"]
    graph_ops = {node.name for node in reader.Graph().node}
    assert {"global_step", "w", "learning_rate_scale"} <= graph_ops
    loss_steps = [e.step for e in reader.Scalars("loss")]
    assert loss_steps and loss_steps == sorted(loss_steps)
    assert loss_steps[-1] >= MAX_STEPS - 5
    losses = [e.value for e in reader.Scalars("loss")]
    assert losses[-1] < losses[0]  # it trained
    rates = [e.value for e in reader.Scalars("learning_rate")]
    assert rates and all(r == pytest.approx(BASE_LEARNING_RATE) for r in rates)
    assert all(e.value > 0 for e in reader.Scalars("global_step/sec"))


def test_every_eval_dir_has_every_metric_at_each_evaluated_step(run):
    model_dir, returned = run
    assert sorted(returned[names.eval_dir_name(None)]) == [10, 20, MAX_STEPS]
    expected_named = [names.checkpoint_step(p) for p in names.checkpoint_paths(model_dir)]
    assert sorted(returned[names.eval_dir_name(EVAL_NAME)]) == expected_named
    for base, by_step in returned.items():
        reader = _reader(f"{model_dir}/{base}")
        assert set(reader.Tags()["scalars"]) >= EVAL_METRICS, base
        for metric in EVAL_METRICS:
            shown = {e.step: e.value for e in reader.Scalars(metric)}
            assert sorted(shown) == sorted(by_step), (base, metric)
            for step, values in by_step.items():
                assert shown[step] == pytest.approx(values[metric], rel=1e-6)
