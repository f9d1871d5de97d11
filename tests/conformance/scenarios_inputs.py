"""Conformance: what input_fns may be (tf.data, TF1 queue pipelines, numpy_input_fn)
and where training and evaluation end."""


from tests.conformance import programs
from tests.conformance.registry import outcome, scenarios


def _queue_input(env, kind, epochs):
    tf = env.tf

    def input_fn():
        if kind == "fifo_queue_runner":
            queue = tf.compat.v1.FIFOQueue(capacity=8, dtypes=[tf.float32, tf.float32],
                                           shapes=[[2], [1]])
            enqueue = queue.enqueue_many([tf.constant(programs.X),
                                          tf.constant(programs.Y)])
            tf.compat.v1.train.add_queue_runner(
                tf.compat.v1.train.QueueRunner(queue, [enqueue]))
            x, y = queue.dequeue_many(2)
        else:
            x, y = tf.compat.v1.train.slice_input_producer(
                [tf.constant(programs.X), tf.constant(programs.Y)], num_epochs=epochs,
                shuffle=False)
            x, y = tf.compat.v1.train.batch([x, y], batch_size=2,
                                            allow_smaller_final_batch=True)
        return {"x": x}, y
    return input_fn


_QUEUES = {"fifo_queue_runner": ("fifo_queue_runner", None),
           "slice_producer_2_epochs": ("slice_producer", 2),
           "slice_producer_endless": ("slice_producer", None)}


@scenarios("inputs/queues", _QUEUES)
def queue_inputs(env, case):
    """A TF1 queue-based input_fn: the queue runners must be started."""
    kind, epochs = case
    est = programs.estimator(env, programs.regression_model_fn(env))
    input_fn = _queue_input(env, kind, epochs)
    observed = {"train": outcome(lambda: est.train(input_fn, max_steps=6) and
                                 est.get_variable_value("global_step"))}
    observed["w"] = est.get_variable_value("w")
    observed["evaluate"] = outcome(lambda: est.evaluate(
        input_fn, steps=None if epochs else 3))
    return observed


_NUMPY = {
    "epochs_1": {"num_epochs": 1},
    "epochs_2_batch_3": {"num_epochs": 2, "batch_size": 3},
    "epochs_0": {"num_epochs": 0},
    "epochs_none": {"num_epochs": None},
    "negative_epochs": {"num_epochs": -1},
    "batch_0": {"batch_size": 0},
    "y_dict": {"y": "dict"},
    "x_array_not_dict": {"x": "array"},
    "mismatched_rows": {"y": "short"},
}


@scenarios("inputs/numpy_input_fn", _NUMPY)
def numpy_inputs(env, case):
    """numpy_input_fn's arguments: how far training goes and what evaluate sees."""
    kwargs = {"batch_size": 2, "shuffle": False, "num_epochs": 1}
    kwargs.update({k: v for k, v in case.items() if k not in ("x", "y")})
    x = programs.X if case.get("x") == "array" else {"x": programs.X}
    y = {"y": programs.Y} if case.get("y") == "dict" else (
        programs.Y[:3] if case.get("y") == "short" else programs.Y)
    make = outcome(lambda: env.v1.inputs.numpy_input_fn(x, y, **kwargs))
    if "error" in make:
        return make
    input_fn = env.v1.inputs.numpy_input_fn(x, y, **kwargs)

    def model_fn(features, labels, mode):
        if isinstance(labels, dict):
            labels = labels["y"]
        if not isinstance(features, dict):
            features = {"x": features}
        return programs.regression_model_fn(env)(features, labels, mode)
    est = programs.estimator(env, model_fn)
    observed = {"train": outcome(lambda: est.train(input_fn, max_steps=7) and
                                 est.get_variable_value("global_step"))}
    observed["evaluate"] = outcome(lambda: est.evaluate(
        input_fn, steps=None if kwargs["num_epochs"] else 2))
    return observed


_DATASETS = {
    "features_labels_tuple": lambda tf: tf.data.Dataset.from_tensor_slices(
        ({"x": programs.X}, programs.Y)).batch(2),
    "ends_mid_training": lambda tf: tf.data.Dataset.from_tensor_slices(
        ({"x": programs.X}, programs.Y)).batch(3),
    "tensors_not_dataset": "tensors",
    "features_only_dataset": lambda tf: tf.data.Dataset.from_tensor_slices(
        {"x": programs.X}).batch(2),
    "three_tuple": lambda tf: tf.data.Dataset.from_tensor_slices(
        ({"x": programs.X}, programs.Y, programs.Y)).batch(2),
    "unknown_batch_dim": lambda tf: tf.data.Dataset.from_tensor_slices(
        ({"x": programs.X}, programs.Y)).batch(2).filter(lambda f, y: True),
}


@scenarios("inputs/dataset", _DATASETS)
def dataset_inputs(env, case):
    tf = env.tf

    def input_fn():
        if case == "tensors":
            return {"x": tf.constant(programs.X)}, tf.constant(programs.Y)
        return case(tf)
    est = programs.estimator(env, programs.regression_model_fn(env))
    observed = {"train": outcome(lambda: est.train(input_fn, max_steps=5) and
                                 est.get_variable_value("global_step"))}
    observed["evaluate"] = outcome(lambda: est.evaluate(input_fn, steps=None
                                                        if case != "tensors" else 1))
    observed["predict_first"] = outcome(lambda: next(est.predict(input_fn)))
    return observed


_INPUT_FN_ARGS = {
    "params": lambda env: lambda params: programs.input_fn(env)(),
    "mode": lambda env: lambda mode: programs.input_fn(env)(),
    "config": lambda env: lambda config: programs.input_fn(env)(),
    "all_three": lambda env: lambda mode, params, config: programs.input_fn(env)(),
    "unknown_arg": lambda env: lambda batch: programs.input_fn(env)(),
    "kwargs": lambda env: lambda **kwargs: programs.input_fn(env)(),
    "not_callable": lambda env: programs.input_fn(env)(),
}


@scenarios("inputs/input_fn_args", _INPUT_FN_ARGS)
def input_fn_args(env, case):
    est = programs.estimator(env, programs.regression_model_fn(env))
    return outcome(lambda: est.train(case(env), steps=1) and
                   est.get_variable_value("global_step"))


