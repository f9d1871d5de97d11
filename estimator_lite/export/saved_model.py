"""Writing SavedModels: signature maps, timestamped export dirs, atomic writes."""

import os
import time

from estimator_lite._engine import model_dir
from estimator_lite._tf import logging, tf

__all__ = ["build_signature_defs", "make_export_dir", "write_atomically",
           "export_to_new_dir", "write_saved_model", "copy_assets_extra",
           "remove_stale_temp_dirs"]


def build_signature_defs(export_outputs, receiver_tensors, alternatives=None):
    """Builds the SignatureDef map for a SavedModel.

    Args:
      export_outputs: dict of signature name to ExportOutput (with a default key).
      receiver_tensors: dict of input name to Tensor.
      alternatives: optional dict of alternative name to receiver tensors dict; each
        adds signatures named ``<alternative>:<output name>``.

    Returns:
      A dict of signature name to SignatureDef.
    """
    signatures = {name: output.as_signature_def(receiver_tensors)
                  for name, output in export_outputs.items()}
    for alt_name, alt_tensors in (alternatives or {}).items():
        for name, output in export_outputs.items():
            signatures[f"{alt_name}:{name}"] = output.as_signature_def(alt_tensors)
    return signatures


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


def write_saved_model(export_dir, *, signature_def_map, saver, checkpoint_path,
                      session_config, as_text, strip_default_attrs):
    """Writes the current (serving) graph and a checkpoint's variables as a SavedModel.

    Call it inside the graph the model_fn built in PREDICT mode; the graph is not
    finalized (the SavedModel builder still adds its ops).

    Args:
      export_dir: directory to write (the temp dir of `write_atomically`).
      signature_def_map: dict of signature name to SignatureDef.
      saver: the Saver restoring `checkpoint_path` (also written as the
        SavedModel's saver), or None for a sharded Saver of every variable.
      checkpoint_path: the checkpoint whose values are exported.
      session_config: tf.ConfigProto of the restoring session.
      as_text: write the SavedModel proto as text.
      strip_default_attrs: leave default-valued op attributes out of the graph.
    """
    init_op = tf.group(tf.local_variables_initializer(), tf.tables_initializer())
    # Not scaffold.finalize(): the SavedModel builder still edits the graph.
    saver = saver or tf.train.Saver(sharded=True)
    with tf.Session(config=session_config) as session:
        saver.restore(session, checkpoint_path)
        builder = tf.saved_model.Builder(export_dir)
        builder.add_meta_graph_and_variables(
            session, [tf.saved_model.tag_constants.SERVING],
            signature_def_map=signature_def_map,
            assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS),
            main_op=init_op, clear_devices=True,
            strip_default_attrs=strip_default_attrs,
            saver=saver)
        builder.save(as_text)


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
