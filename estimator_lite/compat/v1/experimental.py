"""tf.compat.v1.estimator.experimental: tf.estimator.experimental plus v1's builders
and KMeans (KMeansClustering, which only the v1 API exported)."""

from estimator_lite.canned.kmeans import KMeansClustering as KMeans
from estimator_lite.canned.v1 import dnn_logit_fn_builder, linear_logit_fn_builder
from estimator_lite.experimental import (
    InMemoryEvaluatorHook,
    LinearSDCA,
    build_raw_supervised_input_receiver_fn,
    call_logit_fn,
    make_early_stopping_hook,
    make_stop_at_checkpoint_step_hook,
    stop_if_higher_hook,
    stop_if_lower_hook,
    stop_if_no_decrease_hook,
    stop_if_no_increase_hook,
)

__all__ = [
    "InMemoryEvaluatorHook", "KMeans", "LinearSDCA",
    "build_raw_supervised_input_receiver_fn", "call_logit_fn",
    "dnn_logit_fn_builder",
    "linear_logit_fn_builder", "make_early_stopping_hook",
    "make_stop_at_checkpoint_step_hook", "stop_if_higher_hook", "stop_if_lower_hook",
    "stop_if_no_decrease_hook", "stop_if_no_increase_hook",
]
