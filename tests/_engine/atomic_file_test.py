"""Whole-file writes through a temp file and a rename."""

import os

import pytest

from estimator_lite._engine.atomic_file import write_atomic


def test_bytes_and_text_replace_the_file_and_leave_no_temp(tmp_path):
    path = str(tmp_path / "state")
    write_atomic(path, b"\x00\xffbinary")
    with open(path, "rb") as f:
        assert f.read() == b"\x00\xffbinary"
    write_atomic(path, "text \u00e9")
    with open(path, encoding="utf-8") as f:
        assert f.read() == "text \u00e9"
    assert os.listdir(tmp_path) == ["state"]


def test_a_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = str(tmp_path / "state")
    write_atomic(path, "old")
    # The rename is what publishes the file: if it fails, readers keep the old one.
    from estimator_lite._tf import tf

    def broken_rename(*args, **kwargs):
        raise OSError("disk went away")

    monkeypatch.setattr(tf.io.gfile, "rename", broken_rename)
    with pytest.raises(OSError, match="disk went away"):
        write_atomic(path, "new")
    with open(path) as f:
        assert f.read() == "old"
    assert os.listdir(tmp_path) == ["state"]


def test_other_contents_are_a_type_error(tmp_path):
    with pytest.raises(TypeError, match="contents must be bytes or str, got dict"):
        write_atomic(str(tmp_path / "x"), {"a": 1})
    assert os.listdir(tmp_path) == []
