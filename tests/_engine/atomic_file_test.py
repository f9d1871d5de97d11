"""Whole-file writes through a temp file and a rename."""

import os

import pytest

from estimator_lite._engine.atomic_file import write_atomic
from estimator_lite._tf import tf


def test_bytes_and_text_replace_the_file_and_leave_no_temp(tmp_path):
    path = str(tmp_path / "state")
    write_atomic(path, b"\x00\xffbinary")
    with open(path, "rb") as f:
        assert f.read() == b"\x00\xffbinary"
    write_atomic(path, "text \u00e9")
    with open(path, encoding="utf-8") as f:
        assert f.read() == "text \u00e9"
    assert os.listdir(tmp_path) == ["state"]


def test_a_failed_rename_keeps_what_the_path_held(tmp_path):
    # A real failure: the path is a directory holding a file, so the rename that
    # publishes the temp file fails. The path keeps what it held; the temp goes.
    target = tmp_path / "state"
    target.mkdir()
    (target / "inside").write_text("old")
    with pytest.raises(tf.errors.OpError, match="state.tmp-"):
        write_atomic(str(target), "new")
    assert (target / "inside").read_text() == "old"
    assert os.listdir(tmp_path) == ["state"]


def test_other_contents_are_a_type_error(tmp_path):
    with pytest.raises(TypeError, match="contents must be bytes or str, got dict"):
        write_atomic(str(tmp_path / "x"), {"a": 1})
    assert os.listdir(tmp_path) == []
