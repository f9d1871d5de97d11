"""Conformance: model_fn constructs users write that the speed modes must leave alone
(issue 39): queues, Python ops waiting on each other, a second dataset, Scaffold
savers and init_fns, init_from_checkpoint, TF1 reference variables, feeding hooks,
seeded dropout, canned estimators with dropout and batch norm. Each trains and
reports its variables and an evaluation; the speed modes (tests/conformance/
speed_modes_test.py) must report the same."""

import threading

import numpy as np

from tests.conformance import programs
from tests.conformance.registry import files_under, scenarios


def _observe(est, input_fn, eval_steps=2):
    """Every variable (but optimizer slots), the global step and an evaluation."""
    names = [n for n in est.get_variable_names() if "Momentum" not in n]
    observed = {name: est.get_variable_value(name) for name in names}
    observed["eval"] = est.evaluate(input_fn, steps=eval_steps)
    return observed


def _construct_model_fn(env, construct, shared):
    tf = env.tf
    tf1 = tf.compat.v1

    def model_fn(features, labels, mode):
        x = features["x"]
        extra, scaffold, hooks = [], None, []
        if construct == "ref_variables":
            w = tf1.get_variable("w", [2, 1], use_resource=False,
                                 initializer=tf1.constant_initializer([[0.5], [-0.25]]))
            counter = tf1.get_variable("counter", [], use_resource=False,
                                       initializer=tf1.zeros_initializer())
            out = tf.matmul(x, w)
            extra.append(tf1.assign_add(counter, 1.0))
        else:
            out = programs.linear(env, features)
        if construct == "replay_queue" and mode == "train":
            buffer = tf1.FIFOQueue(10, [tf.float32], shapes=[[2, 2]])
            out = out + 0.0 * tf.reduce_sum(buffer.dequeue())
            extra.append(buffer.enqueue([x]))
        elif construct == "waiting_py_functions":
            out = out + shared["pair"](x, labels)
        elif construct == "seeded_dropout" and mode == "train":
            out = tf1.nn.dropout(out, rate=0.5)
        elif construct == "placeholder_fed_by_hook":
            scale = tf1.placeholder_with_default(1.0, [], name="scale")
            out = out * scale
            hooks.append(shared["feeder"](scale))
        elif construct == "init_from_checkpoint":
            tf1.train.init_from_checkpoint(shared["checkpoint"], {"w": "w"})
        loss = tf.reduce_mean(tf.square(out - labels))
        metrics = {"mean_x": tf1.metrics.mean(x)}
        if construct == "side_dataset_metric":
            side = tf1.data.make_one_shot_iterator(
                tf.data.Dataset.from_tensors(1.0).repeat()).get_next()
            metrics["side"] = tf1.metrics.mean(side)
        if mode == "train":
            train_op = tf.group(programs.sgd_train_op(env, loss, 0.05), *extra)
            if construct == "scaffold_saver":
                scaffold = tf1.train.Scaffold(saver=tf1.train.Saver(max_to_keep=2))
            elif construct == "scaffold_init_fn":
                scaffold = tf1.train.Scaffold(init_fn=shared["init_fn"])
        else:
            train_op = None
        return env.est.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                     eval_metric_ops=metrics, scaffold=scaffold,
                                     training_hooks=hooks)
    return model_fn


def _waiting_pair(env):
    """Two py_functions of one step, the second waiting for the first."""
    tf = env.tf
    produced = threading.Event()
    box = {}

    def produce(x):
        box["sum"] = float(np.sum(x))
        produced.set()
        return np.float32(0)

    def consume(labels):
        del labels
        waited = produced.wait(20)
        produced.clear()
        return np.float32(0.0 if waited else 1e3)  # a timed-out wait shows in the loss

    def pair(x, labels):
        return (tf.py_function(produce, [x], tf.float32)
                + tf.py_function(consume, [labels], tf.float32))
    return pair


def _feeder(env):
    tf1 = env.tf.compat.v1

    class Feed(tf1.train.SessionRunHook):
        def __init__(self, tensor):
            self._tensor = tensor

        def before_run(self, run_context):
            return tf1.train.SessionRunArgs(None, feed_dict={self._tensor: 0.5})
    return Feed


def _warm_checkpoint(env):
    tf = env.tf
    tf1 = tf.compat.v1
    path = env.tmpdir() + "/warm"
    with tf.Graph().as_default():
        tf1.get_variable("w", [2, 1], initializer=tf1.constant_initializer(0.75))
        saver = tf1.train.Saver()
        with tf1.Session() as session:
            session.run(tf1.global_variables_initializer())
            return saver.save(session, path)


_CONSTRUCTS = {name: name for name in (
    "replay_queue", "waiting_py_functions", "side_dataset_metric", "scaffold_saver",
    "scaffold_init_fn", "init_from_checkpoint", "ref_variables",
    "placeholder_fed_by_hook", "seeded_dropout")}


@scenarios("constructs/model_fn", _CONSTRUCTS)
def construct_model_fn(env, case):
    calls = []
    shared = {"pair": _waiting_pair(env), "feeder": _feeder(env),
              "checkpoint": _warm_checkpoint(env),
              "init_fn": lambda scaffold, session: calls.append("init_fn")}
    est = programs.estimator(env, _construct_model_fn(env, case, shared),
                             save_checkpoints_steps=2)
    input_fn = programs.input_fn(env)
    # steps=6: an input that never ends (a step meeting the end would leave a
    # waiting py_function to its cap).
    est.train(input_fn, steps=6)
    observed = _observe(est, programs.input_fn(env, epochs=1))
    observed["files"] = [f for f in files_under(est.model_dir) if "ckpt" in f]
    observed["init_fn_calls"] = calls
    return observed


_CANNED = {
    "dnn_dropout": ("DNNClassifier", {"hidden_units": [4, 3], "dropout": 0.3}),
    "dnn_batch_norm": ("DNNClassifier", {"hidden_units": [4, 3], "batch_norm": True}),
    "dnn_dropout_batch_norm": ("DNNRegressor", {"hidden_units": [3], "dropout": 0.2,
                                                "batch_norm": True}),
}


@scenarios("constructs/canned", _CANNED)
def construct_canned(env, case):
    tf = env.tf
    name, kwargs = case
    columns = [tf.feature_column.numeric_column("x", [2])]
    est = getattr(env.est, name)(feature_columns=columns, model_dir=env.tmpdir(),
                                 config=env.est.RunConfig(tf_random_seed=5), **kwargs)
    input_fn = programs.input_fn(env)
    est.train(input_fn, steps=7)
    return _observe(est, programs.input_fn(env, epochs=1))
