"""Setting up a train() call: its arguments, and the TrainSession its RunConfig asks for.

The Estimator builds the training graph (input_fn, model_fn, warm start); this
module adds what runs around it, as tf.estimator's default training hooks and its
MonitoredTrainingSession arguments did: the hook order, the checkpoint saver, the
training summaries, the step rate and progress log, the session options and the
collective watchdog.
"""

from estimator_lite._engine import collective_watchdog, roles
from estimator_lite._engine import periodic_actions as periodic
from estimator_lite._engine.train_session import TrainSession, check_train_args
from estimator_lite._tf import add_saver_listeners, tf

__all__ = ["check_args", "train_session"]

# tf.estimator's wording of train()'s argument rules, added to ours (code that
# matches those messages keeps working).
_TRAIN_ARGS_WORDING = (
    ("steps must be", "Must specify steps > 0"),
    ("max_steps must be", "Must specify max_steps > 0"),
    ("hooks must", "each hook must be a SessionRunHook"),
    ("saving_listeners must", "saving_listeners must be a list of "
                              "CheckpointSaverListener"),
    ("saving_listeners need checkpoints", "There should be a CheckpointSaverHook to "
                                          "use saving_listeners"),
)


def check_args(*args, **kwargs):
    """train_session.check_train_args, its errors also worded as tf.estimator's."""
    try:
        return check_train_args(*args, **kwargs)
    except (TypeError, ValueError) as e:
        for start, wording in _TRAIN_ARGS_WORDING:
            if str(e).startswith(start):
                raise type(e)(f"{e} ({wording})") from None
        raise


def train_session(config, model_dir, estimator_name, runner, *, global_step, spec,
                  scaffold, hooks, listeners, loop, examples_per_step):
    """The TrainSession that runs a built training graph as `config` asks.

    Args:
      config: the Estimator's RunConfig.
      model_dir: the Estimator's model_dir.
      estimator_name: the Estimator's class name (for a mismatched checkpoint's hint).
      runner: the `runner` that built the graph (its session options, whether
        workers hold variables, whether they run collective ops).
      global_step: the global step variable.
      spec: the model_fn's TRAIN EstimatorSpec (train op, loss, its hooks).
      scaffold: the Scaffold to finalize (the spec's, with the input's initializer).
      hooks: the caller's SessionRunHooks.
      listeners: the caller's CheckpointSaverListeners.
      loop: a step_loop.TrainLoop, or None for one step per session call.
      examples_per_step: the static batch size, or None (for the examples/sec log).

    Returns:
      The TrainSession (the graph is finalized).
    """
    # tf.estimator's order: (the checkpoint saver,) the model_fn's chief-only
    # hooks, the caller's hooks, then the model_fn's training hooks.
    # tf.estimator puts the training loss in the LOSSES collection before the
    # hooks begin (hooks and a .meta file see it there).
    tf.add_to_collection(tf.GraphKeys.LOSSES, spec.loss)
    chief_hooks = list(spec.training_chief_hooks) if config.is_chief else []
    all_hooks = chief_hooks + list(hooks) + list(spec.training_hooks)
    checkpoints = summaries = None
    if config.is_chief:
        save_steps, save_secs = config.save_checkpoints_steps, config.save_checkpoints_secs
        saver_hooks = [h for h in all_hooks if isinstance(h, tf.train.CheckpointSaverHook)]
        if saver_hooks:
            # As tf.estimator: a CheckpointSaverHook of the caller's or the model_fn's
            # saves instead of the Estimator, and the listeners join the first one's.
            add_saver_listeners(saver_hooks[0], listeners)
            save_steps = save_secs = None
            listeners = ()
        checkpoints = periodic.CheckpointSaver(periodic.CheckpointPolicy(
            model_dir, save_steps, save_secs, listeners,
            config.checkpoint_save_graph_def, estimator_name))
    if _writes_train_summaries(config, runner.is_collective):
        summaries = periodic.TrainSummaries(
            model_dir, config.save_summary_steps, spec.loss)
    progress = periodic.ReportProgress(
        config.log_step_count_steps, spec.loss, summaries=summaries,
        examples_per_step=examples_per_step)
    return TrainSession(
        global_step=global_step, train_op=spec.train_op, loss=spec.loss,
        scaffold=scaffold, hooks=all_hooks, master=config.master,
        session_config=runner.session_config(config.session_config),
        is_chief=config.is_chief,
        checkpoints=checkpoints, summaries=summaries, progress=progress,
        restore_dir=model_dir if runner.workers_hold_variables else None,
        session_creation_timeout_secs=_creation_timeout(config), loop=loop,
        watchdog=(collective_watchdog.for_config(config, model_dir,
                                                 _creation_timeout(config))
                  if runner.is_collective else None),
        before_finalize_fn=lambda: periodic.add_default_saver(
            scaffold, config.keep_checkpoint_max,
            config.keep_checkpoint_every_n_hours))


def _writes_train_summaries(config, is_collective):
    """Whether this task writes the training summaries and step rate to model_dir.

    The chief does, except beside a legacy master with workers (between-graph
    replication): the master also evaluates, so worker 0 writes them, as with
    tf.estimator.
    """
    cluster = config.cluster_spec
    jobs = cluster.jobs if cluster else ()
    if (roles.MASTER in jobs and roles.WORKER in jobs
            and not is_collective):
        return config.task_type == roles.WORKER and config.task_id == 0
    return config.is_chief


def _creation_timeout(config):
    """RunConfig.session_creation_timeout_secs; None waits for the chief without end
    (as tf.estimator's SessionManager does)."""
    timeout = config.session_creation_timeout_secs
    return float("inf") if timeout is None else timeout

