"""`TPUEstimator` on CPU/GPU: tf.estimator 2.15's `use_tpu=False` behaviour.

Built on the public `estimator_lite.Estimator`: the user's model_fn and every
input_fn are wrapped, nothing else changes. What the wrappers do, as tf.estimator's
TPUEstimator did without a TPU (checked against tf.estimator 2.15):
- input_fn must take `params`; it gets the estimator's params plus
  `params['batch_size']` = train/eval/predict_batch_size for the mode (absent when
  that size is None), and is built on `/device:CPU:0`;
- model_fn gets the same params plus `params['use_tpu'] = False` (for
  export_saved_model only `use_tpu`, no batch size); `params['context']` is never
  set without a TPU;
- a returned `TPUEstimatorSpec` runs as its `as_estimator_spec()`; a plain
  EstimatorSpec is accepted too;
- `TPUConfig.iterations_per_loop` only sets the step-rate log period:
  ``ceil(log_step_count_steps / iterations_per_loop)`` steps; unless the config
  opts in with `experimental_honor_iterations_per_loop=True` (estimator_lite's
  own): then training runs loops of that many steps per session call, as on a
  TPU (`_engine/step_loop.py`), and the log period stays in steps.
"""

import enum
import math

from estimator_lite._engine.fn_args import declared_args
from estimator_lite._tf import logging, tf
from estimator_lite.estimator import Estimator
from estimator_lite.model_fn import EstimatorSpec, ModeKeys
from estimator_lite.tpu.tpu_config import RunConfig, parse_iterations_per_loop
from estimator_lite.tpu.tpu_estimator_spec import TPUEstimatorSpec

__all__ = ["ExportSavedModelApiVersion", "TPUEstimator"]

BATCH_SIZE_KEY = "batch_size"
CONTEXT_KEY = "context"
USE_TPU_KEY = "use_tpu"
# tf.estimator reserved these; 'use_tpu' is set too but was never reserved.
RESERVED_PARAMS_KEYS = [BATCH_SIZE_KEY, CONTEXT_KEY]

USE_TPU_ERROR = (
    "TPUEstimator(use_tpu=True) needs a TPU runtime, which estimator_lite does not "
    "provide (tf.estimator's TPU support went with TensorFlow 2.16). Pass "
    "use_tpu=False to run this program on CPU/GPU with the same params['batch_size'], "
    "eval_metrics, scaffold_fn and host_call semantics (e.g. BERT's --use_tpu=false), "
    "or move the model to tf.distribute.TPUStrategy to train on a TPU")


class ExportSavedModelApiVersion(enum.Enum):
    """Which TPU export API `TPUEstimator` uses (tf.estimator 2.15's enum).

    Without a TPU both export the same CPU SavedModel; kept so code that passes
    `export_saved_model_api_version=ExportSavedModelApiVersion.V2` runs.
    """
    V1 = 1
    V2 = 2


class TPUEstimator(Estimator):
    """Runs TPUEstimator programs on CPU/GPU; `use_tpu=True` is a clear error.

    Arguments as tf.estimator 2.15's TPUEstimator. `batch_axis`, `eval_on_tpu` and
    `export_saved_model_api_version` have no effect without a TPU; `export_to_tpu`
    would add a `serve,tpu` MetaGraph, which is not written here (only the CPU one,
    `serve`, which `export_to_cpu` controls).
    """

    def __init__(self, model_fn=None, model_dir=None, config=None, params=None,
                 use_tpu=True, train_batch_size=None, eval_batch_size=None,
                 predict_batch_size=None, batch_axis=None, eval_on_tpu=True,
                 export_to_tpu=True, export_to_cpu=True, warm_start_from=None,
                 embedding_config_spec=None,
                 export_saved_model_api_version=ExportSavedModelApiVersion.V1):
        """Validates the arguments and wraps model_fn.

        Raises:
          ValueError: use_tpu is True (no TPU runtime: the message says what to do),
            config is not an estimator_lite.tpu.RunConfig, params uses a reserved
            key, or an embedding_config_spec is given.
          TypeError: as estimator_lite.Estimator.
        """
        if use_tpu:
            raise ValueError(f"{USE_TPU_ERROR}; got use_tpu={use_tpu!r}")
        if config is None or not isinstance(config, RunConfig):
            raise ValueError("config must be provided with type "
                             f"estimator_lite.tpu.RunConfig (tpu_config.RunConfig), got "
                             f"{config!r}")
        if params is not None and any(k in params for k in RESERVED_PARAMS_KEYS):
            raise ValueError(f"{RESERVED_PARAMS_KEYS} are reserved keys but existed in "
                             f"params {params!r}")
        if embedding_config_spec is not None:
            raise ValueError("embedding_config_spec (TPU embeddings) needs a TPU; got "
                             f"{embedding_config_spec!r}")
        # tf.estimator's check: the enum, or 1 or 2; an equal enum of another
        # package (a tensorflow_estimator installed beside) is taken too.
        if not isinstance(export_saved_model_api_version, ExportSavedModelApiVersion) \
                and export_saved_model_api_version not in (1, 2) and getattr(
                    export_saved_model_api_version, "value", None) not in (1, 2):
            raise ValueError("export_saved_model_api_version should be 1 or 2; got "
                             f"{export_saved_model_api_version!r}")
        # Taken as given: tf.estimator checks them only with use_tpu=True (adanet's
        # CPU tests pass train_batch_size=0, which reaches params['batch_size']).
        self._batch_sizes = {ModeKeys.TRAIN: train_batch_size,
                             ModeKeys.EVAL: eval_batch_size,
                             ModeKeys.PREDICT: predict_batch_size}
        if model_fn is None or not callable(model_fn):
            raise TypeError(f"model_fn must be callable, got {model_fn!r}")
        self._user_model_fn = model_fn
        self._export_to_tpu = bool(export_to_tpu)
        self._export_to_cpu = bool(export_to_cpu)
        self._input_mode = None  # set by the input_fn wrapper, read by the model_fn's
        super().__init__(model_fn=self._tpu_model_fn, model_dir=model_dir,
                         config=_loop_config(config), params=params,
                         warm_start_from=warm_start_from)

    # The wrappers ---------------------------------------------------------------

    def _wrap_input_fn(self, input_fn, mode):
        """input_fn with params['batch_size'] for `mode`, as TPUEstimator called it.

        Raises:
          ValueError: input_fn does not take `params`.
        """
        declared = declared_args(input_fn) if callable(input_fn) else None
        if callable(input_fn) and declared is not None and "params" not in declared:
            raise ValueError(f"input_fn ({input_fn}) does not include params argument, "
                             "required by TPUEstimator to pass batch size as "
                             'params["batch_size"]')
        if not callable(input_fn):
            return input_fn  # Estimator reports the TypeError

        def tpu_input_fn(params, config):
            self._input_mode = mode
            params = dict(params)
            if self._batch_sizes[mode] is not None:
                params[BATCH_SIZE_KEY] = self._batch_sizes[mode]
            available = {"params": params, "config": config, "mode": mode}
            with tf.device("/device:CPU:0"):
                return input_fn(**{k: v for k, v in available.items()
                                   if declared is None or k in declared})

        return tpu_input_fn

    def _tpu_model_fn(self, features, labels, mode, config, params):
        """Calls the user's model_fn with TPUEstimator's params; returns an EstimatorSpec.

        Raises:
          ValueError: model_fn takes no `labels` but input_fn gave some.
          TypeError: model_fn returned neither a TPUEstimatorSpec nor an EstimatorSpec.
        """
        is_export = self._input_mode is None
        self._input_mode = None
        params = dict(params)
        if not is_export and self._batch_sizes[mode] is not None:
            params[BATCH_SIZE_KEY] = self._batch_sizes[mode]
        params[USE_TPU_KEY] = False
        available = {"features": features, "labels": labels, "mode": mode,
                     "config": config, "params": params}
        declared = declared_args(self._user_model_fn)
        if declared is not None and "labels" not in declared and labels is not None:
            raise ValueError("model_fn does not take 'labels' but input_fn returned "
                             "labels")
        spec = self._user_model_fn(**{k: v for k, v in available.items()
                                      if declared is None or k in declared})
        if isinstance(spec, TPUEstimatorSpec):
            logging.info("Running %s on CPU/GPU", mode)
            return spec.as_estimator_spec(host_ops_in_train_op=(
                mode == ModeKeys.TRAIN and config.experimental_steps_per_loop > 1))
        if not isinstance(spec, EstimatorSpec):
            raise TypeError("model_fn must return a TPUEstimatorSpec or an "
                            f"EstimatorSpec, got {spec!r}")
        return spec

    # Public methods: the input_fn is wrapped for its mode, then Estimator runs --------

    def train(self, input_fn, hooks=None, steps=None, max_steps=None,
              saving_listeners=None):
        """Estimator.train with params['batch_size'] = train_batch_size."""
        return super().train(self._wrap_input_fn(input_fn, ModeKeys.TRAIN), hooks=hooks,
                             steps=steps, max_steps=max_steps,
                             saving_listeners=saving_listeners)

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Estimator.evaluate with params['batch_size'] = eval_batch_size."""
        return super().evaluate(self._wrap_input_fn(input_fn, ModeKeys.EVAL), steps=steps,
                                hooks=hooks, checkpoint_path=checkpoint_path, name=name)

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Estimator.predict with params['batch_size'] = predict_batch_size."""
        return super().predict(self._wrap_input_fn(input_fn, ModeKeys.PREDICT),
                               predict_keys=predict_keys, hooks=hooks,
                               checkpoint_path=checkpoint_path,
                               yield_single_examples=yield_single_examples)

    def _check_export_targets(self):
        if not self._export_to_cpu:
            if not self._export_to_tpu:
                raise ValueError("One of export_to_cpu and export_to_tpu must be true.")
            raise ValueError(
                "export_to_cpu=False, export_to_tpu=True asks for a SavedModel with only "
                "the TPU MetaGraph ('serve', 'tpu'), which needs a TPU runtime; pass "
                "export_to_cpu=True to export the CPU/GPU serving graph")
        if self._export_to_tpu:
            logging.info("export_to_tpu: the 'serve,tpu' MetaGraph is not written "
                         "without a TPU; exporting the CPU/GPU 'serve' MetaGraph")

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                           assets_extra=None, as_text=False, checkpoint_path=None,
                           experimental_mode=ModeKeys.PREDICT):
        """Estimator.export_saved_model (the CPU MetaGraph; model_fn gets use_tpu=False).

        Raises:
          ValueError: export_to_cpu is False (see TPUEstimator), or as Estimator.
        """
        self._check_export_targets()
        self._input_mode = None
        return super().export_saved_model(
            export_dir_base, serving_input_receiver_fn, assets_extra=assets_extra,
            as_text=as_text, checkpoint_path=checkpoint_path,
            experimental_mode=experimental_mode)

    def export_savedmodel(self, export_dir_base, serving_input_receiver_fn,
                          assets_extra=None, as_text=False, checkpoint_path=None,
                          strip_default_attrs=False):
        """TF1 name of export_saved_model.

        Raises:
          ValueError: export_to_cpu is False, or as Estimator.
        """
        self._check_export_targets()
        self._input_mode = None
        return super().export_savedmodel(
            export_dir_base, serving_input_receiver_fn, assets_extra=assets_extra,
            as_text=as_text, checkpoint_path=checkpoint_path,
            strip_default_attrs=strip_default_attrs)


def _loop_config(config):
    """The config TPUEstimator trains with: multi-step loops of iterations_per_loop
    steps when the config opts in, else tf.estimator's scaled log period.

    Raises:
      ValueError: the config opts in but iterations_per_loop is a duration, or
        experimental_steps_per_loop is set to another count.
    """
    if not config.experimental_honor_iterations_per_loop:
        return _with_loop_logging(config)
    iterations = config.tpu_config.iterations_per_loop
    amount, unit = parse_iterations_per_loop(iterations)
    if unit != "count":
        raise ValueError("experimental_honor_iterations_per_loop needs "
                         "iterations_per_loop as a step count, got the duration "
                         f"{iterations!r}")
    if config.experimental_steps_per_loop not in (1, amount):
        raise ValueError(
            f"experimental_steps_per_loop={config.experimental_steps_per_loop} "
            f"conflicts with iterations_per_loop={amount} honoured by "
            "experimental_honor_iterations_per_loop; give one of them")
    return config.replace(experimental_steps_per_loop=amount)


def _with_loop_logging(config):
    """config with the step-rate log every ceil(log_step_count_steps / iterations).

    tf.estimator's TPUEstimator logged global_step/sec and examples/sec once per
    loop of `iterations_per_loop` steps, so a user's `log_step_count_steps` counted
    loops; it kept that period on CPU/GPU. A duration (e.g. '60s') leaves the
    period unchanged here (the engine's log period is in steps).
    """
    amount, unit = parse_iterations_per_loop(config.tpu_config.iterations_per_loop)
    every_steps = config.log_step_count_steps
    if unit != "count" or every_steps is None:
        return config
    return config.replace(log_step_count_steps=int(math.ceil(every_steps / amount)))
