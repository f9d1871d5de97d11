"""Which tf.estimator module path resolves to which estimator_lite module.

`estimator_lite.install_as_tf_estimator()` (and `python -m estimator_lite.run`)
serve every module path in `ALIASES` from estimator_lite. An entry names the
estimator_lite modules that own the concept, searched in order for each attribute,
plus `attributes`: names served from elsewhere (a module, or ``"module:attr"``).
Targets are imported at first use, never at install time, so a target that does
not exist yet (or fails to import) only makes the names looked up through it fail,
with an error naming the name and the path it was asked from.

Two kinds of path:
- public (``strict``): the API namespaces (`tf.estimator`, `tf.compat.v1.estimator`,
  `tensorflow_estimator`, ...). A name the target module lacks is an
  AttributeError at lookup, so `hasattr` feature tests stay truthful; if the
  target module itself is absent, names are placeholders as below.
- private (not strict): the module paths under ``tensorflow_estimator.python.
  estimator`` and ``tensorflow.python.estimator`` that libraries import (found by
  searching public code: `estimator`, `estimator_lib`, `run_config`, `training`,
  `exporter`, `gc`, `util`, `model_fn`, `mode_keys`, `export.*`, `canned.*`,
  `head.*`, `hooks.*`, `inputs.*`, `keras`, `tpu.*`, ...). Libraries import many
  private names at module import that a given program never uses, so a name with
  no equivalent imports as a placeholder that fails when used (called, subclassed
  and instantiated, or read) with an error naming it and its module.

A private path's targets are the working modules owning its concept; the private
names tf.estimator's tests and libraries reach there that no working module needs
(test assertions, renamed helpers, TF 1.x's head factories) come from this room's
modules, as targets (`canned_head`, `head_utils`: tf.estimator modules of only
such names) or as `attributes`. docs/compatibility.md lists every private name
served, where from and why.

Flavours, as in TF 2.15: `tf.estimator` and `tf.compat.v2.estimator` are the v2 API
(`estimator_lite`); `tf.compat.v1.estimator` and `tensorflow_estimator.estimator`
(the package's top level is its v1 namespace) are the v1 API
(`estimator_lite.compat.v1`); the TPU paths go to `estimator_lite.tpu`;
`tf.keras.estimator.model_to_estimator` to `estimator_lite.model_to_estimator`.
"""

import dataclasses

# The package's one table of canned estimators (class name -> family module).
from estimator_lite import _CANNED_ESTIMATORS

__all__ = ["ALIASES", "Alias", "COMPAT_MODULE_OWNERS", "ESTIMATOR_ATTRIBUTE_OWNERS",
           "KERAS_ATTRIBUTE_OWNERS", "NESTED_ATTRIBUTE_OWNERS", "PRIVATE_ROOTS",
           "is_alias_path"]

V2_API = "estimator_lite"
V1_API = "estimator_lite.compat.v1"
TPU = "estimator_lite.tpu"
MODEL_TO_ESTIMATOR = "estimator_lite:model_to_estimator"
GC = "estimator_lite.export.garbage_collection"
# This room: the modules of names no working module needs.
COMPAT = "estimator_lite._compat"


@dataclasses.dataclass(frozen=True)
class Alias:
    """How one aliased module path resolves.

    Attributes:
      targets: estimator_lite module names searched in order for an attribute.
      attributes: name -> ``"module"`` or ``"module:attr"`` served first.
      strict: True for public namespaces (a missing name is an AttributeError at
        lookup); False for private paths (a placeholder that fails at use).
    """
    targets: tuple = ()
    attributes: dict = dataclasses.field(default_factory=dict)
    strict: bool = False


_V1_ATTRIBUTES = {"tpu": TPU}
_KERAS_ESTIMATOR = Alias(attributes={"model_to_estimator": MODEL_TO_ESTIMATOR}, strict=True)

# Public paths.
_PUBLIC = {
    "tensorflow.estimator": Alias((V2_API,), strict=True),
    "tensorflow.compat.v2.estimator": Alias((V2_API,), strict=True),
    "tensorflow.compat.v1.estimator": Alias((V1_API,), dict(_V1_ATTRIBUTES), strict=True),
    "tensorflow.compat.v1.estimator.tpu": Alias((TPU,), strict=True),
    "tensorflow.estimator.experimental": Alias((V2_API + ".experimental",), strict=True),
    "tensorflow.estimator.export": Alias((V2_API + ".export",), strict=True),
    "tensorflow.keras.estimator": _KERAS_ESTIMATOR,
    "tensorflow_estimator": Alias(strict=True, attributes={
        "estimator": "tensorflow_estimator.estimator",
        "compat": "tensorflow_estimator.compat",
        "python": "tensorflow_estimator.python"}),
    # tensorflow_estimator's top level is its v1 namespace (as in 2.15).
    "tensorflow_estimator.estimator": Alias((V1_API,), dict(_V1_ATTRIBUTES), strict=True),
    "tensorflow_estimator.estimator.tpu": Alias((TPU,), strict=True),
    "tensorflow_estimator.compat": Alias(strict=True, attributes={
        "v1": "tensorflow_estimator.compat.v1", "v2": "tensorflow_estimator.compat.v2"}),
    "tensorflow_estimator.compat.v1": Alias((V1_API,), dict(_V1_ATTRIBUTES), strict=True),
    "tensorflow_estimator.compat.v2": Alias((V2_API,), strict=True),
    "tensorflow_estimator._api.v1.estimator": Alias((V1_API,), dict(_V1_ATTRIBUTES),
                                                   strict=True),
    "tensorflow_estimator._api.v2.estimator": Alias((V2_API,), strict=True),
    "tensorflow_estimator.python": Alias(strict=True, attributes={
        "estimator": "tensorflow_estimator.python.estimator"}),
}

_EXPORT_OWNERS = ("estimator_lite.export", "estimator_lite.export.receivers",
                  "estimator_lite.export.outputs", "estimator_lite.export.saved_model")

# Private paths, relative to each of PRIVATE_ROOTS ("" is the root itself).
# An empty tuple: the path exists in tf.estimator, nothing here owns its names.
_PRIVATE = {
    "": ("estimator_lite",),
    "estimator": ("estimator_lite.estimator",),
    "estimator_lib": (V2_API,),
    "model_fn": ("estimator_lite.model_fn",),
    "mode_keys": ("estimator_lite.model_fn",),
    "run_config": ("estimator_lite.run_config",),
    "training": ("estimator_lite.training",),
    "exporter": ("estimator_lite.exporter",),
    "gc": (GC,),
    "util": ("estimator_lite._engine.input_fn", "estimator_lite._engine.fn_args"),
    "early_stopping": ("estimator_lite.early_stopping",),
    "extenders": ("estimator_lite.extenders",),
    "export": _EXPORT_OWNERS,
    "export.export": ("estimator_lite.export.receivers",) + _EXPORT_OWNERS,
    "export.export_lib": _EXPORT_OWNERS,
    "export.export_output": ("estimator_lite.export.outputs",),
    "export.function": (),
    "canned": ("estimator_lite.canned",),
    "canned.baseline": ("estimator_lite.canned.baseline",),
    "canned.dnn": ("estimator_lite.canned.dnn",),
    "canned.linear": ("estimator_lite.canned.linear", "estimator_lite.canned.linear_sdca"),
    "canned.dnn_linear_combined": ("estimator_lite.canned.dnn_linear_combined",),
    # tf.estimator's v1 head module: its private factories (`_regression_head`,
    # ...) are served; `_Head` has no equivalent.
    "canned.head": (COMPAT + ".canned_head", V1_API),
    "canned.optimizers": ("estimator_lite.canned.optimizers",),
    "canned.metric_keys": ("estimator_lite.head.keys",),
    "canned.prediction_keys": ("estimator_lite.head.keys",),
    "canned.parsing_utils": ("estimator_lite.parsing_utils",),
    "canned.v1": (V1_API,),
    "canned.kmeans": ("estimator_lite.canned.kmeans",),
    "canned.rnn": (),
    "canned.saved_model_estimator": (),
    "canned.timeseries": (),
    "canned.linear_optimizer": (),
    "head": ("estimator_lite.head",),
    "head.base_head": ("estimator_lite.head.base_head", "estimator_lite.head"),
    "head.binary_class_head": ("estimator_lite.head.binary_class_head",),
    "head.multi_class_head": ("estimator_lite.head.multi_class_head",),
    "head.multi_label_head": ("estimator_lite.head.multi_label_head",),
    "head.regression_head": ("estimator_lite.head.regression_head",),
    "head.multi_head": ("estimator_lite.head.multi_head",),
    "head.head_utils": (COMPAT + ".head_utils", "estimator_lite.head.head_inputs",
                        "estimator_lite.head"),
    "head.sequential_head": ("estimator_lite.head.sequential_head",),
    "hooks": ("estimator_lite.hooks",),
    "hooks.hooks": ("estimator_lite.hooks",),
    "hooks.session_run_hook": ("estimator_lite.hooks",),
    "hooks.basic_session_run_hooks": ("estimator_lite.hooks",),
    "inputs": ("estimator_lite.inputs",),
    "inputs.inputs": ("estimator_lite.inputs",),
    "inputs.numpy_io": ("estimator_lite.inputs.numpy_io",),
    "inputs.pandas_io": ("estimator_lite.inputs.pandas_io",),
    "inputs.queues": (),
    "inputs.queues.feeding_functions": (),
    "inputs.queues.feeding_queue_runner": (),
    "keras": (),
    "keras_lib": (),
    "estimator_export": (),
    "tools": (),
    "tools.analytics": (),
    "tools.checkpoint_converter": (),
    "api": (),
    "api._v1": (),
    "api._v2": (),
    "tpu": (TPU,),
    "tpu.tpu_estimator": (TPU,),
    "tpu.tpu_config": (TPU,),
    "tpu.tpu_context": (TPU,),
    "tpu.util": (TPU,),
    "tpu.error_handling": (TPU,),
    "tpu.iteration_count_estimator": (TPU,),
    "tpu._tpu_estimator_embedding": (TPU,),
}
# tf.estimator's canned modules define each class twice: `<Name>` is the v1
# (tf.compat.v1.estimator) class and `<Name>V2` the TF2 one; libraries and tests
# import both by module path, and the two train differently (loss reduction,
# optimizers), so each name resolves to its own flavor.
def _canned_by_module():
    modules = {}
    for name, family in _CANNED_ESTIMATORS.items():
        modules.setdefault(f"canned.{family}", []).append(name)
    return modules


_CANNED_CLASSES = _canned_by_module()


def _flavored(names):
    attributes = {}
    for name in names:
        attributes[name] = f"{V1_API}:{name}"
        attributes[f"{name}V2"] = f"{V2_API}:{name}"
    return attributes


def _compat_names(module, names):
    """{name: its spec} for private names defined in this room's `module`."""
    return {name: f"{COMPAT}.{module}:{name}" for name in names}


_PRIVATE_ATTRIBUTES = {
    # tf.estimator's v2 Estimator class, which libraries subclass by this name; the
    # module's `Estimator` is the v1 class (with export_savedmodel).
    "estimator": {"EstimatorV2": "estimator_lite.estimator:Estimator",
                  "Estimator": f"{V1_API}:Estimator",
                  **_compat_names("estimator_module", (
                      "_load_global_step_from_checkpoint_dir",
                      "_write_dict_to_summary"))},
    # The evaluator's names tf.estimator kept in its training module, and the one
    # private hook the executor does not use.
    "training": {"_EvalResult": "estimator_lite._evaluation:_EvalResult",
                 "_WARNING_INTERVAL_SECS":
                 "estimator_lite._evaluation:_WARNING_INTERVAL_SECS",
                 **_compat_names("training_module", ("_StopAtSecsHook",))},
    "early_stopping": {"_get_or_create_stop_var":
                       "estimator_lite.early_stopping:_stop_variable"},
    # tf.estimator's base_head module holds the loss call of every head.
    "head.base_head": {"call_loss_fn": "estimator_lite.head.head_inputs:call_loss_fn"},
    "estimator_lib": {"EstimatorV2": "estimator_lite.estimator:Estimator"},
    "model_fn": {"call_logit_fn": "estimator_lite.experimental:call_logit_fn"},
    **{path: _flavored(names) for path, names in _CANNED_CLASSES.items()},
    "keras": {"model_to_estimator": MODEL_TO_ESTIMATOR},
    "keras_lib": {"model_to_estimator": MODEL_TO_ESTIMATOR},
    # tf.estimator's gc module keeps its filters private (`_union`, ...).
    "gc": {f"_{name}": f"{GC}:{name}" for name in (
        "get_paths", "largest_export_versions", "mod_export_version", "negation",
        "one_of_every_n_export_versions", "union")},
    "util": {"_DatasetInitializerHook":
             "estimator_lite._engine.input_fn:DatasetInitializerHook"},
    "tpu.tpu_estimator": {"ExportSavedModelApiVersion":
                          "estimator_lite.tpu.tpu_estimator:ExportSavedModelApiVersion"},
    # The module's v1 helper (tf.compat.v1.train optimizers); its other names are
    # the TF2 canned estimators' (estimator_lite.canned.optimizers).
    "canned.optimizers": {
        "get_optimizer_instance": "estimator_lite.optimizers.v1:get_optimizer_instance"},
}
# The canned modules' private builders that tests and libraries call, each served
# by the function doing the same over estimator_lite's canned models.
_CANNED_BUILDERS = {
    "canned.linear": {
        "_compute_fraction_of_zero": "compute_fraction_of_zero",
        "linear_logit_fn_builder_v2": "linear_logit_fn_builder_v2"},
    "canned.baseline": {
        "_baseline_model_fn_builder_v2": "baseline_variables_and_logits"},
    "canned.dnn_linear_combined": {
        "_dnn_linear_combined_model_fn_v2": "dnn_linear_combined_model_fn"},
}
for _path, _names in _CANNED_BUILDERS.items():
    _PRIVATE_ATTRIBUTES[_path] = {
        **_PRIVATE_ATTRIBUTES[_path],
        **{name: f"estimator_lite.{_path}:{target}" for name, target in _names.items()}}
# model_fn's `_TPUEstimatorSpec` is the base of TPUEstimatorSpec (head tests' mock
# heads build one); here one class is both.
_PRIVATE_ATTRIBUTES["model_fn"] = {
    **_PRIVATE_ATTRIBUTES["model_fn"],
    "_TPUEstimatorSpec": "estimator_lite.tpu.tpu_estimator_spec:TPUEstimatorSpec"}
# The v1/v2 API namespaces, reachable under the private roots too.
_PRIVATE_PUBLIC = {
    "api._v1.estimator": Alias((V1_API,), dict(_V1_ATTRIBUTES), strict=True),
    "api._v2.estimator": Alias((V2_API,), strict=True),
}

PRIVATE_ROOTS = ("tensorflow_estimator.python.estimator", "tensorflow.python.estimator")


def _build():
    table = dict(_PUBLIC)
    for root in PRIVATE_ROOTS:
        for suffix, targets in _PRIVATE.items():
            name = f"{root}.{suffix}" if suffix else root
            table[name] = Alias(targets, dict(_PRIVATE_ATTRIBUTES.get(suffix, {})))
        for suffix, alias in _PRIVATE_PUBLIC.items():
            table[f"{root}.{suffix}"] = alias
    return table


ALIASES = _build()

_V1_ESTIMATOR = "tensorflow.compat.v1.estimator"
_V2_ESTIMATOR = "tensorflow.compat.v2.estimator"
_KERAS_ESTIMATOR_ALIAS = "tensorflow.keras.estimator"
# The TensorFlow modules (attribute paths from the `tensorflow` package) that had an
# `estimator` attribute up to TF 2.15, and the alias each one gets.
ESTIMATOR_ATTRIBUTE_OWNERS = (
    ((), "tensorflow.estimator"),
    (("compat", "v1"), _V1_ESTIMATOR),
    (("compat", "v2"), _V2_ESTIMATOR),
)
# Same for `tf.keras.estimator`, `tf.compat.v1.keras.estimator`, ...
KERAS_ATTRIBUTE_OWNERS = (
    (("keras",), _KERAS_ESTIMATOR_ALIAS),
    (("compat", "v1", "keras"), _KERAS_ESTIMATOR_ALIAS),
    (("compat", "v2", "keras"), _KERAS_ESTIMATOR_ALIAS),
)
# The compat namespaces' own compat namespaces, each with its own `estimator` and
# `keras.estimator` in TF 2.x (tf.compat.v2.compat.v1.estimator, which adanet reads,
# tf.compat.v1.compat.v2.estimator, ...): a `compat.v1` is a v1 API, a `compat.v2` a
# v2 one, and theirs are these same objects again (checked on TF 2.15 and 2.21), so
# two levels reach every module TF 2.15 serves its estimator from. TF 1.15 has
# fewer of them: a path its build lacks is skipped.
_NESTED = (
    (("compat", "v1", "compat", "v1"), _V1_ESTIMATOR),
    (("compat", "v1", "compat", "v2"), _V2_ESTIMATOR),
    (("compat", "v2", "compat", "v1"), _V1_ESTIMATOR),
    (("compat", "v2", "compat", "v2"), _V2_ESTIMATOR),
)
NESTED_ATTRIBUTE_OWNERS = _NESTED + tuple(
    (path + ("keras",), _KERAS_ESTIMATOR_ALIAS) for path, _ in _NESTED)
# The same from a compat module imported by its own name (`import
# tensorflow.compat.v1 as tf` is a module object distinct from `tf.compat.v1`):
# (its own alias, its nested owners).
COMPAT_MODULE_OWNERS = {
    name: (alias, ((("compat", "v1"), _V1_ESTIMATOR), (("compat", "v2"), _V2_ESTIMATOR),
                   (("compat", "v1", "keras"), _KERAS_ESTIMATOR_ALIAS),
                   (("compat", "v2", "keras"), _KERAS_ESTIMATOR_ALIAS)))
    for name, alias in (("tensorflow.compat.v1", _V1_ESTIMATOR),
                        ("tensorflow.compat.v2", _V2_ESTIMATOR))
}


def is_alias_path(name):
    """True when `name` is a module path served by estimator_lite once installed."""
    return name in ALIASES
