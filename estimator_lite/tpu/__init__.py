"""TPUEstimator code on CPU/GPU: tf.estimator 2.15's `tf.compat.v1.estimator.tpu` names.

`TPUEstimator(use_tpu=False)` runs BERT-style programs (model_fn returning a
`TPUEstimatorSpec`, input_fn reading `params['batch_size']`) unchanged on current
TensorFlow; `use_tpu=True` is a clear error at construction. Left out:
`experimental.EmbeddingConfigSpec` (TPU embedding tables have no CPU/GPU meaning).
"""

from estimator_lite.tpu.tpu_config import InputPipelineConfig, RunConfig, TPUConfig
from estimator_lite.tpu.tpu_estimator import TPUEstimator
from estimator_lite.tpu.tpu_estimator_spec import TPUEstimatorSpec

__all__ = ["InputPipelineConfig", "RunConfig", "TPUConfig", "TPUEstimator",
           "TPUEstimatorSpec"]
