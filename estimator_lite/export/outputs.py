"""Export outputs: one served head of a model each, turned into a SignatureDef.

tf.estimator's `ExportOutput`, `ClassificationOutput`, `RegressionOutput` and
`PredictOutput`.
"""

import abc

from estimator_lite._engine.validation import WrongTypeError
from estimator_lite._tf import tf

__all__ = ["ExportOutput", "ClassificationOutput", "RegressionOutput", "PredictOutput",
           "EvalOutput"]

_SINGLE_OUTPUT_KEY = "output"
_SIG = tf.saved_model.signature_constants


class ExportOutput(abc.ABC):
    """One output head of an exported model, turned into a SignatureDef."""

    @abc.abstractmethod
    def as_signature_def(self, receiver_tensors):
        """Returns a SignatureDef protobuf for the given receiver tensors dict."""


def _output_tensors(label, outputs, single_key):
    """{name: Tensor} of a PredictOutput, as tf.estimator checks it.

    A single tensor is named `single_key`; a tuple key (MultiHead's
    ``(head, key)``) is joined with '/'.

    Raises:
      WrongTypeError (a TypeError and a ValueError, as tf.estimator raises):
        a key that is not a string, or a value that is not a Tensor.
    """
    if not isinstance(outputs, dict):
        outputs = {single_key: outputs}
    named = {}
    for given_key, value in outputs.items():
        key = "/".join(given_key) if isinstance(given_key, tuple) else given_key
        if not isinstance(key, str):
            raise WrongTypeError(f"{label} output key must be a string, got {key!r}")
        if not isinstance(value, tf.Tensor):
            raise WrongTypeError(f"{label} output value must be a Tensor, got {value!r}")
        named[key] = value
    return named


def _tensor_info_map(tensors):
    return {key: tf.saved_model.build_tensor_info(t) for key, t in tensors.items()}


def _single_string_input(method, receiver_tensors):
    """The one string tensor a Classify/Regress signature takes.

    Raises:
      ValueError: the receiver has several inputs or a non-string one (the export
        then leaves this signature out).
    """
    tensors = list(receiver_tensors.values())
    if len(tensors) != 1 or tensors[0].dtype != tf.string:
        raise ValueError(
            f"{method} signatures take a single tf.string input (serialized "
            "tf.Example protos, e.g. from build_parsing_serving_input_receiver_fn); "
            f"got receiver tensors {receiver_tensors!r}")
    return tensors[0]


class ClassificationOutput(ExportOutput):
    """Classification head: `scores` (float) and/or `classes` (string).

    Its signature uses the Classify method, which takes one serialized-string input;
    with raw tensor inputs `as_signature_def` raises ValueError and the export
    leaves the signature out (as tf.estimator: TF Serving clients see the same
    SignatureDefs).
    """

    def __init__(self, scores=None, classes=None):
        """Raises ValueError for a missing tensor and WrongTypeError (a TypeError
        and a ValueError, as tf.estimator raises) for a wrongly-typed one."""
        if scores is not None and (not isinstance(scores, tf.Tensor)
                                   or not scores.dtype.is_floating):
            raise WrongTypeError(f"scores must be a float Tensor, got {scores!r}")
        if classes is not None and (not isinstance(classes, tf.Tensor)
                                    or classes.dtype != tf.string):
            raise WrongTypeError(f"classes must be a string Tensor, got {classes!r}")
        if scores is None and classes is None:
            raise ValueError("ClassificationOutput needs scores or classes, got neither")
        self.scores = scores
        self.classes = classes

    @property
    def outputs(self):
        """The output tensors by name."""
        named = {_SIG.CLASSIFY_OUTPUT_SCORES: self.scores,
                 _SIG.CLASSIFY_OUTPUT_CLASSES: self.classes}
        return {k: v for k, v in named.items() if v is not None}

    def as_signature_def(self, receiver_tensors):
        """A Classify SignatureDef.

        Raises:
          ValueError: the receiver is not one string tensor.
        """
        examples = _single_string_input("Classification", receiver_tensors)
        return tf.saved_model.classification_signature_def(
            examples, self.classes, self.scores)


class RegressionOutput(ExportOutput):
    """Regression head: one float `value` tensor (served as 'outputs')."""

    def __init__(self, value):
        """Raises WrongTypeError (a TypeError and a ValueError) when `value` is
        not a float Tensor."""
        if not isinstance(value, tf.Tensor) or not value.dtype.is_floating:
            raise WrongTypeError(f"value must be a float Tensor, got {value!r}")
        self.value = value

    @property
    def outputs(self):
        """The output tensors by name."""
        return {_SIG.REGRESS_OUTPUTS: self.value}

    def as_signature_def(self, receiver_tensors):
        """A Regress SignatureDef.

        Raises:
          ValueError: the receiver is not one string tensor.
        """
        examples = _single_string_input("Regression", receiver_tensors)
        return tf.saved_model.regression_signature_def(examples, self.value)


class PredictOutput(ExportOutput):
    """Generic head: a Tensor (served as 'output') or a dict of named Tensors."""

    def __init__(self, outputs):
        """Raises WrongTypeError (a TypeError and a ValueError) unless `outputs`
        is a Tensor or a dict of str (or tuple of str) to Tensor."""
        self._outputs = _output_tensors("Prediction", outputs, _SINGLE_OUTPUT_KEY)

    @property
    def outputs(self):
        """The output tensors by name: the dict this output holds, as tf.estimator's.

        A change to it (adanet deletes entries in place) is what
        `as_signature_def` then exports.
        """
        return self._outputs

    def as_signature_def(self, receiver_tensors):
        """A Predict SignatureDef.

        Raises:
          ValueError: no inputs or no outputs (TF Serving cannot serve it).
        """
        if not receiver_tensors or not self._outputs:
            raise ValueError("a Predict signature needs inputs and outputs; got "
                             f"inputs {sorted(receiver_tensors or {})} and outputs "
                             f"{sorted(self._outputs)}")
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
