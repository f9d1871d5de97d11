"""Warm-start settings: which variables a new model takes from another checkpoint."""

import collections
import os

from estimator_lite._tf import logging, tf

__all__ = ["VocabInfo", "WarmStartSettings", "apply", "settings_from_path"]

# Vocabulary remapping for warm starts (tf.estimator re-exported TF's own class).
VocabInfo = tf.train.VocabInfo


class WarmStartSettings(collections.namedtuple("WarmStartSettings", [
        "ckpt_to_initialize_from", "vars_to_warm_start", "var_name_to_vocab_info",
        "var_name_to_prev_var_name"])):
    """Where and which variables to warm-start from (as TF Estimator's)."""

    def __new__(cls, ckpt_to_initialize_from, vars_to_warm_start=".*",
                var_name_to_vocab_info=None, var_name_to_prev_var_name=None):
        if not isinstance(ckpt_to_initialize_from, (str, bytes, os.PathLike)):
            raise TypeError("ckpt_to_initialize_from must be a path, got "
                            f"{ckpt_to_initialize_from!r}")
        return super().__new__(cls, os.fspath(ckpt_to_initialize_from),
                               vars_to_warm_start, var_name_to_vocab_info or {},
                               var_name_to_prev_var_name or {})


def settings_from_path(path):
    """The WarmStartSettings of an Estimator's `warm_start_from` path: every
    trainable variable from that checkpoint (directory or file prefix), or from the
    variables of the SavedModel in that directory (as tf.estimator: e.g. the bytes
    path `export_saved_model` returns).

    Args:
      path: str, bytes or os.PathLike.

    Returns:
      A WarmStartSettings.
    """
    text = os.fsdecode(path)
    variables_prefix = os.path.join(text, "variables", "variables")
    if tf.io.gfile.exists(variables_prefix + ".index"):
        logging.info("Warm-starting from the SavedModel in %s", text)
        return WarmStartSettings(variables_prefix)
    return WarmStartSettings(path)


def apply(settings, latest_checkpoint):
    """Warm-starts the current graph's variables, unless model_dir has a checkpoint
    (restoring the model's own checkpoint wins over warm-starting).

    Args:
      settings: a WarmStartSettings.
      latest_checkpoint: the newest checkpoint in model_dir, or None.
    """
    if latest_checkpoint is not None:
        return
    logging.info("Warm-starting from %s", settings.ckpt_to_initialize_from)
    tf.train.warm_start(settings.ckpt_to_initialize_from, settings.vars_to_warm_start,
                        settings.var_name_to_vocab_info,
                        settings.var_name_to_prev_var_name)
