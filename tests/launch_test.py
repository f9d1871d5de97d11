"""Tests for the local cluster launcher (python -m estimator_lite.launch)."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from estimator_lite import launch
from estimator_lite._engine import completion
from estimator_lite._engine import local_cluster as cluster_lib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# A role script: prints its task, then behaves as the ROLE_BEHAVIOUR env var says.
ROLE_SCRIPT = """
import json, os, sys, time
task = json.loads(os.environ["TF_CONFIG"])["task"]
print(f"I am {task['type']} {task['index']} pid {os.getpid()}", flush=True)
started = os.environ.get("STARTED_DIR")
if started:
    open(os.path.join(started, str(os.getpid())), "w").close()
if task["type"] == "worker" and os.environ.get("FAIL_WORKER"):
    # Fail only once every role has started (and printed its pid), however loaded
    # the machine is.
    deadline = time.time() + 60
    while started and len(os.listdir(started)) < 3 and time.time() < deadline:
        time.sleep(0.05)
    sys.exit(3)
if os.environ.get("SLEEP_SECS"):
    time.sleep(float(os.environ["SLEEP_SECS"]))
"""


def _env(**extra):
    env = dict(os.environ, PYTHONPATH=ROOT, **extra)
    env.pop("TF_CONFIG", None)
    return env


def test_plan_roles_and_labels():
    roles = launch.plan_roles(num_ps=2, num_workers=1, evaluator=True)
    assert [r.label for r in roles] == ["chief", "worker:0", "ps:0", "ps:1", "evaluator"]
    assert [r.trains for r in roles] == [True, True, False, False, False]


def test_argument_errors(capsys):
    with pytest.raises(SystemExit):
        launch.main(["--ps", "1"])
    assert "no command after '--'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        launch.main(["--ps", "-1", "--", "python"])
    with pytest.raises(SystemExit):
        launch.main(["--ps", "1", "--"])


def test_local_cluster_spec_and_tf_config():
    cluster = cluster_lib.local_cluster_spec(num_ps=2, num_workers=3)
    addresses = [a for job in cluster.values() for a in job]
    assert [len(cluster[j]) for j in ("chief", "worker", "ps")] == [1, 3, 2]
    assert len(set(addresses)) == 6 and all(a.startswith("127.0.0.1:") for a in addresses)
    config = json.loads(cluster_lib.tf_config(cluster, "worker", 2, model_dir="/m"))
    assert config["task"] == {"type": "worker", "index": 2} and config["model_dir"] == "/m"
    with pytest.raises(ValueError, match="must be >= 0"):
        cluster_lib.local_cluster_spec(num_ps=-1)


def test_prefixes_every_line_and_succeeds(capsys, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", ROOT)
    code = launch.main(["--ps", "1", "--workers", "2", "--evaluator", "--",
                        sys.executable, "-c", ROLE_SCRIPT])
    out = capsys.readouterr().out
    assert code == 0
    for label, task in (("chief", "chief 0"), ("worker:0", "worker 0"),
                        ("worker:1", "worker 1"), ("ps:0", "ps 0"),
                        ("evaluator", "evaluator 0")):
        assert re.search(rf"^\[{label}\] I am {task} pid \d+$", out, re.M), out
    assert "[launch] all roles finished" in out


def test_one_failing_role_stops_all_and_fails(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("FAIL_WORKER", "1")
    monkeypatch.setenv("STARTED_DIR", str(tmp_path))
    monkeypatch.setenv("SLEEP_SECS", "120")
    code = launch.main(["--ps", "1", "--workers", "1", "--", sys.executable, "-c",
                        ROLE_SCRIPT])
    out = capsys.readouterr().out
    assert code == 3
    assert "[launch] worker:0 failed with exit code 3; stopping all" in out
    pids = [int(p) for p in re.findall(r"pid (\d+)", out)]
    assert len(pids) == 3
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_ctrl_c_stops_every_process():
    launcher = subprocess.Popen(
        [sys.executable, "-m", "estimator_lite.launch", "--ps", "1", "--workers", "1",
         "--", sys.executable, "-c", ROLE_SCRIPT],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env=_env(SLEEP_SECS="120"))
    pids = []
    for line in launcher.stdout:
        pids += [int(p) for p in re.findall(r"pid (\d+)", line)]
        if len(pids) == 3:
            break
    launcher.send_signal(signal.SIGINT)
    rest = launcher.stdout.read()
    assert launcher.wait(timeout=60) == 130
    assert "interrupted; stopping all" in rest
    for pid in pids:
        deadline = time.monotonic() + 30
        while True:  # the child may take a moment to be reaped by init
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            assert time.monotonic() < deadline, f"process {pid} still alive"
            time.sleep(0.1)


def test_multi_process_cluster_trains_evaluates_exports_and_exits(tmp_path):
    model_dir = str(tmp_path / "model")
    result = subprocess.run(
        [sys.executable, "-m", "estimator_lite.launch", "--ps", "1", "--workers", "1",
         "--evaluator", "--timeout-secs", "400", "--",
         sys.executable, os.path.join(ROOT, "examples", "distributed_digits.py"),
         "--model-dir", model_dir, "--max-steps", "300"],
        capture_output=True, text=True, env=_env(), timeout=500, check=False)
    out = result.stdout
    assert result.returncode == 0, out[-5000:]
    assert "[launch] all roles finished" in out
    for label in ("chief", "worker:0", "ps:0"):
        assert re.search(rf"^\[{label}\] \S+ done$", out, re.M), label
    evaluated = re.search(r"^\[evaluator\] evaluator: accuracy ([\d.]+) at step (\d+); "
                          r"exports \['([^']+)'\]", out, re.M)
    assert evaluated, out[-5000:]
    final_step = completion.read_training_complete(model_dir).global_step
    assert final_step >= 300
    assert int(evaluated.group(2)) == final_step  # the final checkpoint was evaluated
    assert float(evaluated.group(1)) > 0.8
    assert os.path.exists(os.path.join(evaluated.group(3), "saved_model.pb"))


def test_missing_executable_is_a_clear_error_not_a_traceback():
    result = subprocess.run(
        [sys.executable, "-m", "estimator_lite.launch", "--", "no-such-program-xyz"],
        capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 127
    assert "command not found: 'no-such-program-xyz'" in result.stderr
    assert "Traceback" not in result.stderr


def test_help_does_not_import_tensorflow():
    program = ("import sys, runpy\nsys.argv = ['launch', '--help']\n"
               "try:\n    runpy.run_module('estimator_lite.launch', run_name='__main__')\n"
               "except SystemExit:\n    pass\n"
               "print('TF_LOADED', 'tensorflow' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", program], capture_output=True,
                            text=True, timeout=60, check=True)
    assert "usage:" in result.stdout
    assert "TF_LOADED False" in result.stdout
