"""The one place estimator_lite imports TensorFlow.

Every other module does ``from estimator_lite._tf import tf`` and uses only names
that also exist in TF 1.15's ``tf.compat.v1`` (tests/repository/tf115_api_test.py
checks it).
Importing this module changes no global TensorFlow state: callers build every graph
inside ``tf.Graph().as_default()``.

`logging` is ``tf.compat.v1.logging``: it writes to the ``tensorflow`` Python logger,
where tf.estimator users look (``tf.compat.v1.logging.set_verbosity(INFO)``). The
library never changes that logger's level.
"""

import contextlib

import tensorflow.compat.v1 as tf
from google.protobuf.message import DecodeError as ProtoDecodeError  # TF's protobuf

logging = tf.logging

# tf.compat.v1.data.Dataset is DatasetV1; the `tf.data.Dataset` users build with
# `import tensorflow as tf` is its base class DatasetV2. Both are datasets to us.
DATASET_TYPES = tuple(
    cls for cls in tf.data.Dataset.__mro__
    if cls.__name__ in ("DatasetV1", "DatasetV2")) or (tf.data.Dataset,)

# tf.compat.v1.Variable is VariableV1; the resource variables TF 2 creates (also in
# a tf.compat.v1 graph) derive only from its base class Variable. Both are variables.
VARIABLE_TYPES = tuple(
    cls for cls in tf.Variable.__mro__
    if cls.__name__ in ("Variable", "VariableV1")) or (tf.Variable,)

# What tf.estimator counts as a Tensor (TF's internal `types.Tensor`): graph tensors
# and variables of every kind, not SparseTensors. A model_fn may return a variable as
# its loss or a prediction.
TENSOR_TYPES = (tf.Tensor, *VARIABLE_TYPES)

TENSORBOARD_HINT = (
    "pip install tensorboard: TF2's tf.summary.* (in a model_fn or a TPU host_call) "
    "needs it, and TensorFlow >= 2.21 no longer installs it")


@contextlib.contextmanager
def tensorboard_hint():
    """Turns TensorFlow's "TensorBoard is not installed" into an ImportError that
    says what to install (TF 2.21 raises a bare TBNotInstalledError, later
    releases an ImportError)."""
    try:
        yield
    except Exception as error:
        missing = type(error).__name__ == "TBNotInstalledError" or (
            isinstance(error, ImportError) and "tensorboard" in str(error).lower())
        if not missing or TENSORBOARD_HINT in str(error):
            raise
        raise ImportError(f"{error}. {TENSORBOARD_HINT}") from error


def add_control_inputs(op, control_ops):
    """Makes the existing `op` wait for `control_ops` (before any session runs it).

    Used to order the state updates Keras layers leave dangling after the step
    that created them (`_engine/state_updates.py`). TensorFlow has no public way to
    add a control input to an existing operation; `Operation._add_control_inputs`
    has done it since TF 1.x.

    Raises:
      RuntimeError: this TensorFlow's Operation lacks `_add_control_inputs`.
    """
    add = getattr(op, "_add_control_inputs", None)
    if add is None:
        raise RuntimeError(
            "this TensorFlow's tf.Operation has no _add_control_inputs, which "
            "estimator_lite needs to run Keras layers' state updates after each "
            f"training step (TensorFlow {tf.VERSION})")
    add(list(control_ops))

def add_saver_listeners(saver_hook, listeners):
    """Adds `listeners` (CheckpointSaverListeners) to a tf CheckpointSaverHook's own,
    each once: where tf.estimator puts train()'s saving_listeners when the caller
    or the model_fn gives a CheckpointSaverHook (TF's `_listeners`, no public way).

    Raises:
      RuntimeError: this TensorFlow's CheckpointSaverHook lacks `_listeners`.
    """
    own = getattr(saver_hook, "_listeners", None)
    if not isinstance(own, list):
        raise RuntimeError(
            "this TensorFlow's CheckpointSaverHook has no _listeners list, which "
            "estimator_lite needs to give it train()'s saving_listeners "
            f"(TensorFlow {tf.VERSION})")
    own.extend(listener for listener in listeners if listener not in own)


# The cache that hands sequence feature columns their inputs
# (`get_sequence_dense_tensor(transformation_cache, state_manager)`). TF exports no
# public non-Keras way to build sequence inputs, so the class is taken from TF's
# feature-column module, looked up only when an RNN estimator builds its graph.
_FEATURE_COLUMN_V2 = "tensorflow.python.feature_column.feature_column_v2"


def feature_transformation_cache(features):
    """TF's FeatureTransformationCache over `features` (for sequence columns).

    Raises:
      RuntimeError: this TensorFlow release has no FeatureTransformationCache.
    """
    import importlib  # noqa: PLC0415 - the private module is needed by RNNs only.

    try:
        module = importlib.import_module(_FEATURE_COLUMN_V2)
        cache_class = module.FeatureTransformationCache
    except (ImportError, AttributeError) as error:
        raise RuntimeError(
            f"this TensorFlow ({tf.VERSION}) has no {_FEATURE_COLUMN_V2}."
            "FeatureTransformationCache, which sequence feature columns need to "
            f"build their inputs: {error}") from error
    return cache_class(features)


def raw_op(name, needed_by):
    """TensorFlow's kernel `name` from ``tf.raw_ops``, or a clear error.

    For kernels TF 1.15's tf.compat.v1.raw_ops lacks (TF 1.x had them in
    tf.contrib): the k-means kernels ``KmeansPlusPlusInitialization`` and
    ``NearestNeighbors``, there since TF 2.0.

    Raises:
      RuntimeError: this TensorFlow has no such kernel; names `needed_by`.
    """
    op = getattr(tf.raw_ops, name, None)
    if op is None:
        raise RuntimeError(f"{needed_by} needs TensorFlow's {name} kernel, which this "
                           f"TensorFlow ({tf.VERSION}) lacks in tf.raw_ops; use "
                           "TensorFlow 2")
    return op


def gfile_glob(pattern):
    """``tf.io.gfile.glob(pattern)``, empty when the pattern's directory is missing.

    TF 2 returns no matches there; TF 1.15 raises NotFoundError instead.
    """
    try:
        return tf.io.gfile.glob(pattern)
    except tf.errors.NotFoundError:
        return []


def function_graph(graph, name):
    """The graph of function `name` of `graph`'s library, or None.

    What a functional op (If, While, a function call) runs. TensorFlow exports no
    public way from a graph to its functions' graphs; TF 2's `Graph._functions`
    maps names to functions that carry (or rebuild from their definition) a
    `graph`. None where that is missing (TF 1.15, a later TF without it): callers
    then treat the op as one they cannot see into.
    """
    function = getattr(graph, "_functions", {}).get(name)
    try:
        return getattr(function, "graph", None)
    except Exception:  # noqa: BLE001 - a definition TF cannot rebuild: unseen.
        return None


__all__ = ["DATASET_TYPES", "ProtoDecodeError", "TENSOR_TYPES", "VARIABLE_TYPES",
           "TENSORBOARD_HINT", "add_control_inputs", "add_saver_listeners",
           "tensorboard_hint",
           "feature_transformation_cache", "function_graph", "gfile_glob", "logging",
           "onednn_rewrites_on", "raw_op", "tf"]


def onednn_rewrites_on():
    """Whether TensorFlow rewrites graphs for oneDNN (fused kernels).

    On by default on x86 builds since TF 2.9 (off with TF_ENABLE_ONEDNN_OPTS=0).
    TensorFlow exports no public query; its private `_pywrap_util_port.IsMklEnabled`
    answers. False where the module is missing (TF 1.15, whose builds have no such
    rewrites); True where a release has the module but not the query, so that a
    caller guarding against the rewrites stays on the safe side.
    """
    try:
        from tensorflow.python.util import _pywrap_util_port  # noqa: PLC0415
    except ImportError:
        return False
    query = getattr(_pywrap_util_port, "IsMklEnabled", None)
    return True if query is None else bool(query())
