"""In-graph data parallelism: run a model_fn as towers on several devices.

`replicate_model_fn(model_fn)` returns a model_fn that splits the batch along
dimension 0 into one shard per device, calls `model_fn` once per device (tower),
and combines the towers' EstimatorSpecs: losses reduced, gradients summed per
variable and applied once (through `TowerOptimizer`), eval metrics aggregated so
they equal the whole-batch metric, predictions concatenated in batch order.

Variables exist once: on the single GPU, else on the consolidation device (the
CPU), or spread round-robin over the devices. Tower 0 keeps the unreplicated op
names; tower i > 0 ops live under ``tower_<i>/``. Variables must be created with
`tf.compat.v1.get_variable` (a `tf.Variable` in the model_fn would be created once
per tower).

The per-call tower state is a `_TowerContext` owned by the replicated model_fn for
the duration of its call; `TowerOptimizer` finds it through a thread-local stack
that holds it only during that call (never in a graph collection).
"""

import contextlib
import threading

from estimator_lite._engine.fn_args import call_with_declared_args
from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import tf
from estimator_lite.export import outputs as export_lib
from estimator_lite.model_fn import EstimatorSpec, ModeKeys
from estimator_lite.techniques.optimizer_wrapper import OptimizerWrapper

__all__ = ["replicate_model_fn", "TowerOptimizer"]

_REDUCTION = tf.losses.Reduction
_MEAN_REDUCTIONS = (_REDUCTION.MEAN, _REDUCTION.SUM_OVER_BATCH_SIZE,
                    _REDUCTION.SUM_BY_NONZERO_WEIGHTS,
                    _REDUCTION.SUM_OVER_NONZERO_WEIGHTS)
_VALID_REDUCTIONS = (_REDUCTION.SUM,) + _MEAN_REDUCTIONS
_VARIABLE_OP_TYPES = frozenset([
    "Variable", "VariableV2", "VarHandleOp", "AutoReloadVariable",
    "MutableHashTable", "MutableHashTableV2", "MutableHashTableOfTensors",
    "MutableHashTableOfTensorsV2", "MutableDenseHashTable", "MutableDenseHashTableV2"])
_PLACEMENTS = ("consolidate", "round_robin")
_ACTIVE = threading.local()


def _active_context():
    stack = getattr(_ACTIVE, "stack", None)
    return stack[-1] if stack else None


def _local_devices():
    """All local GPUs, else the CPU."""
    gpus = tf.config.experimental.list_logical_devices("GPU")
    if gpus:
        return [gpu.name for gpu in gpus]
    return ["/device:CPU:0"]


class _TowerContext:
    """State of one replicated model_fn call: devices, towers, optimizer calls."""

    def __init__(self, devices, loss_reduction, placement):
        self.devices = list(devices)
        self.num_towers = len(self.devices)
        self.loss_reduction = loss_reduction
        self.placement = placement
        self.consolidation_device = (self.devices[0] if self.num_towers == 1
                                     else "/device:CPU:0")
        self.tower_index = None
        # Each tower's share of the batch (tensors), when the shards are dense.
        self.shard_weights = None
        # The caller's name scope: the real apply runs there, so variables it
        # creates (e.g. Adam's beta1_power) keep their unreplicated names.
        graph_scope = tf.get_default_graph().get_name_scope()
        self.outer_name_scope = graph_scope + "/" if graph_scope else ""
        self._variable_count = 0
        self._apply_calls = [[] for _ in range(self.num_towers)]  # per tower
        self._pending_grads = []  # per call index: list of tower grads_and_vars
        self._first_tower_optimizers = []  # per call index: tower 0's optimizer

    @contextlib.contextmanager
    def active(self):
        """Makes this context visible to TowerOptimizer during the call."""
        stack = getattr(_ACTIVE, "stack", None)
        if stack is None:
            stack = _ACTIVE.stack = []
        stack.append(self)
        try:
            yield self
        finally:
            stack.pop()

    def _variable_device(self):
        if self.placement == "consolidate":
            return self.consolidation_device
        device = self.devices[self._variable_count % self.num_towers]
        self._variable_count += 1
        return device

    def device_fn(self, tower_device):
        """Device function: variables on their device, everything else on the tower."""
        def place(op):
            if op.device:
                return op.device
            if op.type in _VARIABLE_OP_TYPES:
                return self._variable_device()
            return tower_device
        return place

    @contextlib.contextmanager
    def tower(self, index, outer_scope):
        """Scopes for tower `index`: its device, names and variable reuse."""
        self.tower_index = index
        reuse = tf.AUTO_REUSE if index > 0 else None
        names = tf.name_scope(f"tower_{index}") if index > 0 else contextlib.nullcontext()
        with tf.device(self.device_fn(self.devices[index])), names, \
                tf.variable_scope(outer_scope, reuse=reuse):
            yield
        self.tower_index = None

    # Optimizer bookkeeping -----------------------------------------------------

    def scale_loss(self, loss):
        """Loss to differentiate in one tower so summed gradients match one device.

        A mean loss counts by the tower's share of the batch: 1/K for equal
        shards, n_i/N for the uneven last batch of an epoch (an empty tower, when
        the batch is smaller than K, adds nothing).
        """
        if self.loss_reduction not in _MEAN_REDUCTIONS or self.num_towers == 1:
            return loss
        if self.shard_weights is None:
            return loss * (1.0 / self.num_towers)
        weight = tf.cast(self.shard_weights[self.tower_index], loss.dtype)
        return tf.math.multiply_no_nan(loss, weight)

    def record_apply(self, optimizer, grads_and_vars):
        """Stores one tower's gradients; returns (call index, is_last_tower)."""
        tower = self.tower_index
        if tower is None:
            raise ValueError("TowerOptimizer.apply_gradients was called outside the "
                             "towers of replicate_model_fn")
        calls = self._apply_calls[tower]
        index = len(calls)
        signature = (type(optimizer.wrapped).__name__,
                     tuple(v.op.name for _, v in grads_and_vars))
        calls.append(signature)
        if tower > 0:
            expected = self._apply_calls[0][index] if index < len(
                self._apply_calls[0]) else None
            if expected != signature:
                raise ValueError(
                    f"towers made different optimizer calls: call {index} of tower 0 "
                    f"was {expected}, of tower {tower} it is {signature}; every tower "
                    "must call the same optimizers, in the same order, on the same "
                    "variables")
        if index == len(self._pending_grads):
            self._pending_grads.append([])
            self._first_tower_optimizers.append(optimizer)
        self._pending_grads[index].append(list(grads_and_vars))
        return index, tower == self.num_towers - 1

    def grads_of_call(self, index):
        return self._pending_grads[index]

    def applying_optimizer(self, index):
        """Tower 0's optimizer of call `index`: the one whose hooks the spec carries."""
        return self._first_tower_optimizers[index]

    def check_optimizer_calls(self, mode):
        """Every tower made the same number of calls; TRAIN needs TowerOptimizer."""
        counts = [len(calls) for calls in self._apply_calls]
        if len(set(counts)) != 1:
            raise ValueError(f"towers made different numbers of optimizer calls: "
                             f"{counts}")
        if mode == ModeKeys.TRAIN and self.num_towers > 1 and counts[0] == 0:
            raise ValueError(
                f"replicate_model_fn with {self.num_towers} devices needs the optimizer "
                "wrapped in TowerOptimizer(optimizer), so that gradients of all towers "
                "are summed and applied once")


def _sum_gradients(grads):
    """Sums one variable's gradients from all towers (None when all are None)."""
    present = [g for g in grads if g is not None]
    if not present:
        return None
    if all(isinstance(g, tf.IndexedSlices) for g in present):
        return tf.IndexedSlices(tf.concat([g.values for g in present], axis=0),
                                tf.concat([g.indices for g in present], axis=0),
                                present[0].dense_shape)
    return tf.add_n([tf.convert_to_tensor(g) for g in present])


class TowerOptimizer(OptimizerWrapper):
    """Wraps an optimizer so replicated towers apply their summed gradients once.

    Outside replicate_model_fn, or with one device, it passes everything through.
    With several towers, `apply_gradients` in towers 0..K-2 records the gradients
    and returns a no-op; in the last tower it sums every variable's gradients over
    the towers (IndexedSlices are concatenated) and applies them once with the
    wrapped optimizer. Several TowerOptimizers may be used in one model_fn as long
    as every tower calls them in the same order.
    """

    def __init__(self, optimizer_or_optimizer_fn):
        """Args: an Optimizer, or a function with no arguments returning one.

        Raises:
          TypeError: the argument is neither.
        """
        if not isinstance(optimizer_or_optimizer_fn, tf.train.Optimizer) and not callable(
                optimizer_or_optimizer_fn):
            raise TypeError("TowerOptimizer needs an Optimizer or a function returning "
                            f"one, got {optimizer_or_optimizer_fn!r}")
        super().__init__(None, name="TowerOptimizer")
        self._optimizer_or_fn = optimizer_or_optimizer_fn
        self._resolved = None

    @property
    def wrapped(self):
        """The wrapped optimizer (built from the function on first use)."""
        if self._resolved is None:
            candidate = self._optimizer_or_fn
            if not isinstance(candidate, tf.train.Optimizer):
                candidate = candidate()
                if not isinstance(candidate, tf.train.Optimizer):
                    raise TypeError("optimizer_fn must return an Optimizer, got "
                                    f"{candidate!r}")
            self._resolved = candidate
        return self._resolved

    def compute_gradients(self, loss, *args, **kwargs):
        """Gradients of this tower's loss, scaled for mean-style reductions."""
        context = _active_context()
        if context is not None:
            loss = context.scale_loss(loss)
        return self.wrapped.compute_gradients(loss, *args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Records this tower's gradients; the last tower applies the sum once."""
        grads_and_vars = list(grads_and_vars)
        context = _active_context()
        if context is None or context.num_towers == 1:
            return self.wrapped.apply_gradients(grads_and_vars, global_step, name)
        index, is_last = context.record_apply(self, grads_and_vars)
        if not is_last:
            return tf.no_op(name="tower_apply_placeholder")
        towers = context.grads_of_call(index)
        variables = [v for _, v in towers[0]]
        with tf.get_default_graph().name_scope(context.outer_name_scope):
            with tf.device(context.consolidation_device):
                summed = [(_sum_gradients([tower[i][0] for tower in towers]), var)
                          for i, var in enumerate(variables)]
            # Apply with tower 0's instance: hooks such as SyncReplicasOptimizer's
            # come from tower 0's spec and need the instance that applied.
            applying = context.applying_optimizer(index).wrapped
            return applying.apply_gradients(
                [(g, v) for g, v in summed if g is not None], global_step, name)

    def make_session_run_hook(self, *args, **kwargs):
        """The wrapped optimizer's hook (e.g. SyncReplicasOptimizer's), made at begin().

        Towers are built before the last one applies the gradients; deferring
        the hook until the graph is complete lets any tower's spec carry it.
        """
        return _DeferredHook(lambda: self.wrapped.make_session_run_hook(*args, **kwargs))

    def __getattr__(self, name):
        # Reached only for attributes TowerOptimizer lacks, e.g. SyncReplicasOptimizer's
        # make_session_run_hook: delegate them to the wrapped optimizer.
        if name.startswith("__") or name in ("_optimizer_or_fn", "_resolved",
                                             "_wrapped_optimizer"):
            raise AttributeError(name)
        return getattr(self.wrapped, name)


class _DeferredHook(tf.train.SessionRunHook):
    """A SessionRunHook built by `make_hook_fn` when the session begins."""

    def __init__(self, make_hook_fn):
        self._make_hook_fn = make_hook_fn
        self._hook = None

    def begin(self):
        self._hook = self._make_hook_fn()
        self._hook.begin()

    def after_create_session(self, session, coord):
        self._hook.after_create_session(session, coord)

    def before_run(self, run_context):
        return self._hook.before_run(run_context)

    def after_run(self, run_context, run_values):
        self._hook.after_run(run_context, run_values)

    def end(self, session):
        self._hook.end(session)


# Splitting the batch ------------------------------------------------------------------


def _batch_size_check(tensor, num_towers, require_even):
    """Checks divisibility statically, or adds a runtime assertion when unknown."""
    static = tensor.shape[0] if tensor.shape.ndims else None
    static = getattr(static, "value", static)
    if static is not None:
        if require_even and static % num_towers:
            raise ValueError(f"the batch size {static} is not divisible by the number "
                             f"of devices {num_towers}; use a batch size that is a "
                             f"multiple of {num_towers}")
        return tensor
    if not require_even:
        return tensor
    batch = tf.shape(tensor, out_type=tf.int64)[0]
    check = tf.assert_equal(batch % num_towers, tf.constant(0, tf.int64), message=(
        f"the batch size is not divisible by the number of devices {num_towers}"))
    with tf.control_dependencies([check]):
        return tf.identity(tensor)


def _shard_sizes(batch, num_towers):
    """Near-equal shard sizes (the first `batch % k` shards get one more)."""
    base = batch // num_towers
    extra = tf.cast(tf.range(num_towers, dtype=batch.dtype) < batch % num_towers,
                    batch.dtype)
    return base + extra


def _split_value(value, num_towers, require_even):
    if isinstance(value, tf.SparseTensor):
        return tf.sparse.split(sp_input=value, num_split=num_towers, axis=0)
    if not isinstance(value, tf.Tensor):
        raise TypeError("replicate_model_fn splits Tensors, SparseTensors and dicts of "
                        f"them along dimension 0; got {value!r}")
    value = _batch_size_check(value, num_towers, require_even)
    sizes = _shard_sizes(tf.shape(value, out_type=tf.int64)[0], num_towers)
    return tf.split(value, sizes, num=num_towers, axis=0)


def _split_batch(value, num_towers, require_even):
    """Splits a tensor / SparseTensor / dict of them into `num_towers` shards."""
    if value is None:
        return [None] * num_towers
    if isinstance(value, dict):
        shards = {k: _split_value(v, num_towers, require_even) for k, v in value.items()}
        return [{k: s[i] for k, s in shards.items()} for i in range(num_towers)]
    return _split_value(value, num_towers, require_even)


# Combining the towers ---------------------------------------------------------------


def _concat(tensors):
    if isinstance(tensors[0], dict):
        return {k: tf.concat([t[k] for t in tensors], axis=0) for k in tensors[0]}
    return tf.concat(tensors, axis=0)


def _reduce_loss(losses, loss_reduction, shard_sizes=None):
    """Combines tower losses: a sum, or a mean weighted by shard size.

    With equal shards the weighted mean is the plain mean of the tower losses. An
    uneven last eval batch (allowed outside TRAIN) weighs each tower by its number
    of examples, so the loss still equals the one-device loss; an empty tower
    (batch smaller than the number of towers) adds nothing.
    """
    if loss_reduction not in _MEAN_REDUCTIONS:
        return tf.add_n(losses)
    if shard_sizes is None:
        return tf.add_n(losses) / float(len(losses))
    sizes = [tf.cast(n, losses[0].dtype) for n in shard_sizes]
    weighted = [tf.math.multiply_no_nan(loss, n) for loss, n in zip_strict(losses, sizes)]
    return tf.math.divide_no_nan(tf.add_n(weighted), tf.add_n(sizes))


def _concat_export_outputs(specs):
    outputs = {}
    for key, first in specs[0].export_outputs.items():
        towers = [spec.export_outputs[key] for spec in specs]
        if isinstance(first, export_lib.ClassificationOutput):
            outputs[key] = export_lib.ClassificationOutput(
                scores=None if first.scores is None else _concat(
                    [o.scores for o in towers]),
                classes=None if first.classes is None else _concat(
                    [o.classes for o in towers]))
        elif isinstance(first, export_lib.RegressionOutput):
            outputs[key] = export_lib.RegressionOutput(_concat([o.value for o in towers]))
        elif isinstance(first, export_lib.PredictOutput):
            outputs[key] = export_lib.PredictOutput(_concat([o.outputs for o in towers]))
        else:
            raise ValueError(f"cannot combine export output {key!r} of type "
                             f"{type(first).__name__} across towers")
    return outputs


def _aggregate_metrics(specs, metric_variables):
    """Eval metrics of the whole batch: tower 0's metric state plus all others'.

    After every tower's update op, each tower's metric variables are added into
    tower 0's and reset to zero; tower 0's value tensors then read whole-batch
    state. This holds for metrics with additive state (tf.compat.v1.metrics mean,
    accuracy, AUC, precision/recall, ...).
    """
    names = list(specs[0].eval_metric_ops)
    for i, spec in enumerate(specs[1:], start=1):
        if list(spec.eval_metric_ops) != names:
            raise ValueError(f"tower {i} returned eval metrics "
                             f"{sorted(spec.eval_metric_ops)}, tower 0 {sorted(names)}")
    if not names:
        return {}
    counts = [len(v) for v in metric_variables]
    if len(set(counts)) != 1:
        raise ValueError(f"towers created different numbers of metric variables: "
                         f"{counts}")
    updates = [spec.eval_metric_ops[n][1] for spec in specs for n in names]
    with tf.control_dependencies(updates):
        folded = []
        for per_tower in zip_strict(*metric_variables):
            others = [v.read_value() for v in per_tower[1:]]
            fold = per_tower[0].assign_add(tf.add_n(others))
            # After the sum, not merely the reads: a TF 1.x ref variable's read
            # shares the variable's buffer, which the reset would overwrite.
            with tf.control_dependencies([fold]):
                folded.append(fold)
                folded += [v.assign(tf.zeros_like(v)) for v in per_tower[1:]]
        reduce_op = tf.group(*folded, name="reduce_tower_metrics")
    return {name: (specs[0].eval_metric_ops[name][0], reduce_op) for name in names}


def _combine(specs, mode, loss_reduction, metric_variables, shard_sizes):
    first = specs[0]
    loss = None
    if first.loss is not None:
        loss = _reduce_loss([spec.loss for spec in specs], loss_reduction,
                            shard_sizes)
    predictions = None
    if first.predictions is not None:
        predictions = _concat([spec.predictions for spec in specs])
    if mode == ModeKeys.TRAIN:
        return EstimatorSpec(
            mode, loss=loss, predictions=predictions,
            train_op=tf.group(*[spec.train_op for spec in specs]),
            training_chief_hooks=first.training_chief_hooks,
            training_hooks=first.training_hooks, scaffold=first.scaffold)
    if mode == ModeKeys.EVAL:
        return EstimatorSpec(
            mode, loss=loss, predictions=predictions,
            eval_metric_ops=_aggregate_metrics(specs, metric_variables),
            evaluation_hooks=first.evaluation_hooks, scaffold=first.scaffold)
    return EstimatorSpec(mode, predictions=predictions,
                         export_outputs=_concat_export_outputs(specs),
                         prediction_hooks=first.prediction_hooks, scaffold=first.scaffold)


def _check_loss_reduction(loss_reduction):
    if loss_reduction == _REDUCTION.NONE:
        raise ValueError("loss_reduction NONE cannot be replicated: towers need one "
                         "scalar loss each; use SUM or a mean-style reduction")
    if loss_reduction not in _VALID_REDUCTIONS:
        raise ValueError(f"loss_reduction must be one of {_VALID_REDUCTIONS}, got "
                         f"{loss_reduction!r}")


def replicate_model_fn(model_fn, loss_reduction=_REDUCTION.SUM_BY_NONZERO_WEIGHTS,
                       devices=None, variable_placement="consolidate"):
    """Returns a model_fn that runs `model_fn` as data-parallel towers.

    Args:
      model_fn: the model_fn to replicate (any subset of features, labels, mode,
        params, config). Its optimizer must be wrapped in TowerOptimizer.
      loss_reduction: how each tower's loss reduces its batch, as
        tf.compat.v1.losses.Reduction: SUM, or a mean-style reduction (MEAN,
        SUM_OVER_BATCH_SIZE, SUM_BY_NONZERO_WEIGHTS — the tf.losses default).
        Decides how tower losses and gradients are combined. NONE is an error.
      devices: device names, one tower each; default all local GPUs, else the CPU.
      variable_placement: 'consolidate' (one device: the single GPU, else the
        CPU) or 'round_robin' (spread over `devices`).

    Returns:
      A model_fn(features, labels, mode, params, config) returning EstimatorSpecs.

    Raises:
      ValueError: loss_reduction NONE or unknown, empty devices, bad placement.
    """
    _check_loss_reduction(loss_reduction)
    devices = list(devices) if devices is not None else _local_devices()
    if not devices or not all(isinstance(d, str) and d for d in devices):
        raise ValueError(f"devices must be a non-empty list of device names, got "
                         f"{devices!r}")
    if variable_placement not in _PLACEMENTS:
        raise ValueError(f"variable_placement must be one of {_PLACEMENTS}, got "
                         f"{variable_placement!r}")

    def replicated_model_fn(features, labels, mode, params=None, config=None):
        context = _TowerContext(devices, loss_reduction, variable_placement)
        available = {"labels": labels, "mode": mode, "params": params or {},
                     "config": config}
        with context.active():
            if context.num_towers == 1:
                with tf.device(context.device_fn(devices[0])):
                    return call_with_declared_args(model_fn,
                                                   dict(available, features=features))
            return _run_towers(model_fn, context, features, labels, mode, available)

    return replicated_model_fn


def _shard_batch_sizes(feature_shards):
    """Examples per tower, from the first dense feature (None if there is none)."""
    first = feature_shards[0]
    key = None
    if isinstance(first, dict):
        key = next((k for k, v in first.items() if isinstance(v, tf.Tensor)), None)
        if key is None:
            return None
    return [tf.shape(shard[key] if key is not None else shard)[0]
            for shard in feature_shards]


def _run_towers(model_fn, context, features, labels, mode, available):
    # An uneven batch (the last one of an epoch) is split into near-equal shards:
    # each tower's loss and gradients count by its share of the batch, metrics
    # have additive state. Only training on sparse features alone, whose shard
    # sizes are unknown, still needs a batch divisible by the number of towers.
    k = context.num_towers
    require_even = mode == ModeKeys.TRAIN and _dense_key(features) is _NO_DENSE
    with tf.device(context.consolidation_device):
        feature_shards = _split_batch(features, k, require_even)
        label_shards = _split_batch(labels, k, require_even)
        shard_sizes = (None if require_even or isinstance(feature_shards[0],
                                                          tf.SparseTensor)
                       else _shard_batch_sizes(feature_shards))
        if shard_sizes is not None and mode == ModeKeys.TRAIN:
            total = tf.cast(tf.add_n(shard_sizes), tf.float32)
            context.shard_weights = [tf.math.divide_no_nan(tf.cast(n, tf.float32), total)
                                     for n in shard_sizes]
    outer_scope = tf.get_variable_scope()
    specs, metric_variables = [], []
    for i in range(k):
        before = {id(v) for v in tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)}
        with context.tower(i, outer_scope):
            spec = call_with_declared_args(model_fn, dict(
                available, features=feature_shards[i], labels=label_shards[i]))
        if not isinstance(spec, EstimatorSpec):
            raise TypeError(f"model_fn must return an EstimatorSpec, got {spec!r}")
        specs.append(spec)
        metric_variables.append([v for v in tf.get_collection(
            tf.GraphKeys.METRIC_VARIABLES) if id(v) not in before])
    context.check_optimizer_calls(mode)
    with tf.device(context.consolidation_device):
        return _combine(specs, mode, context.loss_reduction, metric_variables,
                        shard_sizes)


_NO_DENSE = object()


def _dense_key(features):
    """The key of the first dense feature (None for a bare Tensor), or _NO_DENSE."""
    if isinstance(features, tf.Tensor):
        return None
    if isinstance(features, dict):
        return next((k for k, v in features.items() if isinstance(v, tf.Tensor)),
                    _NO_DENSE)
    return _NO_DENSE
