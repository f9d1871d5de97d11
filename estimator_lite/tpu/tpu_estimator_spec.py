"""`TPUEstimatorSpec`: what a TPUEstimator model_fn returns, and its CPU/GPU form.

On CPU/GPU tf.estimator turned a TPUEstimatorSpec into an EstimatorSpec before
running it; `as_estimator_spec()` does the same here:
- `eval_metrics=(metric_fn, tensors)` becomes `eval_metric_ops=metric_fn(*tensors)`
  (or `metric_fn(**tensors)` for a dict);
- `scaffold_fn()` is called for the Scaffold (where BERT-style code calls
  `tf.compat.v1.train.init_from_checkpoint`);
- `host_call=(fn, tensors)` calls `fn` once and runs what it returns with every
  train and eval step (a hook added to the training, evaluation and prediction hooks,
  as tf.estimator did).
"""

import collections
import inspect

from estimator_lite._tf import tensorboard_hint, tf
from estimator_lite.model_fn import EstimatorSpec

__all__ = ["TPUEstimatorSpec"]

_FIELDS = ("mode", "predictions", "loss", "train_op", "eval_metrics", "export_outputs",
           "scaffold_fn", "host_call", "training_hooks", "evaluation_hooks",
           "prediction_hooks")


def _check_host_call(name, host_call):
    """Checks a `(fn, tensors)` pair as tf.estimator did.

    Raises:
      ValueError: not a 2-sequence, or tensors not a list/tuple/dict.
      TypeError: fn is not callable.
      RuntimeError: a list of tensors does not match fn's positional arguments
        (tf.estimator's error type for this case).
    """
    if not isinstance(host_call, (tuple, list)):
        raise ValueError(f"{name} should be tuple or list of (fn, tensors), got "
                         f"{host_call!r}")
    if len(host_call) != 2:
        raise ValueError(f"{name} should have two elements (fn, tensors), got "
                         f"{len(host_call)}")
    fn, tensors = host_call
    if not callable(fn):
        raise TypeError(f"{name}[0] should be callable, got {fn!r}")
    if not isinstance(tensors, (tuple, list, dict)):
        raise ValueError(f"{name}[1] should be tuple or list, or dict, got {tensors!r}")
    if isinstance(tensors, (tuple, list)):
        params = inspect.signature(fn).parameters.values()
        if not any(p.kind == p.VAR_POSITIONAL for p in params):
            count = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                        for p in params)
            if count != len(tensors):
                raise RuntimeError(
                    f"In TPUEstimatorSpec.{name}, length of tensors {len(tensors)} does "
                    f"not match method args of the function, which takes {count}.")


def _call_host_fn(host_call):
    fn, tensors = host_call
    with tensorboard_hint():  # host_calls write TF2 summaries
        if isinstance(tensors, dict):
            return fn(**tensors)
        return fn(*tensors)


def _hooks(name, hooks):
    hooks = tuple(hooks or ())
    for hook in hooks:
        if not isinstance(hook, tf.train.SessionRunHook):
            raise TypeError(f"All hooks must be SessionRunHook instances; {name} has "
                            f"{hook!r}")
    return hooks


class _HostCallHook(tf.train.SessionRunHook):
    """Runs the ops a `host_call` returned with every step (CPU/GPU host_call).

    Summary writers the host_call created (`tf.summary.create_file_writer` in graph
    mode) are initialised when the session is created.
    """

    def __init__(self, fetches):
        self._fetches = fetches
        self._writer_init = None

    def begin(self):
        self._writer_init = tf.get_collection(_SUMMARY_WRITER_INIT_COLLECTION)

    def after_create_session(self, session, coord):
        del coord
        if self._writer_init:
            session.run(self._writer_init)

    def before_run(self, run_context):
        if self._fetches is None:
            return None
        return tf.train.SessionRunArgs(self._fetches)

    def fold_into(self, train_op):
        """`train_op` also running the host ops, which this hook then leaves out.

        Inside a multi-step loop nothing of the step can be fetched from outside:
        the host ops run with every step of the loop as part of its train op.
        """
        fetches, self._fetches = self._fetches, None
        if not tf.nest.flatten(fetches):
            return train_op
        return tf.group(train_op, *tf.nest.flatten(fetches))


# Where TF's graph-mode `tf.summary.create_file_writer` registers its initializer
# (the key tf.contrib.summary.summary_writer_initializer_op read since TF 1.x).
_SUMMARY_WRITER_INIT_COLLECTION = "_SUMMARY_WRITER_V2"


class TPUEstimatorSpec(collections.namedtuple("TPUEstimatorSpec", _FIELDS)):
    """Ops and objects a TPUEstimator model_fn returns (tf.estimator 2.15's fields).

    `eval_metrics` is `(metric_fn, tensors)`: tensors a list (passed positionally)
    or a dict (passed by keyword); metric_fn returns a dict of metric name to
    `(value, update_op)` or a Keras Metric. `scaffold_fn` takes no argument and
    returns a Scaffold (or None). `host_call` is `(fn, tensors)` like eval_metrics,
    fn returning ops to run each step.
    """

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metrics=None,
                export_outputs=None, scaffold_fn=None, host_call=None, training_hooks=None,
                evaluation_hooks=None, prediction_hooks=None):
        """Validates eval_metrics, host_call and the hooks (the rest in EstimatorSpec).

        Raises:
          ValueError / TypeError / RuntimeError: see `_check_host_call`; TypeError
            for a hook that is not a SessionRunHook or a non-callable scaffold_fn.
        """
        if eval_metrics is not None:
            _check_host_call("eval_metrics", eval_metrics)
        if host_call is not None:
            _check_host_call("host_call", host_call)
        if scaffold_fn is not None and not callable(scaffold_fn):
            raise TypeError(f"scaffold_fn must be callable or None, got {scaffold_fn!r}")
        return super().__new__(
            cls, mode, predictions, loss, train_op, eval_metrics, export_outputs,
            scaffold_fn, host_call, _hooks("training_hooks", training_hooks),
            _hooks("evaluation_hooks", evaluation_hooks),
            _hooks("prediction_hooks", prediction_hooks))

    def as_estimator_spec(self, host_ops_in_train_op=False):
        """The equivalent EstimatorSpec, run on CPU/GPU (builds metric and host ops).

        Args:
          host_ops_in_train_op: the host_call's ops run as part of the train op
            rather than fetched by a hook (for multi-step loops).

        Returns:
          An estimator_lite EstimatorSpec.
        """
        eval_metric_ops = (_call_host_fn(self.eval_metrics)
                           if self.eval_metrics is not None else None)
        hooks = ()
        if self.host_call is not None:
            hooks = (_HostCallHook(_call_host_fn(self.host_call)),)
        scaffold = self.scaffold_fn() if self.scaffold_fn is not None else None
        train_op = self.train_op
        if host_ops_in_train_op and hooks and train_op is not None:
            train_op = hooks[0].fold_into(train_op)
        return EstimatorSpec(
            mode=self.mode, predictions=self.predictions, loss=self.loss,
            train_op=train_op, eval_metric_ops=eval_metric_ops,
            export_outputs=self.export_outputs, scaffold=scaffold,
            training_hooks=self.training_hooks + hooks,
            evaluation_hooks=self.evaluation_hooks + hooks,
            prediction_hooks=self.prediction_hooks + hooks)
