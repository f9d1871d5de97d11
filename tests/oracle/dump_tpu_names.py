"""Prints every public name under tf.compat.v1.estimator.tpu of TF <= 2.15.

    $ESTIMATOR_LITE_TF215_PYTHON tests/oracle/dump_tpu_names.py \
        > tests/data/tf_estimator_tpu_2_15_public_names.txt

One dotted name per line, relative to the tpu module (`TPUEstimator`,
`experimental.EmbeddingConfigSpec`, ...), submodules included, sorted, after a
header comment.
"""

import sys
import types

import tensorflow as tf


def public_names(module, prefix=""):
    """Dotted names of `module`'s public attributes, recursing into submodules."""
    names = []
    for attr in dir(module):
        if attr.startswith("_"):
            continue
        names.append(prefix + attr)
        value = getattr(module, attr)
        if isinstance(value, types.ModuleType):
            names.extend(public_names(value, f"{prefix}{attr}."))
    return sorted(names)


def main():
    estimator = getattr(tf.compat.v1, "estimator", None)
    if estimator is None or not hasattr(estimator, "tpu"):
        sys.exit(f"TensorFlow {tf.__version__} has no tf.compat.v1.estimator.tpu: run "
                 "this with TF <= 2.15 and tensorflow-estimator installed")
    print(f"# Public names of tf.compat.v1.estimator.tpu, TensorFlow {tf.__version__}.")
    print("# Made by: $ESTIMATOR_LITE_TF215_PYTHON tests/oracle/dump_tpu_names.py")
    for name in public_names(estimator.tpu):
        print(name)


if __name__ == "__main__":
    main()
