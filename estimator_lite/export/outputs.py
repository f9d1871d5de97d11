"""Export outputs: one served head of a model each, turned into a SignatureDef.

tf.estimator's `ExportOutput`, `ClassificationOutput`, `RegressionOutput` and
`PredictOutput`.
"""

import abc

from estimator_lite._tf import tf
from estimator_lite.export.receivers import as_tensor_dict

__all__ = ["ExportOutput", "ClassificationOutput", "RegressionOutput", "PredictOutput",
           "EvalOutput"]

_SINGLE_OUTPUT_KEY = "output"
_SIG = tf.saved_model.signature_constants


class ExportOutput(abc.ABC):
    """One output head of an exported model, turned into a SignatureDef."""

    @abc.abstractmethod
    def as_signature_def(self, receiver_tensors):
        """Returns a SignatureDef protobuf for the given receiver tensors dict."""


def _tensor_info_map(tensors):
    return {key: tf.saved_model.build_tensor_info(t) for key, t in tensors.items()}


def _is_single_string_input(receiver_tensors):
    if len(receiver_tensors) != 1:
        return False
    tensor = next(iter(receiver_tensors.values()))
    return isinstance(tensor, tf.Tensor) and tensor.dtype == tf.string


class ClassificationOutput(ExportOutput):
    """Classification head: `scores` (float) and/or `classes` (string).

    With a single serialized-string input the signature uses the Classify method;
    otherwise (raw tensors) it is written as a Predict signature with outputs
    'scores'/'classes', so it is still served instead of being dropped.
    """

    def __init__(self, scores=None, classes=None):
        """Raises TypeError/ValueError for a missing or wrongly-typed tensor."""
        if scores is None and classes is None:
            raise ValueError("ClassificationOutput needs scores or classes, got neither")
        if scores is not None and (not isinstance(scores, tf.Tensor)
                                   or not scores.dtype.is_floating):
            raise TypeError(f"scores must be a float Tensor, got {scores!r}")
        if classes is not None and (not isinstance(classes, tf.Tensor)
                                    or classes.dtype != tf.string):
            raise TypeError(f"classes must be a string Tensor, got {classes!r}")
        self.scores = scores
        self.classes = classes

    @property
    def outputs(self):
        """The output tensors by name."""
        named = {_SIG.CLASSIFY_OUTPUT_SCORES: self.scores,
                 _SIG.CLASSIFY_OUTPUT_CLASSES: self.classes}
        return {k: v for k, v in named.items() if v is not None}

    def as_signature_def(self, receiver_tensors):
        if _is_single_string_input(receiver_tensors):
            examples = next(iter(receiver_tensors.values()))
            return tf.saved_model.classification_signature_def(
                examples, self.classes, self.scores)
        return tf.saved_model.build_signature_def(
            _tensor_info_map(receiver_tensors), _tensor_info_map(self.outputs),
            _SIG.PREDICT_METHOD_NAME)


class RegressionOutput(ExportOutput):
    """Regression head: one float `value` tensor (served as 'outputs')."""

    def __init__(self, value):
        """Raises TypeError when `value` is not a float Tensor."""
        if not isinstance(value, tf.Tensor) or not value.dtype.is_floating:
            raise TypeError(f"value must be a float Tensor, got {value!r}")
        self.value = value

    @property
    def outputs(self):
        """The output tensors by name."""
        return {_SIG.REGRESS_OUTPUTS: self.value}

    def as_signature_def(self, receiver_tensors):
        if _is_single_string_input(receiver_tensors):
            examples = next(iter(receiver_tensors.values()))
            return tf.saved_model.regression_signature_def(examples, self.value)
        return tf.saved_model.build_signature_def(
            _tensor_info_map(receiver_tensors), _tensor_info_map(self.outputs),
            _SIG.PREDICT_METHOD_NAME)


class PredictOutput(ExportOutput):
    """Generic head: a Tensor (served as 'output') or a dict of named Tensors."""

    def __init__(self, outputs):
        """Raises TypeError unless `outputs` is a Tensor or dict of str to Tensor."""
        self._outputs = as_tensor_dict("outputs", outputs, _SINGLE_OUTPUT_KEY)

    @property
    def outputs(self):
        """The output tensors by name."""
        return dict(self._outputs)

    def as_signature_def(self, receiver_tensors):
        return tf.saved_model.build_signature_def(
            _tensor_info_map(receiver_tensors), _tensor_info_map(self._outputs),
            _SIG.PREDICT_METHOD_NAME)


class EvalOutput(ExportOutput):
    """Supervised evaluation outputs: loss, predictions and metrics.

    Output names follow tf.estimator's: ``loss`` (or ``loss/<key>`` for a dict),
    ``predictions`` (or ``predictions/<key>``), and ``metrics/<name>/value`` and
    ``metrics/<name>/update_op`` for each metric; the signature's method is
    ``tensorflow/supervised/eval``.
    """

    LOSS_NAME = "loss"
    PREDICTIONS_NAME = "predictions"
    METRICS_NAME = "metrics"
    METRIC_VALUE_SUFFIX = "value"
    METRIC_UPDATE_SUFFIX = "update_op"
    _METHOD_NAME = "tensorflow/supervised/eval"

    def __init__(self, loss=None, predictions=None, metrics=None):
        """Checks and names the tensors.

        Args:
          loss: a Tensor or a dict of str to Tensor.
          predictions: a Tensor or a dict of str to Tensor.
          metrics: a dict of metric name to (value tensor, update op).

        Raises:
          ValueError: a value is not a Tensor (an update op may be an Operation).
        """
        self.loss = _prefixed(self.LOSS_NAME, loss)
        self.predictions = _prefixed(self.PREDICTIONS_NAME, predictions)
        self.metrics = {}
        for name, pair in (metrics or {}).items():
            value, update = _metric_pair(name, pair)
            base = f"{self.METRICS_NAME}/{name}"
            self.metrics[f"{base}/{self.METRIC_VALUE_SUFFIX}"] = value
            self.metrics[f"{base}/{self.METRIC_UPDATE_SUFFIX}"] = update

    @property
    def outputs(self):
        """All named output tensors."""
        return {**self.loss, **self.predictions, **self.metrics}

    def as_signature_def(self, receiver_tensors):
        return tf.saved_model.build_signature_def(
            _tensor_info_map(receiver_tensors), _tensor_info_map(self.outputs),
            self._METHOD_NAME)


def _prefixed(prefix, value):
    """{prefix: tensor} for a tensor, {prefix/key: tensor} for a dict, {} for None."""
    if value is None:
        return {}
    items = value.items() if isinstance(value, dict) else [(None, value)]
    named = {}
    for key, tensor in items:
        name = prefix if key is None else f"{prefix}/{key}"
        if not isinstance(tensor, tf.Tensor):
            raise ValueError(f"{name} output value must be a Tensor; got {tensor!r}")
        named[name] = tensor
    return named


def _metric_pair(name, pair):
    """(value tensor, update tensor) of a metric; an update Operation is wrapped."""
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise ValueError(f"metrics[{name!r}] must be a (value, update_op) pair, got "
                         f"{pair!r}")
    value, update = pair
    if not isinstance(value, tf.Tensor):
        raise ValueError(f"metrics[{name!r}] value must be a Tensor; got {value!r}")
    if isinstance(update, tf.Operation):
        with tf.control_dependencies([update]):
            update = tf.constant(0)  # a Tensor that runs the update when fetched
    if not isinstance(update, tf.Tensor):
        raise ValueError(f"metrics[{name!r}] update_op must be a Tensor or Operation; "
                         f"got {update!r}")
    return value, update


class TrainOutput(EvalOutput):
    """Supervised training outputs, named as EvalOutput's; the signature's method is
    ``tensorflow/supervised/training`` (tf.estimator's, not a public name there)."""

    _METHOD_NAME = "tensorflow/supervised/training"
