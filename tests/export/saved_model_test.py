"""Writing SavedModels: signatures, unique export dirs, atomic writes."""

import os
import time

import pytest

from estimator_lite import export
from estimator_lite import exporter as exporter_lib
from estimator_lite._tf import tf
from estimator_lite.export import saved_model


def test_build_signature_defs_with_alternatives(graph):
    x = tf.placeholder(tf.float32, [None, 1])
    z = tf.identity(x * 3.0, name="z")  # downstream of x: a client may feed it
    unrelated = tf.placeholder(tf.float32, [None, 1])
    out = export.PredictOutput({"y": z * 2.0})
    sigs = saved_model.build_signature_defs({"serving_default": out}, {"x": x},
                                            {"alt": {"z": z}, "bad": {"u": unrelated}})
    # "bad:serving_default" needs x, which its inputs do not feed: left out, as
    # tf.estimator leaves out a signature TF Serving could not serve.
    assert set(sigs) == {"serving_default", "alt:serving_default"}
    assert set(sigs["alt:serving_default"].inputs) == {"z"}


def test_make_export_dir_is_unique_and_numeric(tmp_path):
    first = saved_model.make_export_dir(str(tmp_path))
    os.makedirs(first)
    second = saved_model.make_export_dir(str(tmp_path))
    assert os.path.basename(second).isdigit()
    assert int(os.path.basename(second)) > int(os.path.basename(first))


def test_a_new_export_is_newer_than_exports_written_ahead_of_the_clock(tmp_path):
    # Fast exports bump their stamps ahead of the clock; GC then removed some. The
    # next export must still sort last, or GC (which keeps the largest) deletes it.
    ahead = int(time.time()) + 100
    os.makedirs(tmp_path / str(ahead))
    os.makedirs(tmp_path / f"temp-{ahead + 1}")  # an export being written
    new = saved_model.make_export_dir(str(tmp_path))
    assert int(os.path.basename(new)) == ahead + 2
    os.makedirs(new)
    exporter_lib.gc_exports(str(tmp_path), 1)
    assert os.path.exists(new)


def test_write_atomically_renames_on_success(tmp_path):
    final = str(tmp_path / "123")

    def write(temp_dir):
        assert not os.path.exists(final)  # readers never see a partial export
        os.makedirs(temp_dir)
        with open(os.path.join(temp_dir, "f"), "w") as f:
            f.write("ok")

    assert saved_model.write_atomically(final, write) == final
    with open(os.path.join(final, "f")) as f:
        assert f.read() == "ok"
    assert os.listdir(tmp_path) == ["123"]


def test_write_atomically_cleans_up_on_failure(tmp_path):
    def write(temp_dir):
        os.makedirs(temp_dir)
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        saved_model.write_atomically(str(tmp_path / "9"), write)
    assert os.listdir(tmp_path) == []
