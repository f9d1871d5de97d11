"""Serving inputs, export outputs and SignatureDefs for SavedModel export.

Mirrors TF Estimator's export module: `ServingInputReceiver`, `TensorServingInputReceiver`,
`build_raw_serving_input_receiver_fn`, `build_parsing_serving_input_receiver_fn`,
`ClassificationOutput`, `RegressionOutput` and `PredictOutput`.
"""

import abc
import os
import time

from absl import logging

from estimator_lite._tf import tf

__all__ = [
    "ServingInputReceiver", "TensorServingInputReceiver",
    "build_raw_serving_input_receiver_fn", "build_parsing_serving_input_receiver_fn",
    "ExportOutput", "ClassificationOutput", "RegressionOutput", "PredictOutput",
    "build_signature_defs", "make_export_dir", "write_atomically",
]

_SINGLE_FEATURE_KEY = "feature"
_SINGLE_RECEIVER_KEY = "input"
_SINGLE_OUTPUT_KEY = "output"
_SIG = tf.saved_model.signature_constants


def _is_tensor(value):
    return isinstance(value, (tf.Tensor, tf.SparseTensor))


def _as_tensor_dict(name, value, single_key):
    """Wraps a single tensor as {single_key: tensor}; checks a dict's entries."""
    if _is_tensor(value):
        return {single_key: value}
    if not isinstance(value, dict) or not value:
        raise TypeError(f"{name} must be a Tensor, SparseTensor or a non-empty dict of "
                        f"them, got {value!r}")
    for key, tensor in value.items():
        if not isinstance(key, str) or not _is_tensor(tensor):
            raise TypeError(f"{name} must map str to Tensor/SparseTensor; got entry "
                            f"{key!r}: {tensor!r}")
    return dict(value)


class ServingInputReceiver:
    """Serving input: the features for the model_fn and the tensors a client feeds.

    A single `features` tensor is wrapped as ``{'feature': tensor}`` (as in
    TF Estimator); use `TensorServingInputReceiver` to pass it unwrapped.
    """

    def __init__(self, features, receiver_tensors, receiver_tensors_alternatives=None):
        """Validates and stores the tensors.

        Raises:
          TypeError: features or receiver tensors are not tensors / dicts of tensors.
        """
        self.features = _as_tensor_dict("features", features, _SINGLE_FEATURE_KEY)
        self.receiver_tensors = _as_tensor_dict("receiver_tensors", receiver_tensors,
                                                _SINGLE_RECEIVER_KEY)
        alternatives = receiver_tensors_alternatives or {}
        if not isinstance(alternatives, dict):
            raise TypeError("receiver_tensors_alternatives must be a dict of name to "
                            f"receiver tensors, got {alternatives!r}")
        self.receiver_tensors_alternatives = {
            name: _as_tensor_dict(f"receiver_tensors_alternatives[{name!r}]", tensors,
                                  _SINGLE_RECEIVER_KEY)
            for name, tensors in alternatives.items()}


class TensorServingInputReceiver(ServingInputReceiver):
    """Like ServingInputReceiver, but passes one feature Tensor to the model_fn as is."""

    def __init__(self, features, receiver_tensors, receiver_tensors_alternatives=None):
        if not _is_tensor(features):
            raise TypeError("features must be a Tensor or SparseTensor, got "
                            f"{features!r}")
        super().__init__({_SINGLE_FEATURE_KEY: features}, receiver_tensors,
                         receiver_tensors_alternatives)
        self.features = features


def _placeholder_like(name, spec, default_batch_size):
    shape = tf.TensorShape(spec.shape)
    if shape.ndims:
        shape = tf.TensorShape([default_batch_size]).concatenate(shape[1:])
    return tf.placeholder(dtype=tf.as_dtype(spec.dtype), shape=shape, name=name)


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """Builds a serving_input_receiver_fn that feeds raw tensors.

    Args:
      features: a Tensor/TensorSpec or a dict of name to Tensor/TensorSpec; only
        dtype and shape are used (dimension 0 becomes `default_batch_size`).
      default_batch_size: batch size of the placeholders, or None for any.

    Returns:
      A function with no arguments returning a ServingInputReceiver (a
      TensorServingInputReceiver for a single tensor).

    Raises:
      TypeError: `features` has the wrong type.
    """
    single = not isinstance(features, dict)
    specs = {_SINGLE_FEATURE_KEY: features} if single else dict(features)
    for name, spec in specs.items():
        if not hasattr(spec, "dtype") or not hasattr(spec, "shape"):
            raise TypeError(f"features[{name!r}] must be a Tensor or TensorSpec, got "
                            f"{spec!r}")

    def serving_input_receiver_fn():
        placeholders = {name: _placeholder_like(name, spec, default_batch_size)
                        for name, spec in specs.items()}
        if single:
            tensor = placeholders[_SINGLE_FEATURE_KEY]
            return TensorServingInputReceiver(tensor, {_SINGLE_RECEIVER_KEY: tensor})
        return ServingInputReceiver(placeholders, placeholders)

    return serving_input_receiver_fn


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """Builds a serving_input_receiver_fn that parses serialized tf.Example protos.

    Args:
      feature_spec: dict of feature name to FixedLenFeature / VarLenFeature.
      default_batch_size: number of examples per request, or None for any.

    Returns:
      A function with no arguments returning a ServingInputReceiver whose receiver
      tensor is ``{'examples': <string placeholder>}``.

    Raises:
      TypeError: `feature_spec` is not a non-empty dict.
    """
    if not isinstance(feature_spec, dict) or not feature_spec:
        raise TypeError(f"feature_spec must be a non-empty dict, got {feature_spec!r}")

    def serving_input_receiver_fn():
        examples = tf.placeholder(tf.string, [default_batch_size],
                                  name="input_example_tensor")
        features = tf.io.parse_example(examples, feature_spec)
        return ServingInputReceiver(features, {"examples": examples})

    return serving_input_receiver_fn


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
        self._outputs = _as_tensor_dict("outputs", outputs, _SINGLE_OUTPUT_KEY)

    @property
    def outputs(self):
        """The output tensors by name."""
        return dict(self._outputs)

    def as_signature_def(self, receiver_tensors):
        return tf.saved_model.build_signature_def(
            _tensor_info_map(receiver_tensors), _tensor_info_map(self._outputs),
            _SIG.PREDICT_METHOD_NAME)


def build_signature_defs(export_outputs, receiver_tensors, alternatives=None):
    """Builds the SignatureDef map for a SavedModel.

    Args:
      export_outputs: dict of signature name to ExportOutput (with a default key).
      receiver_tensors: dict of input name to Tensor.
      alternatives: optional dict of alternative name to receiver tensors dict; each
        adds signatures named ``<alternative>:<output name>``.

    Returns:
      A dict of signature name to SignatureDef.
    """
    signatures = {name: output.as_signature_def(receiver_tensors)
                  for name, output in export_outputs.items()}
    for alt_name, alt_tensors in (alternatives or {}).items():
        for name, output in export_outputs.items():
            signatures[f"{alt_name}:{name}"] = output.as_signature_def(alt_tensors)
    return signatures


def make_export_dir(export_dir_base):
    """Returns a new, not yet existing `<export_dir_base>/<unix seconds>` path.

    When two exports land in the same second the timestamp is bumped instead of
    waiting, so names stay unique, increasing and purely numeric.
    """
    stamp = int(time.time())
    while tf.io.gfile.exists(os.path.join(export_dir_base, str(stamp))):
        stamp += 1
    return os.path.join(export_dir_base, str(stamp))


def write_atomically(final_dir, write_fn):
    """Runs `write_fn(temp_dir)` and renames temp_dir to `final_dir` on success.

    The temp dir sits beside `final_dir` (named ``temp-<name>``) so the rename
    stays on one file system; a failed write removes only that temp dir.

    Args:
      final_dir: destination directory; must not exist yet.
      write_fn: callable writing the full content into the directory it is given.

    Returns:
      `final_dir`.
    """
    parent, name = os.path.split(final_dir)
    temp_dir = os.path.join(parent, f"temp-{name}")
    tf.io.gfile.makedirs(parent)
    try:
        write_fn(temp_dir)
        tf.io.gfile.rename(temp_dir, final_dir)
    except BaseException:
        if tf.io.gfile.exists(temp_dir):
            logging.warning("Export to %s failed; removing %s", final_dir, temp_dir)
            tf.io.gfile.rmtree(temp_dir)
        raise
    return final_dir
