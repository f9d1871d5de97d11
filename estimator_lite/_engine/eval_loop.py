"""The evaluation loop: run metric updates over the eval input, then read the metrics.

The Estimator builds the eval graph (input_fn, model_fn in EVAL mode) and hands the
pieces here: the metric ops, the scaffold, the hooks and where to restore from.
This module owns what happens in the session: restoring (or loading in-memory
values), counting the batches (in tf.estimator's eval step too, which hooks see),
running the updates with the hooks, logging progress, and reading the final values
as TensorFlow returns them (numpy scalars and arrays, bytes), in tf.estimator's
order.
"""

from estimator_lite._engine import event_files, validation
from estimator_lite._engine import input_fn as input_fn_lib
from estimator_lite._engine.hook_protocol import RestoredSession, run_with_hooks
from estimator_lite._tf import logging, tf

__all__ = ["check_evaluate_args", "evaluation_scaffold", "metric_fetches", "run_evaluation",
           "scaffold_loading", "EvalSummaries", "eval_step", "log_metrics", "metrics_text",
           "scaffold_initialising_late_locals"]


def check_evaluate_args(steps, name):
    """Checks evaluate()'s `steps` (None or >= 1) and `name` (None or a str).

    Raises:
      ValueError: steps <= 0 (also worded as tf.estimator's).
      TypeError: steps is not an int, or name not a str.
    """
    if isinstance(steps, int) and not isinstance(steps, bool) and steps <= 0:
        raise ValueError(f"Must specify steps > 0: steps must be >= 1, got {steps!r}")
    validation.check_int("steps", steps, 1, allow_none=True)
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str or None, got {name!r} of type "
                        f"{type(name).__name__}")


def metric_fetches(eval_metric_ops, loss, global_step):
    """The update op and the value fetches of an evaluation.

    Args:
      eval_metric_ops: dict of metric name to (value, update_op).
      loss: the scalar loss; its mean is the 'loss' metric.
      global_step: the global step variable (reported as 'global_step').

    Returns:
      (one op running every update, dict of name to value tensor): the metric
      names sorted ('loss' among them), then 'global_step', as tf.estimator
      orders them (so the metrics dict evaluate() returns has that order too).

    Raises:
      ValueError: the model_fn's metrics use a name the Estimator reports itself
        ('loss', 'global_step'), as tf.estimator refuses.
    """
    # tf.estimator's words: "loss" in quotes, `global_step` in backquotes.
    for reserved in ('"loss"', "`global_step`"):
        if reserved[1:-1] in eval_metric_ops:
            raise ValueError(f"Metric with name {reserved} is not allowed, because "
                             "Estimator already defines a default metric with the "
                             "same name. (eval_metric_ops has the keys "
                             f"{sorted(eval_metric_ops)})")
    metric_ops = dict(eval_metric_ops)
    metric_ops["loss"] = tf.metrics.mean(loss)
    update_op = tf.group(*[op for _, op in metric_ops.values()])
    values = {name: value for name, (value, _) in metric_ops.items()}
    values["global_step"] = global_step
    return update_op, _in_result_order(values)


def _in_result_order(values):
    """`values` reordered as tf.estimator's results: sorted names, 'global_step' last.

    tf.estimator sorts the metrics (for a deterministic graph) and appends the
    global step; users see that order in evaluate()'s dict and its iteration.
    """
    ordered = {name: values[name] for name in sorted(values) if name != "global_step"}
    if "global_step" in values:
        ordered["global_step"] = values["global_step"]
    return ordered


def eval_step():
    """The default graph's eval step, created on first use: tf.estimator's counter of
    an evaluation's batches.

    As TensorFlow's `evaluation._get_or_create_eval_step`, which tf.estimator
    evaluates with: an int64 scalar named 'eval_step', not trainable, in the
    LOCAL_VARIABLES collection (so the local init op zeroes it for each evaluation)
    and in GraphKeys.EVAL_STEP, where hooks and libraries look it up.

    Returns:
      The variable (the collection's one tensor when it has one already).

    Raises:
      ValueError: GraphKeys.EVAL_STEP holds more than one tensor.
    """
    found = tf.get_collection(tf.GraphKeys.EVAL_STEP)
    if len(found) > 1:
        raise ValueError("Multiple tensors added to tf.GraphKeys.EVAL_STEP")
    if found:
        return found[0]
    return tf.get_variable(
        "eval_step", shape=[], dtype=tf.int64, initializer=tf.zeros_initializer(),
        trainable=False,
        collections=[tf.GraphKeys.LOCAL_VARIABLES, tf.GraphKeys.EVAL_STEP])


def scaffold_initialising_late_locals(scaffold):
    """The model_fn's scaffold, with a local_init_op that covers the Estimator's locals.

    The Estimator creates local variables after the model_fn returns: the 'loss'
    metric's `mean/total` and `mean/count` (`metric_fetches`, called before this),
    and the eval step, created here, before any local init op is built. A
    local_init_op the model_fn built itself (adanet builds one from
    `Scaffold.default_local_init_op()` inside its model_fn) cannot know them;
    tf.estimator creates its eval step, then groups that op with a default local
    init op built now, and so does this (a scaffold without one gets the default,
    which covers them, when it is finalized or given the input's initializer).
    """
    eval_step()
    if scaffold.local_init_op is None:
        return scaffold
    return tf.train.Scaffold(
        local_init_op=tf.group(scaffold.local_init_op,
                               tf.train.Scaffold.default_local_init_op()),
        copy_from_scaffold=scaffold)


def evaluation_scaffold(scaffold, input_initializer, variable_values=None):
    """The Scaffold an evaluation runs with.

    Args:
      scaffold: the model_fn's EVAL Scaffold.
      input_initializer: the input iterator's initializer, or None.
      variable_values: {variable name: value} to evaluate instead of a checkpoint
        (the in-memory evaluator hook), or None.

    Returns:
      `scaffold` initialising late local variables and the input, and loading
      `variable_values` when given.
    """
    scaffold = input_fn_lib.scaffold_with_input(
        scaffold_initialising_late_locals(scaffold), input_initializer)
    if variable_values is not None:
        scaffold = scaffold_loading(scaffold, variable_values)
    return scaffold


def scaffold_loading(scaffold, variable_values):
    """A scaffold that initialises, then loads `variable_values` by variable name.

    Raises:
      ValueError: the model_fn's scaffold has its own saver or init_fn (which
        would decide the variables' values instead).
    """
    for field in ("saver", "init_fn"):
        if getattr(scaffold, field) is not None:
            raise ValueError(f"in-memory evaluation loads the training variables "
                             f"itself; the model_fn's scaffold has a custom {field}")
    def load(unused_scaffold, session):
        del unused_scaffold
        for variable in tf.global_variables():
            value = variable_values.get(variable.op.name)
            if value is not None:
                variable.load(value, session)
    return tf.train.Scaffold(init_fn=load, copy_from_scaffold=scaffold)


def run_evaluation(*, update_op, values, scaffold, hooks, checkpoint_path,
                   session_config, master, cardinality, steps):
    """Runs an evaluation in the current (complete) graph; returns the metrics dict.

    Args:
      update_op: runs every metric update once (one batch).
      values: dict of metric name to value tensor, read once at the end.
      scaffold: the eval Scaffold (saver, init ops, input initializer); a local
        init op of its own must cover the eval step, as tf.estimator's
        evaluation requires (`scaffold_initialising_late_locals` sees to it).
      hooks: SessionRunHooks (the caller's and the model_fn's evaluation hooks).
      checkpoint_path: checkpoint to restore, or None to initialise.
      session_config: tf.ConfigProto of the session.
      master: session target.
      cardinality: the eval dataset's cardinality tensor, or None.
      steps: batches to run at most, or None for the whole input.

    Returns:
      Dict of metric name to value as `Session.run` gives it (numpy scalars such
      as numpy.float32 and numpy.int64, numpy arrays, bytes), in tf.estimator's
      order (see `metric_fetches`), as tf.estimator returns them.

    Raises:
      ValueError: an infinite dataset without steps. An input that yields no batch
        is not an error (tf.estimator's metrics of no data, with a warning).
    """
    # Each batch also adds one to the eval step, as tf.estimator's evaluation:
    # hooks see `[update_op, update_eval_step]` as the run's fetches, and
    # `session.run` of them gives [None, the eval step after the batch].
    fetches = [update_op, tf.assign_add(eval_step(), 1, use_locking=True)]
    restored = RestoredSession(scaffold, checkpoint_path, session_config, master, hooks,
                               fetch_with_local_init=cardinality)
    with restored as session:
        total = _eval_batches(restored.local_init_results, steps)
        done = _run_eval_loop(session, hooks, fetches, steps, total)
        if done == 0:
            # tf.estimator returns the metrics of no data (loss 0.0, the mean of
            # nothing) and programs rely on it (tensorflow_ranking's tests): so do
            # we, but say so, since the numbers describe no data at all.
            logging.warning(
                "Evaluation ran no batch: the eval input_fn produced no data (an "
                "empty dataset?). The metrics are those of no data (loss 0.0), as "
                "tf.estimator reports them; a BestExporter or an early-stopping hook "
                "takes them at face value.")
        metrics = session.run(values)
    return _in_result_order(metrics)


def _eval_batches(cardinality, steps):
    """How many batches this evaluation will run, or None when unknown.

    Args:
      cardinality: the eval dataset's cardinality (a number), or None.
      steps: batches to run at most, or None.

    Raises:
      ValueError: the eval dataset is infinite and `steps` is None (it would
        never end).
    """
    if cardinality is None:
        return steps
    count = int(cardinality)
    if count == tf.data.experimental.INFINITE_CARDINALITY:
        if steps is None:
            raise ValueError("the eval input_fn returns an infinite dataset (it "
                             "repeats forever) and steps is None, so evaluation "
                             "would never end; pass steps or stop repeating")
        return steps
    if count < 0:  # unknown (e.g. after filter)
        return steps
    return count if steps is None else min(count, steps)


def _run_eval_loop(session, hooks, fetches, steps, total):
    """Runs `fetches` (one batch's updates) until `steps`, the end of input or a
    hook's stop.

    Logs progress every tenth of `total` when it is known. Returns the batches run.
    """
    run_update = session.make_callable(fetches)
    log_every = max(1, total // 10) if total else None
    done = 0
    while steps is None or done < steps:
        try:
            _, stop = run_with_hooks(session, hooks, fetches, fast_fn=run_update)
        except tf.errors.OutOfRangeError:
            break
        done += 1
        if log_every and (done % log_every == 0 or done == total):
            logging.info("Evaluation [%d/%d]", done, total)
        if stop:
            break
    return done


class EvalSummaries:
    """Writes each evaluation's scalars to its eval dir, one open writer per dir."""

    def __init__(self):
        self._writers = {}

    def write(self, eval_dir, metrics, checkpoint_path=None):
        """Adds `metrics` (with 'global_step') as summaries at that step (see
        event_files.eval_summary), then, in an event of its own as tf.estimator
        writes it, the evaluated checkpoint's path (tag 'checkpoint_path')."""
        scalars = {k: v for k, v in metrics.items() if k != "global_step"}
        writer = self._writers.get(eval_dir)
        if writer is None:
            writer = event_files.new_summary_writer(eval_dir)
            self._writers[eval_dir] = writer
        step = metrics["global_step"]
        writer.add_summary(event_files.eval_summary(scalars), step)
        if checkpoint_path:
            logging.info("Saving 'checkpoint_path' summary for global step %d: %s",
                         step, checkpoint_path)
            writer.add_summary(event_files.checkpoint_path_summary(checkpoint_path), step)
        writer.flush()


def metrics_text(metrics):
    """'name = value, ...' of a metrics dict, as tf.estimator logs it.

    Names sorted ('global_step' among them); bytes values (serialized summaries)
    left out; values printed with str() (a numpy.float32 shows its shortest
    float32 digits, '0.42773223', where format() would widen it to a float's).
    """
    return ", ".join(f"{k} = {v!s}" for k, v in sorted(metrics.items())
                     if not isinstance(v, bytes))


def log_metrics(metrics):
    """Logs 'Saving dict for global step N: name = value, ...' at INFO.

    tf.estimator's wording (users and log scrapers grep for it), written before
    the evaluation's summaries, for evaluate() and in-memory evaluation alike.
    """
    logging.info("Saving dict for global step %d: %s", metrics["global_step"],
                 metrics_text(metrics))
