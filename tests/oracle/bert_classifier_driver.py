"""A program written the way BERT's run_classifier.py is, run on both libraries.

`model_fn_builder` returns a model_fn giving a `TPUEstimatorSpec` with `scaffold_fn`
(which calls `tf.compat.v1.train.init_from_checkpoint` on a tiny pre-trained
checkpoint this driver writes) and `eval_metrics=(metric_fn, [...])`;
`input_fn_builder` reads `params["batch_size"]`; `TPUEstimator(use_tpu=False)`
trains, evaluates, predicts and exports; a second TPUEstimator warm-starts from
the first and runs `train_and_evaluate`. A tiny one-layer, one-head transformer
encoder keeps it fast.

    python bert_classifier_driver.py {lite|oracle} WORK_DIR   # prints one JSON line

`lite` uses estimator_lite.tpu; `oracle` uses tf.compat.v1.estimator.tpu
(TF <= 2.15 with tensorflow-estimator).
"""

import json
import os
import sys

import numpy as np
import tensorflow as tf

v1 = tf.compat.v1

VOCAB_SIZE = 16
SEQ_LENGTH = 6
HIDDEN_SIZE = 8
NUM_LABELS = 2
TRAIN_BATCH_SIZE = 8
EVAL_BATCH_SIZE = 8
PREDICT_BATCH_SIZE = 4
NUM_TRAIN_STEPS = 12
LEARNING_RATE = 0.05
# The "pre-trained" variables the tiny checkpoint holds (BERT's names).
PRETRAINED = {
    "bert/embeddings/word_embeddings": [VOCAB_SIZE, HIDDEN_SIZE],
    "bert/embeddings/token_type_embeddings": [2, HIDDEN_SIZE],
    "bert/encoder/layer_0/attention/self/query/kernel": [HIDDEN_SIZE, HIDDEN_SIZE],
    "bert/encoder/layer_0/attention/self/key/kernel": [HIDDEN_SIZE, HIDDEN_SIZE],
    "bert/encoder/layer_0/attention/self/value/kernel": [HIDDEN_SIZE, HIDDEN_SIZE],
    "bert/pooler/dense/kernel": [HIDDEN_SIZE, HIDDEN_SIZE],
    "bert/pooler/dense/bias": [HIDDEN_SIZE],
}


def libraries(which):
    """(the tpu module, the estimator module) of `which` library."""
    if which == "oracle":
        return v1.estimator.tpu, tf.estimator
    import estimator_lite
    import estimator_lite.tpu
    return estimator_lite.tpu, estimator_lite


def make_pretrained_checkpoint(path):
    """Writes PRETRAINED's variables (fixed random values) as a TF1 checkpoint."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    rng = np.random.RandomState(0)
    with tf.Graph().as_default():
        for name, shape in PRETRAINED.items():
            v1.get_variable(name, initializer=(0.5 * rng.randn(*shape)).astype(np.float32))
        with v1.Session() as session:
            session.run(v1.global_variables_initializer())
            return v1.train.Saver().save(session, path)


def make_examples(count, seed):
    """Token ids, mask, segments; label 1 when token 3 appears (a learnable rule)."""
    rng = np.random.RandomState(seed)
    input_ids = rng.randint(1, VOCAB_SIZE, size=(count, SEQ_LENGTH)).astype(np.int32)
    lengths = rng.randint(3, SEQ_LENGTH + 1, size=count)
    input_mask = (np.arange(SEQ_LENGTH)[None, :] < lengths[:, None]).astype(np.int32)
    input_ids *= input_mask
    segment_ids = (np.arange(SEQ_LENGTH)[None, :] >= 3).astype(np.int32) * input_mask
    label_ids = (input_ids == 3).any(axis=1).astype(np.int32)
    return {"input_ids": input_ids, "input_mask": input_mask,
            "segment_ids": segment_ids, "label_ids": label_ids,
            "is_real_example": np.ones(count, np.int32)}


def input_fn_builder(examples, is_training, drop_remainder, seen):
    """BERT's shape: the returned input_fn reads params["batch_size"]."""

    def input_fn(params):
        batch_size = params["batch_size"]
        seen.append(("input_fn", sorted(params), batch_size))
        dataset = tf.data.Dataset.from_tensor_slices(examples)
        if is_training:
            dataset = dataset.repeat()
        return dataset.batch(batch_size, drop_remainder=drop_remainder)

    return input_fn


def dense(inputs, name, activation=None):
    with v1.variable_scope(name):
        kernel = v1.get_variable("kernel", [HIDDEN_SIZE, HIDDEN_SIZE])
        outputs = tf.matmul(inputs, kernel)
        if name == "dense":
            outputs += v1.get_variable("bias", [HIDDEN_SIZE],
                                       initializer=v1.zeros_initializer())
        return activation(outputs) if activation else outputs


def create_model(input_ids, input_mask, segment_ids, labels):
    """Embeddings, one self-attention layer, pooler, classifier (BERT's layout)."""
    with v1.variable_scope("bert"):
        with v1.variable_scope("embeddings"):
            words = v1.get_variable("word_embeddings", [VOCAB_SIZE, HIDDEN_SIZE])
            types = v1.get_variable("token_type_embeddings", [2, HIDDEN_SIZE])
            embedded = tf.gather(words, input_ids) + tf.gather(types, segment_ids)
        flat = tf.reshape(embedded, [-1, HIDDEN_SIZE])
        with v1.variable_scope("encoder/layer_0/attention/self"):
            def project(name):
                return tf.reshape(dense(flat, name), [-1, SEQ_LENGTH, HIDDEN_SIZE])
            query, key, value = project("query"), project("key"), project("value")
        scores = tf.matmul(query, key, transpose_b=True) / np.sqrt(HIDDEN_SIZE)
        mask = tf.cast(input_mask[:, None, :], tf.float32)
        scores += (1.0 - mask) * -10000.0
        context = tf.matmul(tf.nn.softmax(scores), value) + embedded
        with v1.variable_scope("pooler"):
            pooled = dense(context[:, 0, :], "dense", activation=tf.tanh)
    output_weights = v1.get_variable(
        "output_weights", [NUM_LABELS, HIDDEN_SIZE],
        initializer=v1.constant_initializer(
            np.random.RandomState(1).randn(NUM_LABELS, HIDDEN_SIZE) * 0.02))
    output_bias = v1.get_variable("output_bias", [NUM_LABELS],
                                  initializer=v1.zeros_initializer())
    with v1.variable_scope("loss"):
        logits = tf.nn.bias_add(tf.matmul(pooled, output_weights, transpose_b=True),
                                output_bias)
        probabilities = tf.nn.softmax(logits, axis=-1)
        log_probs = tf.nn.log_softmax(logits, axis=-1)
        one_hot = tf.one_hot(labels, depth=NUM_LABELS, dtype=tf.float32)
        per_example_loss = -tf.reduce_sum(one_hot * log_probs, axis=-1)
        loss = tf.reduce_mean(per_example_loss)
    return loss, per_example_loss, logits, probabilities


def create_train_op(loss):
    """BERT's optimization.create_optimizer shape: decayed LR, clipping, manual step."""
    global_step = v1.train.get_or_create_global_step()
    learning_rate = v1.train.polynomial_decay(
        LEARNING_RATE, global_step, NUM_TRAIN_STEPS, end_learning_rate=0.0, power=1.0)
    optimizer = v1.train.AdamOptimizer(learning_rate)
    tvars = v1.trainable_variables()
    grads, _ = tf.clip_by_global_norm(tf.gradients(loss, tvars), clip_norm=1.0)
    train_op = optimizer.apply_gradients(zip(grads, tvars, strict=True))
    # BERT groups the step increment with the update, leaving their order to TF's
    # scheduler, so a step's learning rate could read the step before or after the
    # increment (it differs between TF releases). Ordered here so both libraries
    # compute the same numbers.
    with tf.control_dependencies([train_op]):
        return global_step.assign(global_step + 1)


def model_fn_builder(tpu, mode_keys, init_checkpoint, seen, host_call_dir=None):
    """BERT's shape: returns a model_fn giving a TPUEstimatorSpec."""

    def model_fn(features, labels, mode, params):
        seen.append(("model_fn", mode, sorted(params), params.get("batch_size"),
                     params.get("use_tpu")))
        label_ids = features["label_ids"]
        is_real_example = tf.cast(features["is_real_example"], tf.float32)
        total_loss, per_example_loss, logits, probabilities = create_model(
            features["input_ids"], features["input_mask"], features["segment_ids"],
            label_ids)
        tvars = v1.trainable_variables()
        assignment_map = {v.name.split(":")[0]: v.name.split(":")[0] for v in tvars
                          if v.name.split(":")[0] in PRETRAINED}

        def tpu_scaffold():
            v1.train.init_from_checkpoint(init_checkpoint, assignment_map)
            return v1.train.Scaffold()

        if mode == mode_keys.TRAIN:
            host_call = None
            if host_call_dir is not None:
                host_call = (host_call_fn(host_call_dir),
                             [tf.reshape(v1.train.get_or_create_global_step(), [1]),
                              tf.reshape(total_loss, [1])])
            return tpu.TPUEstimatorSpec(mode, loss=total_loss,
                                        train_op=create_train_op(total_loss),
                                        scaffold_fn=tpu_scaffold, host_call=host_call)
        if mode == mode_keys.EVAL:
            def metric_fn(per_example_loss, label_ids, logits, is_real_example):
                predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
                return {
                    "eval_accuracy": v1.metrics.accuracy(
                        labels=label_ids, predictions=predictions,
                        weights=is_real_example),
                    "eval_loss": v1.metrics.mean(values=per_example_loss,
                                                 weights=is_real_example),
                }
            return tpu.TPUEstimatorSpec(
                mode, loss=total_loss, scaffold_fn=tpu_scaffold,
                eval_metrics=(metric_fn, [per_example_loss, label_ids, logits,
                                          is_real_example]))
        return tpu.TPUEstimatorSpec(mode, predictions={"probabilities": probabilities},
                                    scaffold_fn=tpu_scaffold)

    return model_fn


def host_call_fn(logdir):
    """A host_call writing the loss as a summary (tensor2tensor/mesh-tf style)."""

    def host_fn(global_step, loss):
        writer = tf.summary.create_file_writer(logdir)
        with writer.as_default(), tf.summary.record_if(True):
            tf.summary.scalar("host_loss", loss[0], step=global_step[0])
            return v1.summary.all_v2_summary_ops()

    return host_fn


def serving_input_receiver_fn(estimator_lib):
    """What BERT users wrote to serve a fine-tuned classifier."""
    features = {name: v1.placeholder(tf.int32, [None, SEQ_LENGTH], name=name)
                for name in ("input_ids", "input_mask", "segment_ids")}
    features["label_ids"] = v1.placeholder(tf.int32, [None], name="label_ids")
    features["is_real_example"] = v1.placeholder(tf.int32, [None], name="is_real_example")
    return estimator_lib.export.ServingInputReceiver(features, features)


def signatures(export_dir):
    """{signature key: {method, inputs, outputs}} of the 'serve' MetaGraph."""
    with tf.Graph().as_default(), v1.Session() as session:
        meta_graph = v1.saved_model.loader.load(session, ["serve"], export_dir)
    return {key: {"method": sig.method_name, "inputs": sorted(sig.inputs),
                  "outputs": sorted(sig.outputs)}
            for key, sig in meta_graph.signature_def.items()}


def count_host_summaries(logdir):
    count = 0
    for name in os.listdir(logdir):
        for event in v1.train.summary_iterator(os.path.join(logdir, name)):
            count += sum(value.tag == "host_loss" for value in event.summary.value)
    return count


def run(which, work_dir):
    """Runs the program; returns what both libraries must agree on."""
    tpu, estimator_lib = libraries(which)
    init_checkpoint = make_pretrained_checkpoint(os.path.join(work_dir, "pretrained",
                                                              "bert_model.ckpt"))
    train, evaluation = make_examples(64, seed=1), make_examples(20, seed=2)
    seen = []
    host_dir = os.path.join(work_dir, "host_call")
    run_config = tpu.RunConfig(
        model_dir=os.path.join(work_dir, "classifier"), save_checkpoints_steps=1000,
        tpu_config=tpu.TPUConfig(iterations_per_loop=1000, num_shards=8,
                                 per_host_input_for_training=(
                                     tpu.InputPipelineConfig.PER_HOST_V2)))
    estimator = tpu.TPUEstimator(
        use_tpu=False,
        model_fn=model_fn_builder(tpu, estimator_lib.ModeKeys, init_checkpoint, seen,
                                  host_dir),
        config=run_config, train_batch_size=TRAIN_BATCH_SIZE,
        eval_batch_size=EVAL_BATCH_SIZE, predict_batch_size=PREDICT_BATCH_SIZE)
    estimator.train(input_fn_builder(train, True, True, seen), max_steps=NUM_TRAIN_STEPS)
    metrics = estimator.evaluate(input_fn_builder(evaluation, False, False, seen))
    predictions = [p["probabilities"].tolist() for p in estimator.predict(
        input_fn_builder(evaluation, False, False, seen))]
    export_dir = estimator.export_saved_model(
        os.path.join(work_dir, "export"), lambda: serving_input_receiver_fn(estimator_lib))

    warm = tpu.TPUEstimator(
        use_tpu=False,
        model_fn=model_fn_builder(tpu, estimator_lib.ModeKeys, init_checkpoint, []),
        config=run_config.replace(model_dir=os.path.join(work_dir, "warm")),
        train_batch_size=TRAIN_BATCH_SIZE, eval_batch_size=EVAL_BATCH_SIZE,
        warm_start_from=estimator.model_dir)
    warm_metrics, _ = estimator_lib.train_and_evaluate(
        warm, estimator_lib.TrainSpec(input_fn_builder(train, True, True, []), max_steps=4),
        estimator_lib.EvalSpec(input_fn_builder(evaluation, False, False, []), steps=None,
                               throttle_secs=0))
    return {
        "metrics": {k: float(v) for k, v in metrics.items()},
        "predictions": predictions,
        "signatures": signatures(export_dir),
        "warm_metrics": {k: float(v) for k, v in warm_metrics.items()},
        "params_seen": [list(entry) for entry in seen],
        "host_call_summaries": count_host_summaries(host_dir),
    }


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1], sys.argv[2])))
