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
from estimator_lite._engine import completion, restart_policy
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
label = task["type"] if task["type"] == "chief" else f"{task['type']}:{task['index']}"
fail_dir = os.environ.get("FAIL_DIR")
if os.environ.get("FAIL_LABEL") == label:
    # Fails FAIL_TIMES times (a marker file per failure), then succeeds.
    if len(os.listdir(fail_dir)) < int(os.environ["FAIL_TIMES"]):
        open(os.path.join(fail_dir, str(os.getpid())), "w").close()
        sys.exit(3)
elif os.environ.get("SLEEP_SECS"):
    # Sleeps, but ends soon once the failing role failed enough (its restart is quick).
    deadline = time.time() + float(os.environ["SLEEP_SECS"])
    while time.time() < deadline:
        if fail_dir and len(os.listdir(fail_dir)) >= int(os.environ["FAIL_TIMES"]):
            deadline = min(deadline, time.time() + 0.5)
        time.sleep(0.05)
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
    with pytest.raises(SystemExit):
        launch.main(["--no-chief", "--workers", "0", "--", "python"])
    assert "--no-chief needs --workers >= 1 (worker 0 is the chief), got 0" in (
        capsys.readouterr().err)
    with pytest.raises(SystemExit):
        launch.main(["--max-restarts", "-1", "--", "python"])
    assert "--max-restarts must be >= 0, got -1" in capsys.readouterr().err


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
    code = launch.main(["--ps", "1", "--workers", "2", "--evaluator", "--max-restarts",
                        "3", "--", sys.executable, "-c", ROLE_SCRIPT])
    out = capsys.readouterr().out
    assert code == 0
    # A job whose processes all end 0 is never restarted.
    assert "restart 1" not in out and len(re.findall(r"\] started ", out)) == 5
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
    pids = [int(p) for p in re.findall(r"I am \S+ \d+ pid (\d+)", out)]
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
        pids += [int(p) for p in re.findall(r"I am \S+ \d+ pid (\d+)", line)]
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


@pytest.mark.slow
def test_multi_process_cluster_trains_evaluates_exports_and_exits(tmp_path):
    model_dir = str(tmp_path / "model")
    result = subprocess.run(
        [sys.executable, "-m", "estimator_lite.launch", "--ps", "1", "--workers", "1",
         "--evaluator", "--timeout-secs", "400", "--max-restarts", "2", "--",
         sys.executable, os.path.join(ROOT, "examples", "distributed_digits.py"),
         "--model-dir", model_dir, "--max-steps", "300"],
        capture_output=True, text=True, env=_env(), timeout=500, check=False)
    out = result.stdout
    assert result.returncode == 0, out[-5000:]
    assert "[launch] all roles finished" in out
    assert "] restart 1 of" not in out  # a job whose processes all end 0 never restarts
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


def _started(out):
    """{label: number of times the launcher started it}."""
    counts = {}
    for label in re.findall(r"^\[launch\] started (\S+) \(pid \d+\)$", out, re.M):
        counts[label] = counts.get(label, 0) + 1
    return counts


def test_restart_policy_decisions():
    policy = restart_policy.RestartPolicy(2)
    decision = policy.on_failure([("ps:0", -9)])
    assert decision.restart == ("ps:0",) and not decision.gives_up
    assert decision.message == ("restart 1 of 2: ps:0 failed with exit code -9 (SIGKILL); "
                                "restarting ps:0")
    assert policy.on_failure([("evaluator", 1)]).restart == ("evaluator",)
    decision = policy.on_failure([("ps:0", 137)])
    assert decision.gives_up and decision.exit_code == 137
    assert decision.message == ("ps:0 failed with exit code 137; stopping all: no restart "
                                "left (2 of --max-restarts 2 used); ps:0 kept failing "
                                "(2 failures)")
    # A collective job restarts its whole worker group; the evaluator alone.
    policy = restart_policy.RestartPolicy(3, group=("worker:0", "worker:1"))
    assert policy.on_failure([("worker:1", -9)]).restart == ("worker:0", "worker:1")
    assert policy.on_failure([("evaluator", 1)]).restart == ("evaluator",)
    decision = policy.on_failure([("worker:0", 1), ("evaluator", 2)])
    assert decision.restart == ("worker:0", "worker:1", "evaluator")
    assert "worker:0 failed with exit code 1, evaluator exit code 2" in decision.message
    assert policy.on_failure([("worker:0", -15)]).exit_code == 1  # a signal: 1
    # 0 restarts: today's message, unchanged.
    decision = restart_policy.RestartPolicy(0).on_failure([("worker:0", 3)])
    assert decision.message == "worker:0 failed with exit code 3; stopping all"
    with pytest.raises(ValueError, match="max_restarts must be >= 0, got -1"):
        restart_policy.RestartPolicy(-1)
    with pytest.raises(TypeError, match="max_restarts must be an int, got '2'"):
        restart_policy.RestartPolicy("2")


def test_newest_checkpoint_is_read_from_the_state_file(tmp_path):
    assert "none yet" in restart_policy.newest_checkpoint(str(tmp_path))
    (tmp_path / "checkpoint").write_text(
        'model_checkpoint_path: "model.ckpt-200"\n'
        'all_model_checkpoint_paths: "model.ckpt-100"\n'
        'all_model_checkpoint_paths: "model.ckpt-200"\n')
    assert restart_policy.newest_checkpoint(str(tmp_path)) == (
        f"{tmp_path}/model.ckpt-200 (global step 200)")
    assert "no --model-dir" in restart_policy.newest_checkpoint(None)


def test_a_failed_role_is_restarted_alone_and_the_job_succeeds(capsys, monkeypatch,
                                                                 tmp_path):
    monkeypatch.setenv("FAIL_LABEL", "worker:0")
    monkeypatch.setenv("FAIL_TIMES", "2")
    monkeypatch.setenv("FAIL_DIR", str(tmp_path))
    monkeypatch.setenv("SLEEP_SECS", "1")
    code = launch.main(["--ps", "1", "--workers", "1", "--max-restarts", "2",
                        "--model-dir", str(tmp_path / "model"), "--",
                        sys.executable, "-c", ROLE_SCRIPT])
    out = capsys.readouterr().out
    assert code == 0, out
    assert _started(out) == {"chief": 1, "worker:0": 3, "ps:0": 1}
    assert ("[launch] restart 1 of 2: worker:0 failed with exit code 3; restarting "
            f"worker:0, resuming from none yet in {tmp_path / 'model'}") in out
    assert "[launch] restart 2 of 2: worker:0 failed with exit code 3" in out
    assert "[launch] all roles finished" in out


def test_a_collective_job_restarts_its_whole_worker_group(capsys, monkeypatch, tmp_path):
    # --ps 0 --no-chief: a worker-only TF_CONFIG (MultiWorkerMirroredStrategy).
    monkeypatch.setenv("FAIL_LABEL", "worker:1")
    monkeypatch.setenv("FAIL_TIMES", "1")
    monkeypatch.setenv("FAIL_DIR", str(tmp_path))
    monkeypatch.setenv("SLEEP_SECS", "30")  # worker 0 still runs when worker 1 fails
    code = launch.main(["--ps", "0", "--workers", "2", "--no-chief", "--evaluator",
                        "--max-restarts", "1", "--", sys.executable, "-c", ROLE_SCRIPT])
    out = capsys.readouterr().out
    assert code == 0, out
    # Worker-only, the evaluator listed (MultiWorkerMirroredStrategy() needs it there).
    cluster = re.search(r"^\[launch\] cluster (.*)$", out, re.M).group(1)
    assert re.fullmatch(r"\{'worker': \['127.0.0.1:\d+', '127.0.0.1:\d+'\], "
                        r"'evaluator': \['127.0.0.1:\d+'\]\}", cluster), cluster
    assert "the worker group (worker:0, worker:1) restarts together" in out
    assert _started(out) == {"worker:0": 2, "worker:1": 2, "evaluator": 1}
    assert ("[launch] restart 1 of 1: worker:1 failed with exit code 3; restarting the "
            "worker group (worker:0, worker:1), resuming from unknown") in out


def test_restarts_running_out_end_the_job_naming_the_role(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("FAIL_LABEL", "ps:0")
    monkeypatch.setenv("FAIL_TIMES", "99")
    monkeypatch.setenv("FAIL_DIR", str(tmp_path))
    monkeypatch.setenv("SLEEP_SECS", "120")
    started = time.monotonic()
    code = launch.main(["--ps", "1", "--workers", "1", "--max-restarts", "2", "--",
                        sys.executable, "-c", ROLE_SCRIPT])
    out = capsys.readouterr().out
    assert code == 3
    assert time.monotonic() - started < 60  # the sleeping roles were stopped
    assert _started(out) == {"chief": 1, "worker:0": 1, "ps:0": 3}
    assert ("[launch] ps:0 failed with exit code 3; stopping all: no restart left "
            "(2 of --max-restarts 2 used); ps:0 kept failing (3 failures)") in out
    for pid in [int(p) for p in re.findall(r"started \S+ \(pid (\d+)\)", out)]:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
