"""The training loop's periodic actions: checkpoint policy and saver, progress and ETA."""

from estimator_lite._engine import periodic_actions
from estimator_lite._tf import tf


def test_checkpoint_policy_enabled():
    assert not periodic_actions.CheckpointPolicy("/d").enabled
    assert periodic_actions.CheckpointPolicy("/d", save_secs=600).enabled


def test_checkpoint_saver_without_policy_never_saves():
    saver = periodic_actions.CheckpointSaver()
    assert saver.checkpoint_dir is None and not saver.enabled
    assert not saver.due(100)


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class _Scalars:
    def __init__(self):
        self.written = []

    def add_scalars(self, values, step):
        self.written.append((step, values))


def test_report_progress_fetches_the_loss_on_log_steps_and_reports_rate_and_eta(caplog):
    clock, scalars = _Clock(), _Scalars()
    with tf.Graph().as_default():
        loss = tf.constant(1.0)
    progress = periodic_actions.ReportProgress(10, loss, examples_per_step=32,
                                               summaries=scalars, clock=clock)
    progress.start(0, target_step_fn=lambda first_step: first_step + 100)
    extra = {}
    progress.fetches(5, extra)
    assert extra == {}
    progress.fetches(10, extra)
    assert extra == {"loss": loss}
    clock.now += 2.0  # 10 steps in 2 s: 5 steps/sec, 160 examples/sec, 18 s left
    with caplog.at_level("INFO", logger="tensorflow"):
        progress.after_step(10, {"loss": 0.5})
    assert "step 10/100 (10%): loss = 0.5 (5.0 steps/sec, 160 examples/sec), " \
           "ETA 0:00:18" in caplog.text
    assert scalars.written == [(10, {"global_step/sec": 5.0, "examples/sec": 160.0})]
    extra = {}
    progress.fetches(11, extra)
    assert extra == {}  # marked at step 10
