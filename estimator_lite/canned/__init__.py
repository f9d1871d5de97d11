"""Canned estimators: tf.estimator 2.15's Baseline, Linear, DNN and DNNLinearCombined.

Same constructor signatures and defaults as tf.estimator 2.15's V2 classes, and the
same checkpoint variable names, shapes and dtypes (optimizer slots included), so a
model_dir written by either library restores in the other. Layers are built from
tf.compat.v1 variables and ops: no tf.layers, no Keras. Each family module also
declares the v1 classes (`canned.v1` names them; see `canned.flavors`).
"""

import importlib

# The one list of canned estimators (name -> family module) is estimator_lite's.
from estimator_lite import _CANNED_ESTIMATORS


def _load_canned():
    """Binds each canned estimator name here to its family module's TF2 class."""
    for name, family in _CANNED_ESTIMATORS.items():
        globals()[name] = getattr(importlib.import_module(f"{__name__}.{family}"), name)


_load_canned()
__all__ = list(_CANNED_ESTIMATORS)
