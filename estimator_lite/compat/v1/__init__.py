"""TF 1.x's tf.estimator (TF 2.x's ``tf.compat.v1.estimator``) on current TensorFlow.

``import estimator_lite.compat.v1 as tf_estimator``: the same names as
``tf.compat.v1.estimator`` of TF 2.15. The canned estimators are the v1 ones
(named by `estimator_lite.canned.v1`, declared with the v1 `canned.flavors.Flavor`
in the family modules: SUM loss reduction, ``tf.compat.v1.train`` optimizers and
their slot names, partitioned variables, ``input_layer_partitioner``),
so a model_dir written by TF 1.x's canned estimators, or by
``tf.compat.v1.estimator``'s, keeps training here. Every other name is the one of
`estimator_lite` (the v1 and v2 APIs agree on them): `Estimator` (with
``export_savedmodel``), `RunConfig`, specs, exporters, hooks, heads, ``export``,
``inputs``; ``experimental`` adds v1's ``dnn_logit_fn_builder`` and
``linear_logit_fn_builder``; ``tpu`` is `estimator_lite.tpu`.
"""

import importlib

from estimator_lite import _CANNED_ESTIMATORS, _SHARED_MODULE_NAMES

# The canned estimators are the v1 classes (`estimator_lite.canned.v1`).
_V1_CANNED = tuple(_CANNED_ESTIMATORS)
# compat.v1's own modules (v1's logit_fn builders; the TPU names).
_OWN_MODULES = ("experimental", "tpu")
# Names whose v1 and v2 behaviour agree: estimator_lite's own objects (the
# top level's table of names tf.compat.v1.estimator has too).
_SHARED = tuple(name for names in _SHARED_MODULE_NAMES.values() for name in names
                if name not in _V1_CANNED and name not in _OWN_MODULES)

__all__ = list(_V1_CANNED) + list(_SHARED) + list(_OWN_MODULES)


def __getattr__(name):
    # Loaded on first use, like the top-level package: no TensorFlow at import.
    if name in _V1_CANNED:
        value = getattr(importlib.import_module("estimator_lite.canned.v1"), name)
    elif name in _SHARED:
        value = getattr(importlib.import_module("estimator_lite"), name)
    elif name == "experimental":
        value = importlib.import_module("estimator_lite.compat.v1.experimental")
    elif name == "tpu":
        # tf.compat.v1.estimator.tpu: TPUEstimator & co. on CPU/GPU.
        value = importlib.import_module("estimator_lite.tpu")
    else:
        raise AttributeError(
            f"module 'estimator_lite.compat.v1' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
