"""Cut the learning rate when the validation metric stops improving.

    plateau = ReduceLearningRateOnPlateau(metric_name="loss", factor=0.5, patience=3)

    def model_fn(features, labels, mode):
        ...
        learning_rate = plateau.learning_rate(0.01)    # base rate times the factor
        optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate)
        ...

    train_spec = TrainSpec(input_fn, hooks=[plateau.make_hook(estimator)])

The factor is a non-trainable variable, `learning_rate_scale`, on the ps in a cluster,
so every worker trains with the same rate. It is checkpointed, so cuts survive a
restart. The chief's hook reads new evaluations from the eval dir; after `patience`
evaluations in a row without an improvement of more than `min_delta` it multiplies the
factor by `factor` (not below `min_scale`), logs it, and optionally restores the model
variables of the best evaluated checkpoint. The rate is written as the summary
`learning_rate`.
"""


from estimator_lite._engine import model_dir as model_dir_lib
from estimator_lite._engine import validation
from estimator_lite._engine.event_files import read_eval_metrics
from estimator_lite._engine.timer import check_schedule, schedule_timer
from estimator_lite._engine.train_session import NOT_RESTORED
from estimator_lite._tf import logging, tf

__all__ = ["ReduceLearningRateOnPlateau"]

_SCALE_NAME = "learning_rate_scale"
_MODES = ("min", "max")


def _scale_variable():
    with tf.variable_scope(tf.VariableScope(reuse=tf.AUTO_REUSE, name="")):
        return tf.get_variable(_SCALE_NAME, shape=[], dtype=tf.float32, trainable=False,
                               initializer=tf.ones_initializer())


class ReduceLearningRateOnPlateau:
    """Multiplies the learning rate by `factor` after `patience` bad evaluations."""

    def __init__(self, metric_name="loss", mode="min", factor=0.5, patience=3,
                 min_delta=0.0, min_scale=0.0, restore_best=False, eval_name=None,
                 run_every_secs=None, run_every_steps=100):
        """Validates the arguments.

        Args:
          metric_name: the eval metric to watch.
          mode: 'min' (lower is better, e.g. loss) or 'max' (e.g. accuracy).
          factor: multiplier in (0, 1) applied at each cut.
          patience: evaluations without improvement before a cut.
          min_delta: an improvement must be larger than this.
          min_scale: the factor never goes below this.
          restore_best: after a cut, restore the model variables of the best
            evaluated checkpoint (not the global step), if it still exists.
          eval_name: the EvalSpec name (eval dir `eval_<name>`), None for `eval`.
          run_every_secs: how often the chief reads the evals, in seconds
            (exactly one of the two).
          run_every_steps: the same in steps.

        Raises:
          ValueError / TypeError: a bad argument, named in the message.
        """
        if mode not in _MODES:
            raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")
        validation.check_number("factor", factor)
        if not 0 < factor < 1:
            raise ValueError(f"factor must be in (0, 1), got {factor!r}")
        self.metric_name = metric_name
        self.mode = mode
        self.factor = float(factor)
        self.patience = validation.check_int("patience", patience, 1)
        self.min_delta = validation.check_number("min_delta", min_delta, 0)
        self.min_scale = validation.check_number("min_scale", min_scale, 0)
        self.restore_best = bool(restore_best)
        self.eval_name = eval_name
        check_schedule(run_every_secs, run_every_steps)
        self.schedule_args = (run_every_secs, run_every_steps)

    def learning_rate(self, base_learning_rate):
        """The learning rate to give the optimizer: base times the current factor."""
        rate = tf.multiply(tf.cast(base_learning_rate, tf.float32), _scale_variable(),
                           name="scaled_learning_rate")  # the summary owns the tag
        tf.summary.scalar("learning_rate", rate)
        return rate

    def make_hook(self, estimator):
        """The hook for this task: the chief cuts the rate; others need nothing."""
        if not estimator.config.is_chief:
            return tf.train.SessionRunHook()
        return _PlateauHook(self, estimator)

    def improved(self, value, best):
        """Whether `value` beats `best` by more than min_delta."""
        if best is None:
            return True
        if self.mode == "min":
            return value < best - self.min_delta
        return value > best + self.min_delta


class _PlateauHook(tf.train.SessionRunHook):
    """Chief-side: follows the eval history and assigns the new factor."""

    def __init__(self, plateau, estimator):
        self._plateau = plateau
        self._estimator = estimator
        self._timer = schedule_timer(*plateau.schedule_args)
        self._eval_dir = estimator.eval_dir(plateau.eval_name)
        self._best = self._best_step = None
        self._bad_evals = 0
        self._seen_step = -1
        self._scale = 1.0
        self.cuts = []  # (global step of the evaluation, new factor)

    def begin(self):
        self._variable = _scale_variable()
        self._new_scale = tf.placeholder(tf.float32, [], name="new_learning_rate_scale")
        self._assign = tf.assign(self._variable, self._new_scale)
        self._saver = None
        if self._plateau.restore_best:
            skip = {id(v) for v in tf.get_collection(NOT_RESTORED)}
            skip |= {id(self._variable), id(tf.train.get_global_step())}
            self._saver = tf.train.Saver(
                [v for v in tf.global_variables() if id(v) not in skip], sharded=True)

    def after_create_session(self, session, coord):
        self._scale = float(session.run(self._variable))
        # Earlier evaluations are history: their cuts are already in the restored
        # factor, so replay them without cutting again.
        for step, value in self._new_evaluations():
            self._observe(step, value)
        self._timer.start()

    def _new_evaluations(self):
        history = read_eval_metrics(self._eval_dir)
        fresh = []
        for step, metrics in history.items():
            if step <= self._seen_step:
                continue
            if self._plateau.metric_name not in metrics:
                raise ValueError(f"metric {self._plateau.metric_name!r} is not in the "
                                 f"evaluation at step {step}; it has {sorted(metrics)}")
            fresh.append((step, metrics[self._plateau.metric_name]))
            self._seen_step = step
        return fresh

    def _observe(self, step, value):
        """Updates best/bad counts; returns True when a cut is due."""
        if self._plateau.improved(value, self._best):
            self._best, self._best_step, self._bad_evals = value, step, 0
            return False
        self._bad_evals += 1
        if self._bad_evals >= self._plateau.patience:
            self._bad_evals = 0
            return True
        return False

    def after_run(self, run_context, run_values):
        if not self._timer.tick():
            return
        for step, value in self._new_evaluations():
            if self._observe(step, value):
                self._cut(run_context.session, step)

    def _cut(self, session, step):
        new_scale = max(self._scale * self._plateau.factor, self._plateau.min_scale)
        if self._saver is not None and self._best_step is not None:
            best = model_dir_lib.checkpoint_path(self._estimator.model_dir,
                                                 self._best_step)
            if model_dir_lib.checkpoint_exists(best):
                logging.info("Restoring the best checkpoint %s", best)
                self._saver.restore(session, best)
        session.run(self._assign, {self._new_scale: new_scale})
        logging.info("%s did not improve for %d evaluations (best %s at step %d): "
                     "learning rate factor %.4g -> %.4g", self._plateau.metric_name,
                     self._plateau.patience, self._best, self._best_step, self._scale,
                     new_scale)
        self._scale = new_scale
        self.cuts.append((step, new_scale))
