"""Constructing an Estimator: its RunConfig and model_dir, and what a subclass keeps.

`Estimator.__init__` runs both first; `estimator` keeps the public name
(`estimator.maybe_overwrite_model_dir_and_session_config`, which libraries call
before their own constructor work).
"""

from estimator_lite._engine import model_dir as model_dir_lib
from estimator_lite._engine import validation
from estimator_lite._tf import logging
from estimator_lite.run_config import RunConfig, default_session_config

__all__ = ["check_members_not_overridden", "maybe_overwrite_model_dir_and_session_config"]

# What a subclass of Estimator may redefine (tf.estimator's list); every other
# member is the Estimator's own, so train/evaluate/predict/export behave as
# documented whatever the subclass (canned estimators included).
_OVERRIDABLE = frozenset({
    "model_fn", "_create_and_assert_global_step", "_export_all_saved_models",
    "_tf_api_names", "_tf_api_names_v1", "_estimator_api_names",
    "_estimator_api_names_v1", "_estimator_api_constants",
    "_estimator_api_constants_v1", "latest_checkpoint"})


def check_members_not_overridden(estimator, base):
    """Raises ValueError when the estimator's class redefines a member of `base`.

    As tf.estimator: only the class itself is inspected, and TPUEstimator (TF's
    own) may redefine anything.

    Args:
      estimator: the Estimator being constructed.
      base: the Estimator class.
    """
    cls = type(estimator)
    if cls is base or cls.__name__ == "TPUEstimator":
        return
    ours = {m for m in dir(base) if not m.startswith("__")}
    overridden = sorted(m for m in ours & set(vars(cls)) - _OVERRIDABLE
                        if getattr(base, m) != getattr(cls, m))
    if overridden:
        raise ValueError(f"subclasses of Estimator cannot override its members: "
                         f"{cls.__name__} overrides {overridden} ({cls.__name__} "
                         f"cannot override members of Estimator: "
                         f"{', '.join(overridden)})")


def maybe_overwrite_model_dir_and_session_config(config, model_dir):
    """The RunConfig an Estimator built with (`config`, `model_dir`) runs with.

    tf.estimator's helper of that name, which libraries' Estimator subclasses
    (tensorflow_lattice's canned estimators) call before their own constructor
    work, e.g. to write files into the model_dir. The rules are Estimator's:
    no config is a default RunConfig, and the model_dir is the argument, the
    config's, or a new temporary directory.

    Args:
      config: a RunConfig or None.
      model_dir: a path (str or os.PathLike) or None.

    Returns:
      `config` itself when its model_dir and session_config are set, else a copy
      of it with the model_dir resolved and the default session_config.

    Raises:
      TypeError: config is not a RunConfig (also a ValueError, what tf.estimator
        raises), or model_dir is not a path.
      ValueError: model_dir and config.model_dir are both given and differ.
    """
    if config is None:
        logging.info("Using default config.")
        config = RunConfig()
    if not isinstance(config, RunConfig):
        raise validation.WrongTypeError(
            f"config must be an estimator_lite.RunConfig (an instance of `RunConfig`), "
            f"got {config!r} of type {type(config).__name__}")
    # replace() copies the config (its class and attributes kept), as tf.estimator.
    if config.session_config is None:
        config = config.replace(session_config=default_session_config())
    resolved = model_dir_lib.resolve_model_dir(model_dir, config.model_dir)
    return config if config.model_dir == resolved else config.replace(model_dir=resolved)
