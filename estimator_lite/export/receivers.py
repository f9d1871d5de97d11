"""Serving inputs: what a SavedModel's client feeds and what the model_fn receives.

tf.estimator's `ServingInputReceiver`, `TensorServingInputReceiver`,
`build_raw_serving_input_receiver_fn` and `build_parsing_serving_input_receiver_fn`.
"""

import collections

from estimator_lite._engine.input_fn import split_input
from estimator_lite._engine.validation import WrongTypeError
from estimator_lite._tf import tf

__all__ = [
    "ServingInputReceiver", "TensorServingInputReceiver",
    "build_raw_serving_input_receiver_fn", "build_parsing_serving_input_receiver_fn",
    "wrap_input_tensors", "SERVING_RECEIVER_TYPES", "SupervisedInputReceiver",
    "build_raw_supervised_input_receiver_fn", "UnsupervisedInputReceiver",
    "build_supervised_input_receiver_fn_from_input_fn",
]

_SINGLE_FEATURE_KEY = "feature"
_SINGLE_RECEIVER_KEY = "input"
_SINGLE_LABEL_KEY = "label"
_RECEIVER_TENSOR_TYPES = (tf.Tensor, tf.SparseTensor, tf.RaggedTensor)


def _check_input_tensor(name, tensor, where=""):
    """A Tensor, SparseTensor or RaggedTensor (or, as tf.estimator allows, an object
    with a `tensor` attribute that converts to one).

    Raises:
      WrongTypeError: anything else (a ValueError on tf.estimator).
    """
    if isinstance(tensor, _RECEIVER_TENSOR_TYPES):
        return
    if hasattr(tensor, "tensor"):
        try:
            tf.convert_to_tensor(tensor)
            return
        except TypeError:
            pass
    raise WrongTypeError(f"{name} must be a Tensor, SparseTensor, or RaggedTensor"
                         f"{where}, got {tensor!r}")


def wrap_input_tensors(name, tensors, single_key, allow_int_keys=False):
    """A dict of input tensors: a single tensor becomes {single_key: tensor}.

    Args:
      name: the argument, for messages.
      tensors: a tensor, or a dict of str (or int, with allow_int_keys) to tensors.
      single_key: the key of a single tensor.
      allow_int_keys: whether int keys are allowed (features and labels).

    Returns:
      A new dict.

    Raises:
      ValueError: `tensors` is None.
      WrongTypeError: a key or a value of the wrong type.
    """
    if tensors is None:
        raise ValueError(f"{name} must be defined, got None")
    if not isinstance(tensors, dict):
        tensors = {single_key: tensors}
    key_types = (str, int) if allow_int_keys else (str,)
    # "features" -> "feature keys must be ...", as tf.estimator words it.
    item = name[:-1] if name.endswith("s") else name
    for key, tensor in tensors.items():
        if not isinstance(key, key_types) or isinstance(key, bool):
            raise WrongTypeError(f"{item} keys must be strings"
                                 f"{' or ints' if allow_int_keys else ''}, got {key!r} "
                                 f"in {name}")
        _check_input_tensor(f"{item} {key}", tensor, f" (in {name})")
    return dict(tensors)


def _wrap_alternatives(alternatives):
    if alternatives is None:
        return None
    if not isinstance(alternatives, dict):
        raise WrongTypeError("receiver_tensors_alternatives must be a dict of name to "
                             f"receiver tensors, got {alternatives!r}")
    return {name: wrap_input_tensors(f"receiver_tensors_alternatives[{name!r}]",
                                     tensors, _SINGLE_RECEIVER_KEY)
            for name, tensors in alternatives.items()}


_ServingTuple = collections.namedtuple(
    "ServingInputReceiver", ["features", "receiver_tensors",
                             "receiver_tensors_alternatives"])


class ServingInputReceiver(_ServingTuple):
    """Serving input: the features for the model_fn and the tensors a client feeds.

    A single `features` tensor is wrapped as ``{'feature': tensor}`` and a single
    receiver tensor as ``{'input': tensor}`` (as in tf.estimator); use
    `TensorServingInputReceiver` to pass one feature tensor unwrapped.
    """

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        """Validates and wraps the tensors.

        Raises:
          ValueError: features or receiver_tensors is None.
          WrongTypeError (a TypeError and a ValueError): a key or tensor of the
            wrong type.
        """
        return super().__new__(
            cls,
            features=wrap_input_tensors("features", features, _SINGLE_FEATURE_KEY,
                                        allow_int_keys=True),
            receiver_tensors=wrap_input_tensors("receiver_tensors", receiver_tensors,
                                                _SINGLE_RECEIVER_KEY),
            receiver_tensors_alternatives=_wrap_alternatives(
                receiver_tensors_alternatives))


_TensorServingTuple = collections.namedtuple(
    "TensorServingInputReceiver", ["features", "receiver_tensors",
                                   "receiver_tensors_alternatives"])


class TensorServingInputReceiver(_TensorServingTuple):
    """Like ServingInputReceiver, but passes one feature tensor to the model_fn as is."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        """Validates the tensors.

        Raises:
          ValueError: features or receiver_tensors is None.
          WrongTypeError: a tensor or key of the wrong type.
        """
        if features is None:
            raise ValueError("features must be defined, got None")
        _check_input_tensor("TensorServingInputReceiver's feature", features)
        receiver = ServingInputReceiver(features, receiver_tensors,
                                        receiver_tensors_alternatives)
        return super().__new__(
            cls, features=features, receiver_tensors=receiver.receiver_tensors,
            receiver_tensors_alternatives=receiver.receiver_tensors_alternatives)


SERVING_RECEIVER_TYPES = (ServingInputReceiver, TensorServingInputReceiver)


def _placeholder_for(template, default_batch_size):
    """A placeholder of the template's dtype and shape with dimension 0 replaced by
    `default_batch_size` (a scalar template gets a batch dimension, as on
    tf.estimator), named after the template's op in a graph (TensorFlow picks
    `Placeholder_<n>` for an eager tensor or a TensorSpec without a name)."""
    shape = tf.TensorShape([default_batch_size]).concatenate(
        tf.TensorShape(template.shape)[1:])
    try:
        name = template.op.name
    except AttributeError:
        name = getattr(template, "name", None) if isinstance(template, tf.TensorSpec) \
            else None
    return tf.placeholder(dtype=tf.as_dtype(template.dtype), shape=shape, name=name)


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """Builds a serving_input_receiver_fn that feeds raw tensors.

    Args:
      features: a dict of name to Tensor/TensorSpec (or one of them); only dtype
        and shape are used, dimension 0 becoming `default_batch_size` (a scalar
        gets one).
      default_batch_size: batch size of the placeholders, or None for any.

    Returns:
      A function with no arguments returning a ServingInputReceiver (a
      TensorServingInputReceiver for a single tensor).

    Raises:
      TypeError: `features` has the wrong type.
    """
    single = not isinstance(features, dict)
    templates = {_SINGLE_FEATURE_KEY: features} if single else dict(features)
    for name, template in templates.items():
        if not hasattr(template, "dtype") or not hasattr(template, "shape"):
            raise TypeError(f"features[{name!r}] must be a Tensor or TensorSpec, got "
                            f"{template!r}")

    def serving_input_receiver_fn():
        placeholders = {name: _placeholder_for(template, default_batch_size)
                        for name, template in templates.items()}
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


_SupervisedTuple = collections.namedtuple(
    "SupervisedInputReceiver", ["features", "labels", "receiver_tensors"])


class SupervisedInputReceiver(_SupervisedTuple):
    """Features and labels fed to a train or eval SavedModel (tf.estimator's).

    `features` and `labels` go to the model_fn as given (a tensor or a dict);
    `receiver_tensors` are the SavedModel's inputs.
    """

    def __new__(cls, features, labels, receiver_tensors):
        """Validates the tensors.

        Raises:
          ValueError: a field is None.
          WrongTypeError: a tensor or key of the wrong type.
        """
        wrap_input_tensors("features", features, _SINGLE_FEATURE_KEY, allow_int_keys=True)
        wrap_input_tensors("labels", labels, _SINGLE_LABEL_KEY, allow_int_keys=True)
        return super().__new__(
            cls, features=features, labels=labels,
            receiver_tensors=wrap_input_tensors("receiver_tensors", receiver_tensors,
                                                _SINGLE_RECEIVER_KEY))

    @property
    def receiver_tensors_alternatives(self):
        """None: supervised exports have no alternative inputs."""
        return None


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


class UnsupervisedInputReceiver(ServingInputReceiver):
    """A ServingInputReceiver without alternative inputs (tf.estimator's private
    receiver of unsupervised train/eval exports)."""

    def __new__(cls, features, receiver_tensors):
        """Validates the tensors (see ServingInputReceiver)."""
        return super().__new__(cls, features, receiver_tensors, None)


def build_supervised_input_receiver_fn_from_input_fn(input_fn, **input_fn_args):
    """A supervised receiver fn whose placeholders match what `input_fn` returns.

    `input_fn(**input_fn_args)` runs once in a graph of its own, only for the
    dtypes and shapes of its features and labels (dimension 0 becomes any batch).

    Returns:
      A function with no arguments returning a SupervisedInputReceiver.
    """
    with tf.Graph().as_default():
        inputs = split_input(input_fn(**input_fn_args))
    return build_raw_supervised_input_receiver_fn(inputs.features, inputs.labels)
