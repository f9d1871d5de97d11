"""Pieces of user programs the scenarios share, written as tf.estimator users write.

Everything takes the `Env` so the same code runs on tf.estimator and estimator_lite.
"""

import numpy as np

X = np.array([[1.0, 2.0], [0.5, -1.0], [-1.5, 0.25], [2.0, 1.0]], np.float32)
Y = np.array([[1.0], [0.0], [0.0], [1.0]], np.float32)


def input_fn(env, batch_size=2, epochs=None, labels=True):
    """A tf.data input_fn over X/Y ({'x': ...}, y), repeated `epochs` times."""
    tf = env.tf

    def fn():
        data = ({"x": X}, Y) if labels else {"x": X}
        return tf.data.Dataset.from_tensor_slices(data).repeat(epochs).batch(batch_size)
    return fn


def linear(env, features):
    """A linear layer on features['x'] with fixed initial weights (deterministic)."""
    tf = env.tf
    w = tf.compat.v1.get_variable(
        "w", [2, 1], initializer=tf.compat.v1.constant_initializer([[0.5], [-0.25]]))
    b = tf.compat.v1.get_variable("b", [1], initializer=tf.compat.v1.zeros_initializer())
    return tf.matmul(features["x"], w) + b


def sgd_train_op(env, loss, learning_rate=0.1):
    tf = env.tf
    return tf.compat.v1.train.GradientDescentOptimizer(learning_rate).minimize(
        loss, global_step=tf.compat.v1.train.get_global_step())


def regression_model_fn(env, make_spec=None):
    """A linear regression model_fn; `make_spec(mode, predictions, loss, train_op)`
    may build the EstimatorSpec differently (default: the plain one)."""
    tf = env.tf

    def model_fn(features, labels, mode):
        predictions = linear(env, features)
        loss = train_op = None
        if mode != env.est.ModeKeys.PREDICT:
            loss = tf.reduce_mean(tf.square(predictions - labels))
            if mode == env.est.ModeKeys.TRAIN:
                train_op = sgd_train_op(env, loss)
        if make_spec is not None:
            return make_spec(mode, predictions, loss, train_op, labels)
        return env.est.EstimatorSpec(mode, predictions={"y": predictions}, loss=loss,
                                   train_op=train_op)
    return model_fn


def estimator(env, model_fn, **config):
    """An Estimator in a new temp model_dir; `config` goes to RunConfig."""
    config.setdefault("tf_random_seed", 7)
    return env.est.Estimator(model_fn, model_dir=env.tmpdir(),
                           config=env.est.RunConfig(**config))


def checkpoint_steps(env, model_dir):
    """The steps of the checkpoints the state file lists, oldest first."""
    state = env.tf.train.get_checkpoint_state(model_dir)
    if state is None:
        return []
    return [int(p.rsplit("-", 1)[1]) for p in state.all_model_checkpoint_paths]


def signature_summary(env, export_dir):
    """{signature key: [method, sorted inputs {name: [dtype, shape, tensor name]},
    sorted outputs {name: [dtype, shape]}]} of a SavedModel's serving MetaGraph."""
    from tensorflow.core.protobuf import saved_model_pb2  # noqa: PLC0415

    if isinstance(export_dir, bytes):
        export_dir = export_dir.decode()
    model = saved_model_pb2.SavedModel()
    with open(f"{export_dir}/saved_model.pb", "rb") as f:
        model.ParseFromString(f.read())
    summary = {}
    for meta in model.meta_graphs:
        # Sorted: a protobuf map has no defined order (it differs between
        # protobuf versions reading the same file).
        for key, sig in sorted(meta.signature_def.items()):
            summary[key] = [
                sig.method_name,
                {k: [env.tf.as_dtype(v.dtype).name, _shape(v.tensor_shape), v.name]
                 for k, v in sorted(sig.inputs.items())},
                {k: [env.tf.as_dtype(v.dtype).name, _shape(v.tensor_shape)]
                 for k, v in sorted(sig.outputs.items())},
                sorted(meta.meta_info_def.tags)]
    return summary


def _shape(proto):
    if proto.unknown_rank:
        return None
    return [d.size for d in proto.dim]
