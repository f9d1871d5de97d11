"""What a model_dir holds, and whether its run is over.

    python -m estimator_lite.inspect MODEL_DIR [--json] [--recent-mins 15]
    estimator-lite-inspect MODEL_DIR          (the same, as a console script)

Shows the checkpoints (step, time written, size), the evaluation history of every
eval dir (``eval``, ``eval_<name>``) as a step x metric table, the exports of each
exporter (``export/<name>/<timestamp>``) with the global step stored in each
SavedModel and a BestExporter's ``best_eval_result.json``, the completion markers
(``training_complete.json``, ``workers_done/worker-<i>.json``) and a one-line verdict:

- ``complete``: the chief's completion marker names the newest checkpoint's step;
- ``running``: a checkpoint or event file was written in the last ``--recent-mins``;
- ``stale``: neither (the job died, hangs, or ended without a marker, as
  tf.estimator's jobs do).

Reads model_dirs written by tf.estimator 2.15 too (they have no markers). Only
reads: it never writes into model_dir. ``--json`` prints one JSON document with the
same content.

Run it with ``-m`` (or the console script), not as ``python estimator_lite/inspect.py``:
a script's folder goes first on sys.path, where this file would shadow the
standard library's `inspect` for every module TensorFlow imports.
"""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any, NoReturn

from estimator_lite._pycompat import zip_strict

__all__ = ["inspect_model_dir", "format_report", "main", "run",
           "COMPLETE", "RUNNING", "STALE", "DEFAULT_RECENT_MINS"]

COMPLETE = "complete"
RUNNING = "running"
STALE = "stale"
# The chief writes a checkpoint at least every 10 minutes by default
# (save_checkpoints_secs=600) and event files more often; 15 leaves slack.
DEFAULT_RECENT_MINS = 15.0
_SECS_PER_MIN = 60.0

if __name__ == "__main__" and not __package__:
    # Run as a file path: stop before anything imports the stdlib `inspect`.
    sys.exit("run it as: python -m estimator_lite.inspect MODEL_DIR")


def _parse(argv):
    parser = argparse.ArgumentParser(
        prog="python -m estimator_lite.inspect",
        description="Show the checkpoints, evaluations, exports and completion "
                    "markers of a model_dir, and whether its run is complete, "
                    "running or stale.")
    parser.add_argument("model_dir", help="the model_dir of an estimator_lite or "
                        "tf.estimator run (local path or any gfile URL)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON document instead of tables")
    parser.add_argument("--recent-mins", type=float, default=DEFAULT_RECENT_MINS,
                        help="a run counts as running when a checkpoint or event file "
                             "was written within this many minutes (default "
                             f"{DEFAULT_RECENT_MINS:g})")
    args = parser.parse_args(argv)
    if args.recent_mins <= 0:
        parser.error(f"--recent-mins must be > 0, got {args.recent_mins}")
    return args


def _libs():
    """Imports what reads model_dirs; TensorFlow comes with it, so `--help` is fast.

    Returns:
      (the model_dir names module, tf, read_eval_metrics).
    """
    # Deferred on purpose: importing TensorFlow takes seconds, argparse does not.
    from estimator_lite import read_eval_metrics  # noqa: PLC0415
    from estimator_lite._engine import model_dir as names  # noqa: PLC0415
    from estimator_lite._tf import tf  # noqa: PLC0415
    return names, tf, read_eval_metrics


# Reading ---------------------------------------------------------------------------


def _read_json(tf, path):
    """The decoded JSON file at `path`, or None when there is none (read-only)."""
    if not tf.io.gfile.exists(path):
        return None
    with tf.io.gfile.GFile(path) as f:
        return json.loads(f.read())


def _file_stats(tf, pattern):
    """(newest mtime in secs, total bytes, count) of the files matching `pattern`."""
    newest_secs, total_bytes, count = None, 0, 0
    for path in tf.io.gfile.glob(pattern):
        stat = tf.io.gfile.stat(path)
        mtime_secs = stat.mtime_nsec / 1e9
        newest_secs = mtime_secs if newest_secs is None else max(newest_secs, mtime_secs)
        total_bytes += stat.length
        count += 1
    return newest_secs, total_bytes, count


def _checkpoints(names, tf, model_dir):
    """The checkpoints the state file lists, oldest first, with step, mtime, size.

    A checkpoint whose files are gone is `missing`; one that cannot be read (e.g.
    truncated) keeps the step of its name and says why in `error`.
    """
    found = []
    for path in names.checkpoint_paths(model_dir):
        mtime_secs, size_bytes, files = _file_stats(tf, path + ".*")
        step, error = _step_from_suffix(path), None
        if files:
            try:
                step = names.checkpoint_step(path)
            except tf.errors.OpError as e:  # a broken checkpoint is what we report
                error = f"{type(e).__name__}: {e.message}"
        found.append({"path": path, "step": step, "mtime_secs": mtime_secs,
                      "size_bytes": size_bytes, "missing": files == 0, "error": error})
    return found


def _step_from_suffix(path):
    """The ``-<step>`` suffix of a listed checkpoint whose files are gone, or None."""
    suffix = os.fspath(path).rsplit("-", 1)[-1]
    return int(suffix) if suffix.isdigit() else None


def _eval_dir_names(names, tf, model_dir):
    """Eval dir basenames in model_dir: ``eval`` and every ``eval_<name>``, sorted."""
    found = []
    for entry in tf.io.gfile.listdir(model_dir):
        base = entry.rstrip("/")
        if (base == names.eval_dir_name() or fnmatch.fnmatchcase(
                base, names.eval_dir_name("*"))) and tf.io.gfile.isdir(
                    os.path.join(model_dir, base)):
            found.append(base)
    return sorted(found)


def _evaluations(names, tf, read_eval_metrics, model_dir):
    """{eval dir basename: {'metrics': [...], 'rows': [{'step', metric: value}]}}."""
    result = {}
    for base in _eval_dir_names(names, tf, model_dir):
        history = read_eval_metrics(os.path.join(model_dir, base))
        metrics = sorted({m for values in history.values() for m in values}
                         - {"global_step"}, key=lambda m: (m != "loss", m))
        rows = [dict({"step": int(step)}, **{m: values.get(m) for m in metrics})
                for step, values in history.items()]
        result[base] = {"metrics": metrics, "rows": rows}
    return result


def _export_step(names, tf, export_path):
    """The global step stored in a SavedModel's variables, or None if it has none."""
    variables = os.path.join(export_path, tf.saved_model.VARIABLES_DIRECTORY,
                             tf.saved_model.VARIABLES_FILENAME)
    if not tf.io.gfile.glob(variables + ".index"):
        return None
    reader = tf.train.NewCheckpointReader(variables)
    if not reader.has_tensor(tf.GraphKeys.GLOBAL_STEP):
        return None
    return int(reader.get_tensor(tf.GraphKeys.GLOBAL_STEP))


def _exports(names, tf, model_dir):
    """{exporter name: {'exports': [...], 'temp_dirs': n, 'best_eval_result': ...}}."""
    root = os.path.join(model_dir, names.EXPORT_DIR)
    if not tf.io.gfile.isdir(root):
        return {}
    result = {}
    for entry in sorted(tf.io.gfile.listdir(root)):
        exporter = entry.rstrip("/")
        base = names.export_dir(model_dir, exporter)
        if not tf.io.gfile.isdir(base):
            continue
        children = [c.rstrip("/") for c in tf.io.gfile.listdir(base)]
        exports = []
        for stamp in sorted((c for c in children if names.is_export_timestamp(c)), key=int):
            path = os.path.join(base, stamp)
            step, error = None, None
            try:
                step = _export_step(names, tf, path)
            except tf.errors.OpError as e:  # a broken export is what we report
                error = f"{type(e).__name__}: {e.message}"
            exports.append({"timestamp": int(stamp), "path": path, "step": step,
                            "error": error})
        result[exporter] = {
            "exports": exports,
            "temp_dirs": sum(c.startswith(names.TEMP_EXPORT_PREFIX) for c in children),
            "best_eval_result": _read_json(tf, os.path.join(
                base, names.BEST_EVAL_RESULT_FILE))}
    return result


def _markers(names, tf, model_dir):
    """The chief's completion marker (or None) and {worker index: marker}."""
    workers = {}
    workers_dir = names.workers_done_dir(model_dir)
    if tf.io.gfile.isdir(workers_dir):
        for entry in tf.io.gfile.listdir(workers_dir):
            index = names.parse_worker_done_file(entry)
            if index is not None:
                workers[index] = _read_json(tf, names.worker_done_file(model_dir, index))
    return {"training_complete": _read_json(tf, names.training_complete_path(model_dir)),
            "workers_done": {str(i): workers[i] for i in sorted(workers)}}


def _newest_write_secs(names, tf, model_dir, checkpoints, eval_dir_names):
    """mtime of the newest checkpoint or event file (train or eval), or None."""
    times = [c["mtime_secs"] for c in checkpoints if c["mtime_secs"] is not None]
    for directory in [model_dir] + [os.path.join(model_dir, d) for d in eval_dir_names]:
        newest_secs, _, _ = _file_stats(tf, names.event_file_pattern(directory))
        if newest_secs is not None:
            times.append(newest_secs)
    return max(times) if times else None


def _verdict(checkpoints, markers, newest_write_secs, now_secs, recent_secs):
    """(state, reason): complete, running or stale, and why."""
    present = [c for c in checkpoints if not c["missing"]]
    newest_step = present[-1]["step"] if present else None
    marker = markers["training_complete"]
    if marker is not None and newest_step is not None and (
            marker.get("global_step") == newest_step):
        return COMPLETE, (f"training_complete marker at step {newest_step} matches the "
                          "newest checkpoint")
    if marker is not None:
        why = (f"a training_complete marker at step {marker.get('global_step')} does "
               f"not match the newest checkpoint (step {newest_step}); ")
    else:
        why = "no training_complete marker; "
    if newest_write_secs is None:
        return STALE, why + "no checkpoint or event file"
    age = _age(now_secs - newest_write_secs)
    if now_secs - newest_write_secs <= recent_secs:
        return RUNNING, why + f"last checkpoint/event file written {age} ago"
    return STALE, why + (f"last checkpoint/event file written {age} ago (more than "
                         f"{recent_secs / _SECS_PER_MIN:g} min)")


def inspect_model_dir(model_dir: str | os.PathLike[str],
                      recent_mins: float = DEFAULT_RECENT_MINS,
                      now_secs: float | None = None) -> dict[str, Any]:
    """Reads everything the report shows; reads only, never writes.

    Args:
      model_dir: the directory (local path or gfile URL).
      recent_mins: write activity within this many minutes means `running`.
      now_secs: the current time (default: time.time()).

    Returns:
      A JSON-serialisable dict: model_dir, checkpoints, evaluations, exports,
      markers, newest_write_secs, verdict {state, reason}.

    Raises:
      TypeError: recent_mins is not a number.
      ValueError: recent_mins <= 0, or model_dir is not a directory.
    """
    if isinstance(recent_mins, bool) or not isinstance(recent_mins, (int, float)):
        raise TypeError(f"recent_mins must be a number, got {recent_mins!r}")
    if recent_mins <= 0:
        raise ValueError(f"recent_mins must be > 0, got {recent_mins!r}")
    names, tf, read_eval_metrics = _libs()
    model_dir = os.fspath(model_dir)
    if "://" not in model_dir:
        # Absolute, because model_dir.checkpoint_paths joins a relative model_dir
        # onto paths that get_checkpoint_state already joined.
        model_dir = os.path.abspath(model_dir)
    if not tf.io.gfile.isdir(model_dir):
        raise ValueError(f"model_dir must be an existing directory, got {model_dir!r}")
    now_secs = time.time() if now_secs is None else now_secs
    checkpoints = _checkpoints(names, tf, model_dir)
    evaluations = _evaluations(names, tf, read_eval_metrics, model_dir)
    markers = _markers(names, tf, model_dir)
    newest_secs = _newest_write_secs(names, tf, model_dir, checkpoints, list(evaluations))
    state, reason = _verdict(checkpoints, markers, newest_secs, now_secs,
                             recent_mins * _SECS_PER_MIN)
    return {"model_dir": model_dir, "checkpoints": checkpoints,
            "evaluations": evaluations,
            "exports": _exports(names, tf, model_dir), "markers": markers,
            "newest_write_secs": newest_secs, "now_secs": now_secs,
            "verdict": {"state": state, "reason": reason}}


# Formatting ------------------------------------------------------------------------


def _age(secs):
    secs = max(0, int(secs))
    if secs < 120:
        return f"{secs} s"
    if secs < 7200:
        return f"{secs // 60} min"
    return f"{secs / 3600:.1f} h"


def _when(secs):
    if secs is None:
        return "-"
    return datetime.datetime.fromtimestamp(secs).strftime("%Y-%m-%d %H:%M:%S")


def _size(num_bytes):
    for unit in ("B", "KB", "MB", "GB"):
        if num_bytes < 1024 or unit == "GB":
            return f"{num_bytes:.0f} {unit}" if unit == "B" else f"{num_bytes:.1f} {unit}"
        num_bytes /= 1024
    return None  # unreachable: the loop returns at GB


def _number(value):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _table(header, rows):
    """Right-aligned columns, two spaces apart, indented by two."""
    cells = [list(header)] + [[_number(v) if not isinstance(v, str) else v for v in row]
                              for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return ["  " + "  ".join(c.rjust(w) for c, w in zip_strict(row, widths))
            for row in cells]


def _checkpoint_lines(report):
    checkpoints = report["checkpoints"]
    if not checkpoints:
        return ["Checkpoints: none"]
    rows = [[c["step"], _when(c["mtime_secs"]),
             "missing" if c["missing"] else _size(c["size_bytes"]),
             os.path.basename(c["path"])] for c in checkpoints]
    return ([f"Checkpoints ({len(checkpoints)}, oldest first)"]
            + _table(["step", "written", "size", "prefix"], rows)
            + [f"  unreadable {os.path.basename(c['path'])}: {c['error']}"
               for c in checkpoints if c["error"]])


def _evaluation_lines(report):
    if not report["evaluations"]:
        return ["Evaluations: none"]
    lines = []
    for base, history in report["evaluations"].items():
        lines.append(f"Evaluations in {base}/ ({len(history['rows'])})")
        metrics = history["metrics"]
        lines += _table(["step"] + metrics,
                        [[row["step"]] + [row[m] for m in metrics]
                         for row in history["rows"]])
    return lines


def _export_lines(report):
    if not report["exports"]:
        return ["Exports: none"]
    lines = []
    for exporter, info in report["exports"].items():
        extra = f", {info['temp_dirs']} unfinished temp dir(s)" if info["temp_dirs"] else ""
        lines.append(f"Exports of {exporter!r} ({len(info['exports'])}{extra})")
        if info["exports"]:
            lines += _table(["timestamp", "step"],
                            [[str(e["timestamp"]), e["step"]] for e in info["exports"]])
            lines += [f"  unreadable {e['timestamp']}: {e['error']}"
                      for e in info["exports"] if e["error"]]
        best = info["best_eval_result"]
        if best is not None:
            shown = ", ".join(f"{k} {_number(v)}" for k, v in sorted(best.items()))
            lines.append(f"  best_eval_result: {shown}")
    return lines


def _marker_lines(report):
    markers = report["markers"]
    chief = markers["training_complete"]
    if chief is None:
        lines = ["Completion marker: none"]
    else:
        lines = [f"Completion marker: step {chief.get('global_step')}, max_steps "
                 f"{chief.get('max_steps')}, written {_when(chief.get('time_secs'))}"]
    workers = markers["workers_done"]
    if workers:
        done = ", ".join(f"worker {i} at step {m.get('global_step')}"
                         for i, m in workers.items())
        lines.append(f"Workers done ({len(workers)}): {done}")
    else:
        lines.append("Workers done: none")
    return lines


def format_report(report: dict[str, Any]) -> str:
    """The human-readable report: one section per kind, the verdict last.

    Args:
      report: what inspect_model_dir returned.

    Returns:
      The text, lines joined by newlines.
    """
    lines = [f"model_dir: {report['model_dir']}", ""]
    for section in (_checkpoint_lines, _evaluation_lines, _export_lines,
                    _marker_lines):
        lines += section(report) + [""]
    verdict = report["verdict"]
    lines.append(f"verdict: {verdict['state']} ({verdict['reason']})")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Prints the report of the model_dir named in argv; returns the exit code."""
    args = _parse(list(sys.argv[1:] if argv is None else argv))
    try:
        report = inspect_model_dir(args.model_dir, recent_mins=args.recent_mins)
    except ValueError as e:
        print(f"estimator_lite.inspect: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, sort_keys=True))
    else:
        print(format_report(report))
    return 0


def run() -> NoReturn:
    """Console-script entry point (``estimator-lite-inspect``)."""
    sys.exit(main())


if __name__ == "__main__":
    run()
