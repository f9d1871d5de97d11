"""The prediction loop: run the predictions batch by batch and yield them.

The Estimator builds the predict graph (input_fn, model_fn in PREDICT mode); this
module selects the requested prediction keys, runs the restored session with the
hooks until the input ends or a hook stops, and splits batches into examples.
"""

import numpy as np

from estimator_lite._engine import input_fn as input_fn_lib
from estimator_lite._engine.hook_protocol import RestoredSession, run_with_hooks
from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import logging, tf

__all__ = ["select_predictions", "run_predictions", "warn_if_endless"]


def warn_if_endless(features):
    """Warns when the input cannot run out: predict() would then yield forever."""
    if not input_fn_lib.ends(features):
        logging.warning("Input graph does not use tf.data.Dataset or contain a "
                        "QueueRunner: predict() yields forever (the input never runs "
                        "out), which is probably a mistake.")


def select_predictions(predictions, predict_keys):
    """The predictions named by `predict_keys` (all of them when None).

    As tf.estimator 2.15: in the predictions' order, and keys that name no
    prediction are left out as long as one does.

    Raises:
      ValueError: predict_keys with non-dict predictions, or none of the keys
        names a prediction.
    """
    if predict_keys is None:
        return predictions
    if not isinstance(predictions, dict):
        raise ValueError("predict_keys argument is not valid in case of non-dict "
                         "predictions. (the model_fn returned "
                         f"{predictions!r}; predict_keys={predict_keys!r})")
    keys = [predict_keys] if isinstance(predict_keys, str) else list(predict_keys)
    selected = {k: v for k, v in predictions.items() if k in keys}
    if not selected:
        raise ValueError("Expected to run at least one output from "
                         f"{predictions.keys()}, provided {predict_keys}. "
                         f"(predict_keys {keys} name none of the predictions "
                         f"{sorted(predictions)})")
    return selected


def run_predictions(spec, *, predict_keys, input_initializer, hooks, checkpoint_path,
                    session_config, master, yield_single_examples):
    """Yields a PREDICT spec's predictions from the current (complete) graph until the
    input ends.

    Args:
      spec: the model_fn's PREDICT EstimatorSpec (predictions, scaffold, hooks).
      predict_keys: the prediction names to fetch (`select_predictions`), or None.
      input_initializer: the input iterator's initializer, or None.
      hooks: the caller's SessionRunHooks (the spec's prediction hooks follow).
      checkpoint_path: checkpoint to restore, or None to initialise.
      session_config: tf.ConfigProto of the session.
      master: session target.
      yield_single_examples: yield one example at a time (else whole batches).

    Yields:
      Single examples or batches, as `predictions` is shaped.

    Raises:
      ValueError: single examples asked for but the batch sizes differ.
    """
    predictions = select_predictions(spec.predictions, predict_keys)
    scaffold = input_fn_lib.scaffold_with_input(spec.scaffold, input_initializer)
    hooks = list(hooks) + list(spec.prediction_hooks)
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
        differing = next(key for key, size in sizes.items()
                         if size is None or size != next(iter(sizes.values())))
        raise ValueError(f"Batch length of predictions should be same. {differing} "
                         "has different batch length than others. "
                         "(yield_single_examples=True needs every prediction to have "
                         f"the same batch size (dimension 0); got {sizes}; "
                         "yield_single_examples=False yields the batches as they are)")
    keys = tuple(batch)
    # zip over the arrays builds each example's dict without per-key indexing.
    for values in zip_strict(*batch.values()):
        yield dict(zip_strict(keys, values))
