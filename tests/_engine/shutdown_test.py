"""SIGTERM/SIGINT during train(): finish the step, save, run listeners, exit non-zero."""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from estimator_lite._engine import model_dir
from estimator_lite._engine.shutdown import GRACE_ENV, grace_secs_from_env
from tests.support import zygote

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# A job that trains "forever" (slowly) and reports each saved step and the end.
_JOB = textwrap.dedent("""
    import sys, time
    import tensorflow as tf
    import estimator_lite as el
    from tests.support import models

    class Pace(tf.compat.v1.train.SessionRunHook):
        steps = 0
        def after_run(self, run_context, run_values):
            time.sleep(0.01)
            self.steps += 1
            if self.steps == 20:
                print("TRAINING", flush=True)

    class Report(tf.compat.v1.train.CheckpointSaverListener):
        def after_save(self, session, step):
            print("SAVED", step, flush=True)
        def end(self, session, step):
            print("END", step, flush=True)

    est = models.make_estimator(sys.argv[1], save_checkpoints_steps=1000)
    est.train(models.input_fn(), hooks=[Pace()], max_steps=10**9,
              saving_listeners=[Report()])
""")


def _start_job(tmp_path):
    return zygote.Popen([sys.executable, "-c", _JOB, str(tmp_path)], cwd=ROOT,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# SIGTERM exits 128 + 15; an uncaught KeyboardInterrupt makes Python end by SIGINT.
@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143),
                                       (signal.SIGINT, -signal.SIGINT)])
def test_signal_saves_the_reached_step_and_exits_non_zero(tmp_path, sig, code):
    job = _start_job(tmp_path)
    first = job.stdout.readline()  # the save at session creation
    assert first.startswith("SAVED"), job.stderr.read()[-2000:]
    assert job.stdout.readline().startswith("TRAINING")  # 20 steps done, not saved
    job.send_signal(sig)
    out, err = job.communicate(timeout=120)
    assert job.returncode == code, err[-2000:]
    (end_line,) = [line for line in out.splitlines() if line.startswith("END")]
    reached = int(end_line.split()[1])
    assert reached > 0  # it trained past step 0 before the signal
    latest = model_dir.latest_checkpoint(str(tmp_path))
    assert model_dir.checkpoint_step(latest) == reached  # saved where it stopped
    assert f"SAVED {reached}" in out
    if sig == signal.SIGINT:
        assert "KeyboardInterrupt" in err


def test_grace_period_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(GRACE_ENV, "7.5")
    assert grace_secs_from_env() == 7.5
    monkeypatch.setenv(GRACE_ENV, "soon")
    with pytest.raises(ValueError, match="must be a positive number of seconds"):
        grace_secs_from_env()
