"""Fault injection: the disk under model_dir fills up (a small tmpfs, in a real
process), or the job's file-size limit is hit (``ulimit -f``, no root needed).

The failed save must say where first (the checkpoint and the model_dir, then the
cause), leave no half-written `model.ckpt-N_temp/` behind, and keep every earlier
checkpoint restorable, so the job resumes once there is room again.
"""

import os
import subprocess
import sys

import pytest

from tests.support import zygote

HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "full_disk_job.py")
ROOT = os.path.dirname(os.path.dirname(HERE))
DISK_BYTES = 400 * 1024


@pytest.fixture
def small_disk(tmp_path):
    """A 400 KiB tmpfs (mounting needs root, which CI runs as)."""
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}",
                              "tmpfs", str(mount_point)], capture_output=True,
                             text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip("a full disk is simulated with a small tmpfs, which needs root "
                    f"(mount said: {mounted.stderr.strip()})")
    yield mount_point
    subprocess.run(["umount", str(mount_point)], check=False)


def _train(model_dir, ballast_floats, save_steps, max_steps, file_size_limit=None):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")
    if file_size_limit:
        env["FULL_DISK_JOB_FSIZE"] = str(file_size_limit)
    env.pop("TF_CONFIG", None)
    return zygote.run([sys.executable, JOB, str(model_dir), str(ballast_floats),
                       str(save_steps), str(max_steps)], capture_output=True, text=True,
                      env=env, timeout=300, check=False)


def _last_line(stderr):
    return [line for line in stderr.splitlines() if line.strip()][-1]


def test_a_full_disk_at_the_first_save_says_where_and_leaves_nothing(small_disk):
    model_dir = small_disk / "model"
    result = _train(model_dir, 200_000, 5, 10)  # 800 KB: the first save cannot fit
    assert result.returncode == 1
    assert _last_line(result.stderr).startswith(
        f"tensorflow.python.framework.errors_impl.ResourceExhaustedError: could not "
        f"save checkpoint {model_dir}/model.ckpt-0 in model_dir {model_dir}: ")
    assert "No space left on device" in _last_line(result.stderr)
    assert not [n for n in os.listdir(model_dir) if "_temp" in n]


def test_a_disk_filling_later_keeps_earlier_checkpoints_and_the_job_resumes(
        small_disk, tmp_path):
    model_dir = small_disk / "model"
    result = _train(model_dir, 30_000, 5, 40)  # 120 KB a save: the fourth cannot fit
    assert result.returncode == 1
    last = _last_line(result.stderr)
    assert f"in model_dir {model_dir}: " in last and "No space left on device" in last
    assert not [n for n in os.listdir(model_dir) if "_temp" in n]
    listed = [line for line in (model_dir / "checkpoint").read_text().splitlines()
              if line.startswith("all_model_checkpoint_paths")]
    assert listed and len(listed) < 9
    # With room again (a copy of the model_dir on a large disk), training resumes
    # from the newest checkpoint the full disk left.
    roomy = tmp_path / "roomy"
    subprocess.run(["cp", "-r", str(model_dir), str(roomy)], check=True)
    resumed = _train(roomy, 30_000, 5, 40)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "trained to 40" in resumed.stdout


def test_a_file_size_limit_at_a_save_says_where_and_leaves_nothing(tmp_path):
    """A write failing another way (EFBIG, under ``ulimit -f``; no root needed).

    tf.estimator 2.15 (run on the oracle) raises an OutOfRangeError whose message
    starts with "Graph execution error:" and an op trace, and leaves
    model.ckpt-0_temp/ behind.
    """
    model_dir = tmp_path / "model"
    result = _train(model_dir, 200_000, 5, 10, file_size_limit=DISK_BYTES)
    assert result.returncode == 1
    assert _last_line(result.stderr).startswith(
        f"tensorflow.python.framework.errors_impl.OutOfRangeError: could not "
        f"save checkpoint {model_dir}/model.ckpt-0 in model_dir {model_dir}: ")
    assert _last_line(result.stderr).endswith("File too large")
    assert not [n for n in os.listdir(model_dir) if "_temp" in n]
