"""Event files: unique writers, scalar summaries, reading metrics back."""

import os

import numpy as np

from estimator_lite._engine import event_files


def test_two_writers_in_one_second_do_not_share_a_file(tmp_path):
    first = event_files.new_summary_writer(str(tmp_path))
    second = event_files.new_summary_writer(str(tmp_path))
    first.add_summary(event_files.scalar_summary({"a": 1.0}), 1)
    second.add_summary(event_files.scalar_summary({"a": 2.0}), 2)
    first.close()
    second.close()
    assert len(os.listdir(tmp_path)) == 2
    assert event_files.read_eval_metrics(str(tmp_path)) == {1: {"a": 1.0}, 2: {"a": 2.0}}


def test_scalar_summary_keeps_only_real_scalars():
    summary = event_files.scalar_summary({
        "loss": 0.5, "step": 3, "np": np.float32(2.5), "flag": np.bool_(True),
        "vector": np.array([1.0, 2.0]), "name": "text"})
    values = {v.tag: v.simple_value for v in summary.value}
    assert values == {"loss": 0.5, "step": 3.0, "np": 2.5, "flag": 1.0}


def test_later_events_win_and_truncated_records_end_quietly(tmp_path):
    writer = event_files.new_summary_writer(str(tmp_path))
    writer.add_summary(event_files.scalar_summary({"acc": 0.125}), 10)
    writer.add_summary(event_files.scalar_summary({"acc": 0.25}), 10)
    writer.add_summary(event_files.scalar_summary({"acc": 0.375}), 20)
    writer.close()
    (path,) = [os.path.join(tmp_path, f) for f in os.listdir(tmp_path)]
    assert event_files.read_eval_metrics(str(tmp_path)) == {10: {"acc": 0.25},
                                                             20: {"acc": 0.375}}
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[:-7])  # a writer crashed mid-record
    assert event_files.read_eval_metrics(str(tmp_path)) == {10: {"acc": 0.25}}


def test_missing_dir_reads_as_empty(tmp_path):
    assert event_files.read_eval_metrics(str(tmp_path / "eval_nothing")) == {}
