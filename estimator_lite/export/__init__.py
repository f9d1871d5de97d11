"""Export: serving inputs and outputs, with exactly tf.estimator.export's names.

`receivers` builds what a SavedModel's client feeds, `outputs` the served heads
(signatures); `saved_model` holds the writing machinery the Estimator uses and is
not part of this namespace.
"""

from estimator_lite.export.outputs import (
    ClassificationOutput,
    EvalOutput,
    ExportOutput,
    PredictOutput,
    RegressionOutput,
)
from estimator_lite.export.receivers import (
    ServingInputReceiver,
    TensorServingInputReceiver,
    build_parsing_serving_input_receiver_fn,
    build_raw_serving_input_receiver_fn,
)

__all__ = [
    "ClassificationOutput",
    "EvalOutput",
    "ExportOutput",
    "PredictOutput",
    "RegressionOutput",
    "ServingInputReceiver",
    "TensorServingInputReceiver",
    "build_parsing_serving_input_receiver_fn",
    "build_raw_serving_input_receiver_fn",
]
