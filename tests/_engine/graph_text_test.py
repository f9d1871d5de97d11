"""graph.pbtxt's text: byte for byte what tf.io.write_graph writes, reused or not."""

import os

import numpy as np
import pytest
from google.protobuf import text_format

import estimator_lite as el
from estimator_lite._engine.graph_text import graph_def_text
from estimator_lite._tf import tf
from tests.support.tf_versions import TF1


def _write_graph_text(graph_def, tmp_path):
    """What TensorFlow's own writer puts in the file."""
    path = tf.io.write_graph(graph_def, str(tmp_path), "reference.pbtxt", as_text=True)
    with open(path, encoding="utf-8") as f:
        return f.read()


def _varied_graph():
    """Strings with escapes and raw bytes, floats, ints, shapes, lists, a variable."""
    with tf.Graph().as_default() as graph:
        tf.constant([b"tab\t", b"quote\"", b"\xff\x00raw", "caf\u00e9".encode("utf-8")],
                    name="strings")
        tf.constant(np.linspace(-1e-8, 3e7, 7, dtype=np.float32), name="floats")
        tf.constant(np.arange(300, dtype=np.int64).reshape(3, 100), name="big_ints")
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.get_variable("w", [3, 2], initializer=tf.glorot_uniform_initializer(seed=1))
        y = tf.nn.leaky_relu(tf.matmul(x, w), alpha=0.1)
        tf.nn.avg_pool2d(tf.reshape(y, [-1, 1, 2, 1]), [1, 1, 2, 1], [1, 1, 1, 1], "SAME")
    return graph


def _functional_graph():
    """A graph with a function library (tf.cond and tf.while_loop bodies, on TF 2)."""
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [], name="x")
        y = tf.cond(x > 0, lambda: x * 2.5, lambda: x - 1.0)
        tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 0.5), [0, y])
    return graph


@pytest.mark.parametrize("make_graph", [_varied_graph, _functional_graph])
def test_text_equals_tensorflows_writer_before_and_after_reuse(make_graph, tmp_path):
    graph_def = make_graph().as_graph_def(add_shapes=True)
    expected = _write_graph_text(graph_def, tmp_path)
    assert graph_def_text(graph_def) == expected
    # The graph rebuilt (what each train() of a local train_and_evaluate does): node
    # texts are reused (function names carry a process-wide counter, so nodes
    # calling them are new), and the whole is still byte-equal.
    rebuilt = make_graph().as_graph_def(add_shapes=True)
    assert graph_def_text(rebuilt) == _write_graph_text(rebuilt, tmp_path)
    assert expected.startswith("node {\n")
    if make_graph is _functional_graph and not TF1:  # TF 1.15's cond is not functional
        assert "library {" in expected and "versions {" in expected


def test_a_changed_node_is_printed_anew(tmp_path):
    with tf.Graph().as_default() as graph:
        tf.constant(1.0, name="c")
        tf.constant(2.0, name="d")
    first = graph.as_graph_def()
    graph_def_text(first)
    with tf.Graph().as_default() as graph:
        tf.constant(1.0, name="c")
        tf.constant(3.0, name="d")  # same name, another value
    second = graph.as_graph_def()
    text = graph_def_text(second)
    assert text == _write_graph_text(second, tmp_path)
    assert "float_val: 3.0" in text and "float_val: 2.0" not in text


def test_estimator_graph_pbtxt_is_tensorflows_text_of_the_graph(tmp_path):
    def model_fn(features, labels, mode):
        kernel = tf.get_variable("dense/kernel", [2, 1])
        predictions = tf.matmul(features["x"], kernel)
        loss = tf.losses.mean_squared_error(labels, predictions)
        train_op = tf.train.AdagradOptimizer(0.1).minimize(
            loss, global_step=tf.train.get_global_step())
        return el.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def input_fn():
        return tf.data.Dataset.from_tensors(({"x": [[1.0, 2.0]]}, [[1.0]])).repeat()

    model_dir = str(tmp_path / "model")
    estimator = el.Estimator(model_fn, model_dir=model_dir)
    for max_steps in (2, 4):  # the second run reuses the first run's node texts
        estimator.train(input_fn, max_steps=max_steps)
        with open(os.path.join(model_dir, "graph.pbtxt"), encoding="utf-8") as f:
            written = f.read()
        graph_def = tf.GraphDef()
        text_format.Parse(written, graph_def)
        assert written == _write_graph_text(graph_def, tmp_path)
        assert {"global_step", "dense/kernel"} <= {n.name for n in graph_def.node}
    assert not [name for name in os.listdir(model_dir) if ".tmp" in name]
