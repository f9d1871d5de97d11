"""Model averaging across workers: local training, periodic synchronous averaging.

Each worker trains its own local copy of the model. Every `interval_steps` local
steps, all workers contribute their local variables, the chief writes their mean
into the global *center* variables (on the ps) and releases the others, and every
worker copies the center back into its local copy. Between averaging rounds,
workers do not touch the ps for the model's variables.

    getter = ModelAverageCustomGetter(worker_device="/job:worker/task:0")
    with tf.compat.v1.variable_scope("", custom_getter=getter):
        ...build the model...
    optimizer = ModelAverageOptimizer(tf.compat.v1.train.GradientDescentOptimizer(0.1),
                                      num_worker=2, is_chief=True,
                                      ma_custom_getter=getter, interval_steps=100)
    train_op = optimizer.minimize(loss, global_step=global_step)
    hooks = [optimizer.make_session_run_hook()]

Unlike tf.contrib's version, the center keeps the variable's own name and the
working copy is the local variable ``model_average_local/<name>``: checkpoints hold
the averaged model under the names evaluation and export expect. The optimizer's
own variables (slots such as Adam's moments) are local to each worker too.

Every worker must reach each averaging round (they wait for each other): stop
training on a multiple of `interval_steps` local steps per worker.
"""

from estimator_lite._engine import validation
from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import tf
from estimator_lite.techniques.optimizer_wrapper import OptimizerWrapper

__all__ = ["ModelAverageCustomGetter", "ModelAverageOptimizer"]

_LOCAL_PREFIX = "model_average_local"


class ModelAverageCustomGetter:
    """A variable_scope custom getter that gives each trainable variable two copies.

    The model works on a local copy (LOCAL_VARIABLES, on `worker_device`); the
    global center (GLOBAL_VARIABLES, placed like any variable, i.e. on the ps under
    replica_device_setter) keeps the variable's name.
    """

    def __init__(self, worker_device):
        """Args: worker_device, e.g. '/job:worker/task:0'."""
        if not isinstance(worker_device, str) or not worker_device:
            raise ValueError(f"worker_device must be a device string, got "
                             f"{worker_device!r}")
        self._worker_device = worker_device
        self._pairs = []  # (local, center)

    def __call__(self, getter, name, *args, **kwargs):
        if not kwargs.get("trainable", True):
            return getter(name, *args, **kwargs)
        # Both copies are resource variables, even where the model asks for reference
        # ones (TF1 code: use_resource=False): averaging assigns them inside a cond,
        # which reference variables cannot do under control flow v2. Checkpoints
        # store the same tensors either way.
        kwargs["use_resource"] = True
        center = getter(name, *args, **dict(kwargs, trainable=False, collections=[
            tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.MODEL_VARIABLES]))
        with tf.device(self._worker_device):
            local = getter(f"{_LOCAL_PREFIX}/{name}", *args, **dict(
                kwargs, trainable=True, collections=[tf.GraphKeys.LOCAL_VARIABLES]))
        self._pairs.append((local, center))
        return local

    @property
    def worker_device(self):
        """The device of the local copies."""
        return self._worker_device

    def center_of(self, local):
        """The center variable of a local copy, or None if it has none."""
        for candidate, center in self._pairs:
            if candidate is local:
                return center
        return None

    @property
    def pairs(self):
        """All (local, center) pairs created so far."""
        return list(self._pairs)


def _local_variable_creator(next_creator, **kwargs):
    """Makes every variable the wrapped optimizer creates a local one."""
    kwargs["collections"] = [tf.GraphKeys.LOCAL_VARIABLES]
    return next_creator(**kwargs)


class ModelAverageOptimizer(OptimizerWrapper):
    """Trains local copies every step and averages them every `interval_steps`."""

    def __init__(self, opt, num_worker, is_chief, ma_custom_getter, interval_steps=100,
                 use_locking=True, name="ModelAverageOptimizer"):
        """Validates the arguments.

        Raises:
          TypeError: opt is not an Optimizer or the getter has the wrong type.
          ValueError: num_worker < 1 or interval_steps < 1.
        """
        super().__init__(opt, name, use_locking, arg_name="opt")
        if not isinstance(ma_custom_getter, ModelAverageCustomGetter):
            raise TypeError("ma_custom_getter must be a ModelAverageCustomGetter, got "
                            f"{ma_custom_getter!r}")
        self._num_worker = validation.check_int("num_worker", num_worker, 1)
        self._is_chief = bool(is_chief)
        self._getter = ma_custom_getter
        self._interval_steps = validation.check_int("interval_steps", interval_steps, 1)
        self._pairs = None
        self._local_step = None

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Applies the local update; every interval_steps-th call also averages.

        Raises:
          ValueError: no global_step, or no variable of the custom getter has a
            gradient (empty var list).
        """
        if global_step is None:
            raise ValueError("ModelAverageOptimizer needs global_step")
        grads_and_vars = [(g, v) for g, v in grads_and_vars if g is not None]
        pairs = [(v, self._getter.center_of(v)) for _, v in grads_and_vars]
        pairs = [(local, center) for local, center in pairs if center is not None]
        if not pairs:
            raise ValueError("the var list is empty: no variable created through the "
                             "ModelAverageCustomGetter has a gradient")
        self._pairs = pairs
        # Slots and the step counter belong to this worker: local, on its device
        # (under replica_device_setter they would otherwise be shared on the ps).
        with tf.variable_creator_scope(_local_variable_creator), tf.device(
                self._getter.worker_device):
            local_update = self.wrapped.apply_gradients(grads_and_vars, global_step)
            local_step = tf.get_variable(
                f"{self._name}/local_step", shape=[], dtype=tf.int64, trainable=False,
                initializer=tf.zeros_initializer(), use_resource=True)
        self._local_step = local_step
        accumulators, tokens = self._sync_resources(pairs)
        with tf.control_dependencies([local_update]):
            step = local_step.assign_add(1)
        due = tf.equal(step % self._interval_steps, 0)
        averaged = tf.cond(
            due, lambda: self._average(pairs, accumulators, tokens, step),
            lambda: tf.constant(False))
        return tf.group(averaged, name=name or self._name)

    def _sync_resources(self, pairs):
        """One accumulator per variable and one token queue, shared on the ps."""
        accumulators = []
        for _, center in pairs:
            with tf.device(center.device):
                accumulators.append(tf.ConditionalAccumulator(
                    center.dtype.base_dtype, shape=center.shape,
                    shared_name=f"{center.op.name}/{self._name}_accumulator"))
        with tf.device(pairs[0][1].device):
            tokens = tf.FIFOQueue(-1, tf.int64, shapes=[[]],
                                  shared_name=f"{self._name}_tokens")
        return accumulators, tokens

    def _average(self, pairs, accumulators, tokens, step):
        round_index = step // self._interval_steps - 1
        contributions = [acc.apply_grad(local.read_value(), local_step=round_index)
                         for acc, (local, _) in zip_strict(accumulators, pairs)]
        with tf.control_dependencies(contributions):
            if self._is_chief:
                assigns = [center.assign(acc.take_grad(self._num_worker))
                           for acc, (_, center) in zip_strict(accumulators, pairs)]
                with tf.control_dependencies(assigns):
                    released = tokens.enqueue_many(
                        tf.fill([self._num_worker - 1], round_index))
            else:
                released = tokens.dequeue()
        with tf.control_dependencies([released]):
            copies = [local.assign(center.read_value()) for local, center in pairs]
        with tf.control_dependencies(copies):
            return tf.constant(True)

    def make_session_run_hook(self):
        """The hook that starts every local copy from the center (after minimize).

        Raises:
          ValueError: called before apply_gradients/minimize.
        """
        if self._pairs is None:
            raise ValueError("call apply_gradients (or minimize) before "
                             "make_session_run_hook")
        return _StartFromCenterHook(self._getter.pairs, self._local_step)


class _StartFromCenterHook(tf.train.SessionRunHook):
    """After session creation, copies every center into its local copy."""

    def __init__(self, pairs, local_step):
        self._pairs = pairs
        self._local_step = local_step
        self._init_op = None

    def begin(self):
        self._init_op = tf.group(
            *[local.assign(center.read_value()) for local, center in self._pairs],
            self._local_step.assign(0), name="model_average_start_from_center")

    def after_create_session(self, session, coord):
        session.run(self._init_op)
