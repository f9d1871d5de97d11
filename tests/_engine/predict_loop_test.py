"""The prediction loop's pure pieces: key selection and splitting batches."""

import numpy as np
import pytest

from estimator_lite._engine import predict_loop


def test_select_predictions_keeps_the_named_keys_in_the_predictions_order():
    predictions = {"a": 1, "b": 2, "c": 3}
    assert predict_loop.select_predictions(predictions, None) is predictions
    assert predict_loop.select_predictions(predictions, "b") == {"b": 2}
    # tf.estimator filters the model_fn's dict (conformance types/predict/keys_order).
    assert list(predict_loop.select_predictions(predictions, ["c", "a"])) == ["a", "c"]


def test_select_predictions_rejects_unknown_keys_and_non_dicts():
    with pytest.raises(ValueError, match=r"predict_keys \['z'\] are not among"):
        predict_loop.select_predictions({"a": 1}, ["a", "z"])
    with pytest.raises(ValueError, match="needs the model_fn to return a dict"):
        predict_loop.select_predictions(np.zeros(3), "a")


def test_unbatch_splits_dicts_and_arrays_into_examples():
    batch = {"x": np.array([1, 2]), "y": np.array([[3, 4], [5, 6]])}
    examples = list(predict_loop._unbatch(batch))
    assert [e["x"] for e in examples] == [1, 2]
    assert [e["y"].tolist() for e in examples] == [[3, 4], [5, 6]]
    assert list(predict_loop._unbatch(np.array([7, 8, 9]))) == [7, 8, 9]
    with pytest.raises(ValueError, match="same batch size"):
        list(predict_loop._unbatch({"x": np.zeros(2), "y": np.zeros(3)}))
