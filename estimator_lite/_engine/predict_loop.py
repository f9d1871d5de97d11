"""The prediction loop: run the predictions batch by batch and yield them.

The Estimator builds the predict graph (input_fn, model_fn in PREDICT mode); this
module selects the requested prediction keys, runs the restored session with the
hooks until the input ends or a hook stops, and splits batches into examples.
"""

import numpy as np

from estimator_lite._engine.hook_protocol import RestoredSession, run_with_hooks
from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import tf

__all__ = ["select_predictions", "run_predictions"]


def select_predictions(predictions, predict_keys):
    """The predictions named by `predict_keys` (all of them when None).

    Raises:
      ValueError: predict_keys with non-dict predictions, or unknown keys.
    """
    if predict_keys is None:
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError("predict_keys needs the model_fn to return a dict of "
                         f"predictions; got {predictions!r}")
    keys = [predict_keys] if isinstance(predict_keys, str) else list(predict_keys)
    missing = [k for k in keys if k not in predictions]
    if missing:
        raise ValueError(f"predict_keys {missing} are not among the predictions "
                         f"{sorted(predictions)}")
    # In the model_fn's order, as tf.estimator filters them, not predict_keys'.
    return {k: v for k, v in predictions.items() if k in keys}


def run_predictions(*, predictions, scaffold, hooks, checkpoint_path, session_config,
                    master, yield_single_examples):
    """Yields predictions from the current (complete) graph until the input ends.

    Args:
      predictions: a tensor or dict of tensors to fetch per batch.
      scaffold: the predict Scaffold (saver, init ops, input initializer).
      hooks: SessionRunHooks (the caller's and the model_fn's prediction hooks).
      checkpoint_path: checkpoint to restore, or None to initialise.
      session_config: tf.ConfigProto of the session.
      master: session target.
      yield_single_examples: yield one example at a time (else whole batches).

    Yields:
      Single examples or batches, as `predictions` is shaped.

    Raises:
      ValueError: single examples asked for but the batch sizes differ.
    """
    with RestoredSession(scaffold, checkpoint_path, session_config, master,
                         hooks) as session:
        run_batch = session.make_callable(predictions)
        stop = False
        while not stop:
            try:
                batch, stop = run_with_hooks(session, hooks, predictions,
                                             fast_fn=run_batch)
            except tf.errors.OutOfRangeError:
                break
            if yield_single_examples:
                yield from _unbatch(batch)
            else:
                yield batch


def _unbatch(batch):
    """Splits a batch (array or dict of arrays) into single examples."""
    if not isinstance(batch, dict):
        yield from batch
        return
    sizes = {key: np.shape(value)[0] if np.ndim(value) else None
             for key, value in batch.items()}
    distinct = set(sizes.values())
    if len(distinct) != 1 or None in distinct:
        raise ValueError("yield_single_examples=True needs every prediction to have "
                         f"the same batch size (dimension 0); got {sizes}")
    keys = tuple(batch)
    # zip over the arrays builds each example's dict without per-key indexing.
    for values in zip_strict(*batch.values()):
        yield dict(zip_strict(keys, values))
