"""tests/support/zygote.py: a forked run looks like a fresh interpreter to the tests.

Each case runs the same command through a zygote child and through a plain
subprocess and compares what the program saw (argv, cwd, environment, sys.path,
`__main__`), what it printed, and how it ended (exit codes, exceptions, signals).
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.oracle import TF215_PYTHON, requires_oracle
from tests.support import zygote

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_REPORT = """
import json, os, sys
print(json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "foo": os.environ.get("FOO"),
                  "tf_config": os.environ.get("TF_CONFIG"), "path": sys.path[:2],
                  "name": __name__, "file": globals().get("__file__")}))
sys.stderr.write("to stderr\\n")
"""


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    env.update({"PYTHONPATH": ROOT, "FOO": "bar", **extra})
    return env


def _both(args, **kwargs):
    """(forked, plain) CompletedProcess of the same command."""
    forked = zygote.run(args, capture_output=True, text=True, timeout=120, **kwargs)
    plain = subprocess.run(args, capture_output=True, text=True, timeout=120,
                           check=False, **kwargs)
    return forked, plain


@pytest.fixture(autouse=True)
def _zygote_on(monkeypatch):
    monkeypatch.delenv(zygote.NO_ZYGOTE_ENV, raising=False)


def test_a_forked_child_sees_the_same_argv_cwd_env_and_main_as_a_fresh_one(tmp_path):
    script = tmp_path / "report.py"
    script.write_text(_REPORT)
    for args in ([sys.executable, str(script), "a", "b"],
                 [sys.executable, "-c", _REPORT, "x"]):
        forked, plain = _both(args, env=_env(TF_CONFIG='{"task": {}}'), cwd=tmp_path)
        assert (forked.returncode, forked.stderr) == (plain.returncode, plain.stderr)
        assert json.loads(forked.stdout) == json.loads(plain.stdout)
        assert json.loads(forked.stdout)["tf_config"] == '{"task": {}}'


def test_a_module_run_gets_its_path_as_argv0(tmp_path):
    (tmp_path / "reported.py").write_text(_REPORT)
    forked, plain = _both([sys.executable, "-m", "reported", "z"], env=_env(),
                          cwd=tmp_path)
    assert forked.returncode == plain.returncode == 0, forked.stderr
    assert json.loads(forked.stdout) == json.loads(plain.stdout)


@pytest.mark.parametrize("code, returncode", [
    ("pass", 0), ("import sys; sys.exit(3)", 3), ("import sys; sys.exit('bye')", 1),
    ("raise ValueError('boom')", 1)])
def test_exit_codes_and_tracebacks_are_a_fresh_interpreters(code, returncode):
    forked, plain = _both([sys.executable, "-c", code], env=_env())
    assert forked.returncode == plain.returncode == returncode
    assert forked.stderr == plain.stderr
    assert forked.stdout == plain.stdout


def test_without_pythonpath_a_child_has_a_fresh_interpreters_sys_path(tmp_path):
    """The site dirs and .pth entries come as `site` gives them to a fresh interpreter,
    even where a .pth entry (a legacy editable install's easy-install.pth naming this
    checkout) equals the server's own PYTHONPATH, which `site` then leaves out."""
    script = tmp_path / "path_report.py"
    script.write_text("import json, sys; print(json.dumps(sys.path))")
    env = {k: v for k, v in _env().items() if k != "PYTHONPATH"}
    args = [sys.executable, str(script)]
    process = zygote.Popen(args, env=env, stdout=subprocess.PIPE, text=True)
    assert isinstance(process, zygote.ZygoteProcess)  # forked, not a fallback
    forked_out, _ = process.communicate(timeout=120)
    plain = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120,
                           check=True)
    assert (process.returncode, json.loads(forked_out)) == (0, json.loads(plain.stdout))


def test_the_runs_really_fork_from_a_zygote():
    process = zygote.Popen([sys.executable, "-c", "pass"], env=_env())
    assert isinstance(process, zygote.ZygoteProcess)
    assert process.wait(timeout=60) == 0


@pytest.mark.parametrize("sig, returncode", [
    (signal.SIGTERM, -signal.SIGTERM), (signal.SIGKILL, -signal.SIGKILL),
    (signal.SIGINT, -signal.SIGINT)])
def test_death_by_signal_is_reported_as_for_a_fresh_interpreter(sig, returncode):
    code = "import time; print('up', flush=True); time.sleep(120)"
    for popen in (zygote.Popen, subprocess.Popen):
        process = popen([sys.executable, "-c", code], env=_env(),
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert process.stdout.readline() == b"up\n"  # read live, while it runs
        assert process.poll() is None
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(timeout=0.1)
        process.send_signal(sig)
        assert process.wait(timeout=60) == returncode
        process.stdout.close()


def test_output_to_a_file_and_stderr_to_stdout(tmp_path):
    code = "import sys; print('out'); sys.stderr.write('err\\n')"
    log = tmp_path / "log"
    with open(log, "wb") as f:
        process = zygote.Popen([sys.executable, "-u", "-c", code], env=_env(), stdout=f,
                               stderr=subprocess.STDOUT)
        assert process.wait(timeout=60) == 0
    assert sorted(log.read_text().split()) == ["err", "out"]
    with open(log, "wb") as f:
        process = zygote.Popen([sys.executable, "-c", code],
                               env=_env(PYTHONUNBUFFERED="1"), stdout=f,
                               stderr=subprocess.STDOUT)
        assert isinstance(process, zygote.ZygoteProcess)
        assert process.wait(timeout=60) == 0
    assert log.read_text() == "out\nerr\n"


def test_stdin_input_reaches_the_child():
    code = "import sys; print(sys.stdin.read().upper())"
    forked, plain = _both([sys.executable, "-c", code], env=_env(), input="hello")
    assert forked.stdout == plain.stdout == "HELLO\n"


def test_a_child_configures_two_logical_cpus_and_runs_a_session():
    code = """
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
two = [tf.config.LogicalDeviceConfiguration()] * 2
tf.config.set_logical_device_configuration(cpu, two)
print(len(tf.config.list_logical_devices("CPU")))
with tf.compat.v1.Session(config=tf.compat.v1.ConfigProto(
        intra_op_parallelism_threads=1)) as session:
    print(session.run(tf.constant(2) + 1))
"""
    process = zygote.Popen([sys.executable, "-c", code], env=_env(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert isinstance(process, zygote.ZygoteProcess)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err[-3000:]
    assert out.split() == ["2", "3"]


@requires_oracle
def test_the_oracle_forks_too_and_has_tf_estimator():
    code = "import tensorflow as tf; print(tf.__version__, tf.estimator.Estimator.__name__)"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TF_CONFIG")}
    process = zygote.Popen([TF215_PYTHON, "-c", code], env=env, stdout=subprocess.PIPE,
                           text=True)
    assert isinstance(process, zygote.ZygoteProcess)
    out, _ = process.communicate(timeout=120)
    assert process.returncode == 0
    assert out.startswith("2.15")


def test_start_up_variables_fall_back_to_a_plain_interpreter():
    args = [sys.executable, "-c", "pass"]
    assert zygote.would_fork(args, env=_env())
    assert not zygote.would_fork(args, env=_env(TF_USE_LEGACY_KERAS="1"))
    assert not zygote.would_fork(args, env=_env(CUDA_VISIBLE_DEVICES="0"))
    assert not zygote.would_fork([sys.executable, "-X", "dev", "-c", "pass"], env=_env())
    assert not zygote.would_fork(args, env=_env(), start_new_session=True)
    process = zygote.Popen(args, env=_env(TF_USE_LEGACY_KERAS="1"))
    assert isinstance(process, subprocess.Popen)
    assert process.wait(timeout=60) == 0


def test_another_estimator_lite_on_the_path_falls_back(tmp_path):
    """A child whose PYTHONPATH shadows a preloaded module gets a fresh interpreter."""
    (tmp_path / "numpy").mkdir()
    (tmp_path / "numpy" / "__init__.py").write_text("SHADOW = True\n")
    code = "import numpy; print(getattr(numpy, 'SHADOW', False))"
    forked, plain = _both([sys.executable, "-c", code],
                          env=_env(PYTHONPATH=str(tmp_path)))
    assert forked.stdout == plain.stdout == "True\n"


def test_no_zygote_env_makes_every_run_plain(monkeypatch):
    monkeypatch.setenv(zygote.NO_ZYGOTE_ENV, "1")
    process = zygote.Popen([sys.executable, "-c", "pass"], env=_env())
    assert isinstance(process, subprocess.Popen)
    assert process.wait(timeout=60) == 0


def test_communicate_timeout_keeps_what_was_read():
    code = "import time; print('early', flush=True); time.sleep(1); print('late')"
    process = zygote.Popen([sys.executable, "-c", code], env=_env(),
                           stdout=subprocess.PIPE, text=True)
    start = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        process.communicate(timeout=0.2)
    out, err = process.communicate(timeout=60)
    assert (out, err) == ("early\nlate\n", None)
    assert time.monotonic() - start < 60


def test_a_module_that_raises_shows_the_same_traceback(tmp_path):
    (tmp_path / "raising.py").write_text("def f():\n    raise KeyError('k')\n\nf()\n")
    forked, plain = _both([sys.executable, "-m", "raising"], env=_env(), cwd=tmp_path)
    assert forked.returncode == plain.returncode == 1
    assert forked.stderr == plain.stderr
