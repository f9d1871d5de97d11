"""What the package needs of Python that 3.7 (TF 1.15's Python) lacks.

The seed features run on TF 1.15 / Python 3.7 as well as on Python 3.10+.
Syntax both accept is used everywhere; the few library calls 3.7 lacks live
here, each a thin alias of the built-in on newer Pythons.
"""

import functools
import glob
import os
import sys
import typing

__all__ = ["Protocol", "distributions", "zip_strict"]

# A structural type for documentation; on 3.7 a plain base (nothing checks it at run
# time; the type checker, setup.cfg, reads typing's).
if typing.TYPE_CHECKING:
    from typing import Protocol
else:
    Protocol = getattr(typing, "Protocol", object)


def _zip_strict_py37(*iterables):
    """Yield tuples as `zip` does, raising if the iterables differ in length.

    Args:
      *iterables: the iterables to zip.

    Yields:
      One tuple per position.

    Raises:
      ValueError: an iterable ended before the others, as Python 3.10's
        `zip(..., strict=True)` raises.
    """
    done = object()
    iterators = [iter(it) for it in iterables]
    while iterators:
        items = [next(it, done) for it in iterators]
        if all(item is done for item in items):
            return
        if any(item is done for item in items):
            raise ValueError(f"zip_strict: argument {items.index(done) + 1} is "
                             "shorter than the others")
        yield tuple(items)


# The built-in is C and keeps the 3.10 message; 3.7 gets the generator.
zip_strict = (functools.partial(zip, strict=True) if sys.version_info >= (3, 10)
              else _zip_strict_py37)


class _DistInfo:
    """The little of `importlib.metadata.Distribution` the package reads (3.7)."""

    def __init__(self, dist_info_dir):
        self._dir = dist_info_dir

    def read_text(self, filename):
        """The text of one metadata file, or None when it is absent."""
        path = os.path.join(self._dir, filename)
        if not os.path.isfile(path):
            return None
        with open(path, encoding="utf-8") as f:
            return f.read()

    @property
    def files(self):
        """The installed files' paths from RECORD, or None without one."""
        record = self.read_text("RECORD")
        return None if record is None else [line.split(",")[0]
                                            for line in record.splitlines() if line]

    @property
    def version(self):
        """The `Version:` field of METADATA, or None."""
        for line in (self.read_text("METADATA") or "").splitlines():
            if line.startswith("Version:"):
                return line.split(":", 1)[1].strip()
        return None


def _distributions_py37(path):
    """The dist-info distributions in the directories `path` lists (3.7)."""
    for directory in path:
        for dist_info_dir in sorted(glob.glob(os.path.join(directory, "*.dist-info"))):
            yield _DistInfo(dist_info_dir)


try:
    from importlib.metadata import distributions as _distributions
except ImportError:  # Python 3.7: no importlib.metadata
    _distributions = None


def distributions(path):
    """The installed distributions found in the directories `path` lists.

    Args:
      path: a list of site directories.

    Returns:
      An iterable of objects with `read_text(name)`, `files` and `version`.
    """
    if _distributions is not None:
        return _distributions(path=path)
    return _distributions_py37(path)
