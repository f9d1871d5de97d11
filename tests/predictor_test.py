"""estimator_lite.predictor: one graph and one session answering request after request.

From an Estimator (nothing exported) and from a SavedModel (estimator_lite's and
tf.estimator 2.15's), the outputs equal `Estimator.predict`'s; signatures, tags,
threads, input checks and close() behave as documented.
"""

import threading

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite as el
from tests.oracle import driver_path, load_driver, requires_oracle, run_oracle_driver
from tests.support import models

DRIVER_PATH = driver_path("predictor_driver.py")
driver = load_driver(DRIVER_PATH, "predictor_driver")

TOLERANCE = 1e-6
MISSING = "missing input(s) ['x']; the signature's inputs are ['x']"
UNKNOWN = "unknown input key(s) ['z']; the signature's inputs are ['x']"
WRONG_DTYPE = ("input 'x' has dtype float32; got values of dtype str, which do not "
               "cast to it safely")
WRONG_SHAPE = "input 'x' has shape (None, 4) (None: any size); got shape (2, 3)"
CANNED_SIGNATURES = "['classification', 'predict', 'serving_default']"


# Models -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def linear(tmp_path_factory):
    """(trained linear Estimator, its raw-receiver SavedModel dir)."""
    model_dir = tmp_path_factory.mktemp("linear")
    estimator = models.make_estimator(model_dir)
    estimator.train(models.input_fn(), max_steps=30)
    export_dir = estimator.export_saved_model(str(model_dir / "export"),
                                              models.raw_serving_input_fn)
    return estimator, export_dir


@pytest.fixture(scope="module")
def canned(tmp_path_factory):
    """(trained DNNClassifier, its parsing-receiver SavedModel dir)."""
    model_dir = tmp_path_factory.mktemp("canned")
    estimator = driver.build(el, str(model_dir / "model"))
    estimator.train(driver.input_fn(), max_steps=driver.TRAIN_STEPS)
    export_dir = estimator.export_saved_model(str(model_dir / "export"),
                                              driver.parsing_receiver_fn(el.export))
    return estimator, export_dir


def _linear_outputs(estimator, x):
    """What the linear model computes for `x`, from its checkpoint's variables."""
    return x @ estimator.get_variable_value("w") + estimator.get_variable_value("b")


def _predict_batch(estimator, features, key):
    """Estimator.predict's `key` for `features`, stacked."""
    def input_fn():
        return tf.data.Dataset.from_tensor_slices(features).batch(len(features["x"]))
    return np.stack([row[key] for row in estimator.predict(input_fn)])


def _counter_model_fn(features, mode):
    """Adds an int32 id (as float) to the sum of a float row: typed inputs."""
    scale = tf.compat.v1.get_variable("scale", [], initializer=tf.ones_initializer())
    value = (tf.cast(features["id"], tf.float32) + tf.reduce_sum(features["x"], 1)) * scale
    if mode == el.ModeKeys.PREDICT:
        return el.EstimatorSpec(mode, predictions={"value": value})
    loss = tf.reduce_mean(value) * 0.0
    train_op = tf.compat.v1.assign_add(tf.compat.v1.train.get_global_step(), 1)
    return el.EstimatorSpec(mode, loss=loss, train_op=train_op)


@pytest.fixture(scope="module")
def typed(tmp_path_factory):
    """A Predictor with an int32 [None] input 'id' and a float32 [None, 2] input 'x'."""
    estimator = el.Estimator(_counter_model_fn, str(tmp_path_factory.mktemp("typed")))
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices(
        {"id": np.arange(4, dtype=np.int32), "x": np.ones((4, 2), np.float32)}).batch(2),
        max_steps=1)
    receiver_fn = el.export.build_raw_serving_input_receiver_fn({
        "id": tf.TensorSpec([None], tf.int32), "x": tf.TensorSpec([None, 2], tf.float32)})
    with el.predictor.from_estimator(estimator, receiver_fn) as predictor:
        yield predictor


# Outputs ------------------------------------------------------------------------------


def test_from_estimator_and_from_saved_model_equal_predict(linear):
    estimator, export_dir = linear
    x = models.linear_data(9, seed=3)[0]
    expected = _predict_batch(estimator, {"x": x}, "y")
    with el.predictor.from_estimator(estimator, models.raw_serving_input_fn) as live, \
            el.predictor.from_saved_model(export_dir) as loaded:
        for predictor in (live, loaded):
            outputs = predictor({"x": x})
            assert sorted(outputs) == ["outputs"]  # the model_fn's PredictOutput
            np.testing.assert_allclose(outputs["outputs"], expected, atol=TOLERANCE)
    np.testing.assert_allclose(expected, _linear_outputs(estimator, x), atol=1e-5)


def test_canned_classifier_serialized_examples_equal_predict(canned):
    estimator, export_dir = canned
    features = driver.predict_features()
    examples = driver.serialized_examples(features)
    expected = _predict_batch(estimator, features, "probabilities")
    receiver_fn = driver.parsing_receiver_fn(el.export)
    with el.predictor.from_estimator(estimator, receiver_fn) as live, \
            el.predictor.from_saved_model(export_dir) as loaded:
        for predictor in (live, loaded):
            assert list(predictor.feed_tensors) == ["inputs"]  # classify signature
            outputs = predictor({"inputs": examples})
            np.testing.assert_allclose(outputs["scores"], expected, atol=TOLERANCE)
            assert outputs["classes"].tolist() == [[b"0", b"1", b"2"]] * len(examples)


def test_canned_classifier_raw_inputs_as_python_lists(canned):
    estimator, _ = canned
    features = driver.predict_features()
    expected = _predict_batch(estimator, features, "logits")
    with el.predictor.from_estimator(estimator, driver.raw_receiver_fn(el.export),
                                     output_key="predict") as predictor:
        outputs = predictor({"x": features["x"].tolist(),
                             "color": features["color"].tolist()})
    np.testing.assert_allclose(outputs["logits"], expected, atol=TOLERANCE)
    assert outputs["class_ids"].ravel().tolist() == expected.argmax(1).tolist()


def test_serialized_example_ending_in_nul_bytes_is_fed_whole(linear, tmp_path):
    """numpy's fixed-width bytes would cut a proto ending in 0.0's four NUL bytes."""
    estimator, _ = linear
    x = np.array([[1.0, 2.0, -1.0, 0.0]], np.float32)
    example = tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=x[0].tolist()))}))
    serialized = example.SerializeToString()
    assert serialized.endswith(b"\x00\x00\x00\x00")
    receiver_fn = el.export.build_parsing_serving_input_receiver_fn(
        {"x": tf.io.FixedLenFeature([models.NUM_FEATURES], tf.float32)})
    export_dir = estimator.export_saved_model(str(tmp_path), receiver_fn)
    with el.predictor.from_saved_model(export_dir) as predictor:
        outputs = predictor({"examples": [serialized]})
    np.testing.assert_allclose(outputs["outputs"], _linear_outputs(estimator, x),
                               atol=1e-5)


# Signatures and tags ------------------------------------------------------------------


def test_signature_selection(canned):
    estimator, export_dir = canned
    with el.predictor.from_saved_model(export_dir) as default:
        assert sorted(default.fetch_tensors) == ["classes", "scores"]
        assert "'serving_default'" in repr(default)
    with el.predictor.from_saved_model(export_dir, signature_def_key="predict") as p:
        assert list(p.feed_tensors) == ["examples"]
        assert {"logits", "probabilities", "class_ids"} <= set(p.fetch_tensors)
    with pytest.raises(ValueError) as caught:
        el.predictor.from_saved_model(export_dir, signature_def_key="nope")
    assert "signature_def_key 'nope' is not a signature of the SavedModel" in str(
        caught.value)
    assert str(caught.value).endswith(f"available: {CANNED_SIGNATURES}")
    with pytest.raises(ValueError) as caught:
        el.predictor.from_estimator(estimator, driver.parsing_receiver_fn(el.export),
                                    output_key="nope")
    assert str(caught.value) == ("output_key 'nope' is not a signature of the "
                                 "model_fn's export_outputs; available: "
                                 f"{CANNED_SIGNATURES}")


def test_signature_def_proto_is_served(canned):
    _, export_dir = canned
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        meta_graph = tf.compat.v1.saved_model.loader.load(session, ["serve"], export_dir)
    signature = meta_graph.signature_def["predict"]
    with el.predictor.from_saved_model(export_dir, signature_def=signature) as p:
        assert sorted(p.fetch_tensors) == sorted(signature.outputs)
        assert p.fetch_tensors["logits"].name == signature.outputs["logits"].name


def _write_saved_model(export_dir, signature_names):
    """A SavedModel whose signatures (y = 2x) have the given names, no default."""
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        x = tf.compat.v1.placeholder(tf.float32, [None], name="x")
        y = tf.identity(2.0 * x, name="y")
        builder = tf.compat.v1.saved_model.Builder(export_dir)
        builder.add_meta_graph_and_variables(session, ["serve"], signature_def_map={
            name: tf.compat.v1.saved_model.predict_signature_def({"x": x}, {"y": y})
            for name in signature_names})
        builder.save()


def test_without_serving_default_the_only_signature_is_served(tmp_path):
    _write_saved_model(str(tmp_path / "one"), ["double"])
    with el.predictor.from_saved_model(tmp_path / "one") as predictor:
        assert "'double'" in repr(predictor)
        assert predictor({"x": [1.5, -2.0]})["y"].tolist() == [3.0, -4.0]
    _write_saved_model(str(tmp_path / "two"), ["double", "twice"])
    with pytest.raises(ValueError, match=r"no 'serving_default' signature and 2 others; "
                       r"pass signature_def_key, one of \['double', 'twice'\]"):
        el.predictor.from_saved_model(tmp_path / "two")


def test_input_and_output_names_replace_the_signature(tmp_path):
    _write_saved_model(str(tmp_path), ["double"])
    with el.predictor.from_saved_model(str(tmp_path), input_names={"values": "x:0"},
                                       output_names={"doubled": "y:0"}) as predictor:
        assert predictor({"values": [4.0]}) == {"doubled": np.array([8.0], np.float32)}
    with pytest.raises(ValueError, match="output_names names a tensor the graph lacks"):
        el.predictor.from_saved_model(str(tmp_path), input_names={"values": "x:0"},
                                      output_names={"doubled": "nothing:0"})


def test_tags_choose_the_meta_graph(linear, tmp_path):
    estimator, _ = linear
    export_dir = estimator.experimental_export_all_saved_models(str(tmp_path), {
        el.ModeKeys.PREDICT: models.raw_serving_input_fn,
        el.ModeKeys.EVAL: el.experimental.build_raw_supervised_input_receiver_fn(
            {"x": tf.TensorSpec([None, models.NUM_FEATURES], tf.float32)},
            tf.TensorSpec([None, 1], tf.float32))})
    x, y = models.linear_data(6, seed=4)
    with el.predictor.from_saved_model(export_dir, tags="eval") as evaluator:
        assert "'eval'" in repr(evaluator)
        outputs = evaluator({"x": x, "label": y})
    expected_loss = np.mean((_linear_outputs(estimator, x) - y) ** 2)
    assert outputs["loss"] == pytest.approx(expected_loss, rel=1e-5)
    with el.predictor.from_saved_model(export_dir, tags=["serve"]) as server:
        assert list(server.feed_tensors) == ["x"]
    with pytest.raises(ValueError, match=r"tags \['gpu'\] do not name a MetaGraph .*"
                       "available tags"):
        el.predictor.from_saved_model(export_dir, tags="gpu")
    with pytest.raises(TypeError, match="tags must be a comma-separated str"):
        el.predictor.from_saved_model(export_dir, tags=5)


def test_graph_argument(linear):
    _, export_dir = linear
    graph = tf.Graph()
    with el.predictor.from_saved_model(export_dir, graph=graph) as predictor:
        assert predictor.graph is graph and not graph.finalized  # the caller's to extend
        assert predictor.session.graph is graph
    with el.predictor.from_saved_model(export_dir) as predictor:
        assert predictor.graph.finalized  # no thread can add ops to the one it made


# Threads ------------------------------------------------------------------------------


def test_concurrent_requests_each_get_their_own_answer(linear):
    estimator, export_dir = linear
    threads_count, calls = 8, 50
    errors, checked = [], []

    def client(predictor, index):
        rng = np.random.RandomState(index)
        try:
            for call in range(calls):
                x = rng.randn(1 + call % 4, models.NUM_FEATURES).astype(np.float32)
                got = predictor({"x": x})["outputs"]
                np.testing.assert_allclose(got, _linear_outputs(estimator, x),
                                           atol=1e-5)
                checked.append(index)
        except Exception as e:  # noqa: BLE001 - reported by the test below
            errors.append(repr(e))

    with el.predictor.from_saved_model(export_dir) as predictor:
        threads = [threading.Thread(target=client, args=(predictor, i))
                   for i in range(threads_count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
    assert errors == []
    assert len(checked) == threads_count * calls


def test_close_waits_for_calls_under_way(linear):
    _, export_dir = linear
    predictor = el.predictor.from_saved_model(export_dir)
    x = models.linear_data(2)[0]
    outcomes, started = [], threading.Barrier(5)

    def client():
        started.wait()
        while True:
            try:
                predictor({"x": x})
            except RuntimeError as e:
                outcomes.append(str(e))  # only ever ours, never a closed-session error
                return

    threads = [threading.Thread(target=client) for _ in range(4)]
    for thread in threads:
        thread.start()
    started.wait()
    predictor.close()
    for thread in threads:
        thread.join(timeout=60)
    assert outcomes == [f"{predictor!r} is closed"] * 4


def test_close_and_context_manager(linear):
    _, export_dir = linear
    with el.predictor.from_saved_model(export_dir) as predictor:
        assert not predictor.closed
    assert predictor.closed
    predictor.close()  # idempotent
    with pytest.raises(RuntimeError, match="is closed"):
        predictor({"x": models.linear_data(1)[0]})
    with pytest.raises(RuntimeError, match="closed Session"):
        predictor.session.run(predictor.fetch_tensors["outputs"])


# Input errors -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(linear):
    with el.predictor.from_saved_model(linear[1]) as predictor:
        yield predictor


@pytest.mark.parametrize("inputs,error,message", [
    ({}, ValueError, MISSING),
    ({"x": np.zeros((1, 4), np.float32), "z": 1}, ValueError, UNKNOWN),
    ({"x": np.zeros((1, 4)).astype(str)}, TypeError, WRONG_DTYPE),
    ({"x": np.zeros((2, 3), np.float32)}, ValueError, WRONG_SHAPE),
    ({"x": [[1.0, 2.0, 3.0, 4.0], [1.0]]}, ValueError, "input 'x' is not a rectangular"),
    ([np.zeros((1, 4))], TypeError, "takes a dict of input name to array, with keys "
                                    "['x']; got list"),
], ids=["missing", "unknown", "dtype", "shape", "ragged", "not-a-dict"])
def test_input_errors_name_key_expected_and_given(served, inputs, error, message):
    with pytest.raises(error) as caught:
        served(inputs)
    assert message in str(caught.value)


def test_a_graph_tensor_is_not_an_input(served):
    with tf.Graph().as_default():
        tensor = tf.zeros([1, 4])
        with pytest.raises(TypeError, match="input 'x' must be array-like"):
            served({"x": tensor})


def test_values_that_cast_safely_are_accepted(typed):
    got = typed({"id": [1, 2], "x": [[0, 1], [2, 3]]})  # Python ints for int32, float32
    assert got["value"].tolist() == [2.0, 7.0]
    got = typed({"id": np.array([5], np.int64), "x": np.ones((1, 2))})  # in range
    assert got["value"].tolist() == [7.0]


@pytest.mark.parametrize("inputs,error,message", [
    ({"id": [1.5], "x": [[0, 0]]}, TypeError,
     "input 'id' has dtype int32; got values of dtype float64, which do not cast"),
    ({"id": [2 ** 40], "x": [[0, 0]]}, ValueError,
     "input 'id' has dtype int32; got values from 1099511627776 to 1099511627776, "
     "outside its range [-2147483648, 2147483647]"),
    ({"id": 3, "x": [[0, 0]]}, ValueError,
     "input 'id' has shape (None,) (None: any size); got shape ()"),
    ({"id": [1], "x": np.array([[b"a", b"b"]], object)}, TypeError,
     "input 'x' has dtype float32; got values of dtype object (holding bytes)"),
], ids=["float-for-int", "out-of-range", "scalar-for-vector", "bytes-for-float"])
def test_typed_input_errors(typed, inputs, error, message):
    with pytest.raises(error) as caught:
        typed(inputs)
    assert message in str(caught.value)


def test_string_input_rejects_numbers(canned):
    estimator, _ = canned
    with el.predictor.from_estimator(estimator, driver.raw_receiver_fn(el.export),
                                     output_key="predict") as predictor:
        for color, given in (([3], "object (holding int)"), (np.array([3]), "int64")):
            with pytest.raises(TypeError) as caught:
                predictor({"x": [[0.0, 1.0]], "color": color})
            assert str(caught.value) == (f"input 'color' has dtype string; got values "
                                         f"of dtype {given}, which do not cast to it "
                                         "safely")


# Argument errors ----------------------------------------------------------------------


def test_argument_errors(linear, tmp_path):
    estimator, export_dir = linear
    with pytest.raises(ValueError, match="signature_def_key or signature_def, not both"):
        el.predictor.from_saved_model(export_dir, signature_def_key="a",
                                      signature_def=object())
    with pytest.raises(ValueError, match="input_names and output_names go together"):
        el.predictor.from_saved_model(export_dir, input_names={"x": "x:0"})
    with pytest.raises(TypeError, match="signature_def must be a SignatureDef"):
        el.predictor.from_saved_model(export_dir, signature_def={"inputs": 1})
    with pytest.raises(TypeError, match="config must be a tf.compat.v1.ConfigProto"):
        el.predictor.from_saved_model(export_dir, config={})
    with pytest.raises(OSError, match="SavedModel file does not exist"):
        el.predictor.from_saved_model(str(tmp_path / "nothing"))
    with pytest.raises(TypeError, match="estimator must be an estimator_lite Estimator"):
        el.predictor.from_estimator(export_dir, models.raw_serving_input_fn)
    with pytest.raises(TypeError, match="must return a ServingInputReceiver"):
        el.predictor.from_estimator(estimator, lambda: {"x": tf.zeros([1, 4])})
    untrained = models.make_estimator(tmp_path / "untrained")
    with pytest.raises(ValueError, match="no checkpoint in the estimator's model_dir"):
        el.predictor.from_estimator(untrained, models.raw_serving_input_fn)


# tf.estimator 2.15's SavedModels ----------------------------------------------------------


@requires_oracle
def test_tf_estimator_saved_models_give_its_own_predictions(tmp_path):
    # The oracle must not see this checkout.
    report = run_oracle_driver(DRIVER_PATH, tmp_path, checkout_on_path=False)
    expected = {key: np.array(value) for key, value in report["predictions"].items()}
    features = driver.predict_features()
    examples = driver.serialized_examples(features)

    with el.predictor.from_saved_model(report["parsing_export"]) as classify:
        scores = classify({"inputs": examples})["scores"]
    np.testing.assert_allclose(scores, expected["probabilities"], atol=TOLERANCE)
    with el.predictor.from_saved_model(report["parsing_export"],
                                       signature_def_key="predict") as predict:
        outputs = predict({"examples": examples})
    with el.predictor.from_saved_model(report["raw_export"]) as raw:  # only 'predict'
        raw_outputs = raw({"x": features["x"], "color": features["color"]})
    for got in (outputs, raw_outputs):
        for key in ("logits", "probabilities"):
            np.testing.assert_allclose(got[key], expected[key], atol=TOLERANCE)
        assert got["class_ids"].tolist() == expected["class_ids"].tolist()
