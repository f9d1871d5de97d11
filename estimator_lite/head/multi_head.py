"""MultiHead: several named heads on one model, one weighted total loss."""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from estimator_lite import export as export_lib
from estimator_lite._pycompat import zip_strict
from estimator_lite._tf import tf
from estimator_lite.head.base_head import Head, check_prediction_keys
from estimator_lite.head.keys import MetricKeys, SignatureKeys, metric_key
from estimator_lite.head.metrics import Metric
from estimator_lite.model_fn import ModeKeys

__all__ = ["MultiHead"]


def _check_heads(heads):
    if not isinstance(heads, (list, tuple)) or not heads:
        raise ValueError(f"Must specify heads. Given: {heads!r} (a non-empty list of "
                         "heads)")
    for head in heads:
        if not isinstance(head, Head):
            raise TypeError(f"heads must contain only estimator_lite heads, got {head!r} "
                            f"of type {type(head).__name__}")
        if not head.name:
            raise ValueError("All given heads must have name specified. Given: "
                             f"{head!r} (with name None)")
    names = [head.name for head in heads]
    if len(set(names)) != len(names):
        raise ValueError(f"head names must be unique, got {names}")
    return tuple(heads)


def _check_head_weights(head_weights, n_heads):
    if head_weights is None:
        return None
    weights = tuple(head_weights)
    if len(weights) != n_heads:
        raise ValueError("heads and head_weights must have the same size. Given "
                         f"len(heads): {n_heads}. Given len(head_weights): "
                         f"{len(weights)}.")
    for weight in weights:
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real):
            raise TypeError(f"head_weights must contain only numbers, got {weight!r}")
    return weights


class MultiHead(Head):
    """Combines named heads: total loss = sum of head_weight * head loss.

    Logits are a dict of head name to logits, or one Tensor whose last dimension is
    the sum of the heads' logits dimensions (split in head order). Labels are a dict
    of head name to labels. Prediction keys are (head name, key) tuples; export
    outputs are each head's, named '<head>' and '<head>/<signature>', plus
    'predict' with every prediction as '<head>/<key>', and serving_default of the
    first head.
    """

    def __init__(self, heads: Sequence[Head], head_weights: Sequence[float] | None = None,
                 ) -> None:
        """Checks and stores the heads.

        Args:
          heads: non-empty list of named heads (names unique).
          head_weights: None (all 1) or one number per head.

        Raises:
          TypeError / ValueError: an argument has a wrong type or value.
        """
        self._heads = _check_heads(heads)
        self._head_weights = _check_head_weights(head_weights, len(self._heads))
        super().__init__(sum(head.logits_dimension for head in self._heads),
                         name="_".join(head.name for head in self._heads))

    heads = property(lambda self: self._heads, doc="The heads, in order.")

    @property
    def loss_reduction(self) -> str:
        """The heads' common loss reduction.

        Raises:
          ValueError: the heads reduce their losses differently (training needs
            one reduction; as tf.estimator, checked when it is asked for).
        """
        reductions = [head.loss_reduction for head in self._heads]
        if len(set(reductions)) > 1:
            raise ValueError("The loss_reduction must be the same for different heads. "
                             f"Given: {reductions}")
        return reductions[0]

    def _split_logits(self, logits):
        """Returns a dict of head name to that head's logits."""
        if isinstance(logits, dict):
            missing = [h.name for h in self._heads if h.name not in logits]
            if missing:
                raise ValueError(f"logits must have an entry per head; missing {missing}, "
                                 f"got keys {sorted(logits)}")
            return {h.name: logits[h.name] for h in self._heads}
        logits = tf.convert_to_tensor(logits)
        last = logits.shape[-1] if logits.shape.ndims else None
        last = getattr(last, "value", last)
        if last is not None and last != self._logits_dimension:
            raise ValueError(f"Could not split logits of shape {logits.shape} among the "
                             "heads with logits dimensions "
                             f"{[h.logits_dimension for h in self._heads]}: the last "
                             f"dimension must be {self._logits_dimension}, got {last}.")
        parts = tf.split(logits, [h.logits_dimension for h in self._heads], axis=-1)
        return {h.name: part for h, part in zip_strict(self._heads, parts)}

    def _head_labels(self, labels):
        if not isinstance(labels, dict):
            raise ValueError(f"labels of a MultiHead must be a dict of head name to "
                             f"labels, got {labels!r}")
        missing = [h.name for h in self._heads if h.name not in labels]
        if missing:
            raise ValueError(f"labels must have an entry per head; missing {missing}, "
                             f"got keys {sorted(labels)}")
        return labels

    def _weight(self, index):
        return 1.0 if self._head_weights is None else float(self._head_weights[index])

    def _head_losses(self, labels, logits, features, mode):
        labels = self._head_labels(labels)
        logits = self._split_logits(logits)
        return [head.loss(labels[head.name], logits[head.name], features, mode)
                for head in self._heads]

    def _total_loss(self, head_losses, regularization_losses):
        weighted = [self._weight(i) * loss for i, loss in enumerate(head_losses)]
        total = tf.add_n(weighted)
        if regularization_losses:
            total += tf.add_n([tf.cast(r, tf.float32) for r in regularization_losses])
        return total

    def loss(self, labels: Any, logits: tf.Tensor,
             features: Mapping[str, Any] | None = None, mode: str | None = None,
             regularization_losses: Iterable[tf.Tensor] | None = None) -> tf.Tensor:
        """Returns sum(head_weight * head loss) + regularization losses."""
        with tf.name_scope("losses"):
            return self._total_loss(self._head_losses(labels, logits, features, mode),
                                    regularization_losses)

    def predictions(  # type: ignore[override]  # keyed by (head, key), as tf.estimator's
            self, logits: tf.Tensor | Mapping[str, tf.Tensor],
            keys: Iterable[tuple[str, str]] | None = None,
            ) -> dict[tuple[str, str], tf.Tensor]:
        """Returns {(head name, key): Tensor} (only `keys`, such tuples, if given)."""
        logits = self._split_logits(logits)
        every = {}
        for head in self._heads:
            with tf.name_scope(head.name):
                for key, value in head.predictions(logits[head.name]).items():
                    every[(head.name, key)] = value
        keys = check_prediction_keys(keys, tuple(every))
        return {key: every[key] for key in keys}

    def _export_outputs(self, predictions):
        outputs = {}
        for index, head in enumerate(self._heads):
            own = {key: value for (name, key), value in predictions.items()
                   if name == head.name}
            head_outputs = head._export_outputs(own)  # noqa: SLF001 (same family)
            if index == 0:
                outputs[SignatureKeys.SERVING_DEFAULT] = head_outputs[
                    SignatureKeys.SERVING_DEFAULT]
            for signature, output in head_outputs.items():
                name = (head.name if signature == SignatureKeys.SERVING_DEFAULT
                        else f"{head.name}/{signature}")
                outputs[name] = output
        outputs[SignatureKeys.PREDICT] = export_lib.PredictOutput(
            {f"{name}/{key}": value for (name, key), value in predictions.items()})
        return outputs

    def metrics(self, regularization_losses: Iterable[tf.Tensor] | None = None,
                ) -> dict[str, Any]:
        """'loss/<head>' per head, and the regularization loss if asked for.

        As tf.estimator's MultiHead, the heads' own metrics are not here:
        `update_metrics` builds them (each head's `metrics()`) and adds them.
        """
        metrics = {}
        if regularization_losses is not None:
            key = metric_key(MetricKeys.LOSS_REGULARIZATION, self._name)
            metrics[key] = Metric(key, tf.metrics.mean)
        for head in self._heads:
            key = metric_key(MetricKeys.LOSS, head.name)
            metrics[key] = Metric(key, tf.metrics.mean)
        return metrics

    def update_metrics(self, eval_metrics: dict[str, Any], features: Mapping[str, Any],
                       logits: tf.Tensor, labels: Any,
                       regularization_losses: Iterable[tf.Tensor] | None = None,
                       ) -> dict[str, Any]:
        """Builds the per-head losses, the regularization loss and every head's
        own metrics, which it adds to `eval_metrics` (as tf.estimator's MultiHead:
        its `metrics()` holds only the losses).

        Returns:
          `eval_metrics`, its Metric objects now holding (value, update_op).
        """
        labels = self._head_labels(labels)
        logits = self._split_logits(logits)
        key = metric_key(MetricKeys.LOSS_REGULARIZATION, self._name)
        if regularization_losses and isinstance(eval_metrics.get(key), Metric):
            eval_metrics[key].update_state(tf.add_n(
                [tf.cast(r, tf.float32) for r in regularization_losses]))
        for head in self._heads:
            with tf.name_scope(head.name):
                loss_metric = eval_metrics.get(metric_key(MetricKeys.LOSS, head.name))
                if isinstance(loss_metric, Metric) and not loss_metric.built:
                    loss_metric.update_state(head.loss(labels[head.name],
                                                       logits[head.name], features))
                # Metrics of this head already in eval_metrics are kept (eagerly
                # they accumulate over calls); the others are the head's new ones.
                own = {key: eval_metrics[key] if isinstance(
                    eval_metrics.get(key), Metric) else metric
                       for key, metric in head.metrics().items()}
                own = head.update_metrics(own, features, logits[head.name],
                                          labels[head.name])
                eval_metrics.update(own or {})
        return eval_metrics

    def _checked_logits(self, logits):
        """Each head checks its own part when the logits are split."""
        return logits

    def _summary_name(self, key):
        """The total loss is summarized as 'loss', not suffixed (as tf.estimator)."""
        return key

    def _add_train_summaries(self, loss, regularization_losses, features, logits,
                             labels):
        """'loss' and 'regularization_loss' of the whole, and 'loss/<head>': each
        head's own (unweighted, unregularized) training loss, as tf.estimator."""
        super()._add_train_summaries(loss, regularization_losses, features, logits,
                                     labels)
        head_losses = self._head_losses(labels, logits, features, ModeKeys.TRAIN)
        with tf.name_scope(""):
            for head, head_loss in zip_strict(self._heads, head_losses):
                tf.summary.scalar(metric_key(MetricKeys.LOSS, head.name), head_loss)
