"""tf.estimator's private canned builders, gc and util, as libraries import them.

With `install_as_tf_estimator()`, ``tensorflow_estimator.python.estimator.canned.
linear`` & co. serve estimator_lite's equivalents: `LinearModel`,
`linear_logit_fn_builder`, `_compute_fraction_of_zero`,
`_baseline_model_fn_builder_v2`, `_dnn_linear_combined_model_fn_v2`, gc's filters
and `util.parse_input_fn_result`. tests/oracle/private_builders_driver.py calls
them the same way on both libraries (the TF 2.15 side through
ESTIMATOR_LITE_TF215_PYTHON): same variables, logits, summaries, one training
step's values, filters and parsed inputs.
"""

import os
from unittest import mock

import numpy as np
import pytest
import tensorflow as tf

import estimator_lite
from estimator_lite._pycompat import zip_strict
from tests.oracle import driver_path, load_driver, requires_oracle, run_oracle_driver
from tests.support.installed import installed_as_tf_estimator

DRIVER_PATH = driver_path("private_builders_driver.py")

driver = load_driver(DRIVER_PATH, "private_builders_driver")


@pytest.fixture
def modules():
    """The private modules, served by estimator_lite while the test runs."""
    with installed_as_tf_estimator():
        yield driver.import_modules()


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    workdir = str(tmp_path_factory.mktemp("private_builders_oracle"))
    return run_oracle_driver(DRIVER_PATH, "run", workdir)


def _assert_close(actual, expected, path="report"):
    """Nested JSON values equal, floats to float32 precision."""
    if isinstance(expected, dict):
        assert sorted(actual) == sorted(expected), path
        for key in expected:
            _assert_close(actual[key], expected[key], f"{path}[{key!r}]")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), path
        for index, (a, e) in enumerate(zip_strict(actual, expected)):
            _assert_close(a, e, f"{path}[{index}]")
    elif isinstance(expected, float):
        assert np.isclose(actual, expected, rtol=1e-5, atol=1e-5), (path, actual, expected)
    else:
        assert actual == expected, (path, actual, expected)


@requires_oracle
@pytest.mark.parametrize("part", ["linear_logit_fn", "linear_model", "fraction_of_zero",
                                  "baseline", "combined", "gc", "util",
                                  "v1_only_columns"])
def test_private_builders_do_what_tf_estimators_do(part, modules, oracle, tmp_path):
    lite = driver.report(modules, str(tmp_path))
    _assert_close(lite[part], oracle[part], part)


def test_linear_logit_fn_builder_logits_are_the_weighted_sum(modules):
    linear = modules["linear"]
    age = tf.feature_column.numeric_column("age")
    with tf.Graph().as_default():
        logit_fn = linear.linear_logit_fn_builder(units=2, feature_columns=[age])
        logits = logit_fn(features={"age": [[23.0], [31.0]]})
        bias = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.GLOBAL_VARIABLES,
                                           "linear_model/bias_weights")[0]
        weights = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.GLOBAL_VARIABLES,
                                              "linear_model/age")[0]
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            session.run([bias.assign([10.0, 5.0]), weights.assign([[2.0, 3.0]])])
            np.testing.assert_allclose(session.run(logits), [[56.0, 74.0], [72.0, 98.0]])


def test_compute_fraction_of_zero_counts_over_all_variables(modules):
    fraction = modules["linear"]._compute_fraction_of_zero(
        [tf.constant([0, 0, 1, 1, 1], dtype=tf.float32),
         tf.constant([0, 0, 0, 0, 1], dtype=tf.int32)])
    assert float(fraction) == pytest.approx(0.6)
    with pytest.raises(ValueError, match="at least one"):
        modules["linear"]._compute_fraction_of_zero([])


def test_v2_estimator_refuses_v1_only_columns_when_it_builds(tmp_path):
    from tensorflow.python.feature_column import feature_column as fc_v1  # noqa: PLC0415

    estimator = estimator_lite.LinearRegressor(
        feature_columns=[fc_v1._numeric_column("x")], model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="Received a feature column from TensorFlow v1"):
        estimator.train(lambda: ({"x": tf.constant([[1.0]])}, tf.constant([[1.0]])),
                        steps=1)


def test_gc_filters_and_paths(modules, tmp_path):
    gc = modules["gc"]
    paths = [gc.Path("/foo", v) for v in (4, 5, 6, 9)]
    assert gc._negation(gc._mod_export_version(2))(paths) == [gc.Path("/foo", 5),
                                                              gc.Path("/foo", 9)]
    for name in ("0", "1", "ignore"):
        (tmp_path / name).mkdir()
    parser = lambda p: (p._replace(export_version=int(os.path.basename(p.path)))  # noqa: E731
                        if os.path.basename(p.path).isdigit() else None)
    assert gc._get_paths(str(tmp_path), parser) == [
        gc.Path(str(tmp_path / "0"), 0), gc.Path(str(tmp_path / "1"), 1)]


def test_gc_paths_drop_an_object_store_separator(modules):
    """GCS lists directories as 'name/'; tf.estimator's test expects bare names."""
    gc = modules["gc"]
    base = "gs://bucket/foo"
    parser = lambda p: p._replace(export_version=int(os.path.basename(p.path)))  # noqa: E731
    with mock.patch.object(tf.compat.v1.gfile, "ListDirectory",
                           return_value=["0/", "1/"]) as listed:
        assert gc._get_paths(base, parser) == [gc.Path(base + "/0", 0),
                                               gc.Path(base + "/1", 1)]
    listed.assert_called_once_with(base)
