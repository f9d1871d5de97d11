"""Class-id and class-name predictions shared by the classification heads."""

from estimator_lite._tf import tf

__all__ = ["all_class_ids", "all_class_names", "class_names"]


def _vocabulary_tensor(n_classes, label_vocabulary):
    names = label_vocabulary or [str(i) for i in range(n_classes)]
    return tf.constant(list(names), dtype=tf.string)


# The name of a class the vocabulary has no word for (a binary head's
# one-word vocabulary), as tf.estimator's lookup table's default.
_UNKNOWN_CLASS = "UNK"


def class_names(class_ids, n_classes, label_vocabulary):
    """String class names of int `class_ids` (the vocabulary entry, else the id)."""
    if label_vocabulary is None:
        return tf.as_string(class_ids, name="str_classes")
    names = tuple(label_vocabulary)
    names += (_UNKNOWN_CLASS,) * (n_classes - len(names))
    return tf.gather(_vocabulary_tensor(n_classes, names), class_ids,
                     name="str_classes")


def _tile_over_batch(row, like):
    batch_size = tf.shape(like)[0]
    return tf.tile(tf.expand_dims(row, 0), tf.stack([batch_size, 1]))


def all_class_ids(n_classes, like):
    """int32 [batch_size, n_classes]: every class id, per example of `like`."""
    return _tile_over_batch(tf.range(n_classes, dtype=tf.int32), like)


def all_class_names(n_classes, label_vocabulary, like):
    """string [batch_size, n_classes]: every class name, per example of `like`."""
    return _tile_over_batch(_vocabulary_tensor(n_classes, label_vocabulary), like)
