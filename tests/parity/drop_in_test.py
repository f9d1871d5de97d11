"""Programs written for tf.estimator, in the spelling users write, run unchanged.

`import tensorflow as tf` (TF2 API), `tf.data.Dataset`, `tf.compat.v1.logging`, Keras
layers inside a model_fn: the forms tf.estimator accepted are accepted here too.
"""

import logging as std_logging
import os
import re

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from tests.support import models

WARN_EMPTY_EVAL = "Evaluation ran no batch"
ERR_INFINITE_EVAL = "infinite dataset"
ERR_LEGACY_KERAS = "pip install 'estimator_lite[legacy-keras]'"
ERR_KERAS3_OPTIMIZER = ("Keras 3 optimizers (tf.keras.optimizers.*) do not train in graph "
                        "mode")
KERAS3_OPTIMIZER_FIX = "tf.compat.v1.train.AdamOptimizer(0.001).minimize"

X = np.random.RandomState(0).rand(64, 3).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)


def _model_fn(features, labels, mode):
    x = features["x"] if isinstance(features, dict) else features
    if isinstance(x, tf.SparseTensor):
        x = tf.sparse.to_dense(x)
    w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    return models.squared_error_spec(mode, tf.matmul(x, w), labels)


INPUT_FNS = {
    "tf2_dataset_dict": lambda: tf.data.Dataset.from_tensor_slices(
        ({"x": X}, Y)).repeat().batch(16),
    "tf2_dataset_single_tensor": lambda: tf.data.Dataset.from_tensor_slices(
        (X, Y)).repeat().batch(16),
    "compat_v1_dataset": lambda: tf.compat.v1.data.Dataset.from_tensor_slices(
        ({"x": X}, Y)).repeat().batch(16),
    "tuple_of_tensors": lambda: ({"x": tf.constant(X[:16])}, tf.constant(Y[:16])),
    "sparse_features": lambda: tf.data.Dataset.from_tensor_slices(
        ({"x": X}, Y)).batch(16).map(
            lambda f, y: ({"x": tf.sparse.from_dense(f["x"])}, y)).repeat(),
}


@pytest.mark.parametrize("name", sorted(INPUT_FNS))
def test_every_input_form_trains_evaluates_and_predicts(tmp_path, name):
    input_fn = INPUT_FNS[name]
    est = el.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(input_fn, steps=30)
    metrics = est.evaluate(input_fn, steps=2)
    assert metrics["global_step"] == 30 and metrics["loss"] < 0.5
    if name == "tuple_of_tensors":
        # Constant tensors never end: take what is needed, as a user would.
        generator = est.predict(lambda: input_fn()[0])
        predictions = [next(generator) for _ in range(3)]
    else:
        predictions = list(est.predict(lambda: input_fn().map(lambda f, y: f).take(1)))
    assert predictions and predictions[0]["y"].shape == (1,)


def test_predict_on_features_with_none_labels(tmp_path):
    est = el.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(INPUT_FNS["tf2_dataset_dict"], steps=5)

    def predict_input_fn():
        return tf.data.Dataset.from_tensor_slices({"x": X[:5]}).batch(2).map(
            lambda f: (f, None))

    assert len(list(est.predict(predict_input_fn))) == 5


def test_train_and_evaluate_with_tf2_datasets(tmp_path):
    est = el.Estimator(_model_fn, config=el.RunConfig(
        model_dir=str(tmp_path), save_checkpoints_steps=10))
    metrics, _ = el.train_and_evaluate(
        est, el.TrainSpec(INPUT_FNS["tf2_dataset_dict"], max_steps=20),
        el.EvalSpec(lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(16),
                    steps=None, start_delay_secs=0, throttle_secs=0))
    assert metrics["global_step"] == 20


class _Collect(std_logging.Handler):
    def __init__(self):
        super().__init__(std_logging.INFO)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def test_logs_reach_the_tensorflow_logger(tmp_path):
    """tf.compat.v1.logging.set_verbosity(INFO) shows step, loss, eval and export."""
    handler = _Collect()
    logger = std_logging.getLogger("tensorflow")
    old_level = logger.level
    logger.addHandler(handler)
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    try:
        est = el.Estimator(_model_fn, config=el.RunConfig(
            model_dir=str(tmp_path), log_step_count_steps=10))
        est.train(INPUT_FNS["tf2_dataset_dict"], max_steps=20)
        est.evaluate(INPUT_FNS["tf2_dataset_dict"], steps=2)
        est.export_saved_model(str(tmp_path / "export"),
                               el.export.build_raw_serving_input_receiver_fn(
                                   {"x": tf.TensorSpec([None, 3], tf.float32)}))
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    text = "\n".join(handler.lines)
    assert "step 20/20 (100%): loss = " in text and "steps/sec" in text
    assert "Saving dict for global step 20: " in text
    assert "Exported SavedModel to" in text


def test_the_library_never_changes_the_logger_level(tmp_path):
    logger = std_logging.getLogger("tensorflow")
    before = logger.level
    est = el.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(INPUT_FNS["tf2_dataset_dict"], steps=2)
    assert logger.level == before


def test_progress_and_eta_in_the_step_log(tmp_path, caplog):
    est = el.Estimator(_model_fn, config=el.RunConfig(
        model_dir=str(tmp_path), log_step_count_steps=10))
    with caplog.at_level(std_logging.INFO, logger="tensorflow"):
        est.train(INPUT_FNS["tf2_dataset_dict"], steps=20)
        est.train(INPUT_FNS["tf2_dataset_dict"], steps=10)  # resumes: target 30
    lines = [r.getMessage() for r in caplog.records if "steps/sec" in r.getMessage()]
    assert any(line.startswith("step 10/20 (50%): loss = ") and ", ETA " in line
               for line in lines)
    assert any(line.startswith("step 30/30 (100%)") for line in lines)


def test_eval_progress_when_the_length_is_known(tmp_path, caplog):
    est = el.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(INPUT_FNS["tf2_dataset_dict"], steps=1)
    with caplog.at_level(std_logging.INFO, logger="tensorflow"):
        est.evaluate(lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(16))
    progress = [r.getMessage() for r in caplog.records
                if r.getMessage().startswith("Evaluation [")]
    assert progress[-1] == "Evaluation [4/4]"


def test_integer_loss_trains(tmp_path):
    def model_fn(features, labels, mode):
        step = tf.compat.v1.train.get_global_step()
        loss = tf.cast(tf.reduce_sum(features["x"]), tf.int64)
        return el.EstimatorSpec(mode, loss=loss,
                                train_op=tf.compat.v1.assign_add(step, 1))

    est = el.Estimator(model_fn, model_dir=str(tmp_path))
    est.train(INPUT_FNS["tf2_dataset_dict"], max_steps=3)
    assert est.get_variable_value("global_step") == 3


def test_empty_eval_input_gives_tf_estimators_zero_loss_with_a_warning(tmp_path, caplog):
    # tf.estimator 2.15 (checked on the oracle): {'loss': 0.0, 'global_step': ...},
    # numpy types; tensorflow_ranking's tests depend on it.
    est = el.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(INPUT_FNS["tf2_dataset_dict"], steps=1)
    empty = lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).take(0).batch(4)  # noqa: E731
    with caplog.at_level(std_logging.WARNING, logger="tensorflow"):
        metrics = est.evaluate(empty)
    assert list(metrics) == ["loss", "global_step"]
    assert metrics == {"loss": 0.0, "global_step": 1}
    assert type(metrics["loss"]) is np.float32 and type(metrics["global_step"]) is np.int64
    assert any(WARN_EMPTY_EVAL in r.getMessage() for r in caplog.records)


def test_infinite_eval_input_without_steps_is_an_error(tmp_path):
    est = el.Estimator(_model_fn, model_dir=str(tmp_path))
    est.train(INPUT_FNS["tf2_dataset_dict"], steps=1)
    with pytest.raises(ValueError, match=ERR_INFINITE_EVAL):
        est.evaluate(INPUT_FNS["tf2_dataset_dict"], steps=None)
    assert est.evaluate(INPUT_FNS["tf2_dataset_dict"], steps=3)["global_step"] == 1


def test_predict_without_checkpoint_warns_and_initialises(tmp_path, caplog):
    est = el.Estimator(_model_fn, model_dir=str(tmp_path))
    with caplog.at_level(std_logging.WARNING, logger="tensorflow"):
        predictions = list(est.predict(
            lambda: tf.data.Dataset.from_tensor_slices({"x": X[:2]}).batch(2)))
    assert [p["y"][0] for p in predictions] == [0.0, 0.0]  # zeros initializer
    assert any("No checkpoint" in r.getMessage() for r in caplog.records)


def _keras_model_fn(features, labels, mode):
    hidden = tf.keras.layers.Dense(8, activation="relu")(features["x"])
    hidden = tf.keras.layers.Dropout(0.2)(hidden, training=mode == el.ModeKeys.TRAIN)
    pred = tf.keras.layers.Dense(1)(hidden)
    if mode == el.ModeKeys.PREDICT:
        return el.EstimatorSpec(mode, predictions={"y": pred}, export_outputs={
            "serving_default": el.export.PredictOutput({"outputs": pred})})
    loss = tf.reduce_mean(tf.square(pred - labels))
    train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())
    return el.EstimatorSpec(mode, loss=loss, train_op=train_op)


def test_keras3_layers_in_a_model_fn_train_evaluate_predict_export(tmp_path):
    tf.keras.layers.Dense(2)  # the user's own Keras objects, numbered process-wide
    est = el.Estimator(_keras_model_fn, model_dir=str(tmp_path))
    est.train(INPUT_FNS["tf2_dataset_dict"], steps=10)
    assert est.evaluate(INPUT_FNS["tf2_dataset_dict"], steps=2)["global_step"] == 10
    assert len(list(est.predict(
        lambda: tf.data.Dataset.from_tensor_slices({"x": X[:3]}).batch(3)))) == 3
    export_dir = est.export_saved_model(
        str(tmp_path / "export"), el.export.build_raw_serving_input_receiver_fn(
            {"x": tf.TensorSpec([None, 3], tf.float32)}))
    served = tf.saved_model.load(export_dir).signatures["serving_default"](
        x=tf.constant(X[:2]))
    assert served["outputs"].shape == (2, 1)
    # A second estimator in the same process trains on from the same names.
    est2 = el.Estimator(_keras_model_fn, model_dir=str(tmp_path))
    est2.train(INPUT_FNS["tf2_dataset_dict"], steps=2)
    assert est2.get_variable_value("global_step") == 12


def test_keras_name_numbering_of_the_user_is_restored(tmp_path):
    first = tf.keras.layers.Dense(1)
    est = el.Estimator(_keras_model_fn, model_dir=str(tmp_path))
    est.train(INPUT_FNS["tf2_dataset_dict"], steps=1)
    second = tf.keras.layers.Dense(1)
    suffix = lambda name: int(name.rsplit("_", 1)[1]) if "_" in name else 0  # noqa: E731
    assert suffix(second.name) == suffix(first.name) + 1


@pytest.mark.skipif(os.environ.get("TF_USE_LEGACY_KERAS") == "1",
                    reason="legacy Keras is enabled here, so tf.compat.v1.layers works")
def test_tf_layers_without_legacy_keras_gives_install_hint(tmp_path):
    def model_fn(features, labels, mode):
        pred = tf.compat.v1.layers.dense(features["x"], 1)
        loss = tf.reduce_mean(tf.square(pred - labels))
        return el.EstimatorSpec(mode, loss=loss, train_op=tf.no_op())

    est = el.Estimator(model_fn, model_dir=str(tmp_path))
    with pytest.raises(RuntimeError, match=ERR_LEGACY_KERAS.replace("[", r"\[")):
        est.train(INPUT_FNS["tf2_dataset_dict"], steps=1)


def _keras3_optimizer_model_fn(style):
    """A model_fn training with a Keras 3 optimizer the way TF2 guides write it."""
    def model_fn(features, labels, mode):
        layer = tf.keras.layers.Dense(1)
        loss = tf.reduce_mean(tf.square(layer(features["x"]) - labels))
        optimizer = tf.keras.optimizers.Adam(0.01)
        if style == "minimize":
            train_op = optimizer.minimize(loss, layer.trainable_variables)
        elif style == "tape":
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(layer(features["x"]) - labels))
            grads = tape.gradient(loss, layer.trainable_variables)
            train_op = optimizer.apply_gradients(
                zip(grads, layer.trainable_variables, strict=True))
        elif style == "group":
            grads = tf.gradients(loss, layer.trainable_variables)
            train_op = tf.group(optimizer.apply_gradients(
                zip(grads, layer.trainable_variables, strict=True)))
        else:  # a tf.compat.v1 optimizer handed Keras 3 variables
            train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(
                loss, var_list=layer.trainable_variables)
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op)
    return model_fn


@pytest.mark.skipif(os.environ.get("TF_USE_LEGACY_KERAS") == "1",
                    reason="legacy Keras is enabled here: its optimizers run in graphs")
@pytest.mark.parametrize("style", ["minimize", "tape", "group", "v1_with_keras_vars"])
def test_keras3_optimizer_in_a_model_fn_says_what_to_use(tmp_path, style):
    est = el.Estimator(_keras3_optimizer_model_fn(style), model_dir=str(tmp_path))
    with pytest.raises(TypeError, match=re.escape(ERR_KERAS3_OPTIMIZER)) as error:
        est.train(INPUT_FNS["tf2_dataset_dict"], steps=1)
    assert KERAS3_OPTIMIZER_FIX in str(error.value)
    assert str(error.value).count(ERR_KERAS3_OPTIMIZER) == 1


class _Keras312Variable:
    """Keras 3.12's Variable.__repr__ (the last Keras for Python 3.10) reads the value,
    which raises NotImplementedError in graph mode; later releases leave it out."""

    def __repr__(self):
        return f"<Variable path={self.path}, value={np.array(self.value)}>"


@pytest.mark.skipif(os.environ.get("TF_USE_LEGACY_KERAS") == "1",
                    reason="legacy Keras is enabled here: its optimizers run in graphs")
@pytest.mark.parametrize("style", ["tape", "group"])
def test_keras3_optimizer_says_what_to_use_where_keras_cannot_print_variables(
        tmp_path, style, monkeypatch):
    keras = pytest.importorskip("keras")
    monkeypatch.setattr(keras.Variable, "__repr__", _Keras312Variable.__repr__)
    est = el.Estimator(_keras3_optimizer_model_fn(style), model_dir=str(tmp_path))
    with pytest.raises(TypeError, match=re.escape(ERR_KERAS3_OPTIMIZER)) as error:
        est.train(INPUT_FNS["tf2_dataset_dict"], steps=1)
    assert KERAS3_OPTIMIZER_FIX in str(error.value)
    assert "adam/iteration" in str(error.value)
