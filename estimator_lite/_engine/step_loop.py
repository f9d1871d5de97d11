"""Multi-step training loops: up to K training steps in one session call.

With ``RunConfig(experimental_steps_per_loop=K)`` (or a TPUEstimator whose
`tpu.RunConfig(experimental_honor_iterations_per_loop=True)`), training runs as
one graph op per K steps: a `tf.while_loop` whose body pulls the next batch from
the input iterator, calls the model_fn on it (so its train op runs once per
iteration; variables and optimizer slots are created once, lifted out of the
loop by TensorFlow) and stops after K iterations, a non-finite loss, or when
the session asks for fewer (the placeholder `steps_in_loop`: the last loop before
`max_steps` is shortened, so it is never overshot). Python, hooks and the
periodic actions run only between loops.

What lives inside the loop's body cannot be fetched from outside it. Three
things leave it as loop outputs: the last step's loss, whether every loss so far
was finite, and the model_fn's summaries of the last step merged into one
string. A hook asking for the loss (or the train op) gets the loop's; a hook
asking for any other tensor of the body is an error naming it (see `LoopHook`).

Where a loop cannot give K single steps' result, training takes one step per
session call with a one-line warning naming the cause: an input_fn returning
tensors rather than a Dataset (nothing to pull from inside a loop), a replicating
strategy, or a model_fn construct that a loop's body changes (`LoopUnsupportedError`,
raised while the loop is built; the Estimator then builds its graph again with
one step per call):

* random ops drawn inside the body while `tf_random_seed` is set (TensorFlow
  numbers an op's seed by its position in its graph, and the body is a graph of
  its own: the draws would differ from single steps');
* a variable's initializer replaced inside the body (`init_from_checkpoint` in
  the model_fn or a TPUEstimator scaffold_fn);
* a Scaffold with a Saver, init or ready ops, or an init_fn of the model_fn's
  (built inside the body, where the session cannot run them);
* placeholders of the model_fn (a hook feeding them feeds once per loop);
* a bias added to a matrix product (`BiasAdd`) where TensorFlow's oneDNN rewrites
  are on: they fuse the two in the session's graph, not in a loop's body, and the
  sums round differently in the last bits;
* a model_fn the body cannot hold at all (reference variables): its error is
  named.

Layer state updates a model_fn leaves ungrouped (Keras BatchNormalization
statistics, Keras Dropout's seed counter) run in the body after each step's train
op, as in single steps (`state_updates` sees through the body's captures).

The loop also stops when the global step reaches the train() call's target, so a
train op that moves the global step by more than one stops where single steps do.
"""

import collections

from estimator_lite._engine import input_fn as input_fn_lib
from estimator_lite._engine.executor_choice import RANDOM_OP_PREFIXES
from estimator_lite._tf import DATASET_TYPES, logging, onednn_rewrites_on, tf

__all__ = ["LoopUnsupportedError", "TrainLoop", "LoopHook", "build_train_loop",
           "check_replicated", "maybe_build_train_loop", "translate_fetches",
           "warn_fallback"]

# The loop's length placeholder's name (its default is the configured K).
LENGTH_NAME = "steps_in_loop"
# The placeholder of the global step the loop stops at (default: none).
STOP_AT_NAME = "loop_stop_at_step"
NO_STOP = 2 ** 63 - 1
# numpy.finfo(numpy.float32).max: a float64 loss is clamped to it in a loop's float32.
_FLOAT32_MAX = 3.4028234663852886e38
# oneDNN fuses a product and the bias added to it into one kernel in the session's
# graph, not inside a loop's body: the sums round differently in the last bit.
_PRODUCT_OPS = ("MatMul", "BatchMatMul", "Conv")
_BIAS_OPS = frozenset({"BiasAdd", "BiasAddV1"})
# Scaffold fields a model_fn may set; set inside a loop's body they would hold ops
# of the body.
_SCAFFOLD_FIELDS = ("init_op", "init_feed_dict", "init_fn", "ready_op",
                    "ready_for_local_init_op", "local_init_op", "saver")


class LoopUnsupportedError(Exception):
    """A multi-step loop cannot give K single steps' result for this model_fn.

    Raised while the loop is built; the caller builds the training graph again
    with one step per session call, after `warn_fallback`.

    Attributes:
      reason: what the loop cannot hold, for the warning.
    """

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class TrainLoop(collections.namedtuple(
        "TrainLoop", ["spec", "length", "steps_per_loop", "guard_parts", "fetch_map",
                      "input", "body_graph", "stop_at"])):
    """The training graph of a multi-step loop.

    Fields:
      spec: the model_fn's EstimatorSpec with `loss` the loop's last loss (float32)
        and `train_op` the loop op; its hooks and scaffold are the model_fn's.
      length: the int32 placeholder of the loop's length (default steps_per_loop).
      steps_per_loop: K.
      guard_parts: (op that runs the loop, finite: bool tensor, all losses were
        finite) for `train_session.build_step_guard`.
      fetch_map: {id of a tensor or op inside the body: its stand-in outside}.
      input: an `input_fn.Input` (features and labels of the body; the iterator's
        initializer).
      body_graph: the graph of the loop's body (where the model_fn ran).
      stop_at: the int64 placeholder of the global step at which the loop stops
        (default: none), fed with train()'s target step.
    """


def warn_fallback(steps_per_loop, reason):
    """Logs the one-line warning of a fallback to one step per session call."""
    logging.warning("experimental_steps_per_loop=%d ignored, training one step per "
                    "session call: %s.", steps_per_loop, reason)


def check_replicated(steps_per_loop):
    """Warns that a replicating strategy trains one step per call whatever K."""
    if steps_per_loop > 1:
        warn_fallback(steps_per_loop, "a replicating train_distribute strategy runs "
                      "one step per session call")


def maybe_build_train_loop(steps_per_loop, input_result, train_model_fn, global_step):
    """The K-step loop over an input_fn's result, or None for one step per call.

    Args:
      steps_per_loop: K (RunConfig.experimental_steps_per_loop); 1 builds nothing.
      input_result: what the input_fn returned. Only a tf.data dataset can feed a
        loop: tensors (e.g. from a queue) fall back to one step per call with a
        warning.
      train_model_fn: callable(features, labels) returning the TRAIN EstimatorSpec.
      global_step: the global step variable.

    Returns:
      A TrainLoop, or None.
    """
    if steps_per_loop == 1:
        return None
    if not isinstance(input_result, DATASET_TYPES):
        warn_fallback(steps_per_loop, "the input_fn returned tensors, not a "
                      "tf.data.Dataset, so a loop has no iterator to pull from")
        return None
    return build_train_loop(input_result, train_model_fn, global_step, steps_per_loop)


def build_train_loop(dataset, train_model_fn, global_step, steps_per_loop):
    """Builds the K-step loop over `dataset`.

    Args:
      dataset: the input_fn's tf.data dataset (of features or (features, labels)).
      train_model_fn: callable(features, labels) returning the TRAIN EstimatorSpec;
        called once, inside the loop's body.
      global_step: the global step variable.
      steps_per_loop: K, an int >= 1.

    Returns:
      A TrainLoop.
    """
    iterator = tf.data.make_initializable_iterator(dataset)
    length = tf.placeholder_with_default(tf.constant(steps_per_loop, tf.int32), [],
                                         name=LENGTH_NAME)
    stop_at = tf.placeholder_with_default(tf.constant(NO_STOP, tf.int64), [],
                                          name=STOP_AT_NAME)
    traced = {}
    outer_summaries = list(tf.get_collection(tf.GraphKeys.SUMMARIES))

    def body(loss, summary):
        del loss
        element = input_fn_lib.split_input(iterator.get_next())
        features, labels = element.features, element.labels
        before = {id(s) for s in tf.get_collection(tf.GraphKeys.SUMMARIES)}
        graph = tf.get_default_graph()
        existing = set(graph.get_operations())
        spec = train_model_fn(features, labels)
        new = [s for s in tf.get_collection(tf.GraphKeys.SUMMARIES) if id(s) not in before]
        # The model_fn's ops: a body graph of its own (TF 2), or, with TF 1.15's
        # control flow, the ops it added to the one graph.
        traced.update(spec=spec, features=features, labels=labels, summaries=new,
                      graph=graph, ops=[op for op in graph.get_operations()
                                        if op not in existing])
        with tf.control_dependencies([spec.train_op]):
            step_loss = _loop_loss(spec.loss)
            # Without summaries the loop variable passes through (no op per step).
            merged = tf.summary.merge(new, collections=[]) if new else summary
        # A list, as the loop variables are: TF 1.15 compares their sequence types.
        return [step_loss, merged]

    def cond(loss, summary):
        del summary
        # Read after the step before (the loss waits for its train op): a train op
        # moving the global step by more than one stops where single steps stop.
        with tf.control_dependencies([loss]):
            step = tf.cast(_read(global_step), tf.int64)
        return tf.logical_and(tf.is_finite(loss), step < stop_at)

    try:
        # Every loop variable costs the loop a few ops per step (TensorFlow passes it
        # from one iteration to the next), so there are two: the step count is the
        # loop's own (maximum_iterations) and "every loss so far was finite" is the
        # last loss's finiteness (the loop stops at the first one that is not).
        loss, summary = tf.while_loop(
            cond, body, [tf.constant(0.0, tf.float32), tf.constant("", tf.string)],
            maximum_iterations=length, parallel_iterations=1, name="train_loop")
    except (TypeError, ValueError, KeyError) as e:
        # The body cannot hold this model_fn; one step per call may (or raises
        # the same error where the user expects it).
        raise LoopUnsupportedError(
            f"the model_fn cannot run inside a loop ({type(e).__name__}: "
            f"{_first_line(e)})") from e
    reason = _fallback_reason(traced, tf.get_default_graph())
    if reason is not None:
        raise LoopUnsupportedError(reason)
    _restore_summaries(outer_summaries, summary if traced["summaries"] else None,
                       any(s.op.name == "loss" for s in traced["summaries"]))
    spec = traced["spec"]
    finite = tf.is_finite(loss)
    loop_op = tf.group(finite, loss, summary, name="train_loop_op")
    loss = tf.identity(loss, name="loop_loss")
    # Keyed by id: graph tensors are not hashable.
    fetch_map = {id(spec.loss): loss, id(spec.train_op): loop_op,
                 id(spec.loss.op): loss.op}
    # The body's predictions and metrics cannot be fetched from outside the loop
    # (a canned head returns them in TRAIN mode too); training never reads them.
    loop_spec = spec._replace(loss=loss, train_op=loop_op, predictions=None,
                              eval_metric_ops=None, export_outputs=None)
    return TrainLoop(loop_spec, length, steps_per_loop, (loop_op, finite), fetch_map,
                     input_fn_lib.Input(traced["features"], traced["labels"],
                                        iterator.initializer, None),
                     traced["graph"], stop_at)


def _read(variable):
    """A read of `variable` made here (under the caller's control dependencies):
    one op for a resource variable, as the loop's condition runs it K times."""
    if hasattr(variable, "handle"):  # a resource variable: value() reads it anew
        return variable.value()
    return tf.identity(variable)  # TF 1.15's reference variable


def _loop_loss(loss):
    """The step's loss as the loop's float32 scalar, finite exactly when `loss` is.

    One op for the usual float32 scalar loss: every op of the body runs K times
    per call. A float64 loss beyond float32's range comes out as float32's largest
    value (its sign kept), so that only a non-finite loss stops the loop.
    """
    scalar = loss if loss.shape.rank == 0 else tf.reshape(loss, [])
    if scalar.dtype == tf.float64:
        in_range = tf.cast(tf.clip_by_value(scalar, -_FLOAT32_MAX, _FLOAT32_MAX),
                           tf.float32)
        return tf.where(tf.is_finite(scalar), in_range, tf.cast(scalar, tf.float32))
    # float16, bfloat16 and integers convert with their finiteness; an identity still
    # where nothing converts, so that it waits for the train op (control dependency).
    return tf.identity(tf.cast(scalar, tf.float32))


def _first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _fallback_reason(traced, outer_graph):
    """Why the built loop would not give single steps' result, or None."""
    spec, body = traced["spec"], traced["graph"]
    scaffold = spec.scaffold
    fields = [f for f in _SCAFFOLD_FIELDS if getattr(scaffold, f, None) is not None]
    if fields:
        return (f"the model_fn's Scaffold sets {', '.join(fields)}, built inside the "
                "loop where the session cannot run it")
    # The body's arguments (loop variables, captured tensors) are placeholders too.
    arguments = {t.op for t in getattr(body, "inputs", ())}
    placeholders = [op.name for op in traced["ops"]
                    if op.type in ("Placeholder", "PlaceholderWithDefault")
                    and op not in arguments]
    if placeholders:
        return (f"the model_fn creates placeholders ({_names(placeholders)}), which a "
                "loop feeds once per K steps")
    if outer_graph.seed is not None:
        random = [op.name for op in traced["ops"]
                  if op.type.startswith(RANDOM_OP_PREFIXES)]
        if random:
            return (f"tf_random_seed is set and the model_fn draws random numbers "
                    f"inside the loop ({_names(random)}): TensorFlow seeds such an op by "
                    "its position in its graph, so the draws would differ from single "
                    "steps'")
    fused = _fused_by_onednn(traced["ops"])
    if fused:
        return (f"TensorFlow's oneDNN rewrites fuse products and their bias "
                f"({_names(fused)}) in single steps' graph but not inside a loop, so "
                "the numbers would differ in the last bits (TF_ENABLE_ONEDNN_OPTS=0 "
                "turns the rewrites off, for single steps too)")
    replaced = [v.op.name for v in outer_graph.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)
                if _initializer_graph(v) is body and body is not outer_graph]
    if replaced:
        return (f"the model_fn replaces initializers inside the loop ({_names(replaced)}:"
                " init_from_checkpoint), where the session cannot run them")
    return None


def _fused_by_onednn(ops):
    """The bias additions to a product among `ops` that oneDNN would fuse (none
    when its rewrites are off)."""
    if not onednn_rewrites_on():
        return []
    return [op.name for op in ops
            if op.type in _BIAS_OPS
            and any(t.op.type.startswith(_PRODUCT_OPS) for t in op.inputs)]


def _names(names, most=3):
    shown = ", ".join(repr(n) for n in names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _initializer_graph(variable):
    """The graph of a variable's initializer op (None when it has none)."""
    initializer = getattr(variable, "initializer", None)
    return getattr(initializer, "graph", None)


def _restore_summaries(outer, merged, has_loss):
    """Puts the body's summaries in the outer graph's collection as the loop's
    output (the body's own tensors cannot be fetched from outside the loop).

    A body summary named 'loss' (a head's) is kept under that name, so the
    training summaries do not add a second one.
    """
    collection = tf.get_collection_ref(tf.GraphKeys.SUMMARIES)
    collection[:] = outer
    if merged is not None:
        collection.append(tf.identity(merged, name="loss" if has_loss else
                                      "loop_summaries"))


def translate_fetches(fetches, fetch_map, hook):
    """`fetches` with the body's tensors replaced by their loop outputs.

    Raises:
      ValueError: a fetch is a tensor or op of the loop's body that has no loop
        output (it cannot be fetched from outside the loop).
    """
    def one(fetch):
        if isinstance(fetch, (tf.Tensor, tf.Operation)):
            if id(fetch) in fetch_map:
                return fetch_map[id(fetch)]
            graph = fetch.graph
            if graph is not tf.get_default_graph() and _inside_function(graph):
                raise ValueError(
                    f"{type(hook).__name__} fetches {fetch.name!r}, computed inside the "
                    "multi-step training loop, where only the loss and the train op "
                    "can be fetched from; fetch it outside the model_fn or set "
                    "RunConfig(experimental_steps_per_loop=1)")
        return fetch

    return tf.nest.map_structure(one, fetches)


def _inside_function(graph):
    return getattr(graph, "outer_graph", None) is not None


class LoopHook(tf.train.SessionRunHook):
    """Runs a user's hook at loop boundaries, its fetches of the body's tensors
    translated to the loop's outputs (`translate_fetches`)."""

    def __init__(self, hook, loop):
        self.hook = hook
        self._fetch_map = loop.fetch_map
        self._body_graph = loop.body_graph

    def begin(self):
        # A model_fn's hook holding the body's tensors (a LoggingTensorHook of the
        # loss) checks them against the default graph: then it is the body's. Once:
        # a hook's begin() may count or raise.
        if self._holds_body_tensors():
            with self._body_graph.as_default():
                self.hook.begin()
        else:
            self.hook.begin()

    def _holds_body_tensors(self):
        """Whether the hook's attributes hold tensors or ops of the loop's body."""
        for value in vars(self.hook).values():
            try:
                items = tf.nest.flatten(value)
            except (TypeError, ValueError):  # not a structure nest can walk
                items = [value]
            if any(isinstance(item, (tf.Tensor, tf.Operation))
                   and item.graph is self._body_graph for item in items):
                return True
        return False

    def after_create_session(self, session, coord):
        self.hook.after_create_session(session, coord)

    def before_run(self, run_context):
        args = self.hook.before_run(run_context)
        if args is not None and args.feed_dict:
            # A feed holds for a whole loop: K steps would see what one step was fed.
            raise ValueError(
                f"{type(self.hook).__name__} feeds {len(args.feed_dict)} tensor(s) in "
                "before_run, but a multi-step loop runs several steps per feed; set "
                "RunConfig(experimental_steps_per_loop=1) to train with this hook")
        if args is None or args.fetches is None:
            return args
        return tf.train.SessionRunArgs(
            translate_fetches(args.fetches, self._fetch_map, self.hook),
            feed_dict=args.feed_dict, options=args.options)

    def after_run(self, run_context, run_values):
        self.hook.after_run(run_context, run_values)

    def end(self, session):
        self.hook.end(session)
