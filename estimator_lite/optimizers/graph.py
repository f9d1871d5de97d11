"""Graph versions of the Keras optimizers, checkpoint-compatible with tf.estimator 2.15.

tf.estimator 2.15's canned estimators train with Keras (legacy OptimizerV2)
optimizers. Their checkpoints hold the hyperparameters as variables
(``training/Adam/learning_rate``), one slot per trained variable
(``training/Adam/dnn/logits/kernel/m``) and, for an optimizer that does not own the
global step, its own ``training/<Name>/iter`` counter. Keras 3 optimizers cannot
run in graph mode, so `GraphOptimizer` re-creates those variables under the same
names and applies the same update rules with tf.compat.v1 ops: a model_dir written
by either library restores in the other and keeps training the same way.

Learning rates may be numbers, tensors (e.g. ``tf.compat.v1.train.exponential_decay``
on the global step), zero-argument callables, or Keras ``LearningRateSchedule``
objects, which are evaluated in the graph on the optimizer's iteration count
(the global step for the estimator's main optimizer), as Keras does.

Under a distribution strategy the updates run in the strategy's merge step
(`estimator_lite.optimizers.merge`).
"""

from estimator_lite import _keras
from estimator_lite._tf import VARIABLE_TYPES, tf
from estimator_lite.optimizers import merge

__all__ = ["KERAS_CLASSES", "OPTIMIZER_NAMES", "SCOPE", "SGD", "Adagrad", "Adam", "Ftrl",
           "GraphOptimizer", "RMSprop", "is_number"]

# The name scope of every optimizer variable: ``training/<Name>/...`` (as Keras).
SCOPE = "training"


def _dedup(grad):
    """Sums the rows of IndexedSlices that share an index (as Keras does)."""
    unique, positions = tf.unique(grad.indices)
    values = tf.unsorted_segment_sum(grad.values, positions, tf.shape(unique)[0])
    return values, unique


def _assign(var, value):
    """Assigns `value` to `var`; returns the variable's value read after it."""
    op = var.assign(value, read_value=False)
    with tf.control_dependencies([op]):
        return var.read_value()


def _decay_and_scatter_add(var, decay, indices, updates):
    """var = var * decay, then var[indices] += updates; returns the value after both.

    Explicit control dependencies: the two writes and the read must not race.
    """
    decayed = var.assign(var * decay, read_value=False)
    with tf.control_dependencies([decayed]):
        added = tf.raw_ops.ResourceScatterAdd(resource=var.handle, indices=indices,
                                              updates=updates)
    with tf.control_dependencies([added]):
        return var.read_value()


def is_number(value):
    """True for an int or float that is not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_tensor_like(value):
    return isinstance(value, (tf.Tensor, *VARIABLE_TYPES))


def _check_learning_rate(name, lr):
    """Checks a learning rate: a number >= 0, a tensor, a schedule or a callable.

    Raises:
      TypeError: none of those kinds.
      ValueError: a negative number.
    """
    if is_number(lr):
        if lr < 0:
            raise ValueError(f"{name} learning_rate must be >= 0, got {lr!r}")
        return
    if _is_tensor_like(lr) or _keras.is_learning_rate_schedule(lr) or callable(lr):
        return
    raise TypeError(f"{name} learning_rate must be a number, a Tensor, a Keras "
                    f"LearningRateSchedule or a callable returning the rate, got "
                    f"{lr!r} of type {type(lr).__name__}")


class GraphOptimizer:
    """A Keras-style optimizer built from tf.compat.v1 variables and ops.

    Subclasses set `KERAS_NAME` (the checkpoint scope ``training/<KERAS_NAME>``),
    `HYPER` (hyperparameter names stored as variables, with Keras defaults) and
    implement `_slots`, `_apply_dense` and `_apply_sparse`.
    """

    KERAS_NAME = None
    HYPER = {}
    OPTIONS = {}  # Hyperparameters kept as Python values (not checkpointed).

    def __init__(self, **kwargs):
        """Stores hyperparameters; unknown names are a ValueError.

        Raises:
          TypeError: a hyperparameter is not a number.
          ValueError: an unknown hyperparameter name or a negative learning rate.
        """
        known = {"learning_rate": None, "decay": 0.0, **self.HYPER, **self.OPTIONS}
        unknown = sorted(set(kwargs) - set(known))
        if unknown:
            raise ValueError(f"{self.KERAS_NAME} got unknown hyperparameters {unknown}; "
                             f"valid ones are {sorted(known)}")
        values = {k: v for k, v in known.items() if v is not None}
        values.update({k: v for k, v in kwargs.items() if v is not None})
        for key, value in values.items():
            if key != "learning_rate" and isinstance(value, bool) and (
                    key not in self.OPTIONS):
                raise TypeError(f"{self.KERAS_NAME} {key} must be a number, got {value!r}")
        _check_learning_rate(self.KERAS_NAME, values.get("learning_rate"))
        self._values = values
        self._hyper = None
        self._scope_name = None

    @property
    def learning_rate(self):
        """The learning rate as given: a number (its checkpointed variable wins on
        restore), a Tensor, a LearningRateSchedule or a callable."""
        return self._values["learning_rate"]

    def get_config(self):
        """Hyperparameters as a dict (Keras style)."""
        return dict(self._values)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in sorted(self._values.items()))
        return f"{type(self).__name__}({args})"

    # Variables --------------------------------------------------------------------

    def _scope(self):
        """``training/<Name>/``, or ``training/<Name>_1/`` for the graph's second one.

        Two optimizers of one class in a graph (DNN and linear parts) get distinct
        scopes, numbered like Keras numbers them. The trailing '/' makes it an
        absolute name scope.
        """
        if self._scope_name is None:
            with tf.name_scope(None):  # Unique among top-level names.
                self._scope_name = tf.get_default_graph().unique_name(
                    f"{SCOPE}/{self.KERAS_NAME}", mark_as_used=True)
        return self._scope_name + "/"

    def _new_variable(self, name, initial_value, dtype=tf.float32):
        return tf.Variable(initial_value, name=name, trainable=False, dtype=dtype,
                           use_resource=True)

    def _create_hyper(self):
        # Only numbers are checkpointed: a tensor, schedule or callable learning rate
        # has no variable (as in Keras' legacy optimizers).
        names = sorted({"learning_rate", "decay", *self.HYPER})
        names = [n for n in names if is_number(self._values[n])]
        with tf.init_scope(), tf.name_scope(self._scope()):
            self._hyper = {n: self._new_variable(n, float(self._values[n])) for n in names}

    def _learning_rate_tensor(self, iterations):
        """The learning rate for this step, float32.

        A schedule is evaluated on the iteration count read before this step's
        increment, as a float (as Keras' legacy optimizers call it).
        """
        lr = self._values["learning_rate"]
        if is_number(lr):
            return tf.identity(self._hyper["learning_rate"])
        if _keras.is_learning_rate_schedule(lr):
            lr = lr(tf.cast(iterations, tf.float32))
        elif not _is_tensor_like(lr):
            lr = lr()  # A zero-argument callable, called in the graph.
        return tf.cast(lr, tf.float32)

    def _create_slot(self, var, slot_name, initial_value):
        shape = var.shape.as_list()
        with tf.init_scope(), tf.name_scope(self._scope()), merge.colocated_with(var):
            return self._new_variable(
                f"{var.op.name}/{slot_name}",
                tf.fill(shape, tf.constant(initial_value, var.dtype.base_dtype)),
                dtype=var.dtype.base_dtype)

    def _create_iterations(self):
        with tf.init_scope(), tf.name_scope(self._scope()):
            return self._new_variable("iter", tf.constant(0, tf.int64), tf.int64)

    # Update rules -------------------------------------------------------------------

    def _slots(self):
        """(slot name, initial value) pairs created for every trained variable."""
        return ()

    def _coefficients(self, iterations):
        """Tensors shared by every variable's update (learning rate, powers...)."""
        coeffs = {name: tf.identity(var) for name, var in self._hyper.items()}
        lr = self._learning_rate_tensor(iterations)
        coeffs["learning_rate"] = lr
        if self._values["decay"] > 0:
            # Keras' time-based decay, keyed on the optimizer's iteration count.
            lr = lr / (1.0 + coeffs["decay"] * tf.cast(iterations, tf.float32))
        coeffs["lr"] = lr
        return coeffs

    def _apply_dense(self, grad, var, slots, coeffs):
        raise NotImplementedError

    def _apply_sparse(self, values, indices, var, slots, coeffs):
        raise NotImplementedError

    # Public -------------------------------------------------------------------------

    def apply_gradients(self, grads_and_vars, iterations=None, name=None):
        """Applies gradients and increments the iteration counter.

        Args:
          grads_and_vars: (gradient, variable) pairs; None gradients are skipped.
          iterations: int64 variable counting this optimizer's steps (the global
            step for the estimator's main optimizer). None creates the optimizer's
            own ``training/<Name>/iter`` variable, as Keras does.
          name: name of the returned op.

        Returns:
          An op that applies every update, then increments `iterations`.

        Raises:
          ValueError: no variable has a gradient.
        """
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise ValueError("no gradients to apply: none of the variables "
                             f"{[v.op.name for _, v in grads_and_vars]} affects the loss")
        # Under a strategy's replica: applied once, in the strategy's merge step.
        return merge.apply_updates(self._apply, pairs, iterations, name)

    def _apply(self, pairs, iterations, name, update):
        """Creates the optimizer's variables and applies `pairs` through
        `update(var, fn, args)`, then increments `iterations`."""
        if self._hyper is None:
            self._create_hyper()
        if iterations is None:
            iterations = self._create_iterations()
        slots = {id(v): {n: self._create_slot(v, n, init) for n, init in self._slots()}
                 for _, v in pairs}
        with tf.name_scope(f"{self.KERAS_NAME}_update"):
            coeffs = self._coefficients(iterations)
            updates = [update(var, self._apply_one, (grad, slots[id(var)], coeffs))
                       for grad, var in pairs]
            with tf.control_dependencies(updates):
                return tf.group(update(iterations, _increment, ()),
                                name=name or self.KERAS_NAME)

    def _apply_one(self, var, grad, slots, coeffs):
        with tf.colocate_with(var):
            if isinstance(grad, tf.IndexedSlices):
                values, indices = _dedup(grad)
                return self._apply_sparse(values, indices, var, slots, coeffs)
            return self._apply_dense(grad, var, slots, coeffs)




def _increment(counter):
    return counter.assign_add(1, read_value=False)


class SGD(GraphOptimizer):
    """Gradient descent with optional (Nesterov) momentum, as Keras' SGD."""

    KERAS_NAME = "SGD"
    HYPER = {"learning_rate": 0.01, "momentum": 0.0}
    OPTIONS = {"nesterov": False}

    def _slots(self):
        return (("momentum", 0.0),) if self._values["momentum"] > 0 else ()

    def _apply_dense(self, grad, var, slots, coeffs):
        if "momentum" in slots:
            return tf.raw_ops.ResourceApplyKerasMomentum(
                var=var.handle, accum=slots["momentum"].handle, lr=coeffs["lr"],
                grad=grad, momentum=coeffs["momentum"],
                use_nesterov=bool(self._values["nesterov"]))
        return tf.raw_ops.ResourceApplyGradientDescent(var=var.handle,
                                                       alpha=coeffs["lr"], delta=grad)

    def _apply_sparse(self, values, indices, var, slots, coeffs):
        if "momentum" in slots:
            return tf.raw_ops.ResourceSparseApplyKerasMomentum(
                var=var.handle, accum=slots["momentum"].handle, lr=coeffs["lr"],
                grad=values, indices=indices, momentum=coeffs["momentum"],
                use_nesterov=bool(self._values["nesterov"]))
        return tf.raw_ops.ResourceScatterAdd(resource=var.handle, indices=indices,
                                             updates=-coeffs["lr"] * values)


class Adagrad(GraphOptimizer):
    """Adagrad with Keras' epsilon and initial accumulator value."""

    KERAS_NAME = "Adagrad"
    HYPER = {"learning_rate": 0.001}
    OPTIONS = {"initial_accumulator_value": 0.1, "epsilon": 1e-7}

    def _slots(self):
        return (("accumulator", float(self._values["initial_accumulator_value"])),)

    def _apply_dense(self, grad, var, slots, coeffs):
        return tf.raw_ops.ResourceApplyAdagradV2(
            var=var.handle, accum=slots["accumulator"].handle, lr=coeffs["lr"],
            epsilon=tf.constant(self._values["epsilon"], var.dtype.base_dtype), grad=grad)

    def _apply_sparse(self, values, indices, var, slots, coeffs):
        return tf.raw_ops.ResourceSparseApplyAdagradV2(
            var=var.handle, accum=slots["accumulator"].handle, lr=coeffs["lr"],
            epsilon=tf.constant(self._values["epsilon"], var.dtype.base_dtype),
            grad=values, indices=indices)


class Adam(GraphOptimizer):
    """Adam with bias correction from the iteration count, as Keras' Adam."""

    KERAS_NAME = "Adam"
    HYPER = {"learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999}
    OPTIONS = {"epsilon": 1e-7}

    def _slots(self):
        return (("m", 0.0), ("v", 0.0))

    def _coefficients(self, iterations):
        coeffs = super()._coefficients(iterations)
        step = tf.cast(iterations + 1, tf.float32)  # Read before the increment.
        coeffs["beta_1_power"] = tf.pow(coeffs["beta_1"], step)
        coeffs["beta_2_power"] = tf.pow(coeffs["beta_2"], step)
        coeffs["epsilon"] = tf.constant(self._values["epsilon"], tf.float32)
        return coeffs

    def _apply_dense(self, grad, var, slots, coeffs):
        return tf.raw_ops.ResourceApplyAdam(
            var=var.handle, m=slots["m"].handle, v=slots["v"].handle,
            beta1_power=coeffs["beta_1_power"], beta2_power=coeffs["beta_2_power"],
            lr=coeffs["lr"], beta1=coeffs["beta_1"], beta2=coeffs["beta_2"],
            epsilon=coeffs["epsilon"], grad=grad)

    def _apply_sparse(self, values, indices, var, slots, coeffs):
        # Keras decays the whole moment slots, then adds the sparse gradient rows.
        b1, b2 = coeffs["beta_1"], coeffs["beta_2"]
        lr = (coeffs["lr"] * tf.sqrt(1.0 - coeffs["beta_2_power"]) /
              (1.0 - coeffs["beta_1_power"]))
        m_t = _decay_and_scatter_add(slots["m"], b1, indices, values * (1.0 - b1))
        v_t = _decay_and_scatter_add(slots["v"], b2, indices,
                                     values * values * (1.0 - b2))
        return var.assign_sub(lr * m_t / (tf.sqrt(v_t) + coeffs["epsilon"]),
                              read_value=False)


class RMSprop(GraphOptimizer):
    """RMSprop (plain, momentum or centered), as Keras' RMSprop."""

    KERAS_NAME = "RMSprop"
    HYPER = {"learning_rate": 0.001, "rho": 0.9, "momentum": 0.0}
    OPTIONS = {"epsilon": 1e-7, "centered": False}

    def _slots(self):
        slots = [("rms", 0.0)]
        if self._values["momentum"] > 0:
            slots.append(("momentum", 0.0))
        if self._values["centered"]:
            slots.append(("mg", 0.0))
        return tuple(slots)

    def _coefficients(self, iterations):
        coeffs = super()._coefficients(iterations)
        coeffs["epsilon"] = tf.constant(self._values["epsilon"], tf.float32)
        return coeffs

    def _apply_dense(self, grad, var, slots, coeffs):
        rho, eps, lr = coeffs["rho"], coeffs["epsilon"], coeffs["lr"]
        if "momentum" in slots:
            common = {"var": var.handle, "ms": slots["rms"].handle,
                      "mom": slots["momentum"].handle, "lr": lr, "rho": rho,
                      "momentum": coeffs["momentum"], "epsilon": eps, "grad": grad}
            if "mg" in slots:
                return tf.raw_ops.ResourceApplyCenteredRMSProp(mg=slots["mg"].handle,
                                                               **common)
            return tf.raw_ops.ResourceApplyRMSProp(**common)
        rms = slots["rms"]
        denom = _assign(rms, rho * rms + (1.0 - rho) * tf.square(grad))
        if "mg" in slots:
            mg = _assign(slots["mg"], rho * slots["mg"] + (1.0 - rho) * grad)
            denom = denom - tf.square(mg)
        return var.assign_sub(lr * grad / (tf.sqrt(denom) + eps), read_value=False)

    def _apply_sparse(self, values, indices, var, slots, coeffs):
        rho, eps, lr = coeffs["rho"], coeffs["epsilon"], coeffs["lr"]
        if "momentum" in slots:
            common = {"var": var.handle, "ms": slots["rms"].handle,
                      "mom": slots["momentum"].handle, "lr": lr, "rho": rho,
                      "momentum": coeffs["momentum"], "epsilon": eps, "grad": values,
                      "indices": indices}
            if "mg" in slots:
                return tf.raw_ops.ResourceSparseApplyCenteredRMSProp(
                    mg=slots["mg"].handle, **common)
            return tf.raw_ops.ResourceSparseApplyRMSProp(**common)
        rms_t = _decay_and_scatter_add(slots["rms"], rho, indices,
                                       (1.0 - rho) * tf.square(values))
        denom = tf.gather(rms_t, indices)
        if "mg" in slots:
            mg_t = _decay_and_scatter_add(slots["mg"], rho, indices, (1.0 - rho) * values)
            denom = denom - tf.square(tf.gather(mg_t, indices))
        return tf.raw_ops.ResourceScatterSub(
            resource=var.handle, indices=indices,
            updates=lr * values / (tf.sqrt(denom) + eps))


class Ftrl(GraphOptimizer):
    """FTRL-Proximal, as Keras' Ftrl (the default for linear models)."""

    KERAS_NAME = "Ftrl"
    HYPER = {"learning_rate": 0.001, "learning_rate_power": -0.5,
             "l1_regularization_strength": 0.0, "l2_regularization_strength": 0.0,
             "beta": 0.0}
    OPTIONS = {"initial_accumulator_value": 0.1,
               "l2_shrinkage_regularization_strength": 0.0}

    def _slots(self):
        return (("accumulator", float(self._values["initial_accumulator_value"])),
                ("linear", 0.0))

    def _coefficients(self, iterations):
        coeffs = super()._coefficients(iterations)
        # Keras folds beta into the L2 strength.
        coeffs["l2"] = (coeffs["l2_regularization_strength"] +
                        coeffs["beta"] / (2.0 * coeffs["lr"]))
        return coeffs

    def _ftrl_args(self, var, slots, coeffs):
        return {"var": var.handle, "accum": slots["accumulator"].handle,
                "linear": slots["linear"].handle, "lr": coeffs["lr"],
                "l1": coeffs["l1_regularization_strength"], "l2": coeffs["l2"],
                "lr_power": coeffs["learning_rate_power"]}

    def _apply_dense(self, grad, var, slots, coeffs):
        args = self._ftrl_args(var, slots, coeffs)
        shrinkage = self._values["l2_shrinkage_regularization_strength"]
        if shrinkage > 0:
            return tf.raw_ops.ResourceApplyFtrlV2(
                grad=grad, l2_shrinkage=tf.constant(shrinkage, tf.float32), **args)
        return tf.raw_ops.ResourceApplyFtrl(grad=grad, **args)

    def _apply_sparse(self, values, indices, var, slots, coeffs):
        args = self._ftrl_args(var, slots, coeffs)
        shrinkage = self._values["l2_shrinkage_regularization_strength"]
        if shrinkage > 0:
            return tf.raw_ops.ResourceSparseApplyFtrlV2(
                grad=values, indices=indices,
                l2_shrinkage=tf.constant(shrinkage, tf.float32), **args)
        return tf.raw_ops.ResourceSparseApplyFtrl(grad=values, indices=indices, **args)


# The names tf.estimator 2.15 accepts for `optimizer`, and their classes.
OPTIMIZER_NAMES = {"Adagrad": Adagrad, "Adam": Adam, "Ftrl": Ftrl, "RMSProp": RMSprop,
                   "SGD": SGD}
KERAS_CLASSES = {cls.KERAS_NAME: cls for cls in OPTIMIZER_NAMES.values()}
