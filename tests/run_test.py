"""The zero-edit runner is transparent: a program behaves as under plain `python`.

Each check runs the same program twice, `python PROGRAM` and `python -m
estimator_lite.run PROGRAM`, in real subprocesses, and compares what a user sees
(stdout, stderr, exit status, signals). The programs do not import TensorFlow, so
these stay fast: the runner itself never imports it (the aliases attach when the
program does; tests/install_test.py and tests/migration/unchanged_test.py cover that).
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile

import pytest

from tests.oracle import TF215_PYTHON, requires_oracle
from tests.support.stale_estimator import (
    STALE_VERSION,
    install_stale_estimator,
    requires_tf_without_estimator,
    tensorflow_version,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNER = [sys.executable, "-m", "estimator_lite.run"]
TIMEOUT_SECS = 300  # a TF import or two; generous for a loaded machine
LEFT_ALONE = "a real tf.estimator is installed"
SERVED = "serving tf.estimator from estimator_lite, not from"

REPORT = textwrap.dedent("""\
    import json, os, pickle, sys
    class Point:
        pass
    print(json.dumps({
        "argv": sys.argv, "name": __name__, "file": __file__,
        "path0": sys.path[0], "main_is_globals": vars(sys.modules["__main__"]) is globals(),
        "pickled": len(pickle.dumps(Point())) > 0,
        "spec": getattr(__spec__, "name", None), "package": __package__,
        "tensorflow_imported": "tensorflow" in sys.modules}))
    sys.exit(int(sys.argv[1]))
""")
FAILING = textwrap.dedent("""\
    def inner():
        raise ValueError("boom from the program")
    def outer():
        inner()
    outer()
""")
# The handler must not print: under load SIGTERM can land while the main thread is
# still flushing "ready", and a print in the handler is then a reentrant call into
# stdout's buffer (RuntimeError, exit 1) on plain Python as under the runner.
SIGTERM_HANDLED = textwrap.dedent("""\
    import signal, sys, time
    def on_term(signum, frame):
        sys.exit(5)
    signal.signal(signal.SIGTERM, on_term)
    print("ready", flush=True)
    time.sleep(60)
""")
SLEEPING_LOOP = textwrap.dedent("""\
    import time
    def wait():
        while True:  # long sleeps: the interrupt lands in one, never between two
            time.sleep(60)
    print("ready", flush=True)
    wait()
""")
SIGTERM_DEFAULT = textwrap.dedent("""\
    import time
    print("ready", flush=True)
    time.sleep(60)
""")


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.update(extra)
    return env


def _run(command, cwd, env=None):
    return subprocess.run(command, cwd=cwd, env=env or _env(), capture_output=True,
                          text=True, timeout=TIMEOUT_SECS, check=False)


def _write(directory, name, text):
    path = os.path.join(directory, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def test_script_sees_what_python_gives_it(tmp_path):
    _write(tmp_path, "report.py", REPORT)
    plain = _run([sys.executable, "report.py", "7", "--flag", "x y"], tmp_path)
    ran = _run([*RUNNER, "report.py", "7", "--flag", "x y"], tmp_path)
    assert plain.returncode == ran.returncode == 7, ran.stderr
    assert json.loads(ran.stdout) == json.loads(plain.stdout)
    assert json.loads(ran.stdout)["argv"] == ["report.py", "7", "--flag", "x y"]
    assert json.loads(ran.stdout)["tensorflow_imported"] is False


def test_uncaught_exception_prints_the_programs_traceback_and_exits_1(tmp_path):
    _write(tmp_path, "failing.py", FAILING)
    plain = _run([sys.executable, "failing.py"], tmp_path)
    ran = _run([*RUNNER, "failing.py"], tmp_path)
    assert plain.returncode == ran.returncode == 1
    assert ran.stderr == plain.stderr  # no runner or runpy frames
    assert "ValueError: boom from the program" in ran.stderr


def test_dash_m_runs_a_package_main_like_python_dash_m(tmp_path):
    _write(tmp_path, "pkg/__init__.py", "")
    _write(tmp_path, "pkg/helper.py", "WHO = 'relative import works'\n")
    _write(tmp_path, "pkg/__main__.py",
           "from .helper import WHO\nprint(WHO)\n" + REPORT)
    plain = _run([sys.executable, "-m", "pkg", "3", "a"], tmp_path)
    ran = _run([*RUNNER, "-m", "pkg", "3", "a"], tmp_path)
    assert plain.returncode == ran.returncode == 3, ran.stderr
    assert ran.stdout == plain.stdout
    plain_lines, ran_lines = plain.stdout.splitlines(), ran.stdout.splitlines()
    assert ran_lines[0] == plain_lines[0] == "relative import works"
    assert json.loads(ran_lines[1])["argv"][0].endswith(os.path.join("pkg", "__main__.py"))


def test_dash_m_missing_module_fails_as_python_does(tmp_path):
    plain = _run([sys.executable, "-m", "no_such_module_here"], tmp_path)
    ran = _run([*RUNNER, "-m", "no_such_module_here"], tmp_path)
    assert plain.returncode == ran.returncode == 1
    assert "No module named no_such_module_here" in ran.stderr


def test_dash_c_runs_code_like_python_dash_c(tmp_path):
    code = REPORT.replace('"file": __file__', '"file": globals().get("__file__")')
    plain = _run([sys.executable, "-c", code, "4", "-c", "x y"], tmp_path)
    ran = _run([*RUNNER, "-c", code, "4", "-c", "x y"], tmp_path)
    assert plain.returncode == ran.returncode == 4, ran.stderr
    assert json.loads(ran.stdout) == json.loads(plain.stdout)
    report = json.loads(ran.stdout)
    assert report["argv"] == ["-c", "4", "-c", "x y"]
    assert (report["path0"], report["file"], report["name"]) == ("", None, "__main__")


def test_dash_c_failure_prints_pythons_traceback(tmp_path):
    """Same frames and (on Python 3.13, which shows `-c` lines) the same source lines."""
    code = "def inner():\n    return 1 / 0\ninner()\n"
    plain = _run([sys.executable, "-c", code], tmp_path)
    ran = _run([*RUNNER, "-c", code], tmp_path)
    assert plain.returncode == ran.returncode == 1
    assert ran.stderr == plain.stderr
    assert ran.stderr.count('File "<string>"') == 2


@pytest.mark.parametrize("kind", ["directory", "zip"])
def test_a_path_without_main_is_pythons_one_line_and_exit_1(tmp_path, kind):
    _write(tmp_path, "app/helper.py", "print('not a main')\n")
    target = "app"
    if kind == "zip":
        with zipfile.ZipFile(tmp_path / "app.zip", "w") as archive:
            archive.write(tmp_path / "app" / "helper.py", "helper.py")
        target = "app.zip"
    plain = _run([sys.executable, target], tmp_path)
    ran = _run([*RUNNER, target], tmp_path)
    assert plain.returncode == ran.returncode == 1
    expected = f"can't find '__main__' module in {str(tmp_path / target)!r}"
    assert plain.stderr == f"{sys.executable}: {expected}\n"
    assert ran.stderr == f"estimator_lite.run: {expected}\n"
    assert ran.stdout == plain.stdout == ""


def test_keyboard_interrupt_shows_only_the_programs_frames(tmp_path):
    _write(tmp_path, "wait.py", SLEEPING_LOOP)
    ended = []
    for command in ([sys.executable, "wait.py"], [*RUNNER, "wait.py"]):
        process = subprocess.Popen(command, cwd=tmp_path, env=_env(),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        try:
            assert process.stdout.readline().strip() == "ready"
            time.sleep(0.5)  # into the loop: the interrupt lands in time.sleep
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=TIMEOUT_SECS)
            ended.append((process.returncode, stderr))
        finally:
            if process.poll() is None:
                process.kill()
    (plain_code, plain_stderr), (ran_code, ran_stderr) = ended
    assert plain_code == ran_code == -signal.SIGINT  # python re-raises SIGINT at exit
    assert ran_stderr == plain_stderr
    frames = [line for line in ran_stderr.splitlines() if line.startswith("  File ")]
    assert len(frames) == 2 and all('wait.py"' in frame for frame in frames), ran_stderr
    assert ran_stderr.endswith("KeyboardInterrupt\n")


@pytest.mark.parametrize("program,expected", [
    (SIGTERM_HANDLED, 5), (SIGTERM_DEFAULT, -signal.SIGTERM)],
    ids=["handler", "default"])
def test_sigterm_reaches_the_program(tmp_path, program, expected):
    _write(tmp_path, "wait.py", program)
    codes = []
    for command in ([sys.executable, "wait.py"], [*RUNNER, "wait.py"]):
        process = subprocess.Popen(command, cwd=tmp_path, env=_env(),
                                   stdout=subprocess.PIPE, text=True)
        try:
            assert process.stdout.readline().strip() == "ready"
            process.send_signal(signal.SIGTERM)
            codes.append(process.wait(timeout=TIMEOUT_SECS))
        finally:
            if process.poll() is None:
                process.kill()
            process.stdout.close()
    assert codes == [expected, expected]


@pytest.mark.parametrize("args,message", [
    ([], "usage:"), (["--bogus", "x.py"], "unknown option '--bogus'"),
    (["-m"], "-m needs a module name"), (["-c"], "-c needs the program's code"),
    (["missing.py"], "can't open file")])
def test_usage_errors_exit_2(tmp_path, args, message):
    ran = _run([*RUNNER, *args], tmp_path)
    assert ran.returncode == 2
    assert message in ran.stdout + ran.stderr


def test_importing_estimator_lite_installs_nothing(tmp_path):
    probe = ("import sys, estimator_lite, estimator_lite.run, estimator_lite.install as i\n"
             "print(i.is_installed(), any(type(f).__module__ == i.__name__ "
             "for f in sys.meta_path), 'tensorflow' in sys.modules)\n")
    ran = _run([sys.executable, "-c", probe], tmp_path)
    assert ran.stdout.split() == ["False", "False", "False"], ran.stderr


PROBE_ESTIMATOR = ("import tensorflow_estimator\n"
                   "print(type(tensorflow_estimator).__name__, "
                   "getattr(tensorflow_estimator, 'FAKE', None))\n")


def _served_probe(tmp_path, site, runner):
    """Runs PROBE_ESTIMATOR with `runner`, `site` on the path: estimator_lite must
    serve tf.estimator; returns the run's stderr."""
    _write(tmp_path, "probe.py", PROBE_ESTIMATOR)
    env = _env(PYTHONPATH=os.pathsep.join([ROOT, str(site)]))
    ran = _run([*runner, "probe.py"], tmp_path, env)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["_AliasModule", "None"]
    return ran.stderr


def test_a_tensorflow_estimator_that_cannot_import_here_is_replaced_in_one_line(tmp_path):
    fake = tmp_path / "site"
    _write(fake, "tensorflow_estimator/__init__.py", "FAKE = 'stale one'\n")
    stderr = _served_probe(tmp_path, fake, RUNNER)
    notice = [line for line in stderr.splitlines() if "tensorflow-estimator" in line]
    assert notice == [
        f"estimator_lite.run: {SERVED} tensorflow-estimator (version unknown) at "
        f"{fake / 'tensorflow_estimator'}: TensorFlow {tensorflow_version()} has no "
        "tf.estimator (removed in 2.16), so that package cannot import"], stderr


@pytest.mark.slow
@requires_oracle
def test_a_real_tensorflow_estimator_is_left_alone_unless_told(tmp_path):
    """On TF 2.15 with its tensorflow-estimator (the oracle) the runner steps aside."""
    _write(tmp_path, "probe.py", PROBE_ESTIMATOR)
    alone = _run([TF215_PYTHON, "-m", "estimator_lite.run", "probe.py"], tmp_path)
    assert alone.returncode == 0, alone.stderr
    assert alone.stdout.split()[0] != "_AliasModule"  # TF 2.15's own module wrapper
    notices = [line for line in alone.stderr.splitlines() if "estimator_lite" in line]
    assert len(notices) == 1, alone.stderr
    assert LEFT_ALONE in notices[0] and "tensorflow-estimator 2.15.0 at " in notices[0]
    assert "pass --replace-tf-estimator to use estimator_lite" in notices[0]
    assert "replace_existing" not in alone.stderr
    replaced = _run([TF215_PYTHON, "-m", "estimator_lite.run", "--replace-tf-estimator",
                     "probe.py"], tmp_path)
    assert replaced.returncode == 0, replaced.stderr
    assert replaced.stdout.split()[0] == "_AliasModule"
    assert "estimator_lite" not in replaced.stderr


@requires_oracle
def test_a_matching_tensorflow_estimator_that_fails_to_import_is_replaced(tmp_path):
    """Same version as TF 2.15 but broken: estimator_lite serves, naming the error."""
    broken = tmp_path / "site"
    _write(broken, "tensorflow_estimator/__init__.py",
           "raise ImportError('broken on purpose')\n")
    _write(broken, "tensorflow_estimator-2.15.0.dist-info/METADATA",
           "Metadata-Version: 2.1\nName: tensorflow-estimator\nVersion: 2.15.0\n")
    _write(broken, "tensorflow_estimator-2.15.0.dist-info/top_level.txt",
           "tensorflow_estimator\n")
    stderr = _served_probe(tmp_path, broken, [TF215_PYTHON, "-m", "estimator_lite.run"])
    notices = [line for line in stderr.splitlines() if "estimator_lite" in line]
    assert notices == [
        f"estimator_lite.run: {SERVED} tensorflow-estimator 2.15.0 at "
        f"{broken / 'tensorflow_estimator'}: importing it fails: ImportError: broken on "
        "purpose (TensorFlow 2.15.1)"], stderr


TRAIN_AND_EVALUATE = textwrap.dedent("""\
    import json, sys
    import numpy as np
    import tensorflow as tf

    def input_fn():
        x = np.linspace(-1.0, 1.0, 64, dtype=np.float32).reshape(-1, 1)
        dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, 2.0 * x + 1.0))
        return dataset.repeat().batch(16)

    def model_fn(features, labels, mode):
        v1 = tf.compat.v1
        w = v1.get_variable("w", [1, 1], initializer=v1.zeros_initializer())
        b = v1.get_variable("b", [1], initializer=v1.zeros_initializer())
        loss = v1.losses.mean_squared_error(labels, tf.matmul(features["x"], w) + b)
        train_op = v1.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=v1.train.get_global_step())
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    estimator = tf.estimator.Estimator(model_fn, model_dir=sys.argv[1])
    estimator.train(input_fn, steps=40)
    metrics = estimator.evaluate(input_fn, steps=2)
    print(json.dumps({"loss": float(metrics["loss"]),
                      "global_step": int(metrics["global_step"]),
                      "estimator": type(estimator).__module__.split(".")[0],
                      "stale_modules": sorted(
                          name for name, module in sys.modules.items()
                          if name.startswith("tensorflow_estimator")
                          and type(module).__name__ != "_AliasModule")}))
""")


@pytest.fixture(scope="module")
def stale_site(tmp_path_factory):
    """A directory holding the real tensorflow-estimator 2.15.0 wheel's package."""
    return install_stale_estimator(tmp_path_factory.mktemp("stale_estimator"))


@pytest.mark.slow
@requires_tf_without_estimator
def test_a_tf_estimator_program_trains_through_the_runner_beside_the_stale_wheel(
        tmp_path, stale_site):
    """TFX environments keep tensorflow-estimator 2.15 beside TF >= 2.16."""
    _write(tmp_path, "train.py", TRAIN_AND_EVALUATE)
    env = _env(PYTHONPATH=os.pathsep.join([str(stale_site), ROOT]))
    plain = _run([sys.executable, "train.py", "plain_model"], tmp_path, env)
    assert "module 'tensorflow' has no attribute 'estimator'" in plain.stderr
    ran = subprocess.run([*RUNNER, "train.py", "model"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300, check=False)
    assert ran.returncode == 0, ran.stderr[-3000:]
    result = json.loads(ran.stdout.splitlines()[-1])
    assert result["global_step"] == 40
    assert result["estimator"] == "estimator_lite"
    assert result["stale_modules"] == []  # nothing of the stale wheel half-imported
    assert 0.0 < result["loss"] < 0.05  # 2x + 1 learned from a loss of 1.67
    notices = [line for line in ran.stderr.splitlines() if "estimator_lite.run" in line]
    assert notices == [
        f"estimator_lite.run: {SERVED} tensorflow-estimator {STALE_VERSION} at "
        f"{stale_site / 'tensorflow_estimator'}: TensorFlow {tensorflow_version()} has no "
        "tf.estimator (removed in 2.16), so that package cannot import"], ran.stderr
    if TF215_PYTHON:  # the same program on tf.estimator 2.15 itself
        oracle = subprocess.run([TF215_PYTHON, "train.py", "oracle_model"], cwd=tmp_path,
                                capture_output=True, text=True, timeout=300, check=False)
        assert oracle.returncode == 0, oracle.stderr[-3000:]
        expected = json.loads(oracle.stdout.splitlines()[-1])
        assert expected["estimator"] == "tensorflow_estimator"
        assert result["loss"] == pytest.approx(expected["loss"], rel=1e-4)
        assert result["global_step"] == expected["global_step"]


def test_composes_with_the_launcher(tmp_path):
    _write(tmp_path, "role.py",
           "import json, os\n" + PROBE_ESTIMATOR.replace(
               "print(", "print(json.loads(os.environ['TF_CONFIG'])['task']['type'], "))
    ran = _run([sys.executable, "-m", "estimator_lite.launch", "--workers", "1",
                "--timeout-secs", "50", "--", sys.executable, "-m", "estimator_lite.run",
                "role.py"], tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = [line for line in ran.stdout.splitlines() if "_AliasModule" in line]
    roles = sorted(line.split()[1] for line in lines)
    assert roles == ["chief", "ps", "worker"], ran.stdout


INTERRUPTED_IMPORT = textwrap.dedent("""\
    import os, signal, sys, threading, time

    def interrupt_once_tensorflow_is_loading():
        while "tensorflow" not in sys.modules:
            time.sleep(0.001)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_once_tensorflow_is_loading, daemon=True).start()
    import tensorflow
    print("imported before the interrupt", flush=True)
""")


def test_keyboard_interrupt_during_import_tensorflow_shows_no_runner_frame(tmp_path):
    """The interrupt lands while TensorFlow's modules load, through the runner's
    import hook (which attaches tf.estimator to them): its frame is not shown."""
    _write(tmp_path, "load.py", INTERRUPTED_IMPORT)
    ran = _run([*RUNNER, "load.py"], tmp_path, env=_env(TF_CPP_MIN_LOG_LEVEL="2"))
    if "imported before the interrupt" in ran.stdout:
        pytest.skip("TensorFlow finished importing before the interrupt landed")
    assert ran.returncode == -signal.SIGINT, ran.stderr[-3000:]
    frames = [line for line in ran.stderr.splitlines() if line.startswith("  File ")]
    # (An interrupt inside the import system may chain a KeyError before it.)
    last = ran.stderr.rsplit("Traceback (most recent call last):", 1)[-1]
    assert last.startswith('\n  File "') and 'load.py", line 9, in <module>' in (
        last.splitlines()[1]), ran.stderr[-3000:]
    assert not [frame for frame in frames if "estimator_lite" in frame], ran.stderr
    assert ran.stderr.endswith("KeyboardInterrupt\n")
