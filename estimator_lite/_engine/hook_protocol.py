"""The SessionRunHook protocol, written once for training, evaluation and prediction.

`run_with_hooks` runs one step with every hook's `before_run`/`after_run` around it
and keeps a fast path: when no hook asks for anything, a precompiled callable runs
instead of a full `session.run`. `RestoredSession` is the hooked session of
evaluation and prediction (begin, restore, after_create_session, end).
"""

from estimator_lite._engine import executor_choice, validation
from estimator_lite._engine.queue_runners import QueueRunners
from estimator_lite._tf import tf

__all__ = ["check_hooks", "merge_run_args", "run_with_hooks", "RestoredSession",
           "without_readiness_reports"]


def check_hooks(name, hooks):
    """Checks an iterable of SessionRunHooks; returns them as a tuple.

    Args:
      name: the argument's name, for the message.
      hooks: None, or an iterable of SessionRunHooks.

    Raises:
      TypeError: `hooks` is not iterable or holds something else (worded as
        tf.estimator's too).
    """
    try:
        return validation.check_instances(name, hooks, tf.train.SessionRunHook,
                                          "SessionRunHook")
    except TypeError as e:
        raise TypeError(f"{e}; each hook must be a SessionRunHook") from None


def merge_run_args(requests):
    """Merges SessionRunArgs from several hooks into (fetches, feed_dict, options).

    Args:
      requests: one SessionRunArgs or None per hook.

    Returns:
      fetches: {hook index: fetches} for the hooks that asked for something;
      feed_dict: the union of their feeds; options: merged RunOptions or None.

    Raises:
      RuntimeError: two hooks feed the same tensor.
    """
    feed_dict = {}
    options = None
    for args in requests:
        if args is None:
            continue
        for key, value in (args.feed_dict or {}).items():
            if key in feed_dict:
                raise RuntimeError(f"two SessionRunHooks feed the same tensor {key!r}")
            feed_dict[key] = value
        if args.options is not None:
            options = _merge_options(options, args.options)
    fetches = {i: args.fetches for i, args in enumerate(requests)
               if args is not None and args.fetches is not None}
    return fetches, feed_dict, options


def _merge_options(merged, options):
    """The highest trace level and the shortest timeout of all requests."""
    if merged is None:
        merged = tf.RunOptions()
    merged.trace_level = max(merged.trace_level, options.trace_level)
    if options.timeout_in_ms:
        merged.timeout_in_ms = (min(merged.timeout_in_ms, options.timeout_in_ms)
                                if merged.timeout_in_ms else options.timeout_in_ms)
    return merged


def run_with_hooks(session, hooks, fetches, original_fetches=None, fast_fn=None,
                   before_after_run_fn=None, feed_dict=None):
    """Runs `fetches` once, with the hooks' before_run/after_run around the run.

    Args:
      session: the tf.Session.
      hooks: SessionRunHooks (may be empty).
      fetches: what the caller needs from this run.
      original_fetches: what the hooks see as the run's original arguments
        (default: `fetches`), e.g. the train op rather than the step guard.
      fast_fn: a precompiled callable that returns what `session.run(fetches)`
        would; used whenever no hook asks for a fetch, feed or option.
      before_after_run_fn: called with the results of `fetches` after the run and
        before any hook's `after_run` (the chief's checkpoint save: tf.estimator's
        CheckpointSaverHook comes first among MonitoredSession's hooks).
      feed_dict: what the caller feeds (give no `fast_fn` then), or None.

    Returns:
      (the results of `fetches`, whether a hook requested to stop).

    Raises:
      RuntimeError: two hooks feed the same tensor.
    """
    if not hooks:
        results = (fast_fn() if fast_fn is not None
                   else session.run(fetches, feed_dict=feed_dict))
        if before_after_run_fn is not None:
            before_after_run_fn(results)
        return results, False
    original = fetches if original_fetches is None else original_fetches
    context = tf.train.SessionRunContext(tf.train.SessionRunArgs(original), session)
    requests = [hook.before_run(context) for hook in hooks]
    options = metadata = None
    if fast_fn is not None and all(r is None for r in requests):
        results, hook_results = fast_fn(), {}
    else:
        hook_fetches, hook_feeds, options = merge_run_args(requests)
        feed_dict = {**(feed_dict or {}), **hook_feeds} if hook_feeds else feed_dict
        metadata = tf.RunMetadata() if options is not None else None
        out = session.run({"main": fetches, "hooks": hook_fetches},
                          feed_dict=feed_dict or None, options=options,
                          run_metadata=metadata)
        results, hook_results = out["main"], out["hooks"]
    if before_after_run_fn is not None:
        before_after_run_fn(results)
    # tf.estimator's hooks always get RunOptions and RunMetadata protos (empty when
    # no hook asked for options); a run without options fills no metadata, so
    # fresh ones are what it would have given.
    options = tf.RunOptions() if options is None else options
    metadata = tf.RunMetadata() if metadata is None else metadata
    for i, hook in enumerate(hooks):
        hook.after_run(context, tf.train.SessionRunValues(
            results=hook_results.get(i), options=options, run_metadata=metadata))
    return results, context.stop_requested


def without_readiness_reports(scaffold):
    """`scaffold` with empty readiness reports where it has none of its own.

    `Scaffold.finalize` builds two `report_uninitialized_variables` ops, which only
    a session that waits for another task to initialise the model ever runs. A
    session that restores or initialises the model itself (evaluation, prediction)
    never does, and building them is a quarter of a small model's `evaluate()`
    time.

    Args:
      scaffold: a tf.compat.v1.train.Scaffold, not yet finalized.

    Returns:
      A Scaffold with the same pieces; the readiness reports the caller did not set
      are empty string tensors.
    """
    if scaffold.ready_op is not None and scaffold.ready_for_local_init_op is not None:
        return scaffold
    empty = tf.constant([], tf.string, name="no_readiness_report")
    return tf.train.Scaffold(
        ready_op=empty if scaffold.ready_op is None else None,
        ready_for_local_init_op=(empty if scaffold.ready_for_local_init_op is None
                                 else None),
        copy_from_scaffold=scaffold)


class RestoredSession:
    """A session with variables restored from a checkpoint (or initialised).

    Calls the hooks' begin/after_create_session on entry and end on a clean exit.
    Used by evaluation and prediction; training has its own TrainSession.
    """

    def __init__(self, scaffold, checkpoint_path, session_config, master, hooks,
                 fetch_with_local_init=None):
        """Args: a Scaffold; the checkpoint (None initialises); the session config;
        the session target; SessionRunHooks; and what to fetch in the same run as the
        local init op (its value is then `local_init_results`), e.g. the input's
        cardinality: a session's every new fetch set pays a graph optimization."""
        self._scaffold = scaffold
        self._checkpoint_path = checkpoint_path
        self._session_config = session_config
        self._master = master
        self._hooks = hooks
        self._fetch_with_local_init = fetch_with_local_init
        self._session = None
        self._queue_runners = None
        self.local_init_results = None

    def __enter__(self):
        for hook in self._hooks:
            hook.begin()
        self._scaffold = without_readiness_reports(self._scaffold)
        self._scaffold.finalize()
        graph = tf.get_default_graph()
        graph.finalize()
        session = tf.Session(self._master, config=executor_choice.session_config(
            graph, self._session_config, self._master, self._hooks,
            setup=executor_choice.scaffold_setup(self._scaffold)))
        self._session = session
        if self._checkpoint_path is not None:
            self._scaffold.saver.restore(session, self._checkpoint_path)
        else:
            session.run(self._scaffold.init_op, feed_dict=self._scaffold.init_feed_dict)
            if self._scaffold.init_fn is not None:
                self._scaffold.init_fn(session)  # the Scaffold binds itself
        fetches = [self._scaffold.local_init_op]
        if self._fetch_with_local_init is not None:
            fetches.append(self._fetch_with_local_init)
        results = session.run(
            fetches, feed_dict=getattr(self._scaffold, "local_init_feed_dict", None))
        self.local_init_results = results[1] if len(results) > 1 else None
        self._queue_runners = QueueRunners(session)
        for hook in self._hooks:
            hook.after_create_session(session, self._queue_runners.coordinator)
        return session

    def __exit__(self, exc_type, exc, tb):
        try:
            if exc_type is None:
                for hook in self._hooks:
                    hook.end(self._session)
        finally:
            try:
                if self._queue_runners is not None:
                    self._queue_runners.stop()
            finally:
                self._session.close()
        return False
