"""Names TF Estimator keeps under `tf.estimator.experimental`, for drop-in imports."""

from estimator_lite.early_stopping import (
    make_early_stopping_hook,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)

__all__ = ["make_early_stopping_hook", "stop_if_higher_hook", "stop_if_lower_hook",
           "stop_if_no_decrease_hook", "stop_if_no_increase_hook"]
