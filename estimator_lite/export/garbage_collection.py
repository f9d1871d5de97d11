"""Garbage collection of versioned paths: which export directories to keep.

tf.estimator's ``gc`` module, which libraries import to prune their own export
directories: a `Path` is a path with the export version parsed from it (or None),
a *filter* is a function from a list of Paths to the sorted list it keeps, and
filters combine with `union` and `negation`. `get_paths` lists a directory's
Paths through a parser. The exporters' own cleanup is `exporter.gc_exports`.

Example, deleting all but the three newest numbered exports::

    def parser(path):
        name = os.path.basename(path.path)
        return path._replace(export_version=int(name)) if name.isdigit() else None

    doomed = negation(largest_export_versions(3))(get_paths(base_dir, parser))
"""

import collections
import os

from estimator_lite._tf import tf

__all__ = ["Path", "get_paths", "largest_export_versions", "mod_export_version",
           "negation", "one_of_every_n_export_versions", "union"]

Path = collections.namedtuple("Path", ["path", "export_version"])
Path.__doc__ = "A path and the export version parsed from it (None when it has none)."


def _versioned(paths):
    """(index, path) of the paths that have an export version, in input order."""
    return [(index, path) for index, path in enumerate(paths)
            if path.export_version is not None]


def largest_export_versions(n):
    """A filter keeping the `n` paths with the largest export versions.

    Paths without a version are never kept; among equal versions the later path
    in the input wins.

    Args:
      n: how many to keep.

    Returns:
      A filter: list of Paths -> sorted list of the kept Paths.
    """
    def keep(paths):
        ranked = sorted(_versioned(paths),
                        key=lambda pair: (pair[1].export_version, pair[0]))
        kept = ranked[len(ranked) - n:] if n > 0 else []
        return sorted(path for _, path in kept)
    return keep


def one_of_every_n_export_versions(n):
    """A filter keeping the largest version of each interval [0, n], (n, 2n], ...

    Args:
      n: the interval size.

    Returns:
      A filter: list of Paths -> sorted list of the kept Paths (one per interval
      that holds a version; paths without a version are dropped).
    """
    def keep(paths):
        newest = {}  # interval -> the path with the largest version in it
        for _, path in _versioned(paths):
            version = path.export_version
            # Version 0 belongs to the first interval, with 1..n.
            interval = (version - 1) // n if version else 0
            held = newest.get(interval)
            if held is None or held.export_version < version:
                newest[interval] = path
        return sorted(newest.values())
    return keep


def mod_export_version(n):
    """A filter keeping the paths whose export version is a multiple of `n`.

    Args:
      n: the step.

    Returns:
      A filter: list of Paths -> sorted list of the kept Paths.
    """
    def keep(paths):
        return sorted(path for path in paths if path.export_version % n == 0)
    return keep


def union(left, right):
    """A filter keeping what either of two filters keeps.

    Args:
      left: a filter.
      right: a filter.

    Returns:
      A filter: list of Paths -> sorted list of the Paths kept by either.
    """
    def keep(paths):
        return sorted(set(left(paths)) | set(right(paths)))
    return keep


def negation(kept_by):
    """A filter keeping exactly what another filter drops.

    Args:
      kept_by: the filter to invert.

    Returns:
      A filter: list of Paths -> sorted list of the Paths `kept_by` does not keep.
    """
    def keep(paths):
        return sorted(set(paths) - set(kept_by(paths)))
    return keep


def get_paths(base_dir, parser):
    """The Paths of a directory's entries, as `parser` reads them.

    Args:
      base_dir: the directory (str or bytes; a ``gs://`` URL too).
      parser: called with ``Path(<base_dir>/<entry>, None)`` for each entry;
        returns the Path with its export version filled in, or None to leave the
        entry out.

    Returns:
      The sorted list of the Paths `parser` returned.
    """
    base = tf.compat.as_str_any(base_dir)
    paths = []
    for entry in tf.gfile.ListDirectory(base_dir):
        # Object stores (GCS) list directories with a trailing separator.
        name = tf.compat.as_str_any(entry).rstrip("/")
        path = parser(Path(os.path.join(base, name), None))
        if path:
            paths.append(path)
    return sorted(paths)
