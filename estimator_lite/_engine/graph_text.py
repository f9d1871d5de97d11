"""A GraphDef as protobuf text, byte for byte what `tf.io.write_graph` writes.

`graph.pbtxt` is written at the start of every training run, and protobuf's
text printer is pure Python: about 170 ms for a canned wide & deep graph (2,750
nodes), paid again by each `train()` call of a local `train_and_evaluate`, which
rebuilds the same graph. A graph's text is its nodes' texts one after another,
then its other fields, so the text of each node of the last graph written is kept
and reused when the next graph holds the same node (the same serialized bytes):
on an unchanged graph this takes about 26 ms. Memory stays at one graph's text.
"""

import inspect
import threading

from google.protobuf import text_format

__all__ = ["graph_def_text"]

# TensorFlow's writer passes float_format="" (floats printed as Python doubles:
# -1.4142135381698608) for as long as protobuf has that argument (TF 1.15 to the
# TF 2 releases on protobuf 4); on protobuf 7 it is gone and floats print shortest
# (-1.4142135). Either way both texts parse to the same float32 values.
_PRINT_OPTIONS = ({"float_format": ""} if "float_format" in inspect.signature(
    text_format.MessageToString).parameters else {})


def _to_text(message, indent=0):
    """`message` as protobuf text, with TensorFlow's writer's float format."""
    return text_format.MessageToString(message, indent=indent, **_PRINT_OPTIONS)


class _NodeTextCache:
    """The text block of each node of the last graph printed, by serialized node."""

    def __init__(self):
        self._lock = threading.Lock()
        self._texts = {}

    def print_nodes(self, nodes):
        """Returns the text blocks of `nodes`, reusing the last graph's where equal."""
        with self._lock:
            previous = self._texts
        texts = {}
        blocks = []
        for node in nodes:
            key = node.SerializeToString(deterministic=True)
            text = texts.get(key) or previous.get(key)
            if text is None:
                text = f"node {{\n{_to_text(node, indent=2)}}}\n"
            texts[key] = text
            blocks.append(text)
        with self._lock:
            self._texts = texts
        return blocks


_NODE_TEXTS = _NodeTextCache()


def graph_def_text(graph_def):
    """Returns `graph_def` in protobuf text format.

    The result is what `tf.io.write_graph(..., as_text=True)` writes.

    Args:
      graph_def: a `GraphDef`.

    Returns:
      The text, a `str`.
    """
    parts = _NODE_TEXTS.print_nodes(graph_def.node)
    # `node` is GraphDef's field 1 and the printer goes by field number, so every
    # other field (library, versions, ...) follows the nodes.
    parts.append(_to_text(_without_nodes(graph_def)))
    return "".join(parts)


def _without_nodes(graph_def):
    """A copy of `graph_def` holding every field but `node` (nodes not copied)."""
    rest = type(graph_def)()
    for field, value in graph_def.ListFields():
        if field.name == "node":
            continue
        if hasattr(value, "extend"):  # a repeated field
            getattr(rest, field.name).extend(value)
        elif field.message_type is None:
            setattr(rest, field.name, value)
        else:
            getattr(rest, field.name).CopyFrom(value)
    return rest
