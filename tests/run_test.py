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

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNER = [sys.executable, "-m", "estimator_lite.run"]
TIMEOUT_SECS = 60
LEFT_ALONE = "a real tf.estimator is installed"

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
SIGTERM_HANDLED = textwrap.dedent("""\
    import signal, sys, time
    def on_term(signum, frame):
        print("got", signum, flush=True)
        sys.exit(5)
    signal.signal(signal.SIGTERM, on_term)
    print("ready", flush=True)
    time.sleep(60)
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
    (["-m"], "-m needs a module name"), (["missing.py"], "can't open file")])
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


def test_a_real_tensorflow_estimator_is_left_alone_unless_told(tmp_path):
    fake = tmp_path / "site"
    _write(fake, "tensorflow_estimator/__init__.py", "FAKE = 'real one'\n")
    _write(tmp_path, "probe.py", PROBE_ESTIMATOR)
    env = _env(PYTHONPATH=os.pathsep.join([ROOT, str(fake)]))
    alone = _run([*RUNNER, "probe.py"], tmp_path, env)
    assert alone.returncode == 0, alone.stderr
    assert alone.stdout.split() == ["module", "real", "one"]
    assert LEFT_ALONE in alone.stderr and "--replace-tf-estimator" in alone.stderr
    replaced = _run([*RUNNER, "--replace-tf-estimator", "probe.py"], tmp_path, env)
    assert replaced.returncode == 0, replaced.stderr
    assert replaced.stdout.split()[0] == "_AliasModule"
    assert LEFT_ALONE not in replaced.stderr


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
