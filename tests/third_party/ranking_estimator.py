"""TF-Ranking 0.5's estimator path on an unchanged program (`tf.estimator` spelling).

`tensorflow_ranking` imports `from tensorflow import estimator` at package import;
its `model.make_groupwise_ranking_fn` and `head.create_ranking_head` build the
model_fn (EstimatorSpec, ModeKeys, export outputs from `tf.estimator`). The program
trains, evaluates (NDCG, MRR, loss), predicts and exports. Deterministic (zero
initial weights, fixed data), so tf.estimator 2.15 gives the same numbers. Prints
`RESULT {json}`.
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf
import tensorflow_ranking as tfr

LIST_SIZE = 4
STEPS = 40


def _data():
    rng = np.random.RandomState(0)
    x = rng.rand(32, LIST_SIZE, 3).astype(np.float32)
    relevance = (x @ np.array([1.0, -0.5, 0.25], np.float32) > 0.4).astype(np.float32)
    return x, relevance


def input_fn():
    x, relevance = _data()
    return tf.data.Dataset.from_tensor_slices(({"f": x}, relevance)).repeat().batch(8)


def eval_input_fn():
    x, relevance = _data()
    return tf.data.Dataset.from_tensor_slices(({"f": x}, relevance)).batch(8)


def score_fn(context_features, group_features, mode, params, config):
    del context_features, mode, params, config
    f = tf.reshape(group_features["f"], [-1, 3])
    w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.zeros_initializer())
    b = tf.compat.v1.get_variable("b", [1], initializer=tf.compat.v1.zeros_initializer())
    return tf.matmul(f, w) + b


def serving_input_receiver_fn():
    f = tf.compat.v1.placeholder(tf.float32, [None, LIST_SIZE, 3], name="f")
    return tf.estimator.export.ServingInputReceiver({"f": f}, {"f": f})


def main(model_dir):
    metrics = {
        "ndcg@2": tfr.metrics.make_ranking_metric_fn(tfr.metrics.RankingMetricKey.NDCG,
                                                     topn=2),
        "mrr": tfr.metrics.make_ranking_metric_fn(tfr.metrics.RankingMetricKey.MRR)}
    head = tfr.head.create_ranking_head(
        loss_fn=tfr.losses.make_loss_fn(tfr.losses.RankingLossKey.SOFTMAX_LOSS),
        eval_metric_fns=metrics,
        optimizer=tf.compat.v1.train.AdagradOptimizer(learning_rate=0.5))
    model_fn = tfr.model.make_groupwise_ranking_fn(
        group_score_fn=score_fn, group_size=1, transform_fn=None, ranking_head=head)
    estimator = tf.estimator.Estimator(model_fn, model_dir=model_dir)
    estimator.train(input_fn, max_steps=STEPS)
    evaluated = estimator.evaluate(eval_input_fn)
    scores = [p.tolist() for _, p in zip(range(2), estimator.predict(eval_input_fn),
                                                  strict=False)]
    export_dir = estimator.export_saved_model(os.path.join(model_dir, "export"),
                                              serving_input_receiver_fn)
    loaded = tf.saved_model.load(export_dir.decode() if isinstance(export_dir, bytes)
                                 else export_dir)
    print("RESULT " + json.dumps({
        "metrics": {k: float(v) for k, v in evaluated.items()},
        "scores": scores,
        "signatures": sorted(loaded.signatures.keys()),
        "w": estimator.get_variable_value("group_score/w").ravel().tolist()
        if "group_score/w" in estimator.get_variable_names()
        else sorted(estimator.get_variable_names())}))


if __name__ == "__main__":
    main(sys.argv[1])
