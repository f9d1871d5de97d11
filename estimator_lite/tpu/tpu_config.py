"""`TPUConfig`, `InputPipelineConfig` and the TPU `RunConfig` of tf.estimator 2.15.

On CPU/GPU (`TPUEstimator(use_tpu=False)`) most TPU settings have nothing to act
on: they are accepted and validated so TPUEstimator programs construct unchanged.
`iterations_per_loop` is the one that still does something, as on tf.estimator:
the step-rate/examples-per-second log runs every
``ceil(log_step_count_steps / iterations_per_loop)`` steps (see TPUEstimator).
With ``RunConfig(experimental_honor_iterations_per_loop=True)`` (estimator_lite's
own, opt-in) it is what it was on a TPU instead: training runs loops of that many
steps per session call (`RunConfig.experimental_steps_per_loop`).
"""

import collections
import re

from estimator_lite import run_config as run_config_lib
from estimator_lite._engine import validation

__all__ = ["InputPipelineConfig", "RunConfig", "TPUConfig"]

# `iterations_per_loop` given as a duration: "<n>s", "<n>m" or "<n>h".
_DURATION = re.compile(r"^\s*(\d+)\s*([smh])\s*$")
_SECS_PER_UNIT = {"s": 1, "m": 60, "h": 3600}


class InputPipelineConfig:
    """How a TPU input pipeline was deployed (values as tf.estimator's enum).

    On CPU/GPU the input_fn is called once per graph whatever the value; only
    `SLICED` is rejected, as tf.estimator did without a TPU.
    """

    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4
    SLICED = 5


_PIPELINE_VALUES = (InputPipelineConfig.PER_SHARD_V1, InputPipelineConfig.PER_HOST_V1,
                    InputPipelineConfig.PER_HOST_V2, InputPipelineConfig.BROADCAST,
                    InputPipelineConfig.SLICED)

_TPU_CONFIG_FIELDS = (
    "iterations_per_loop", "num_shards", "num_cores_per_replica",
    "per_host_input_for_training", "tpu_job_name", "initial_infeed_sleep_secs",
    "input_partition_dims", "eval_training_input_configuration",
    "experimental_host_call_every_n_steps",
    "experimental_allow_per_host_v2_parallel_get_next",
    "experimental_feed_hook")


def parse_iterations_per_loop(value):
    """Reads `iterations_per_loop`: a step count, or a duration such as "300s".

    Args:
      value: an int >= 1, or a string "<n>" (steps) or "<n>s" / "<n>m" / "<n>h".

    Returns:
      (amount, unit) with unit "count" or "seconds".

    Raises:
      TypeError: value is neither an int nor a str.
      ValueError: the int is < 1 or the string is not one of those forms.
    """
    if isinstance(value, str):
        if value.strip().isdigit():
            return parse_iterations_per_loop(int(value))
        match = _DURATION.match(value)
        if not match or int(match.group(1)) < 1:
            raise ValueError("iterations_per_loop must be an int >= 1 or a duration "
                             f"like '300s', '5m', '1h', got {value!r}")
        return int(match.group(1)) * _SECS_PER_UNIT[match.group(2)], "seconds"
    return validation.check_int("iterations_per_loop", value, 1), "count"


class TPUConfig(collections.namedtuple("TPUConfig", _TPU_CONFIG_FIELDS)):
    """TPU settings of a `RunConfig`; arguments and defaults as tf.estimator 2.15.

    Only `iterations_per_loop` has an effect on CPU/GPU (the step-rate log period,
    see the module docstring); the others are validated and kept.
    """

    def __new__(cls, iterations_per_loop=2, num_shards=None, num_cores_per_replica=None,
                per_host_input_for_training=True, tpu_job_name=None,
                initial_infeed_sleep_secs=None, input_partition_dims=None,
                eval_training_input_configuration=InputPipelineConfig.PER_HOST_V1,
                experimental_host_call_every_n_steps=1,
                experimental_allow_per_host_v2_parallel_get_next=False,
                experimental_feed_hook=None):
        """Validates the arguments.

        Raises:
          TypeError: a count is not an int.
          ValueError: a count is < 1, or a pipeline value is not an
            InputPipelineConfig value.
        """
        parse_iterations_per_loop(iterations_per_loop)
        validation.check_int("num_shards", num_shards, 1, allow_none=True)
        validation.check_int("num_cores_per_replica", num_cores_per_replica, 1,
                             allow_none=True)
        validation.check_int("experimental_host_call_every_n_steps",
                             experimental_host_call_every_n_steps, 1)
        # tf.estimator maps the legacy booleans onto the enum: True is PER_HOST_V1,
        # False is PER_SHARD_V1 (what `TPUConfig(...).per_host_input_for_training` reads).
        if per_host_input_for_training is True:
            per_host_input_for_training = InputPipelineConfig.PER_HOST_V1
        elif per_host_input_for_training is False:
            per_host_input_for_training = InputPipelineConfig.PER_SHARD_V1
        for name, value in (("per_host_input_for_training", per_host_input_for_training),
                            ("eval_training_input_configuration",
                             eval_training_input_configuration)):
            if value not in _PIPELINE_VALUES:
                raise ValueError(f"{name} must be an InputPipelineConfig value "
                                 f"{_PIPELINE_VALUES} (or a bool), got {value!r}")
        return super().__new__(
            cls, iterations_per_loop, num_shards, num_cores_per_replica,
            per_host_input_for_training, tpu_job_name, initial_infeed_sleep_secs,
            input_partition_dims, eval_training_input_configuration,
            experimental_host_call_every_n_steps,
            experimental_allow_per_host_v2_parallel_get_next, experimental_feed_hook)


class RunConfig(run_config_lib.RunConfig):
    """An estimator_lite RunConfig carrying a `TPUConfig` (what TPUEstimator requires).

    `master`, `evaluation_master` and `cluster` (a TPU cluster resolver) name a TPU
    runtime; they are kept for reading back but not used on CPU/GPU. Every other
    keyword is estimator_lite.RunConfig's.
    """

    def __init__(self, tpu_config=None, evaluation_master=None, master=None,
                 cluster=None, experimental_honor_iterations_per_loop=False, **kwargs):
        """Validates the arguments.

        `experimental_honor_iterations_per_loop` (estimator_lite's own): True makes
        TPUEstimator train `tpu_config.iterations_per_loop` steps per session call
        on CPU/GPU, as it did on a TPU; False keeps tf.estimator's CPU/GPU
        behaviour (one step per call, the log period scaled).

        Raises:
          TypeError: tpu_config is not a TPUConfig, the flag is not a bool (or a
            RunConfig argument is wrong).
          ValueError: a RunConfig argument has a bad value.
        """
        super().__init__(**kwargs)
        self._set_tpu_fields(tpu_config, evaluation_master, master, cluster)
        self._set_honor_loops(experimental_honor_iterations_per_loop)

    def _set_honor_loops(self, honor):
        if not isinstance(honor, bool):
            raise TypeError("experimental_honor_iterations_per_loop must be a bool, got "
                            f"{honor!r} of type {type(honor).__name__}")
        self._honor_iterations_per_loop = honor

    experimental_honor_iterations_per_loop = property(
        lambda self: self._honor_iterations_per_loop,
        doc="Whether TPUEstimator runs iterations_per_loop steps per session call.")

    def _set_tpu_fields(self, tpu_config, evaluation_master, master, cluster):
        if tpu_config is None:
            tpu_config = TPUConfig()
        if not isinstance(tpu_config, TPUConfig):
            raise TypeError(f"tpu_config must be an estimator_lite.tpu.TPUConfig or None, "
                            f"got {tpu_config!r} of type {type(tpu_config).__name__}")
        self._tpu_config = tpu_config
        self._tpu_master = master
        self._tpu_evaluation_master = evaluation_master
        self._tpu_cluster = cluster

    tpu_config = property(lambda self: self._tpu_config)
    cluster = property(lambda self: self._tpu_cluster,
                       doc="The TPU cluster resolver given, or None (unused on CPU/GPU).")

    @property
    def master(self):
        """The `master` given (a TPU address), else the cluster's from TF_CONFIG."""
        return self._tpu_master if self._tpu_master is not None else super().master

    @property
    def evaluation_master(self):
        """The `evaluation_master` given, else the cluster's from TF_CONFIG."""
        if self._tpu_evaluation_master is not None:
            return self._tpu_evaluation_master
        return super().evaluation_master

    def replace(self, **kwargs):
        """Returns a copy with some arguments replaced (`tpu_config` included).

        Raises:
          ValueError / TypeError: as RunConfig.replace, or a bad tpu_config.
        """
        tpu_config = kwargs.pop("tpu_config", self._tpu_config)
        honor = kwargs.pop("experimental_honor_iterations_per_loop",
                           self._honor_iterations_per_loop)
        base = super().replace(**kwargs)
        new = type(self).__new__(type(self))
        new.__dict__.update(base.__dict__)
        new._set_tpu_fields(tpu_config, self._tpu_evaluation_master, self._tpu_master,
                            self._tpu_cluster)
        new._set_honor_loops(honor)
        return new
