"""ExportListener (periodic export during training) and examples/sec logging."""

import logging as std_logging
import os

import pytest

import estimator_lite as el
from tests.support import models


def test_export_listener_exports_every_n_steps_and_the_last(tmp_path):
    est = models.make_estimator(tmp_path, save_checkpoints_steps=10)
    exporter = el.LatestExporter("periodic", models.raw_serving_input_fn,
                                 exports_to_keep=None)
    listener = el.ExportListener(est, exporter, every_n_steps=20)
    est.train(models.input_fn(), max_steps=45, saving_listeners=[listener])
    # Saves at 0 (skipped), 10, 20, 30, 40, 45: exports at 10, 30 and the final 45.
    assert len(listener.export_results) == 3
    assert len(os.listdir(tmp_path / "export" / "periodic")) == 3
    assert all(os.path.exists(os.path.join(p.decode(), "saved_model.pb"))
               for p in listener.export_results)


def test_export_listener_validation(tmp_path):
    est = models.make_estimator(tmp_path)
    with pytest.raises(TypeError, match="exporter must be an Exporter"):
        el.ExportListener(est, "latest")
    with pytest.raises(ValueError, match="every_n_steps must be >= 1"):
        el.ExportListener(est, el.FinalExporter("f", models.raw_serving_input_fn), 0)


def test_step_rate_log_has_examples_per_sec_when_batch_is_static(tmp_path, caplog):
    est = models.make_estimator(tmp_path, log_step_count_steps=5)

    def static_batches():
        return models.input_fn(batch_size=16)().map(lambda f, y: (f, y)).apply(
            lambda d: d.unbatch().batch(16, drop_remainder=True))

    with caplog.at_level(std_logging.INFO):
        est.train(static_batches, max_steps=10)
    lines = [r.getMessage() for r in caplog.records if "steps/sec" in r.getMessage()]
    assert lines and all("examples/sec" in line for line in lines)
    caplog.clear()
    with caplog.at_level(std_logging.INFO):
        est.train(models.input_fn(), max_steps=20)  # dynamic batch size: no examples/sec
    lines = [r.getMessage() for r in caplog.records if "steps/sec" in r.getMessage()]
    assert lines and not any("examples/sec" in line for line in lines)
