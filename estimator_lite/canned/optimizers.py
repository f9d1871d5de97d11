"""Optimizers for canned estimators, checkpoint-compatible with tf.estimator 2.15.

tf.estimator 2.15's canned estimators train with Keras (legacy OptimizerV2)
optimizers. Their checkpoints hold the hyperparameters as variables
(``training/Adam/learning_rate``), one slot per trained variable
(``training/Adam/dnn/logits/kernel/m``) and, for an optimizer that does not own the
global step, its own ``training/<Name>/iter`` counter. Keras 3 optimizers cannot
run in graph mode, so `GraphOptimizer` re-creates those variables under the same
names and applies the same update rules with tf.compat.v1 ops: a model_dir written
by either library restores in the other and keeps training the same way.

`graph_optimizer` is the one place an optimizer instance becomes something that
trains in a tf.compat.v1 graph; the canned estimators (through
`optimizer_factory`, which also takes names and callables) and the heads'
``create_estimator_spec(optimizer=...)`` both use it:
  * a tf-keras legacy optimizer (``tf.keras.optimizers.legacy.*`` with
    TF_USE_LEGACY_KERAS=1) runs as it is, as on tf.estimator 2.15, its
    ``iterations`` tied to the global step unless the user tied it;
  * a Keras 3 or tf-keras (non-legacy) optimizer becomes the `GraphOptimizer`
    with the same class name and hyperparameters;
  * a tf.compat.v1.train.Optimizer or a GraphOptimizer is used as it is;
  * a user's subclass of a Keras optimizer is what its Keras base class is
    (decided from its bases, wherever it is defined), as tf.estimator's
    ``isinstance`` checks took it; one overriding the update rule is refused;
  * but a user's Keras optimizer class that defines ``get_updates(loss, params)``
    (or, on a legacy OptimizerV2, ``get_gradients``) trains through it, as
    tf.estimator 2.15 trained every Keras optimizer: the built object says
    ``trains_from_loss`` and takes the loss (`_UserUpdatesOptimizer`).
Learning rates may be numbers, tensors (e.g. ``tf.compat.v1.train.exponential_decay``
on the global step), zero-argument callables, or Keras ``LearningRateSchedule``
objects, which are evaluated in the graph on the optimizer's iteration count
(the global step for the estimator's main optimizer), as Keras does. Keras 3's
constructor refuses a tensor; inside an optimizer callable given to a canned
estimator it is made to take one (estimator_lite._keras.tensor_learning_rates),
so tf.estimator's documented ``optimizer=lambda: Adam(learning_rate=
exponential_decay(...))`` trains on Keras 3 too.
"""

from estimator_lite import _keras
from estimator_lite._engine import validation
from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import VARIABLE_TYPES, logging, tf

__all__ = [
    "Adagrad", "Adam", "Ftrl", "GraphOptimizer", "OPTIMIZER_NAMES", "RMSprop", "SGD",
    "get_optimizer_instance_v2", "graph_optimizer", "optimizer_factory",
]

_SCOPE = "training"
# What TF 1.15 takes instead of its built-in tf.keras optimizers (_keras.tf1_keras_note).
_TF1_OPTIMIZERS = "a tf.compat.v1.train.Optimizer"


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


def _is_schedule(value):
    """True for a Keras LearningRateSchedule (Keras 3 or tf-keras), by its class."""
    return any(cls.__name__ == "LearningRateSchedule" for cls in type(value).__mro__)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_tensor_like(value):
    return isinstance(value, (tf.Tensor, *VARIABLE_TYPES))


def _check_learning_rate(name, lr):
    """Checks a learning rate: a number >= 0, a tensor, a schedule or a callable.

    Raises:
      TypeError: none of those kinds.
      ValueError: a negative number.
    """
    if _is_number(lr):
        if lr < 0:
            raise ValueError(f"{name} learning_rate must be >= 0, got {lr!r}")
        return
    if _is_tensor_like(lr) or _is_schedule(lr) or callable(lr):
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
                    f"{_SCOPE}/{self.KERAS_NAME}", mark_as_used=True)
        return self._scope_name + "/"

    def _new_variable(self, name, initial_value, dtype=tf.float32):
        return tf.Variable(initial_value, name=name, trainable=False, dtype=dtype,
                           use_resource=True)

    def _create_hyper(self):
        # Only numbers are checkpointed: a tensor, schedule or callable learning rate
        # has no variable (as in Keras' legacy optimizers).
        names = sorted({"learning_rate", "decay", *self.HYPER})
        names = [n for n in names if _is_number(self._values[n])]
        with tf.init_scope(), tf.name_scope(self._scope()):
            self._hyper = {n: self._new_variable(n, float(self._values[n])) for n in names}

    def _learning_rate_tensor(self, iterations):
        """The learning rate for this step, float32.

        A schedule is evaluated on the iteration count read before this step's
        increment, as a float (as Keras' legacy optimizers call it).
        """
        lr = self._values["learning_rate"]
        if _is_number(lr):
            return tf.identity(self._hyper["learning_rate"])
        if _is_schedule(lr):
            lr = lr(tf.cast(iterations, tf.float32))
        elif not _is_tensor_like(lr):
            lr = lr()  # A zero-argument callable, called in the graph.
        return tf.cast(lr, tf.float32)

    def _create_slot(self, var, slot_name, initial_value):
        shape = var.shape.as_list()
        with tf.init_scope(), tf.name_scope(self._scope()), _colocated_with(var):
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
        if tf.distribute.has_strategy() and not tf.distribute.in_cross_replica_context():
            # Inside a strategy's replica: the replicas' gradients are summed and
            # the (mirrored) variables updated once, in the strategy's merge step.
            return tf.distribute.get_replica_context().merge_call(
                self._apply_merged, args=(pairs, iterations, name))
        return self._apply(pairs, iterations, name, _update_here)

    def _apply_merged(self, strategy, pairs, iterations, name):
        """The cross-replica part of apply_gradients under a strategy."""
        grads = strategy.extended.batch_reduce_to(tf.distribute.ReduceOp.SUM, pairs)
        pairs = list(zip_strict(grads, [v for _, v in pairs]))

        def update(var, fn, args):
            return strategy.extended.update(var, fn, args=args, group=True)
        return self._apply(pairs, iterations, name, update)

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


def _colocated_with(var):
    """Places new variables with `var` (a strategy's mirrored variable has no one
    op to colocate with: the strategy places them)."""
    if tf.distribute.has_strategy():
        return tf.distribute.get_strategy().extended.colocate_vars_with(var)
    return tf.colocate_with(var)


def _update_here(var, fn, args):
    """`update` without a strategy: fn(var, *args)."""
    return fn(var, *args)


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
_KERAS_CLASSES = {cls.KERAS_NAME: cls for cls in OPTIMIZER_NAMES.values()}
# Keras optimizer options that change the update rule and that we do not emulate,
# with the values that leave it unchanged.
_UNSUPPORTED_KERAS_OPTIONS = {
    "weight_decay": (None, 0), "clipnorm": (None,), "clipvalue": (None,),
    "global_clipnorm": (None,), "loss_scale_factor": (None, 1),
    "gradient_accumulation_steps": (None, 1), "use_ema": (None, False),
    "amsgrad": (None, False)}


class _V1Optimizer:
    """Adapts a tf.compat.v1.train.Optimizer to GraphOptimizer.apply_gradients."""

    def __init__(self, optimizer):
        self._optimizer = optimizer

    def apply_gradients(self, grads_and_vars, iterations=None, name=None):
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        return self._optimizer.apply_gradients(pairs, global_step=iterations, name=name)

    @property
    def v1_optimizer(self):
        """The tf.compat.v1.train.Optimizer this adapts."""
        return self._optimizer


class _LegacyKerasOptimizer:
    """Runs a tf-keras legacy optimizer (OptimizerV2) as it is, in the graph.

    tf.estimator 2.15 ran these itself; users tied ``optimizer.iterations`` to the
    global step in their model_fn, or training never advanced. Here the global
    step is tied for them when they did not tie it.
    """

    def __init__(self, optimizer):
        self.optimizer = optimizer

    def __repr__(self):
        return f"{type(self.optimizer).__name__}(legacy, run as it is)"

    def _tie_iterations(self, iterations):
        """Makes `iterations` the optimizer's counter; returns extra ops to run."""
        # None until the optimizer made or was given a counter.
        own = _keras.optimizer_counter(self.optimizer)
        if own is None:
            self.optimizer.iterations = iterations
            return []
        if own is iterations or (own.name == iterations.name and
                                 own.graph is iterations.graph):
            return []
        # The user gave it another counter: keep it, but still advance the step.
        logging.warning("%s: the optimizer's iterations (%s) is not the global step; "
                        "incrementing the global step beside it", self, own.name)
        return [iterations]

    def apply_gradients(self, grads_and_vars, iterations=None, name=None):
        """Applies the gradients with the Keras optimizer; see GraphOptimizer's."""
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise ValueError("no gradients to apply: none of the variables "
                             f"{[v.op.name for _, v in grads_and_vars]} affects the loss")
        counters = [] if iterations is None else self._tie_iterations(iterations)
        # As tf.estimator 2.15's heads: variables under training/<Name>/.
        with tf.name_scope(_SCOPE + "/"):
            train_op = self.optimizer.apply_gradients(pairs, name=name)
        if not counters:
            return train_op
        with tf.control_dependencies([train_op]):
            return tf.group(*[c.assign_add(1, read_value=False) for c in counters])

    def fresh_copy(self):
        """A copy for a new graph when the optimizer can be rebuilt from its config."""
        hyper = getattr(self.optimizer, "_hyper", {})  # Keras keeps raw values here.
        lr = hyper.get("learning_rate") if isinstance(hyper, dict) else None
        if _is_number(lr) or _is_schedule(lr):
            try:
                copy = type(self.optimizer).from_config(self.optimizer.get_config())
            except TypeError:  # A subclass whose constructor takes other arguments.
                return self
            return _LegacyKerasOptimizer(copy)
        return self  # A tensor or callable rate belongs to the graph it was built in.


class _UserUpdatesOptimizer:
    """A user's Keras optimizer that makes its own updates from the loss.

    Its class defines ``get_updates(loss, params)`` (see
    `_keras.trains_through_get_updates`), which tf.estimator 2.15 called to train:
    it is called here too, with the (replica-scaled) loss and the part's
    variables, under the ``training/`` name scope. The user's instance itself
    is used in every graph (tests and hooks read ``optimizer.iterations``), its
    ``iterations`` tied to the global step as tf.estimator's canned estimators
    tied it.
    """

    trains_from_loss = True  # canned.core hands it the loss, not gradients.

    def __init__(self, optimizer):
        self.optimizer = optimizer

    def __repr__(self):
        return f"{type(self.optimizer).__name__}(its own get_updates)"

    def get_updates(self, loss, variables, iterations=None):
        """The update ops of the user's get_updates for `loss` over `variables`.

        Args:
          loss: the scalar training loss.
          variables: the variables to train (the `params` of get_updates).
          iterations: the global step, made the optimizer's ``iterations`` when
            it is a legacy Keras optimizer without a counter of this graph (as
            tf.estimator's canned estimators set it). None: the optimizer keeps
            its own counter (one of an earlier graph is dropped).

        Returns:
          The list get_updates returned.
        """
        if iterations is None:
            _keras.forget_stale_counter(self.optimizer)
        else:
            _keras.tie_optimizer_counter(self.optimizer, iterations)
        with tf.name_scope(_SCOPE + "/"):  # As tf.estimator 2.15's heads.
            return list(self.optimizer.get_updates(loss, list(variables)))

    def updates_from_loss(self, loss, variables, iterations=None, name=None):
        """One op running every update of `get_updates` (see there).

        When `iterations` (the global step) could not become the optimizer's
        counter (not a legacy Keras optimizer, or one the user gave another
        counter), it is incremented after the updates, so training advances.
        """
        updates = self.get_updates(loss, variables, iterations)
        if iterations is None or _keras.optimizer_counter(self.optimizer) is iterations:
            return tf.group(*updates, name=name)
        with tf.control_dependencies(updates):
            return tf.group(iterations.assign_add(1, read_value=False), name=name)

    def apply_gradients(self, grads_and_vars, iterations=None, name=None):
        """Refused: this optimizer trains from the loss (its get_updates).

        Raises:
          TypeError: always; the message says what to do.
        """
        del grads_and_vars, iterations, name
        raise TypeError(f"optimizer {type(self.optimizer).__name__} defines its own "
                        "get_updates(loss, params), which needs the loss; it cannot be "
                        "given gradients here. Pass it to a head's create_estimator_spec "
                        "or a canned estimator, or call its get_updates yourself")


# Methods that make an optimizer's update rule: a user's subclass overriding one
# cannot be replaced by the graph optimizer of its base class.
_UPDATE_RULE_METHODS = ("update_step", "apply", "apply_gradients", "build",
                        "stateless_apply", "minimize", "_update_step",
                        "_backend_update_step", "_apply_weight_decay")


def _as_tf_variable(value):
    """The tf.Variable behind a tf.Variable or a Keras 3 Variable, else None."""
    if isinstance(value, VARIABLE_TYPES):
        return value
    if _keras.keras_package(type(value)) == "keras":  # Keras 3: .value is its tf.Variable.
        inner = getattr(value, "value", None)
        return inner if isinstance(inner, VARIABLE_TYPES) else None
    return None


def _keras_learning_rate(optimizer):
    """The learning rate a Keras 3 / tf-keras optimizer was given.

    A number stays a number; a schedule or a callable is returned as it is; a
    rate held in a graph variable (tf-keras builds a variable from a tensor it is
    given, such as an exponential_decay on the global step) is returned as the
    tensor it was built from, so it is recomputed at every step.
    """
    raw = getattr(optimizer, "_learning_rate", None)  # Keras keeps the rate here.
    if isinstance(raw, _keras.TensorLearningRate):  # A graph tensor given to Keras 3.
        return raw.tensor
    variable = _as_tf_variable(raw)
    if variable is None:
        return raw
    try:
        return float(variable.numpy())
    except NotImplementedError:  # A graph variable: numpy() needs eager execution.
        initial = variable.initial_value
        static = tf.get_static_value(initial)
        return float(static) if static is not None else initial


def _keras_variables(optimizer):
    """The tf.Variables a Keras optimizer holds in its attributes."""
    found = []
    for value in vars(optimizer).values():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            variable = _as_tf_variable(item)
            if variable is not None:
                found.append(variable)
    return found


def _forget_keras_variables(optimizer):
    """Drops the replaced Keras optimizer's graph variables from the collections.

    A Keras optimizer built inside the model_fn creates its counters and rate
    variables in the graph; nothing uses them once it is replaced, and they must
    not enter checkpoints (tf.estimator 2.15's have no such names).
    """
    if tf.executing_eagerly():
        return
    graph = tf.get_default_graph()
    ids = {id(v) for v in _keras_variables(optimizer)
           if getattr(v, "graph", None) is graph}
    if not ids:
        return
    for key in (tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.LOCAL_VARIABLES):
        collection = tf.get_collection_ref(key)
        collection[:] = [v for v in collection if id(v) not in ids]


def _keras_hyperparameters(optimizer, cls):
    """Hyperparameters of a Keras 3 / tf-keras optimizer, read from its attributes.

    get_config cannot be used in a graph: tf-keras evaluates its learning-rate
    variable there (FailedPreconditionError or NotImplementedError).
    """
    names = {*cls.HYPER, *cls.OPTIONS, *_UNSUPPORTED_KERAS_OPTIONS} - {"learning_rate"}
    values = {n: getattr(optimizer, n) for n in sorted(names) if hasattr(optimizer, n)}
    values["learning_rate"] = _keras_learning_rate(optimizer)
    return values


def _graph_class(optimizer, argument):
    """(GraphOptimizer class, Keras class name) for a Keras optimizer.

    The class is the first one Keras defines in the optimizer's MRO: a user's
    subclass of a Keras optimizer is its Keras base (its own hyperparameter
    defaults are read from the instance), unless it overrides the update rule,
    which has no graph-mode equivalent. Keras' own derived optimizers (AdamW...)
    stay what they are.

    Raises:
      ValueError: that Keras class has no graph equivalent, or the subclass
        overrides the update rule.
    """
    base = next(cls for cls in type(optimizer).__mro__
                if _keras.keras_package(cls) is not None)
    if base.__name__ not in _KERAS_CLASSES:
        raise ValueError(f"{argument}: Keras optimizer {base.__name__} has no graph-mode "
                         f"equivalent; use one of {sorted(_KERAS_CLASSES)} (or a "
                         "subclass of one)")
    overridden = _keras.user_defined_methods(type(optimizer), _UPDATE_RULE_METHODS)
    if overridden:
        raise ValueError(f"{argument}: {type(optimizer).__name__} overrides {overridden} "
                         f"of Keras' {base.__name__}; a custom update rule cannot run "
                         "in graph mode (a subclass may only change hyperparameters)")
    return _KERAS_CLASSES[base.__name__], base.__name__


def _from_keras(optimizer, argument):
    """A GraphOptimizer with the class and hyperparameters of a Keras optimizer."""
    cls, cls_name = _graph_class(optimizer, argument)
    config = _keras_hyperparameters(optimizer, cls)
    for option, neutral in _UNSUPPORTED_KERAS_OPTIONS.items():
        if config.get(option) not in neutral:
            raise ValueError(f"{argument}: Keras option {option}={config[option]!r} of "
                             f"{cls_name} is not supported in graph mode; leave it at "
                             f"{neutral[-1]!r}")
    known = {"learning_rate", "decay", *cls.HYPER, *cls.OPTIONS}
    kwargs = {k: v for k, v in config.items() if k in known}
    if _is_number(kwargs["learning_rate"]):
        kwargs["learning_rate"] = float(kwargs["learning_rate"])
    graph_optimizer = cls(**kwargs)
    _forget_keras_variables(optimizer)
    logging.info("%s: Keras optimizer %s cannot run in graph mode; using its "
                 "tf.compat.v1 equivalent %r", argument, cls_name, graph_optimizer)
    return graph_optimizer


def _resolve_instance(value, argument):
    """An object with apply_gradients(grads_and_vars, iterations), or None."""
    if isinstance(value, (GraphOptimizer, _LegacyKerasOptimizer, _V1Optimizer,
                          _UserUpdatesOptimizer)):
        return value
    if isinstance(value, tf.train.Optimizer):
        return _V1Optimizer(value)
    if _keras.trains_through_get_updates(value):
        return _UserUpdatesOptimizer(value)
    if _keras.is_legacy_keras_optimizer(value):
        return _LegacyKerasOptimizer(value)
    if _keras.is_keras_optimizer(value):
        return _from_keras(value, argument)
    return None


def graph_optimizer(optimizer, argument="optimizer"):
    """Turns an optimizer instance into one that trains in a tf.compat.v1 graph.

    The one mapping from what users pass as an optimizer to what runs: canned
    estimators, heads and wrappers such as model_to_estimator all call it.

    Args:
      optimizer: a Keras 3 or tf-keras optimizer (mapped to the `GraphOptimizer`
        of the same class name, hyperparameters and learning rate: a number,
        tensor, callable or LearningRateSchedule), a tf-keras legacy optimizer
        (run as it is), a tf.compat.v1.train.Optimizer, or a GraphOptimizer.
      argument: the argument name used in messages.

    Returns:
      An object with ``apply_gradients(grads_and_vars, iterations=None,
      name=None)``: it applies the updates and increments `iterations` (an int64
      variable, usually the global step; None: the optimizer's own counter).
      Call it inside the graph it trains, after `optimizer` was built.

    Raises:
      TypeError: `optimizer` is not an optimizer instance of those kinds.
      ValueError: a Keras optimizer with no graph equivalent (the message names
        it and lists the supported ones), or with an option that changes the
        update rule and is not emulated (clipnorm, weight_decay, ema...).
    """
    built = _resolve_instance(optimizer, argument)
    if built is None:
        raise TypeError(f"{argument} must be an optimizer instance (Keras, tf-keras "
                        f"legacy or tf.compat.v1.train.Optimizer), got {optimizer!r} "
                        f"of type {type(optimizer).__name__}" + _keras.tf1_keras_note(
                            optimizer, _TF1_OPTIMIZERS))
    return built


def _fresh_copy(instance):
    """A copy of a built optimizer for a new graph (variables belong to one graph)."""
    if isinstance(instance, GraphOptimizer):
        return type(instance)(**instance.get_config())
    if isinstance(instance, _LegacyKerasOptimizer):
        return instance.fresh_copy()
    return instance


def optimizer_factory(optimizer, default_learning_rate=None, argument="optimizer"):
    """Validates an `optimizer` argument; returns a function building it in a graph.

    Args:
      optimizer: a name from OPTIMIZER_NAMES, any instance `graph_optimizer`
        takes, or a callable returning one (called in the model_fn's graph, so
        its learning rate may be a tensor on the global step).
      default_learning_rate: learning rate for a name (None: the Keras default).
      argument: argument name for messages.

    Returns:
      A zero-argument function returning a fresh object with
      ``apply_gradients(grads_and_vars, iterations=None)``; call it inside the
      model_fn.

    Raises:
      TypeError: `optimizer` has none of the accepted types.
      ValueError: an unknown name, or an unsupported Keras optimizer.
    """
    if isinstance(optimizer, str):
        cls = OPTIMIZER_NAMES.get(optimizer)
        if cls is None:
            raise ValueError(f"{argument} must be one of {sorted(OPTIMIZER_NAMES)} when "
                             f"given as a name, got {optimizer!r}")
        return lambda: cls(learning_rate=default_learning_rate)
    instance = _resolve_instance(optimizer, argument)
    if instance is not None:
        return lambda: _fresh_copy(instance)
    if callable(optimizer):
        def build():
            # The callable may give a Keras 3 optimizer a tensor learning rate
            # (tf.estimator's documented example), which Keras 3 alone refuses.
            with _keras.tensor_learning_rates():
                result = optimizer()
            value = _resolve_instance(result, argument)
            if value is None:
                raise TypeError(f"{argument} callable must return an optimizer "
                                f"instance, got {result!r} of type "
                                f"{type(result).__name__}" + _keras.tf1_keras_note(
                                    result, _TF1_OPTIMIZERS))
            return value
        return build
    raise TypeError(f"{argument} must be an optimizer name, an optimizer instance or a "
                    f"callable returning one, got {optimizer!r} of type "
                    f"{type(optimizer).__name__}" + _keras.tf1_keras_note(
                        optimizer, _TF1_OPTIMIZERS))


def get_optimizer_instance_v2(opt, learning_rate=None):
    """The Keras-style optimizer a model_fn trains with, from a name or an instance.

    tf.estimator's function of that name, which libraries' model_fns call
    (tensorflow_lattice's canned estimators, which then set the result's
    `iterations` to the global step and hand it to a head).

    Args:
      opt: a name from OPTIMIZER_NAMES, an optimizer instance, or a callable
        returning one (called here).
      learning_rate: the learning rate for a name; None or 0 gives the
        optimizer's default (as tf.estimator).

    Returns:
      For a name, tf-keras' legacy optimizer of that name when tf.keras is
      tf-keras (TF_USE_LEGACY_KERAS=1), which is what tf.estimator 2.15 returns
      (it applies the variables' Keras constraints), else the `GraphOptimizer`
      of that name (Keras 3 has no legacy optimizers). A tf-keras legacy
      optimizer or a GraphOptimizer is returned as it is. A Keras 3 or tf-keras
      (non-legacy) optimizer becomes its `GraphOptimizer`, as tf.estimator turned
      one into its legacy equivalent (only when called eagerly).

    Raises:
      ValueError: `opt` is a name not in OPTIMIZER_NAMES, or the optimizer has
        no graph-mode equivalent.
      TypeError: `opt` (or what its callable returned) is not a Keras optimizer
        or GraphOptimizer, e.g. a tf.compat.v1.train.Optimizer (also a
        ValueError, what tf.estimator raises).
    """
    if isinstance(opt, str):
        if opt not in OPTIMIZER_NAMES:
            raise ValueError(f"opt must be one of {sorted(OPTIMIZER_NAMES)} when given as "
                             f"a name, got {opt!r}")
        legacy = _keras.legacy_optimizer_class(OPTIMIZER_NAMES[opt].KERAS_NAME)
        cls = legacy or OPTIMIZER_NAMES[opt]
        return cls(learning_rate=learning_rate) if learning_rate else cls()
    if callable(opt):
        with _keras.tensor_learning_rates():  # As optimizer_factory's callables.
            opt = opt()
    if isinstance(opt, GraphOptimizer) or _keras.is_legacy_keras_optimizer(opt) or (
            _keras.trains_through_get_updates(opt)):
        return opt
    if _keras.is_keras_optimizer(opt):
        return _from_keras(opt, "opt")
    raise validation.WrongTypeError(
        f"opt must be a Keras optimizer (or an optimizer name, or a callable returning "
        f"one), got {opt!r} of type {type(opt).__name__}")
