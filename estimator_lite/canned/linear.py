"""LinearClassifier and LinearRegressor: weighted sums of feature columns.

Variables as tf.estimator 2.15's: ``linear/linear_model/<column>/weights`` and
``linear/linear_model/bias_weights``; the default optimizer is Ftrl with learning
rate 0.2. A `linear_sdca.LinearSDCA` given as the optimizer trains the same
model with SDCA instead (see that module).
"""

from estimator_lite._tf import tf
from estimator_lite.canned import core, feature_layers, linear_sdca, optimizers
from estimator_lite.estimator import Estimator
from estimator_lite.model_fn import ModeKeys

__all__ = ["LEARNING_RATE", "LinearClassifier", "LinearRegressor",
           "check_sparse_combiner", "linear_logits"]

LEARNING_RATE = 0.2  # tf.estimator 2.15's rate for an optimizer given by name.


def check_sparse_combiner(sparse_combiner, argument="sparse_combiner"):
    """Checks a sparse combiner name ('mean', 'sqrtn' or 'sum').

    Raises:
      ValueError: another value.
    """
    if sparse_combiner not in feature_layers.SPARSE_COMBINERS:
        raise ValueError(f"{argument} must be one of {feature_layers.SPARSE_COMBINERS}, "
                         f"got {sparse_combiner!r}")
    return sparse_combiner


def linear_logits(features, feature_columns, units, sparse_combiner):
    """The linear model's logits, built under variable scope ``linear``."""
    with tf.variable_scope("linear"):
        return feature_layers.linear_logits(features, feature_columns, units,
                                            sparse_combiner)


def linear_model_fn(features, labels, mode, head, feature_columns, optimizer_fn,
                    sparse_combiner):
    """The model_fn of LinearClassifier / LinearRegressor.

    `optimizer_fn` builds the optimizer, or is the LinearSDCA that trains the model.
    """
    logits = linear_logits(features, feature_columns, head.logits_dimension,
                           sparse_combiner)
    # tf.estimator 2.15's Keras-based linear model nests its name scopes; serving
    # signatures name this tensor, so it gets the same name here (an identity
    # after every variable, so the graph-seeded initial values do not move).
    with tf.name_scope("linear/linear_model/linear/linear_model/linear/linear_model/"):
        logits = tf.identity(logits, name="weighted_sum")
    if isinstance(optimizer_fn, linear_sdca.LinearSDCA):
        return linear_sdca.estimator_spec(optimizer_fn, features, labels, mode, head,
                                          feature_columns, logits)
    op_fn = None
    if mode == ModeKeys.TRAIN:
        op_fn = core.train_op_fn([core.ModelPart("linear", optimizer_fn())],
                                 loss_reduction=core.head_reduction(head))
    return head.create_estimator_spec(features=features, mode=mode, logits=logits,
                                      labels=labels, train_op_fn=op_fn)


class _LinearEstimator(Estimator):
    """Checks the linear arguments and builds the model_fn around a head."""

    def __init__(self, head, feature_columns, model_dir, optimizer, config,
                 warm_start_from, sparse_combiner):
        columns = feature_layers.check_feature_columns(feature_columns)
        if isinstance(optimizer, linear_sdca.LinearSDCA):
            optimizer_fn = linear_sdca.check_usable(optimizer, head, sparse_combiner)
        else:
            optimizer_fn = optimizers.optimizer_factory(optimizer, LEARNING_RATE)
        sparse_combiner = check_sparse_combiner(sparse_combiner)

        def model_fn(features, labels, mode):
            return linear_model_fn(features, labels, mode, head, columns, optimizer_fn,
                                   sparse_combiner)

        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)
        self._head = head


class LinearClassifier(_LinearEstimator):
    """A linear classifier (tf.estimator.LinearClassifier's V2 signature)."""

    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer="Ftrl", config=None,
                 warm_start_from=None, loss_reduction="sum_over_batch_size",
                 sparse_combiner="sum"):
        """Checks the arguments (see tf.estimator.LinearClassifier).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.classifier_head(n_classes, weight_column, label_vocabulary,
                                    loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config,
                         warm_start_from, sparse_combiner)


class LinearRegressor(_LinearEstimator):
    """A linear regressor (tf.estimator.LinearRegressor's V2 signature)."""

    def __init__(self, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer="Ftrl", config=None, warm_start_from=None,
                 loss_reduction="sum_over_batch_size", sparse_combiner="sum"):
        """Checks the arguments (see tf.estimator.LinearRegressor).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        head = core.regressor_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, feature_columns, model_dir, optimizer, config,
                         warm_start_from, sparse_combiner)


class LinearEstimator(_LinearEstimator):
    """A linear model with a user-given head (tf.estimator.LinearEstimator)."""

    def __init__(self, head, feature_columns, model_dir=None, optimizer="Ftrl",
                 config=None, sparse_combiner="sum", warm_start_from=None):
        """Checks the arguments (see tf.estimator.LinearEstimator).

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        super().__init__(core.check_head(head), feature_columns, model_dir, optimizer,
                         config, warm_start_from, sparse_combiner)
