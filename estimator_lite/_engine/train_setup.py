"""Setting up a train() call: its arguments, and the TrainSession its RunConfig asks for.

The Estimator builds the training graph (input_fn, model_fn, warm start); this
module adds what runs around it, as tf.estimator's default training hooks and its
MonitoredTrainingSession arguments did: the hook order, the checkpoint saver, the
training summaries, the step rate and progress log, the session options, and the
parts a TrainSession is handed: the step (`train_step`), what a failed step does
(`failure_handling`, from the task's `topology`) and the session creator.
"""

from estimator_lite._engine import (
    collective_watchdog,
    failure_handling,
    roles,
    session_creation,
    topology,
    train_step,
)
from estimator_lite._engine import periodic_actions as periodic
from estimator_lite._engine.train_session import TrainSession, check_train_args
from estimator_lite._tf import add_saver_listeners, logging, tf

__all__ = ["check_args", "reached_while_building", "train_session"]

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


def check_args(config, steps, max_steps, hooks, saving_listeners):
    """Checks a train() call's arguments and the task it runs as.

    Args:
      config: the Estimator's RunConfig (its task, its checkpoint schedule).
      steps, max_steps, hooks, saving_listeners: train()'s arguments.

    Returns:
      (hooks, listeners) as tuples (train_session.check_train_args).

    Raises:
      ValueError: the task is an evaluator or a ps (as tf.estimator), or an
        argument breaks a rule (worded as ours and tf.estimator's).
      TypeError: a hook or listener of the wrong type.
    """
    if config.task_type in (roles.EVALUATOR, roles.PS):
        raise ValueError(f"train() cannot run as task type {config.task_type!r} (an "
                         "evaluator or ps does not train); use "
                         "train_and_evaluate, which runs each role's job")
    checkpoints_off = config.is_chief and not (config.save_checkpoints_steps
                                               or config.save_checkpoints_secs)
    try:
        return check_train_args(steps, max_steps, hooks, saving_listeners,
                                checkpoints_off=checkpoints_off)
    except (TypeError, ValueError) as e:
        for start, wording in _TRAIN_ARGS_WORDING:
            if str(e).startswith(start):
                raise type(e)(f"{e} ({wording})") from None
        raise


def reached_while_building(config, current_step, max_steps):
    """Whether a non-chief task's max_steps was reached while it built its graph.

    A worker that starts late (a loaded machine, a slow input pipeline) can
    finish building after the chief's final checkpoint. It then skips creating
    a session that would run no step: TF 1.15's Session.close() on such a
    session was seen to hang forever on a loaded machine. tf.estimator's worker
    would create the session and stop at once; either way no step runs.

    Args:
      config: the Estimator's RunConfig.
      current_step: the latest checkpoint's step (0 without one).
      max_steps: train()'s max_steps, or None.
    """
    if max_steps is None or config.is_chief or current_step < max_steps:
        return False
    logging.info("Skipping training: max_steps=%d reached (by the chief) while "
                 "this task built its graph.", max_steps)
    return True


def train_session(config, model_dir, estimator_name, runner, *, global_step, spec,
                  scaffold, hooks, listeners, loop, examples_per_step):
    """The TrainSession that runs a built training graph as `config` asks.

    Its parts are chosen here, once: the step (one step or a K-step loop per
    session call), the failure handling (`topology`: recreate the session, or end
    a collective job), the session creator, the periodic actions.

    Args:
      config: the Estimator's RunConfig.
      model_dir: the Estimator's model_dir.
      estimator_name: the Estimator's class name (for a mismatched checkpoint's hint).
      runner: the `runner` that built the graph (its session options).
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
    cluster = topology.for_config(config)
    # tf.estimator's order: (the checkpoint saver,) the model_fn's chief-only
    # hooks, the caller's hooks, then the model_fn's training hooks.
    # tf.estimator puts the training loss in the LOSSES collection before the
    # hooks begin (hooks and a .meta file see it there).
    tf.add_to_collection(tf.GraphKeys.LOSSES, spec.loss)
    chief_hooks = list(spec.training_chief_hooks) if cluster.is_chief else []
    all_hooks = chief_hooks + list(hooks) + list(spec.training_hooks)
    checkpoints = periodic.CheckpointSaver()  # a task other than the chief saves none
    if cluster.is_chief:
        checkpoints = _checkpoint_saver(config, model_dir, estimator_name, all_hooks,
                                        listeners)
    summaries = None
    if cluster.writes_summaries:
        summaries = periodic.TrainSummaries(
            model_dir, config.save_summary_steps, spec.loss)
    progress = periodic.ReportProgress(
        config.log_step_count_steps, spec.loss, summaries=summaries,
        examples_per_step=examples_per_step)
    session_config = runner.session_config(config.session_config)
    sessions = session_creation.SessionCreator(
        graph=tf.get_default_graph(), scaffold=scaffold, global_step=global_step,
        master=cluster.master, session_config=session_config,
        is_chief=cluster.is_chief,
        restore_dir=model_dir if cluster.workers_hold_variables else None,
        checkpoints=checkpoints, creation_timeout_secs=_creation_timeout(config))
    if cluster.failure_ends_job:
        failures = failure_handling.EndCollectiveJob(collective_watchdog.for_config(
            config, model_dir, _creation_timeout(config)))
    else:
        failures = failure_handling.RecreateSession(cluster.master, session_config)
    # The step guard goes into the graph after the periodic actions' ops.
    if loop is None:
        steps = train_step.SingleStep(global_step, spec.train_op, spec.loss)
    else:
        steps = train_step.LoopStep(loop, global_step, spec.train_op, spec.loss)
    return TrainSession(
        global_step=global_step, scaffold=scaffold, steps=steps, failures=failures,
        sessions=sessions, hooks=all_hooks, checkpoints=checkpoints,
        actions=periodic.StepActions(summaries, progress),
        before_finalize_fn=lambda: periodic.add_default_saver(
            scaffold, config.keep_checkpoint_max,
            config.keep_checkpoint_every_n_hours))


def _checkpoint_saver(config, model_dir, estimator_name, hooks, listeners):
    """The chief's CheckpointSaver, saving as `config` asks.

    As tf.estimator: a CheckpointSaverHook of the caller's or the model_fn's (in
    `hooks`) saves instead of the Estimator, and the listeners join the first one's.
    """
    save_steps, save_secs = config.save_checkpoints_steps, config.save_checkpoints_secs
    saver_hooks = [h for h in hooks if isinstance(h, tf.train.CheckpointSaverHook)]
    if saver_hooks:
        add_saver_listeners(saver_hooks[0], listeners)
        save_steps = save_secs = None
        listeners = ()
    return periodic.CheckpointSaver(periodic.CheckpointPolicy(
        model_dir, save_steps, save_secs, listeners,
        config.checkpoint_save_graph_def, estimator_name))


def _creation_timeout(config):
    """RunConfig.session_creation_timeout_secs; None waits for the chief without end
    (as tf.estimator's SessionManager does)."""
    timeout = config.session_creation_timeout_secs
    return float("inf") if timeout is None else timeout
