"""Writing SavedModels: signature maps, timestamped export dirs, atomic writes."""

import os
import time

from estimator_lite._engine import model_dir, validation
from estimator_lite._tf import logging, tf
from estimator_lite.export import outputs, receivers

__all__ = ["build_signature_defs", "export_modes", "export_saved_model",
           "mode_signature_defs",
           "make_export_dir", "write_atomically",
           "export_to_new_dir", "SavedModelWriter", "MODE_TAGS", "TRAIN_OP_COLLECTION",
           "copy_assets_extra", "main_op", "restoring_saver",
           "remove_stale_temp_dirs"]


def build_signature_defs(export_outputs, receiver_tensors, alternatives=None):
    """Builds the SignatureDef map for a SavedModel, as tf.estimator does.

    An output that cannot be served from its inputs (a Classify or Regress
    signature over raw tensors, or outputs that need a placeholder the inputs do
    not feed) is left out with a log line; an export may end with no signature
    (a warning), as tf.estimator's does.

    Args:
      export_outputs: dict of signature name to ExportOutput (with a default key).
      receiver_tensors: dict of input name to Tensor.
      alternatives: optional dict of alternative name to receiver tensors dict; each
        adds signatures named ``<alternative>:<output name>``.

    Returns:
      A dict of signature name to SignatureDef.
    """
    candidates = [(name, output, receiver_tensors)
                  for name, output in export_outputs.items()]
    for alt_name, alt_tensors in (alternatives or {}).items():
        candidates += [(f"{alt_name}:{name}", output, alt_tensors)
                       for name, output in export_outputs.items()]
    signatures = {}
    for name, output, tensors in candidates:
        try:
            signature = output.as_signature_def(tensors)
            _check_servable(name, tensors, signature)
        except ValueError as error:
            logging.info("Signature %r is left out of the export (TF Serving could "
                         "not serve it): %s", name, error)
            continue
        signatures[name] = signature
    default_key = tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
    if not signatures:
        logging.warning("Export includes no signatures!")
    elif default_key not in signatures:
        logging.warning("Export includes no default signature!")
    return signatures


def _check_servable(name, receiver_tensors, signature):
    """Raises ValueError when the signature's outputs need a placeholder that is
    not one of its inputs (a client could not feed it)."""
    inputs = {t.name for t in tf.nest.flatten(receiver_tensors, expand_composites=True)}
    graph = tf.get_default_graph()
    pending = [graph.get_tensor_by_name(info.name).op
               for info in signature.outputs.values() if info.name]
    seen = set()
    while pending:
        op = pending.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        if op.type in ("Placeholder", "PlaceholderV2") and not all(
                out.name in inputs for out in op.outputs):
            raise ValueError(f"the outputs of signature {name!r} depend on placeholder "
                             f"{op.name!r}, which is not one of its inputs "
                             f"{sorted(inputs)}")
        pending.extend(t.op for t in op.inputs if t.name not in inputs)


# The modes a SavedModel can hold, in the order their MetaGraphs are written (the
# first one carries the variables, as in tf.estimator).
_EXPORT_MODE_ORDER = ("train", "eval", "infer")
_SUPERVISED_OUTPUTS = {"train": outputs.TrainOutput, "eval": outputs.EvalOutput}


def export_modes(input_receiver_fn_map):
    """The modes of an `input_receiver_fn_map`, in writing order.

    Raises:
      TypeError: not a dict, or a receiver fn that is not callable.
      ValueError: an unknown mode, or no mode at all.
    """
    if not isinstance(input_receiver_fn_map, dict):
        raise TypeError("input_receiver_fn_map must be a dict of ModeKeys to receiver "
                        f"functions, got {input_receiver_fn_map!r}")
    unknown = [m for m in input_receiver_fn_map if m not in _EXPORT_MODE_ORDER]
    if unknown or not input_receiver_fn_map:
        raise ValueError(f"input_receiver_fn_map must have keys among "
                         f"{list(_EXPORT_MODE_ORDER)} (ModeKeys), got "
                         f"{list(input_receiver_fn_map)}")
    for mode, receiver_fn in input_receiver_fn_map.items():
        validation.check_callable(f"input_receiver_fn_map[{mode!r}]", receiver_fn)
    return [m for m in _EXPORT_MODE_ORDER if m in input_receiver_fn_map]


def mode_signature_defs(mode, spec, receiver):
    """The SignatureDefs of one mode's MetaGraph (tf.estimator's keys and names).

    Serving: one per `spec.export_outputs` entry. Train and eval: one named after
    the mode, with the loss, predictions and metrics as outputs.

    Raises:
      TypeError: the receiver does not fit the mode (serving needs a
        ServingInputReceiver; train and eval a SupervisedInputReceiver).
    """
    if mode == "infer":
        if not isinstance(receiver, receivers.SERVING_RECEIVER_TYPES):
            raise TypeError("serving_input_receiver_fn must return a "
                            f"ServingInputReceiver, got {receiver!r}")
        return build_signature_defs(spec.export_outputs, receiver.receiver_tensors,
                                    receiver.receiver_tensors_alternatives)
    if not isinstance(receiver, receivers.SupervisedInputReceiver):
        raise TypeError(f"the {mode!r} receiver fn must return a "
                        "SupervisedInputReceiver (see experimental."
                        f"build_raw_supervised_input_receiver_fn), got {receiver!r}")
    output = _SUPERVISED_OUTPUTS[mode](loss=spec.loss, predictions=spec.predictions,
                                       metrics=spec.eval_metric_ops)
    return {mode: output.as_signature_def(receiver.receiver_tensors)}


def make_export_dir(export_dir_base):
    """Returns a new `<export_dir_base>/<unix seconds>` path, newer than every export.

    When exports land faster than one a second the timestamp is bumped instead of
    waiting, so it can run ahead of the clock; the next one must still be greater
    than every existing one (also those written ahead, or being written as
    ``temp-<stamp>``), or garbage collection, which keeps the largest, would delete
    the newest export.
    """
    stamp = int(time.time())
    if tf.io.gfile.isdir(export_dir_base):
        taken = [int(name.rstrip("/").rsplit("-", 1)[-1])
                 for name in tf.io.gfile.listdir(export_dir_base)
                 if model_dir.is_export_timestamp(name)
                 or model_dir.is_stale_export_temp(name)]
        stamp = max([stamp] + [t + 1 for t in taken])
    return os.path.join(export_dir_base, str(stamp))


def write_atomically(final_dir, write_fn):
    """Runs `write_fn(temp_dir)` and renames temp_dir to `final_dir` on success.

    The temp dir sits beside `final_dir` (named ``temp-<name>``) so the rename
    stays on one file system; a failed write removes only that temp dir.

    Args:
      final_dir: destination directory; must not exist yet.
      write_fn: callable writing the full content into the directory it is given.

    Returns:
      `final_dir`.
    """
    parent, name = os.path.split(final_dir)
    temp_dir = os.path.join(parent, f"{model_dir.TEMP_EXPORT_PREFIX}{name}")
    tf.io.gfile.makedirs(parent)
    try:
        write_fn(temp_dir)
        tf.io.gfile.rename(temp_dir, final_dir)
    except BaseException:
        if tf.io.gfile.exists(temp_dir):
            logging.warning("Export to %s failed; removing %s", final_dir, temp_dir)
            tf.io.gfile.rmtree(temp_dir)
        raise
    return final_dir


def export_to_new_dir(export_dir_base, write_fn, assets_extra=None):
    """Writes a new timestamped export under `export_dir_base`, atomically.

    Args:
      export_dir_base: parent directory of the timestamped export dirs.
      write_fn: writes the SavedModel into the (temp) directory it is given.
      assets_extra: dict of destination path (under assets.extra) to source.

    Returns:
      The export directory path (str).
    """
    export_dir = make_export_dir(export_dir_base)

    def write(temp_dir):
        write_fn(temp_dir)
        copy_assets_extra(temp_dir, assets_extra)

    write_atomically(export_dir, write)
    logging.info("Exported SavedModel to %s", export_dir)
    return export_dir


# The MetaGraph tags of each mode's graph (tf.estimator's: ModeKeys values are
# "train", "eval", "infer") and the collection naming a train graph's train op.
MODE_TAGS = {"train": ["train"], "eval": ["eval"], "infer": ["serve"]}
TRAIN_OP_COLLECTION = "saved_model_train_op"


def export_saved_model(export_dir_base, receiver_fn_map, spec_fn, new_graph_fn,
                       checkpoint_path, session_config, assets_extra, as_text,
                       strip_default_attrs):
    """Writes one SavedModel with a MetaGraph per mode in a new timestamped dir.

    Args:
      export_dir_base: parent of the timestamped export dirs.
      receiver_fn_map: {ModeKeys: receiver fn} (see `export_modes`).
      spec_fn: callable(mode, receiver) building the mode's graph in the current
        graph; returns its EstimatorSpec.
      new_graph_fn: returns a new tf.Graph for one mode.
      checkpoint_path: the checkpoint whose variables are exported.
      session_config: tf.ConfigProto of the sessions that restore it.
      assets_extra: dict of destination path (under assets.extra) to source.
      as_text: write the SavedModel proto as text.
      strip_default_attrs: leave default-valued op attributes out.

    Returns:
      The export directory, as bytes (tf.estimator returned bytes, and programs
      call .decode() on it).
    """
    modes = export_modes(receiver_fn_map)

    def write(temp_dir):
        writer = SavedModelWriter(temp_dir, session_config, strip_default_attrs)
        for mode in modes:
            with new_graph_fn().as_default():
                receiver = receiver_fn_map[mode]()
                spec = spec_fn(mode, receiver)
                writer.add_current_graph(
                    MODE_TAGS[mode], mode_signature_defs(mode, spec, receiver),
                    spec.scaffold.saver, checkpoint_path, train_op=spec.train_op)
        writer.save(as_text)

    return os.fsencode(export_to_new_dir(os.fspath(export_dir_base), write,
                                         assets_extra))


def main_op():
    """The op a loaded SavedModel runs after the restore: local variables and tables.

    Built in the default graph; `predictor.from_estimator` runs the same op.
    """
    return tf.group(tf.local_variables_initializer(), tf.tables_initializer())


def restoring_saver(saver):
    """`saver` (a scaffold's), or a sharded Saver of every variable if it is None."""
    return saver or tf.train.Saver(sharded=True)


class SavedModelWriter:
    """Writes one SavedModel with a MetaGraph per mode; variables come with the first.

    Call `add_current_graph` inside each mode's graph (not finalized: the builder
    still adds ops), then `save`.
    """

    def __init__(self, export_dir, session_config, strip_default_attrs):
        """Args: export_dir: directory to write (the temp dir of `write_atomically`);
        session_config: tf.ConfigProto of the restoring sessions;
        strip_default_attrs: leave default-valued op attributes out of the graphs."""
        self._builder = tf.saved_model.Builder(export_dir)
        self._session_config = session_config
        self._strip_default_attrs = strip_default_attrs
        self._has_variables = False

    def add_current_graph(self, tags, signature_def_map, saver, checkpoint_path,
                          train_op=None):
        """Adds the default graph as a MetaGraph, restored from a checkpoint.

        Args:
          tags: the MetaGraph's tags (MODE_TAGS[mode]).
          signature_def_map: dict of signature name to SignatureDef.
          saver: the Saver restoring `checkpoint_path` (also the MetaGraph's
            saver), or None for a sharded Saver of every variable.
          checkpoint_path: the checkpoint whose values are exported; every graph
            is restored from it, so a graph needing a missing variable fails.
          train_op: a train graph's train op, kept in TRAIN_OP_COLLECTION.
        """
        init_op = main_op()
        saver = restoring_saver(saver)
        if train_op is not None:
            tf.add_to_collection(TRAIN_OP_COLLECTION, train_op)
        arguments = {
            "tags": tags, "signature_def_map": signature_def_map,
            "assets_collection": tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS),
            "main_op": init_op, "clear_devices": True,
            "strip_default_attrs": self._strip_default_attrs, "saver": saver}
        with tf.Session(config=self._session_config) as session:
            saver.restore(session, checkpoint_path)
            if self._has_variables:
                self._builder.add_meta_graph(**arguments)
            else:
                self._builder.add_meta_graph_and_variables(session, **arguments)
                self._has_variables = True

    def save(self, as_text):
        """Writes the SavedModel proto (as text if `as_text`)."""
        self._builder.save(as_text)


def copy_assets_extra(export_dir, assets_extra):
    """Copies `assets_extra` ({destination under assets.extra: source}) into export_dir."""
    if not assets_extra:
        return
    for dest, source in assets_extra.items():
        target = os.path.join(export_dir, "assets.extra", dest)
        tf.io.gfile.makedirs(os.path.dirname(target))
        tf.io.gfile.copy(source, target, overwrite=True)


def remove_stale_temp_dirs(export_dir_base):
    """Removes ``temp-<timestamp>`` dirs that a killed export left in `export_dir_base`.

    Call it only where no export into `export_dir_base` can be running (the
    evaluator at start: it is the only writer of its exporters' dirs). Nothing but
    that exact name pattern is touched.

    Returns:
      The removed paths.
    """
    if not tf.io.gfile.isdir(export_dir_base):
        return []
    removed = []
    for name in tf.io.gfile.listdir(export_dir_base):
        if model_dir.is_stale_export_temp(name):
            path = os.path.join(export_dir_base, name.rstrip("/"))
            logging.warning("Removing %s, left by an export that did not finish.", path)
            tf.io.gfile.rmtree(path)
            removed.append(path)
    return removed
