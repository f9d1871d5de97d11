"""Serving inputs: what a SavedModel's client feeds and what the model_fn receives.

tf.estimator's `ServingInputReceiver`, `TensorServingInputReceiver`,
`build_raw_serving_input_receiver_fn` and `build_parsing_serving_input_receiver_fn`.
"""

from estimator_lite._tf import tf

__all__ = [
    "ServingInputReceiver", "TensorServingInputReceiver",
    "build_raw_serving_input_receiver_fn", "build_parsing_serving_input_receiver_fn",
    "as_tensor_dict", "SupervisedInputReceiver", "build_raw_supervised_input_receiver_fn",
]

_SINGLE_FEATURE_KEY = "feature"
_SINGLE_RECEIVER_KEY = "input"
_SINGLE_LABEL_KEY = "label"


def _is_tensor(value):
    return isinstance(value, (tf.Tensor, tf.SparseTensor))


def as_tensor_dict(name, value, single_key):
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
        self.features = as_tensor_dict("features", features, _SINGLE_FEATURE_KEY)
        self.receiver_tensors = as_tensor_dict("receiver_tensors", receiver_tensors,
                                                _SINGLE_RECEIVER_KEY)
        alternatives = receiver_tensors_alternatives or {}
        if not isinstance(alternatives, dict):
            raise TypeError("receiver_tensors_alternatives must be a dict of name to "
                            f"receiver tensors, got {alternatives!r}")
        self.receiver_tensors_alternatives = {
            name: as_tensor_dict(f"receiver_tensors_alternatives[{name!r}]", tensors,
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


class SupervisedInputReceiver:
    """Features and labels fed to a train or eval SavedModel (tf.estimator's).

    `features` and `labels` go to the model_fn as given (a tensor or a dict);
    `receiver_tensors` are the SavedModel's inputs.
    """

    def __init__(self, features, labels, receiver_tensors):
        """Validates the tensors.

        Raises:
          TypeError: features, labels or receiver tensors are not tensors / dicts
            of tensors.
        """
        as_tensor_dict("features", features, _SINGLE_FEATURE_KEY)
        as_tensor_dict("labels", labels, _SINGLE_LABEL_KEY)
        self.features = features
        self.labels = labels
        self.receiver_tensors = as_tensor_dict("receiver_tensors", receiver_tensors,
                                                _SINGLE_RECEIVER_KEY)
        self.receiver_tensors_alternatives = {}


def _placeholder_for(tensor, default_batch_size):
    """A placeholder of `tensor`'s dtype and shape, named after its op in a graph
    (eager tensors have no op name: TensorFlow then picks `Placeholder_<n>`)."""
    shape = tf.TensorShape([default_batch_size]).concatenate(tensor.shape[1:])
    try:
        name = tensor.op.name
    except AttributeError:
        name = None
    return tf.placeholder(dtype=tensor.dtype, shape=shape, name=name)


def _placeholders(value, default_batch_size, single_key):
    """(what the model_fn gets, the receiver tensors) for a tensor or dict template."""
    if isinstance(value, dict):
        placeholders = {key: _placeholder_for(tensor, default_batch_size)
                        for key, tensor in value.items()}
        return placeholders, placeholders
    placeholder = _placeholder_for(value, default_batch_size)
    return placeholder, {single_key: placeholder}


def build_raw_supervised_input_receiver_fn(features, labels, default_batch_size=None):
    """Builds a receiver_fn feeding raw features and labels to a train/eval SavedModel.

    Args:
      features: a Tensor or dict of str to Tensor; only dtype and shape are used
        (dimension 0 becomes `default_batch_size`). A single tensor is the input
        named ``input``.
      labels: the same for labels; a single tensor is the input named ``label``.
      default_batch_size: batch size of the placeholders, or None for any.

    Returns:
      A function with no arguments returning a SupervisedInputReceiver.

    Raises:
      ValueError: features and labels share a key.
    """
    feature_keys = features.keys() if isinstance(features, dict) else [
        _SINGLE_RECEIVER_KEY]
    label_keys = labels.keys() if isinstance(labels, dict) else [_SINGLE_LABEL_KEY]
    overlap = sorted(set(feature_keys) & set(label_keys))
    if overlap:
        raise ValueError("features and labels must have distinct keys; both have "
                         f"{overlap}")

    def supervised_input_receiver_fn():
        model_features, feature_inputs = _placeholders(features, default_batch_size,
                                                       _SINGLE_RECEIVER_KEY)
        model_labels, label_inputs = _placeholders(labels, default_batch_size,
                                                   _SINGLE_LABEL_KEY)
        return SupervisedInputReceiver(model_features, model_labels,
                                       {**feature_inputs, **label_inputs})

    return supervised_input_receiver_fn
