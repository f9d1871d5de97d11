"""Prints every public name under tf.estimator of the running TensorFlow (<= 2.15).

Run with the TF 2.15 + tensorflow-estimator 2.15 interpreter CI builds:

    $ESTIMATOR_LITE_TF215_PYTHON tests/oracle/dump_public_names.py \
        > tests/data/tf_estimator_2_15_public_names.txt
    $ESTIMATOR_LITE_TF215_PYTHON tests/oracle/dump_public_names.py compat.v1 \
        > tests/data/tf_compat_v1_estimator_2_15_public_names.txt

The optional argument `compat.v1` walks `tf.compat.v1.estimator` (TF 1.x's
tf.estimator) instead.

Walks `tf.estimator` and its public submodules (`export`, `experimental`)
recursively; prints one dotted name per line (`tf.estimator.X`,
`tf.estimator.export.X`, ...), submodules included, sorted, after a header comment.
"""

import sys
import types
from importlib import metadata

import tensorflow as tf

HEADER = """\
# Public names of {root}: TensorFlow {tf_version}, tensorflow-estimator {est_version}.
# Made by: $ESTIMATOR_LITE_TF215_PYTHON tests/oracle/dump_public_names.py{arg}
# (every attribute of {root} not starting with '_', recursing into its
# submodules). One dotted name per line, sorted; lines starting with '#' are comments."""


def public_names(module, prefix):
    """Dotted names of `module`'s public attributes, recursing into submodules.

    Args:
      module: the module to walk.
      prefix: its dotted name (e.g. "tf.estimator").

    Returns:
      A sorted list of dotted names.
    """
    names = []
    for attr in dir(module):
        if attr.startswith("_"):
            continue
        name = f"{prefix}.{attr}"
        names.append(name)
        value = getattr(module, attr)
        if isinstance(value, types.ModuleType):
            names.extend(public_names(value, name))
    return sorted(names)


def estimator_version():
    """The installed tensorflow-estimator version, or 'unknown'."""
    try:
        return metadata.version("tensorflow-estimator")
    except metadata.PackageNotFoundError:
        return "unknown"


def main(argv):
    if not hasattr(tf, "estimator"):
        sys.exit(f"TensorFlow {tf.__version__} has no tf.estimator: run this with "
                 "TF <= 2.15 and tensorflow-estimator installed")
    if argv[1:] not in ([], ["compat.v1"]):
        sys.exit("usage: dump_public_names.py [compat.v1]")
    v1 = argv[1:] == ["compat.v1"]
    root, module = (("tf.compat.v1.estimator", tf.compat.v1.estimator) if v1
                    else ("tf.estimator", tf.estimator))
    print(HEADER.format(root=root, arg=" compat.v1" if v1 else "",
                        tf_version=tf.__version__, est_version=estimator_version()))
    for name in public_names(module, root):
        print(name)


if __name__ == "__main__":
    main(sys.argv)
