"""In-process prediction: one graph and one session, answering request after request.

What `tf.contrib.predictor` gave TF1 users (TF 2 dropped it with contrib):
`from_saved_model(export_dir)` loads a SavedModel once; `from_estimator(estimator,
serving_input_receiver_fn)` builds an Estimator's serving graph in memory and restores
its latest checkpoint (nothing is written to disk), with the signatures
`export_saved_model` would write. Either returns a `Predictor`:
``predictor({"x": array})`` feeds one signature's inputs and returns its outputs as
numpy arrays, without the graph build and checkpoint restore that every
`Estimator.predict` call pays.

Inputs are checked before TensorFlow sees them (missing or unknown keys, a dtype that
does not cast safely, a shape that does not fit), so an error names the input, what
the signature expects and what was given. There is no `from_contrib_estimator`:
`tf.contrib.learn` estimators do not exist here.
"""

from __future__ import annotations

import collections.abc
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from estimator_lite import estimator as estimator_lib
from estimator_lite._engine import executor_choice, feeds, validation
from estimator_lite._engine import runner as runner_lib
from estimator_lite._tf import tf
from estimator_lite.export import receivers
from estimator_lite.export import saved_model as saved_model_lib
from estimator_lite.model_fn import ModeKeys

__all__ = ["Predictor", "from_estimator", "from_saved_model"]

_DEFAULT_SIGNATURE = tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
_DEFAULT_TAGS = (tf.saved_model.tag_constants.SERVING,)
_SIGNATURE_DEF_PROTO = "tensorflow.SignatureDef"


# The predictor ------------------------------------------------------------------------


class Predictor:
    """Answers prediction requests with one graph and one session kept for its life.

    Build one with `from_saved_model` or `from_estimator`. Calling it with a dict
    keyed like the signature's inputs returns a dict keyed like its outputs.
    Thread-safe: any number of threads may call it at once (a TensorFlow session runs
    concurrent requests, and nothing here is shared mutable state); `close()` waits
    for the calls under way, and later calls fail.
    """

    def __init__(self, graph: tf.Graph, session: tf.Session,
                 feed_tensors: Mapping[str, tf.Tensor],
                 fetch_tensors: Mapping[str, tf.Tensor],
                 signature_key: str | None = None) -> None:
        """Wraps an open session (use `from_saved_model` / `from_estimator`).

        Args:
          graph: the tf.Graph holding the tensors.
          session: a tf.compat.v1.Session on `graph`; the Predictor closes it.
          feed_tensors: dict of input name to the tf.Tensor it feeds.
          fetch_tensors: dict of output name to the tf.Tensor (or SparseTensor) it
            returns.
          signature_key: the name of the signature served, for messages.

        Raises:
          ValueError: an input is not a dense tensor.
        """
        for key, tensor in feed_tensors.items():
            if not isinstance(tensor, tf.Tensor):
                raise ValueError(f"input {key!r} is {tensor!r}; a Predictor feeds dense "
                                 "tensors only")
        self._graph, self._session = graph, session
        self._feed_tensors = dict(feed_tensors)
        self._fetch_tensors = dict(fetch_tensors)
        self._signature_key = signature_key
        self._inputs = {key: feeds.InputSpec(key, tensor)
                        for key, tensor in self._feed_tensors.items()}
        self._input_keys = sorted(self._feed_tensors)
        self._state = threading.Condition()  # guards _running and _closed
        self._running = 0
        self._closed = False

    graph = property(lambda self: self._graph, doc="The tf.Graph the model lives in.")
    session = property(lambda self: self._session, doc="The tf.compat.v1.Session.")
    feed_tensors = property(lambda self: dict(self._feed_tensors),
                            doc="Input name -> tf.Tensor fed (a copy).")
    fetch_tensors = property(lambda self: dict(self._fetch_tensors),
                             doc="Output name -> tf.Tensor returned (a copy).")
    closed = property(lambda self: self._closed, doc="Whether close() was called.")

    def __repr__(self):
        return (f"Predictor(signature={self._signature_key!r}, inputs="
                f"{self._input_keys}, outputs={sorted(self._fetch_tensors)})")

    def __call__(self, input_dict: Mapping[str, Any]) -> dict[str, Any]:
        """Runs one request.

        Args:
          input_dict: dict of input name to array-like (numpy array, list, scalar),
            one entry per signature input.

        Returns:
          Dict of output name to numpy array.

        Raises:
          TypeError: `input_dict` is not a mapping; a value is a graph tensor or of
            a dtype that does not cast safely to its input's.
          ValueError: a missing or unknown key; values out of an integer input's
            range; a shape that does not fit.
          RuntimeError: the predictor is closed.
        """
        feed_dict = self._feed_dict(input_dict)
        with self._state:
            if self._closed:
                raise RuntimeError(f"{self!r} is closed")
            self._running += 1
        try:
            return self._session.run(self._fetch_tensors, feed_dict=feed_dict)
        finally:
            with self._state:
                self._running -= 1
                if self._closed:  # close() is waiting for the calls under way
                    self._state.notify_all()

    def _feed_dict(self, input_dict):
        if not isinstance(input_dict, collections.abc.Mapping):
            raise TypeError(f"a Predictor takes a dict of input name to array, with keys "
                            f"{self._input_keys}; got {type(input_dict).__name__}")
        unknown = sorted(str(k) for k in input_dict if k not in self._inputs)
        if unknown:
            raise ValueError(f"unknown input key(s) {unknown}; the signature's inputs are "
                             f"{self._input_keys}")
        missing = [k for k in self._input_keys if k not in input_dict]
        if missing:
            raise ValueError(f"missing input(s) {missing}; the signature's inputs are "
                             f"{self._input_keys}")
        return {self._feed_tensors[key]: spec.feed_value(input_dict[key])
                for key, spec in self._inputs.items()}

    def close(self) -> None:
        """Waits for the calls under way, then closes the session (idempotent)."""
        with self._state:
            if self._closed:
                return
            self._closed = True
            self._state.wait_for(lambda: self._running == 0)
        self._session.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


# Signatures -----------------------------------------------------------------------


def _select_signature(signatures, key, argument, source):
    """(key, SignatureDef): `key`'s, else 'serving_default', else the only one.

    Raises:
      ValueError: `key` is not among `signatures`, or none was named and there
        is no default to choose; the message lists the available keys.
    """
    available = sorted(signatures)
    if key is None:
        if _DEFAULT_SIGNATURE in signatures:
            key = _DEFAULT_SIGNATURE
        elif len(signatures) == 1:
            key = available[0]
        else:
            raise ValueError(f"{source} has no {_DEFAULT_SIGNATURE!r} signature and "
                             f"{len(available)} others; pass {argument}, one of "
                             f"{available}")
    elif key not in signatures:
        raise ValueError(f"{argument} {key!r} is not a signature of {source}; "
                         f"available: {available}")
    return key, signatures[key]


def _signature_tensors(signature, graph):
    """({input name: tensor}, {output name: tensor}) of a SignatureDef in `graph`."""
    def tensors(infos):
        return {name: tf.saved_model.utils.get_tensor_from_tensor_info(info, graph)
                for name, info in infos.items()}
    return tensors(signature.inputs), tensors(signature.outputs)


def _named_tensors(argument, names, graph):
    if not isinstance(names, collections.abc.Mapping) or not names:
        raise TypeError(f"{argument} must be a non-empty dict of key to tensor name, "
                        f"got {names!r}")
    try:
        return {key: graph.get_tensor_by_name(name) for key, name in names.items()}
    except (KeyError, ValueError) as e:
        raise ValueError(f"{argument} names a tensor the graph lacks: {e}") from e


# Constructors ---------------------------------------------------------------------


def _check_optional(name, value, cls, cls_name):
    if value is not None and not isinstance(value, cls):
        raise TypeError(f"{name} must be a {cls_name} or None, got {value!r} of type "
                        f"{type(value).__name__}")


def _tag_list(tags):
    """The MetaGraph tags: 'serve' by default; a 'a,b' string or a list of str."""
    if tags is None:
        return list(_DEFAULT_TAGS)
    if isinstance(tags, str):
        tags = tags.split(",")
    if (not isinstance(tags, (list, tuple, set, frozenset)) or not tags
            or not all(isinstance(t, str) and t for t in tags)):
        raise TypeError(f"tags must be a comma-separated str or a non-empty list of "
                        f"str, got {tags!r}")
    return list(tags)


def _check_saved_model_arguments(signature_def_key, signature_def, input_names,
                                 output_names):
    """The rules of tf.contrib.predictor: one way of naming the tensors."""
    if signature_def_key is not None and signature_def is not None:
        raise ValueError("pass signature_def_key or signature_def, not both")
    if (input_names is None) != (output_names is None):
        raise ValueError("input_names and output_names go together: pass both or "
                         f"neither (got input_names={input_names!r}, "
                         f"output_names={output_names!r})")
    if input_names is not None and (signature_def_key is not None
                                    or signature_def is not None):
        raise ValueError("input_names/output_names replace the signature: do not also "
                         "pass signature_def_key or signature_def")
    _check_optional("signature_def_key", signature_def_key, str, "str")
    descriptor = getattr(signature_def, "DESCRIPTOR", None)
    if signature_def is not None and getattr(descriptor, "full_name",
                                             None) != _SIGNATURE_DEF_PROTO:
        raise TypeError(f"signature_def must be a SignatureDef proto, got "
                        f"{signature_def!r}")


def _load_saved_model(session, tags, export_dir):
    """Loads the MetaGraph tagged `tags` into the session's graph; returns it.

    Raises:
      ValueError: no MetaGraph has exactly these tags (TF's message lists them).
    """
    try:
        return tf.saved_model.loader.load(session, tags, export_dir)
    except RuntimeError as e:
        if "could not be found in SavedModel" not in str(e):
            raise
        raise ValueError(f"tags {tags} do not name a MetaGraph of {export_dir}: {e}"
                         ) from e


def from_saved_model(export_dir: str | bytes | os.PathLike[str],
                     signature_def_key: str | None = None, signature_def: Any = None,
                     input_names: Mapping[str, str] | None = None,
                     output_names: Mapping[str, str] | None = None,
                     tags: str | Iterable[str] | None = None,
                     graph: tf.Graph | None = None,
                     config: tf.ConfigProto | None = None) -> Predictor:
    """A Predictor serving one signature of a SavedModel (also tf.estimator's).

    Args:
      export_dir: the SavedModel directory (str, bytes as export_saved_model
        returns it, or a path).
      signature_def_key: the signature to serve; default 'serving_default', or
        the only signature.
      signature_def: a SignatureDef proto to serve instead of a named one.
      input_names: a dict of key to tensor name ('x:0') to serve instead of a
        signature; with `output_names` or not at all.
      output_names: the same for the outputs; with `input_names` or not at all.
      tags: the MetaGraph's tags: a list of str, or a comma-separated str;
        default 'serve'.
      graph: the tf.Graph to load into (default: a new one, finalized once
        loaded so no thread can add ops to it).
      config: tf.compat.v1.ConfigProto for the session.

    Returns:
      A Predictor.

    Raises:
      TypeError: an argument of the wrong type.
      ValueError: conflicting arguments, tags naming no MetaGraph, or a signature
        key that is not in the SavedModel (the message lists them).
      OSError: `export_dir` holds no SavedModel.
    """
    _check_saved_model_arguments(signature_def_key, signature_def, input_names,
                                 output_names)
    if not isinstance(export_dir, (str, bytes, os.PathLike)):
        raise TypeError(f"export_dir must be a path, got {export_dir!r}")
    export_dir = os.fsdecode(export_dir)
    tags = _tag_list(tags)
    _check_optional("graph", graph, tf.Graph, "tf.Graph")
    _check_optional("config", config, tf.ConfigProto, "tf.compat.v1.ConfigProto")
    own_graph = graph is None
    graph = tf.Graph() if own_graph else graph
    session = tf.Session(graph=graph, config=config)
    try:
        with graph.as_default():
            meta_graph = _load_saved_model(session, tags, export_dir)
        key = None  # input_names, or a signature_def given: no key to name
        if input_names is not None:
            feed_tensors = _named_tensors("input_names", input_names, graph)
            fetch_tensors = _named_tensors("output_names", output_names, graph)
        else:
            if signature_def is None:
                key, signature_def = _select_signature(
                    meta_graph.signature_def, signature_def_key, "signature_def_key",
                    f"the SavedModel in {export_dir} (tags {tags})")
            feed_tensors, fetch_tensors = _signature_tensors(signature_def, graph)
        predictor = Predictor(graph, session, feed_tensors, fetch_tensors,
                              signature_key=key)
    except BaseException:
        session.close()
        raise
    if own_graph:
        graph.finalize()
    return predictor


def _session_config(estimator):
    """The estimator's session config, limited to this machine (as export uses)."""
    return runner_lib.local_session_config(estimator.config.session_config)


def _build_serving_graph(estimator, serving_input_receiver_fn, output_key):
    """In the default graph: what export_saved_model's PREDICT MetaGraph holds.

    Returns:
      (signature key, SignatureDef, Saver, op initializing local variables and
      tables), for the checkpoint restore that replaces the SavedModel load.
    """
    tf.train.get_or_create_global_step()
    receiver = serving_input_receiver_fn()
    if not isinstance(receiver, receivers.SERVING_RECEIVER_TYPES):
        raise TypeError("serving_input_receiver_fn must return a ServingInputReceiver, "
                        f"got {receiver!r}")
    spec = estimator_lib.call_model_fn(estimator, receiver.features, None,
                                       ModeKeys.PREDICT)
    signatures = saved_model_lib.mode_signature_defs(ModeKeys.PREDICT, spec, receiver)
    key, signature = _select_signature(signatures, output_key, "output_key",
                                       "the model_fn's export_outputs")
    return (key, signature, saved_model_lib.restoring_saver(spec.scaffold.saver),
            saved_model_lib.main_op())


def from_estimator(estimator: estimator_lib.Estimator,
                   serving_input_receiver_fn: Callable[[], Any],
                   output_key: str | None = None, graph: tf.Graph | None = None,
                   config: tf.ConfigProto | None = None) -> Predictor:
    """A Predictor serving an Estimator's latest checkpoint, without exporting it.

    Builds the graph `export_saved_model` would export (the receiver fn, the
    model_fn in PREDICT mode, the signatures of its export outputs), restores the
    latest checkpoint and initializes local variables and tables, as loading the
    SavedModel would: the outputs are the exported SavedModel's.

    Args:
      estimator: an estimator_lite Estimator (canned ones included).
      serving_input_receiver_fn: returns a ServingInputReceiver, as for
        export_saved_model.
      output_key: the export output (signature) to serve; default
        'serving_default'.
      graph: the tf.Graph to build in (default: a new one, with the estimator's
        tf_random_seed, finalized once built).
      config: tf.compat.v1.ConfigProto for the session (default: the
        estimator's session_config without device filters).

    Returns:
      A Predictor.

    Raises:
      TypeError: not an Estimator, a receiver fn that is not callable or returns
        no ServingInputReceiver, or a wrong graph or config.
      ValueError: no checkpoint in the estimator's model_dir, or an unknown
        output_key (the message lists the keys).
    """
    if not isinstance(estimator, estimator_lib.Estimator):
        raise TypeError(f"estimator must be an estimator_lite Estimator, got "
                        f"{estimator!r} of type {type(estimator).__name__}")
    validation.check_callable("serving_input_receiver_fn", serving_input_receiver_fn)
    _check_optional("output_key", output_key, str, "str")
    _check_optional("graph", graph, tf.Graph, "tf.Graph")
    _check_optional("config", config, tf.ConfigProto, "tf.compat.v1.ConfigProto")
    checkpoint_path = estimator.latest_checkpoint()
    if checkpoint_path is None:
        raise ValueError(f"no checkpoint in the estimator's model_dir "
                         f"{estimator.model_dir!r}; train it first")
    own_graph = graph is None
    graph = tf.Graph() if own_graph else graph
    with graph.as_default():
        if own_graph and estimator.config.tf_random_seed is not None:
            tf.set_random_seed(estimator.config.tf_random_seed)
        key, signature, saver, init_op = _build_serving_graph(
            estimator, serving_input_receiver_fn, output_key)
    config = config or _session_config(estimator)
    if own_graph:
        graph.finalize()
        config = executor_choice.session_config(graph, config, master="",
                                                setup=(saver, init_op))
    session = tf.Session(graph=graph, config=config)
    try:
        with graph.as_default():  # a Saver restores in graph mode only
            saver.restore(session, checkpoint_path)
        session.run(init_op)
        feed_tensors, fetch_tensors = _signature_tensors(signature, graph)
        return Predictor(graph, session, feed_tensors, fetch_tensors, signature_key=key)
    except BaseException:
        session.close()
        raise
