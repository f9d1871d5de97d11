"""The prediction loop's pure pieces: key selection and splitting batches."""

import numpy as np
import pytest

from estimator_lite._engine import predict_loop


def test_select_predictions_keeps_the_named_keys_in_the_predictions_order():
    # tf.estimator 2.15 (seen on it): predict_keys=["c", "a"] yields a, then c.
    predictions = {"a": 1, "b": 2, "c": 3}
    assert predict_loop.select_predictions(predictions, None) is predictions
    assert predict_loop.select_predictions(predictions, "b") == {"b": 2}
    assert list(predict_loop.select_predictions(predictions, ["c", "a"])) == ["a", "c"]


def test_select_predictions_leaves_out_unknown_keys_while_one_is_known():
    assert predict_loop.select_predictions({"a": 1}, ["a", "z"]) == {"a": 1}
    with pytest.raises(ValueError, match="Expected to run at least one output from") as e:
        predict_loop.select_predictions({"a": 1}, ["z"])
    assert "name none of the predictions ['a']" in str(e.value)
    with pytest.raises(ValueError, match="predict_keys argument is not valid in case of "
                                         "non-dict predictions"):
        predict_loop.select_predictions(np.zeros(3), "a")


def test_unbatch_splits_dicts_and_arrays_into_examples():
    batch = {"x": np.array([1, 2]), "y": np.array([[3, 4], [5, 6]])}
    examples = list(predict_loop._unbatch(batch))
    assert [e["x"] for e in examples] == [1, 2]
    assert [e["y"].tolist() for e in examples] == [[3, 4], [5, 6]]
    assert list(predict_loop._unbatch(np.array([7, 8, 9]))) == [7, 8, 9]
    with pytest.raises(ValueError, match="same batch size"):
        list(predict_loop._unbatch({"x": np.zeros(2), "y": np.zeros(3)}))
