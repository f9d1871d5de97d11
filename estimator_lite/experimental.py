"""tf.estimator.experimental's names: early stopping, two hooks, the RNN estimators,
LinearSDCA, the supervised receiver for train/eval SavedModels."""

from estimator_lite._engine.fn_args import call_with_declared_args
from estimator_lite._tf import tf
from estimator_lite.canned.linear_sdca import LinearSDCA
from estimator_lite.canned.rnn import RNNClassifier, RNNEstimator
from estimator_lite.early_stopping import (
    make_early_stopping_hook,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)
from estimator_lite.export.receivers import build_raw_supervised_input_receiver_fn
from estimator_lite.hooks import InMemoryEvaluatorHook, make_stop_at_checkpoint_step_hook

__all__ = ["InMemoryEvaluatorHook", "LinearSDCA", "RNNClassifier", "RNNEstimator",
           "make_stop_at_checkpoint_step_hook", "call_logit_fn",
           "build_raw_supervised_input_receiver_fn",
           "make_early_stopping_hook", "stop_if_higher_hook", "stop_if_lower_hook",
           "stop_if_no_decrease_hook", "stop_if_no_increase_hook"]


def call_logit_fn(logit_fn, features, mode, params, config):
    """Calls `logit_fn` with the arguments it declares and checks its logits.

    Args:
      logit_fn: takes any of `features`, `mode`, `params`, `config`.
      features: what the model_fn received.
      mode: what the model_fn received.
      params: what the model_fn received.
      config: what the model_fn received.

    Returns:
      The logits: a Tensor, or a dict of str to Tensor (one per head).

    Raises:
      ValueError: logit_fn returned something else.
    """
    logits = call_with_declared_args(logit_fn, {
        "features": features, "mode": mode, "params": params, "config": config})
    values = logits.values() if isinstance(logits, dict) else [logits]
    if not values or not all(isinstance(v, tf.Tensor) for v in values):
        raise ValueError("logit_fn should return a Tensor or a dictionary mapping "
                         f"strings to Tensors.  logit_fn returned: {logits} (a Tensor "
                         "or a dict of str to Tensor is needed)")
    return logits
