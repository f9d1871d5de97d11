"""The TF1-era program (examples/tf1_program.py) on this TensorFlow, locally and as
a cluster of real processes (chief, worker, ps, evaluator on 127.0.0.1).

The same script runs on TF 1.15 / Python 3.7 (.ci/tf115) and on TF 2.16+ (with
tf-keras, which `tf.layers` needs there): a tf.layers model_fn in two towers over
two CPU devices, train_and_evaluate with a LatestExporter, the export reloaded
with TF1's `tf.saved_model.loader.load` and served. And what TF 1.15 cannot have
(its own built-in tf.keras handed to the library) is a TypeError saying so.
"""

import contextlib
import os
import re
import signal
import subprocess
import sys
import time

import pytest
import tensorflow as tf

import estimator_lite as el
from tests.oracle import requires_legacy_keras
from tests.support.tf_versions import TF1

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAM = os.path.join(ROOT, "examples", "tf1_program.py")
RESULT = re.compile(
    r"tf1 program on TF (\S+), 2 towers: test accuracy ([\d.]+) \(evaluate\), "
    r"([\d.]+) \(reloaded SavedModel (\S+)\) at step (\d+); first test image: "
    r"served (\d+), label (\d+)")

# tf.layers on TF >= 2.16 is tf-keras'; TF 1.15 has it built in.
needs_tf_layers = (lambda test: test) if TF1 else requires_legacy_keras


def _run(args, timeout_secs):
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2",
               TF_USE_LEGACY_KERAS="1", PYTHONFAULTHANDLER="1")
    env.pop("TF_CONFIG", None)
    # A plain process group (not a zygote child), so that a hang can be diagnosed:
    # on timeout every process of the run dumps its Python stacks (faulthandler
    # on SIGABRT) into the output before it is killed.
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=env, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout_secs)
    except subprocess.TimeoutExpired:
        output = _dump_stacks_and_kill(process)
        raise AssertionError(f"timed out after {timeout_secs} s; the last lines, "
                             f"with every process's stacks:\n{_tail(output)}") from None
    assert process.returncode == 0, output[-4000:]
    return output


def _descendants(pid):
    """The pids of `pid`'s descendants, from /proc (parents before children)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
            children.setdefault(parent, []).append(int(entry))
    found, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def _dump_stacks_and_kill(process):
    """SIGABRT to the roles (faulthandler prints their stacks, the launcher relays
    them), then SIGKILL to everything; returns the whole output."""
    roles = _descendants(process.pid)
    for pid in roles:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGABRT)
    time.sleep(5)
    for pid in [process.pid, *roles]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    output, _ = process.communicate()
    return output


def _tail(output, max_chars=12000):
    """The output's end, runs of one repeated line collapsed to one line and a count."""
    lines = []
    for line in output.splitlines():
        if lines and lines[-1][0] == line:
            lines[-1][1] += 1
        else:
            lines.append([line, 1])
    text = "\n".join(line if count == 1 else f"{line}  [x{count}]"
                     for line, count in lines)
    return text[-max_chars:]


def _check(match, max_steps, min_accuracy=0.95):
    assert match, "no result line"
    _, evaluated, reloaded, export_dir, step, served, label = match.groups()
    # 0.98 on TF 1.15.5 and on TF 2.21 at 600 steps; 10 classes, so chance is 0.1.
    assert float(evaluated) > min_accuracy
    assert float(reloaded) == float(evaluated)  # the reloaded export agrees
    assert max_steps <= int(step) <= max_steps + 5  # async trainers may overshoot
    assert os.path.exists(os.path.join(export_dir, "saved_model.pb"))
    assert served == label


@needs_tf_layers
def test_tf1_program_trains_exports_and_serves(tmp_path):
    output = _run([sys.executable, PROGRAM, "--model-dir", str(tmp_path),
                   "--max-steps", "400"], timeout_secs=400)
    _check(RESULT.search(output), 400)
    assert sorted(os.listdir(tmp_path / "export" / "latest")) != []


@pytest.mark.slow
@needs_tf_layers
def test_tf1_program_as_a_cluster_every_role_exits(tmp_path):
    output = _run([sys.executable, "-m", "estimator_lite.launch", "--ps", "1",
                   "--workers", "1", "--evaluator", "--", sys.executable, PROGRAM,
                   "--model-dir", str(tmp_path), "--max-steps", "200"],
                  timeout_secs=400)
    for role in ("[chief] tf1 program: chief 0 done",
                 "[worker:0] tf1 program: worker 0 done",
                 "[ps:0] tf1 program: ps 0 done", "[launch] all roles finished"):
        assert role in output, output[-4000:]
    # Two asynchronous trainers: how their 200 steps interleave (so how stale each
    # gradient is) depends on the machine's load. 0.97 on an idle machine, 0.9415
    # once on CI's loaded one; the bound says "it learned", the local test says how well.
    _check(re.search(r"\[evaluator\] " + RESULT.pattern, output), 200, min_accuracy=0.9)


class _Tf1KerasModel:
    """Stands for TF 1.15's built-in tf.keras Model on any TensorFlow."""


_Tf1KerasModel.__module__ = "tensorflow.python.keras.engine.training"


def _tf1_keras_objects():
    """TF 1.15's own tf.keras model and optimizer, or stand-ins on TF 2."""
    if not TF1:
        return _Tf1KerasModel(), _Tf1KerasModel()
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    return model, tf.keras.optimizers.SGD(0.1)


def test_tf1s_own_keras_is_a_clear_error():
    model, optimizer = _tf1_keras_objects()
    with pytest.raises(TypeError, match=r"keras_model .*built-in tf.keras, which "
                       r"estimator_lite does not support: Keras objects need "
                       r"TensorFlow 2.16\+ with Keras 3 or tf-keras; on TF 1.15 use an "
                       r"Estimator with a model_fn"):
        el.model_to_estimator(keras_model=model)
    columns = [tf.feature_column.numeric_column("x")]
    with pytest.raises(TypeError, match=r"optimizer .*built-in tf.keras.*on TF 1.15 use "
                       r"a tf.compat.v1.train.Optimizer"):
        el.DNNClassifier([2], columns, optimizer=optimizer)
