"""tf.estimator 2.15's private canned builders, gc and util, called the same way.

Libraries (and tf.estimator's own tests) import these by module path:
``canned.linear``'s `LinearModel`, `linear_logit_fn_builder` and
`_compute_fraction_of_zero`, ``canned.baseline._baseline_model_fn_builder_v2``,
``canned.dnn_linear_combined._dnn_linear_combined_model_fn_v2``, ``gc``'s filters
and ``util.parse_input_fn_result``. tests/canned/private_builders_test.py calls
`report` with the modules estimator_lite serves under those paths (installed), and
runs this file with the TF 2.15 interpreter, where tensorflow_estimator serves them:

    python private_builders_driver.py run <workdir>

prints one JSON line (`report`'s dict). Every model's variables are set to the same
values by name (`_set_variables`) before anything is read, so the numbers compare.
"""

import contextlib
import functools
import importlib
import json
import os
import sys

import numpy as np
import tensorflow as tf

ROOT = "tensorflow_estimator.python.estimator"
MODULES = {"linear": "canned.linear", "baseline": "canned.baseline",
           "combined": "canned.dnn_linear_combined", "gc": "gc", "util": "util",
           "regression_head": "head.regression_head"}


def import_modules():
    """The modules of MODULES, imported by their tf.estimator paths."""
    return {key: importlib.import_module(f"{ROOT}.{path}")
            for key, path in MODULES.items()}


@contextlib.contextmanager
def _initialized_session():
    """A session of the current graph, its variables and tables initialized."""
    with tf.compat.v1.Session() as session:
        session.run(tf.compat.v1.global_variables_initializer())
        session.run(tf.compat.v1.tables_initializer())
        yield session


def _set_variables(session):
    """Gives every global variable values depending only on its name and shape."""
    for variable in sorted(tf.compat.v1.global_variables(), key=lambda v: v.op.name):
        if not variable.dtype.base_dtype.is_floating:
            continue
        shape = variable.shape.as_list()
        size = int(np.prod(shape)) if shape else 1
        seed = sum(ord(c) for c in variable.op.name) % 7
        values = (np.arange(size, dtype=np.float32) % 5 - 2 + seed) * 0.1
        session.run(variable.assign(values.reshape(shape)))


def _variables(collection=tf.compat.v1.GraphKeys.GLOBAL_VARIABLES):
    return sorted([v.op.name, v.shape.as_list()] for v in tf.compat.v1.get_collection(
        collection))


def _summary_tags(session):
    """The tags of the graph's summaries, as TensorBoard sees them."""
    summary = tf.compat.v1.Summary()
    summary.ParseFromString(session.run(tf.compat.v1.summary.merge_all()))
    return sorted(value.tag for value in summary.value)


def _columns():
    age = tf.feature_column.numeric_column("age", shape=(2,))
    color = tf.feature_column.categorical_column_with_vocabulary_list(
        "color", ["red", "green", "blue"])
    return age, color


def _features():
    return {"age": tf.constant([[23.0, 1.0], [31.0, -2.0], [5.0, 0.5]]),
            "color": tf.constant([["red", "blue"], ["green", ""], ["", ""]]),
            "w": tf.constant([[1.0], [2.0], [0.5]])}


def _linear_logit_fn(linear):
    with tf.Graph().as_default():
        logit_fn = linear.linear_logit_fn_builder(units=2, feature_columns=list(_columns()),
                                                  sparse_combiner="mean")
        logits = logit_fn(features=_features())
        with _initialized_session() as session:
            zero = session.run(logits)
            _set_variables(session)
            return {"variables": _variables(), "summaries": _summary_tags(session),
                    "initial_logits": zero.tolist(),
                    "logits": session.run(logits).tolist()}


def _linear_model(linear):
    with tf.Graph().as_default():
        model = linear.LinearModel(feature_columns=list(_columns()), units=3,
                                   name="linear_model")
        logits = model(_features())
        again = model(_features())
        weights = model.variables
        weights.remove(model.bias)
        fraction = linear._compute_fraction_of_zero(weights)
        with _initialized_session() as session:
            initial_fraction = session.run(fraction)
            _set_variables(session)
            return {"variables": [v.op.name for v in model.variables],
                    "bias": model.bias.op.name, "global": _variables(),
                    "initial_fraction": float(initial_fraction),
                    "fraction": float(session.run(fraction)),
                    "logits": session.run(logits).tolist(),
                    "again": session.run(again).tolist()}


def _fraction_cases():
    """Lists of tensors (nested, of several dtypes, empty ones) to measure."""
    return [
        [tf.constant([0, 0, 0, 1])],
        [tf.constant([0.0, 1.0]), tf.constant([0.0, 0.0, 3.0], dtype=tf.float64)],
        [tf.constant([], dtype=tf.float32), tf.constant([0.0]), tf.constant([1.0])],
        [[tf.constant([0, 0]), tf.constant([0, 1], dtype=tf.int64)]],
    ]


def _fractions(linear):
    with tf.Graph().as_default(), tf.compat.v1.Session() as session:
        results = [float(session.run(linear._compute_fraction_of_zero(case)))
                   for case in _fraction_cases()]
        empty = session.run(linear._compute_fraction_of_zero(
            [tf.constant([], dtype=tf.float32)]))
    try:
        linear._compute_fraction_of_zero([])
        none_error = None
    except ValueError:
        none_error = "ValueError"
    return {"fractions": results, "empty_is_nan": bool(np.isnan(empty)),
            "none_error": none_error}


def _baseline_batch(baseline, make_features):
    """The logits' shape for the features (weight column "w"), or the error's type."""
    with tf.Graph().as_default():
        try:
            _, logits = baseline._baseline_model_fn_builder_v2(
                features=make_features(), num_outputs=2, weight_column="w")
            with tf.compat.v1.Session() as session:
                session.run(tf.compat.v1.global_variables_initializer())
                return list(session.run(logits).shape)
        except (tf.errors.InvalidArgumentError, ValueError) as error:
            return type(error).__name__


def _baseline(baseline):
    report = {"batches": [_baseline_batch(baseline, make) for make in (
        lambda: {"a": [[1.0], [2.0]], "b": [[1.0], [2.0], [3.0]]},
        lambda: {"w": [[1.0], [2.0], [3.0]], "a": [[1.0], [2.0]]},
        lambda: {"a": tf.SparseTensor([[0, 0], [3, 0]], ["x", "y"], [4, 1])})]}
    with tf.Graph().as_default():
        variables, logits = baseline._baseline_model_fn_builder_v2(
            features=_features(), num_outputs=3, weight_column="w")
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            _set_variables(session)
            report.update(variables=[v.op.name for v in variables],
                          logits=session.run(logits).tolist())
    return report


def _combined_spec(modules, mode):
    age, color = _columns()
    head = modules["regression_head"].RegressionHead(label_dimension=2)
    tf.compat.v1.train.get_or_create_global_step()
    return modules["combined"]._dnn_linear_combined_model_fn_v2(
        features=_features(), labels=tf.constant([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]),
        mode=mode, head=head, linear_feature_columns=[age, color],
        linear_optimizer="SGD", dnn_feature_columns=[
            age, tf.feature_column.embedding_column(color, dimension=2)],
        dnn_optimizer="SGD", dnn_hidden_units=[3, 2], linear_sparse_combiner="sqrtn")


def _combined(modules):
    report = {}
    with tf.Graph().as_default():
        spec = _combined_spec(modules, tf.estimator.ModeKeys.PREDICT)
        with _initialized_session() as session:
            _set_variables(session)
            report["predictions"] = session.run(spec.predictions["predictions"]).tolist()
            report["trainable"] = _variables(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES)
    with tf.Graph().as_default():
        spec = _combined_spec(modules, tf.estimator.ModeKeys.TRAIN)
        with _initialized_session() as session:
            _set_variables(session)
            report["train_summaries"] = _summary_tags(session)
            session.run(tf.compat.v1.train.get_global_step().assign(0))
            report["loss"] = float(session.run(spec.loss))
            session.run(spec.train_op)
            report["global_step"] = int(session.run(tf.compat.v1.train.get_global_step()))
            report["after_step"] = {
                v.op.name: session.run(v).tolist()
                for v in tf.compat.v1.trainable_variables()}
    try:
        with tf.Graph().as_default():
            _combined_spec_with_tensor_features(modules)
        report["tensor_features_error"] = None
    except ValueError:
        report["tensor_features_error"] = "ValueError"
    return report


def _combined_spec_with_tensor_features(modules):
    age, _ = _columns()
    modules["combined"]._dnn_linear_combined_model_fn_v2(
        features=tf.constant([[1.0, 2.0]]), labels=tf.constant([[1.0]]),
        mode=tf.estimator.ModeKeys.PREDICT,
        head=modules["regression_head"].RegressionHead(),
        dnn_feature_columns=[age], dnn_hidden_units=[2])


def _gc(gc, workdir):
    paths = [gc.Path("/foo", v) for v in (0, 1, 3, 5, 6, 7, 8, 33)] + [
        gc.Path("/bar", None)]
    versioned = [p for p in paths if p.export_version is not None]
    filters = {
        "largest_3": gc._largest_export_versions(3)(paths),
        "largest_0": gc._largest_export_versions(0)(paths),
        "one_of_every_3": gc._one_of_every_n_export_versions(3)(paths),
        "mod_3": gc._mod_export_version(3)(versioned),
        "union": gc._union(gc._largest_export_versions(2),
                           gc._mod_export_version(5))(versioned),
        "negation": gc._negation(gc._largest_export_versions(2))(versioned),
    }
    base = os.path.join(workdir, "gc")
    for name in ("1", "20", "3", "ignored"):
        tf.io.gfile.makedirs(os.path.join(base, name))

    def parser(path):
        name = os.path.basename(path.path)
        return path._replace(export_version=int(name)) if name.isdigit() else None

    listed = gc._get_paths(base, parser)
    return {"filters": {k: [list(p) for p in v] for k, v in filters.items()},
            "listed": [[os.path.relpath(p.path, workdir), p.export_version]
                       for p in listed],
            "path_fields": list(gc.Path._fields)}


def _with_kwargs(features, labels, *args, mode=None, **kwargs):
    del features, labels, args, mode, kwargs


class _Model:
    def model_fn(self, features, labels, config):
        del features, labels, config

    def __call__(self, features, params=None):
        del features, params


def _fn_args(util):
    """util.fn_args of functions, methods, callables and partials."""
    model = _Model()
    return [list(util.fn_args(fn)) for fn in (
        _with_kwargs, model.model_fn, model, functools.partial(_with_kwargs, 1),
        functools.partial(_with_kwargs, labels=2, mode=3), lambda x, y=1: None)]


def _util(util):
    report = {"fn_args": _fn_args(util)}
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_tensor_slices(
            ({"x": np.arange(4.0)}, np.arange(4, 8)))
        features, labels, hooks = util.parse_input_fn_result(dataset)
        with tf.compat.v1.train.MonitoredSession(hooks=hooks) as session:
            report["dataset"] = [session.run(features["x"]).tolist(),
                                 session.run(labels).tolist()]
        report["hooks"] = [isinstance(h, util._DatasetInitializerHook) for h in hooks]
    with tf.Graph().as_default():
        features, labels, hooks = util.parse_input_fn_result(tf.constant([1, 2]))
        report["features_only"] = [labels is None, hooks]
    try:
        util.parse_input_fn_result((1, 2, 3))
        report["three_error"] = None
    except ValueError as error:
        report["three_error"] = ["ValueError", "input_fn should return" in str(error)]
    return report


def _v1_only_columns(workdir):
    """A v1 LinearRegressor over TF 1's private v1-only columns: loss, variables."""
    from tensorflow.python.feature_column import feature_column as fc_v1  # noqa: PLC0415

    def input_fn():
        return ({"x": tf.constant([[1.0], [2.0]]), "c": tf.constant([["a"], ["b"]])},
                tf.constant([[1.0], [0.0]]))

    columns = [fc_v1._numeric_column("x"),
               fc_v1._categorical_column_with_vocabulary_list("c", ["a", "b"])]
    estimator = tf.compat.v1.estimator.LinearRegressor(
        feature_columns=columns, model_dir=os.path.join(workdir, "v1_columns"))
    estimator.train(input_fn, steps=2)
    return {"loss": float(estimator.evaluate(input_fn, steps=1)["loss"]),
            "variables": sorted(estimator.get_variable_names())}


def report(modules, workdir):
    """What each builder gives, as JSON-ready values."""
    return {"tf_version": tf.__version__,
            "linear_logit_fn": _linear_logit_fn(modules["linear"]),
            "linear_model": _linear_model(modules["linear"]),
            "fraction_of_zero": _fractions(modules["linear"]),
            "baseline": _baseline(modules["baseline"]),
            "combined": _combined(modules),
            "gc": _gc(modules["gc"], workdir),
            "util": _util(modules["util"]),
            "v1_only_columns": _v1_only_columns(workdir)}


def main(argv):
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    if len(argv) != 3 or argv[1] != "run":
        raise SystemExit("usage: private_builders_driver.py run <workdir>")
    print(json.dumps(report(import_modules(), argv[2])))


if __name__ == "__main__":
    main(sys.argv)
