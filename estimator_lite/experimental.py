"""Early-stopping names under `experimental`, where TF Estimator kept them (drop-in)."""

from estimator_lite.early_stopping import (
    make_early_stopping_hook,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)

__all__ = ["make_early_stopping_hook", "stop_if_higher_hook", "stop_if_lower_hook",
           "stop_if_no_decrease_hook", "stop_if_no_increase_hook"]
