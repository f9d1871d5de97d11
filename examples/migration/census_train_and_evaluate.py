"""Census-style `train_and_evaluate`: CSV input, feature columns, a named EvalSpec,
a FinalExporter with a tf.Example parsing serving input, legacy `master` TF_CONFIG.

Written as the census sample and Cloud ML Engine trainers of the tf.estimator
era were: the role comes from TF_CONFIG (a single-node `master` cluster here; the
program sets one on a free 127.0.0.1 port when TF_CONFIG is not set), the model is a
custom model_fn over `tf.compat.v1.feature_column.input_layer`, and the serving
input parses serialized tf.Examples. The data (an income-like binary label) is
made here from a fixed seed and written to a CSV file first.

    python census_train_and_evaluate.py --model-dir /tmp/census
"""

import argparse
import csv
import json
import os
import socket
import tempfile

import numpy as np
import tensorflow as tf
from migration_report import find_export_dir, print_result

import estimator_lite as tf_estimator  # migration: import swap

CSV_COLUMNS = ["age", "hours_per_week", "education", "occupation", "income"]
CSV_DEFAULTS = [[0.0], [0.0], [""], [""], [0]]
EDUCATION = ["Bachelors", "HS-grad", "Masters", "Doctorate", "Some-college"]
OCCUPATIONS = ["Tech-support", "Sales", "Exec-managerial", "Craft-repair",
               "Adm-clerical", "Farming-fishing"]
EVAL_NAME = "census"
MAX_STEPS = 120


def write_census_csv(path, num_rows, seed):
    """Writes `num_rows` synthetic census rows; income depends on all features."""
    rng = np.random.RandomState(seed)
    age = rng.randint(18, 70, num_rows)
    hours = rng.randint(10, 70, num_rows)
    education = rng.randint(len(EDUCATION), size=num_rows)
    occupation = rng.randint(len(OCCUPATIONS), size=num_rows)
    education_effect = np.array([1.0, -1.0, 1.5, 2.0, 0.0])[education]
    score = ((age - 40) / 12.0 + (hours - 40) / 10.0 + education_effect
             + 0.8 * (occupation == 2) + rng.normal(0.0, 0.5, num_rows))
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        for row in zip(age, hours, education, occupation, score > 0.5, strict=True):
            writer.writerow([row[0], row[1], EDUCATION[row[2]], OCCUPATIONS[row[3]],
                             int(row[4])])


def feature_columns():
    fc = tf.compat.v1.feature_column
    age = fc.numeric_column("age")
    return [
        fc.bucketized_column(age, boundaries=[25, 30, 35, 40, 45, 50, 55, 60, 65]),
        fc.numeric_column("hours_per_week", normalizer_fn=lambda x: (x - 40.0) / 10.0),
        fc.indicator_column(fc.categorical_column_with_vocabulary_list(
            "education", EDUCATION)),
        fc.indicator_column(fc.categorical_column_with_hash_bucket(
            "occupation", hash_bucket_size=16)),
    ]


def input_fn(csv_path, num_epochs, shuffle, batch_size=64):
    def parse_csv(line):
        columns = tf.io.decode_csv(line, record_defaults=CSV_DEFAULTS)
        features = dict(zip(CSV_COLUMNS, columns, strict=True))
        labels = features.pop("income")
        return features, labels

    dataset = tf.data.TextLineDataset(csv_path)
    if shuffle:
        dataset = dataset.shuffle(buffer_size=1000, seed=7)
    return dataset.repeat(num_epochs).batch(batch_size).map(parse_csv)


def model_fn(features, labels, mode, params):
    net = tf.compat.v1.feature_column.input_layer(features, params["feature_columns"])
    for index, units in enumerate(params["hidden_units"]):
        with tf.compat.v1.variable_scope(f"hiddenlayer_{index}"):
            weights = tf.compat.v1.get_variable(
                "kernel", [net.shape[-1], units],
                initializer=tf.compat.v1.glorot_uniform_initializer(seed=index + 1))
            bias = tf.compat.v1.get_variable("bias", [units],
                                             initializer=tf.compat.v1.zeros_initializer())
            net = tf.nn.relu(tf.matmul(net, weights) + bias)
    with tf.compat.v1.variable_scope("logits"):
        weights = tf.compat.v1.get_variable(
            "kernel", [net.shape[-1], 1],
            initializer=tf.compat.v1.glorot_uniform_initializer(seed=99))
        bias = tf.compat.v1.get_variable("bias", [1],
                                         initializer=tf.compat.v1.zeros_initializer())
        logits = tf.matmul(net, weights) + bias
    probabilities = tf.sigmoid(logits, name="probabilities")
    class_ids = tf.cast(probabilities > 0.5, tf.int64, name="class_ids")
    if mode == tf_estimator.ModeKeys.PREDICT:
        scores = tf.concat([1.0 - probabilities, probabilities], axis=1, name="scores")
        classes = tf.constant([["0", "1"]], name="class_names")
        export_outputs = {
            "serving_default": tf_estimator.export.ClassificationOutput(
                scores=scores, classes=tf.tile(classes, [tf.shape(scores)[0], 1])),
            "predict": tf_estimator.export.PredictOutput(
                {"probabilities": probabilities, "class_ids": class_ids}),
        }
        return tf_estimator.EstimatorSpec(
            mode, predictions={"probabilities": probabilities, "class_ids": class_ids},
            export_outputs=export_outputs)
    labels = tf.reshape(tf.cast(labels, tf.float32), [-1, 1])
    loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
    if mode == tf_estimator.ModeKeys.EVAL:
        return tf_estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "accuracy": tf.compat.v1.metrics.accuracy(labels, class_ids),
            "auc": tf.compat.v1.metrics.auc(labels, probabilities)})
    optimizer = tf.compat.v1.train.AdagradOptimizer(params["learning_rate"])
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tf_estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def serving_input_fn():
    columns = feature_columns()
    spec = tf.feature_column.make_parse_example_spec(columns)
    return tf_estimator.export.build_parsing_serving_input_receiver_fn(spec)()


def set_master_tf_config():
    """A single-node legacy `master` cluster on a free port, unless TF_CONFIG is set."""
    if "TF_CONFIG" in os.environ:
        return
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    os.environ["TF_CONFIG"] = json.dumps({
        "cluster": {"master": [f"127.0.0.1:{port}"]},
        "task": {"type": "master", "index": 0}})


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-dir", required=True)
    args = parser.parse_args()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.INFO)
    set_master_tf_config()

    data_dir = tempfile.mkdtemp(prefix="census_data_")
    train_csv = os.path.join(data_dir, "adult.data.csv")
    eval_csv = os.path.join(data_dir, "adult.test.csv")
    write_census_csv(train_csv, 2000, seed=0)
    write_census_csv(eval_csv, 500, seed=1)

    config = tf_estimator.RunConfig(model_dir=args.model_dir, tf_random_seed=42,
                                    save_checkpoints_steps=60,
                                    log_step_count_steps=20)
    estimator = tf_estimator.Estimator(model_fn, config=config, params={
        "feature_columns": feature_columns(), "hidden_units": [16, 8],
        "learning_rate": 0.3})
    train_spec = tf_estimator.TrainSpec(
        lambda: input_fn(train_csv, num_epochs=None, shuffle=True), max_steps=MAX_STEPS)
    eval_spec = tf_estimator.EvalSpec(
        lambda: input_fn(eval_csv, num_epochs=1, shuffle=False), steps=None,
        name=EVAL_NAME, exporters=[tf_estimator.FinalExporter("census", serving_input_fn)],
        start_delay_secs=0, throttle_secs=0)
    tf_estimator.train_and_evaluate(estimator, train_spec, eval_spec)

    # In a distributed role train_and_evaluate returns nothing useful in
    # tf.estimator: read the final evaluation like TensorBoard would.
    metrics = last_eval_metrics(estimator.eval_dir(EVAL_NAME))
    export_dir = find_export_dir(os.path.join(args.model_dir, "export"))
    print_result(metrics, export_dir=export_dir,
                 config={"task_type": config.task_type, "is_chief": config.is_chief,
                         "num_worker_replicas": config.num_worker_replicas})


def last_eval_metrics(eval_dir):
    """The scalar summaries of the last evaluation written to `eval_dir`."""
    events = sorted(tf.io.gfile.glob(os.path.join(eval_dir, "events.out.tfevents.*")))
    by_step = {}
    for path in events:
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    by_step.setdefault(event.step, {})[value.tag] = value.simple_value
    step = max(by_step)
    return dict(by_step[step], global_step=step)


if __name__ == "__main__":
    main()
