"""Run tf.estimator 2.15's own unit tests against estimator_lite (or the real one).

The tests are not part of this repo: they are extracted at run time from a git
mirror of tensorflow/estimator (`git archive TAG <files>`), each file into its own
temporary directory beside a generated conftest.py, and run with pytest one file
per process (sequentially, `nice`d). The `tensorflow_estimator` package itself is
never extracted: on the lite side its module paths resolve to estimator_lite
through `estimator_lite.install_as_tf_estimator()`; on the oracle side they are the
real installed tensorflow-estimator. The test-only helper modules the tests import
(`*_testing_utils*.py`, `hooks/fake_summary_writer.py`) are test code: they are
extracted too and served under their tensorflow_estimator paths on both sides.

Usage:
  python tests/upstream/run_upstream.py --mirror MIRROR --side oracle --out oracle.json
  python tests/upstream/run_upstream.py --mirror MIRROR --side lite --out lite.json \\
      --oracle-results oracle.json --report summary.md

With --oracle-results, every lite failure of a test that passes on the oracle is
put in one bucket: private_name, error_wording, behaviour, error or timeout (see
`classify`). The JSON holds per-test outcomes and, for failures, the error line.
"""

import argparse
import collections
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
TREE = "tensorflow_estimator/python/estimator"
PACKAGE = TREE.replace("/", ".")
DEFAULT_TAG = "v2.15.0"
DEFAULT_PYTHON = {
    "lite": "/work/main/.venv/bin/python",
    "oracle": "/work/main/.venv-tf215/bin/python",
}
# The public-behaviour test files, relative to TREE, without ".py".
DEFAULT_FILES = (
    "estimator_test", "model_fn_test", "training_test", "run_config_test",
    "exporter_test", "export/export_test", "early_stopping_test", "hooks/hooks_test",
    "hooks/basic_session_run_hooks_test", "head/base_head_test",
    "head/binary_class_head_test", "head/multi_class_head_test",
    "head/multi_label_head_test", "head/multi_head_test", "head/regression_head_test",
    "head/sequential_head_test", "canned/linear_test", "canned/linear_estimator_test",
    "canned/dnn_test", "canned/dnn_estimator_test", "canned/dnn_linear_combined_test",
    "canned/baseline_test", "extenders_test", "gc_test", "util_test",
)
# Test-only helper modules the tests import from the tensorflow_estimator tree.
TESTING_UTILS = r"(_testing_utils\w*|/fake_summary_writer)\.py$"
BUCKETS = ("private_name", "error_wording", "behaviour", "error", "timeout", "skipped")

# The conftest.py written beside each test file. It runs before pytest imports the
# test module: it serves the extracted *_testing_utils modules under their
# tensorflow_estimator paths, installs estimator_lite as tf.estimator (lite side),
# gives each test a wall-clock limit when pytest-timeout is absent (a watchdog
# thread: a test blocked in TensorFlow's C++ never returns to a signal handler),
# and logs each test's start and report to files that survive the process.
CONFTEST = '''\
import importlib
import importlib.abc
import importlib.util
import faulthandler
import json
import os
import sys
import threading

import pytest

_SIDE = os.environ["UPSTREAM_SIDE"]
_UTILS = json.loads(os.environ["UPSTREAM_UTILS"])
_PREIMPORT = json.loads(os.environ["UPSTREAM_PREIMPORT"])
_TIMEOUT = float(os.environ["UPSTREAM_TIMEOUT"])
_LOG = os.environ["UPSTREAM_LOG"]
_STARTED = os.environ["UPSTREAM_STARTED"]
_OUTPUT = os.environ["UPSTREAM_OUTPUT"]  # pytest captures stderr: write here instead
_DONE = set(json.loads(os.environ["UPSTREAM_DONE"]))
# A harness that runs pytest through `python -m estimator_lite.run` has installed
# estimator_lite already (UPSTREAM_INSTALL=0); its shims module, if any, runs first.
_INSTALL = os.environ.get("UPSTREAM_INSTALL", "1") == "1"
_SHIMS = os.environ.get("UPSTREAM_SHIMS")
_EVERY_NTH = int(os.environ.get("UPSTREAM_EVERY_NTH", "1"))  # a sample of a long file


class _TestingUtilsFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname in _UTILS:
            return importlib.util.spec_from_file_location(fullname, _UTILS[fullname])
        return None


try:
    from absl import flags
    flags.FLAGS(sys.argv[:1], known_only=True)
except Exception:
    pass
if _SIDE == "lite" and _INSTALL:
    import estimator_lite
    estimator_lite.install_as_tf_estimator()
if _SHIMS:
    _spec = importlib.util.spec_from_file_location("_upstream_shims", _SHIMS)
    _shims = importlib.util.module_from_spec(_spec)
    sys.modules["_upstream_shims"] = _shims
    _spec.loader.exec_module(_shims)
# First on the meta path: ahead of the finder install_as_tf_estimator() puts there,
# which refuses the tensorflow_estimator paths it has no alias for.
sys.meta_path.insert(0, _TestingUtilsFinder())

# `from <alias package> import x_testing_utils` would find an attribute on the
# alias module before trying the submodule, so import them up front. A failure
# here stops pytest: the harness then reports the file's output for every test.
for _name in _PREIMPORT:
    importlib.import_module(_name)


def _expire():
    with open(_OUTPUT, "a") as f:
        f.write(f"\\n+++ Timeout >{_TIMEOUT:g}s (upstream harness) +++\\n")
        f.flush()
        faulthandler.dump_traceback(file=f, all_threads=True)
    os._exit(1)


def pytest_collection_modifyitems(config, items):
    """Keeps every UPSTREAM_EVERY_NTH-th test (in collection order, the same in
    every process), less those an earlier process of this file already ran."""
    kept = [item for i, item in enumerate(items)
            if i % _EVERY_NTH == 0 and item.nodeid not in _DONE]
    if len(kept) < len(items):
        kept_ids = {id(item) for item in kept}
        config.hook.pytest_deselected(
            items=[item for item in items if id(item) not in kept_ids])
        items[:] = kept


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    watchdog = None
    if "pytest_timeout" not in sys.modules and _TIMEOUT > 0:
        watchdog = threading.Timer(_TIMEOUT, _expire)
        watchdog.daemon = True
        watchdog.start()
    try:
        yield
    finally:
        if watchdog is not None:
            watchdog.cancel()


def pytest_runtest_logstart(nodeid, location):
    with open(_STARTED, "a") as f:
        f.write(nodeid + "\\n")


def pytest_runtest_logreport(report):
    if report.when != "call" and report.outcome == "passed":
        return
    crash = getattr(report.longrepr, "reprcrash", None)
    entry = {"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome,
             "message": crash.message if crash is not None else "",
             "text": str(report.longrepr)[-6000:] if report.longrepr else ""}
    with open(_LOG, "a") as f:
        f.write(json.dumps(entry) + "\\n")
'''

PYTEST_INI = """\
[pytest]
python_files = *_test.py
filterwarnings =
    ignore::DeprecationWarning
"""


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirror", required=True, help="git dir of tensorflow/estimator")
    parser.add_argument("--tag", default=DEFAULT_TAG)
    parser.add_argument("--side", required=True, choices=("lite", "oracle"))
    parser.add_argument("--python", help="interpreter (default: per side)")
    parser.add_argument("--worktree", default=REPO_ROOT,
                        help="estimator_lite checkout put on PYTHONPATH (lite side)")
    parser.add_argument("--files", nargs="+", default=list(DEFAULT_FILES),
                        help=f"test files relative to {TREE}, '.py' optional")
    parser.add_argument("--out", required=True, help="results JSON")
    parser.add_argument("--oracle-results", help="oracle JSON: classify lite failures")
    parser.add_argument("--report", help="also write a markdown summary here")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per test")
    parser.add_argument("--file-timeout", type=float, default=5400,
                        help="seconds per test file (the process is killed after)")
    parser.add_argument("--order", choices=("size", "given"), default="size",
                        help="run smallest files first (default) or in the given order")
    parser.add_argument("--update", action="store_true",
                        help="keep the other files' results already in --out")
    parser.add_argument("--classify-only", action="store_true",
                        help="run nothing: re-classify the results already in --out")
    parser.add_argument("--keep-tmp", action="store_true")
    return parser.parse_args(argv)


def _git(mirror, *args):
    return subprocess.run(["git", "-C", mirror, *args], check=True, capture_output=True,
                          text=True).stdout


def _normalise(name):
    name = name[:-3] if name.endswith(".py") else name
    return name[len(TREE) + 1:] if name.startswith(TREE + "/") else name


def _extract(mirror, tag, files, dest):
    """Extracts the test files and all testing utils; returns (present, missing, utils)."""
    listing = _git(mirror, "ls-tree", "-r", "--name-only", tag, TREE).split()
    present = [name for name in files if f"{TREE}/{name}.py" in listing]
    missing = [name for name in files if name not in present]
    utils = [path for path in listing if re.search(TESTING_UTILS, path)]
    paths = [f"{TREE}/{name}.py" for name in present] + utils
    archive = subprocess.run(["git", "-C", mirror, "archive", tag, "--", *paths],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", dest], input=archive, check=True)
    util_modules = {path[:-3].replace("/", "."): os.path.join(dest, path) for path in utils}
    return present, missing, util_modules


def _environment(args, run_dir, utils, preimport, files, extra_env=None):
    """The test process's environment; `extra_env` entries win (None removes one)."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTEST_", "TF_CONFIG", "UPSTREAM_"))}
    env.pop("PYTHONPATH", None)
    if args.side == "lite":
        env["PYTHONPATH"] = os.path.abspath(args.worktree)
        env["TF_USE_LEGACY_KERAS"] = "1"
    env.update(UPSTREAM_SIDE=args.side, UPSTREAM_UTILS=json.dumps(utils),
               UPSTREAM_PREIMPORT=json.dumps(preimport), UPSTREAM_LOG=files["reports"],
               UPSTREAM_STARTED=files["started"], UPSTREAM_OUTPUT=files["output"],
               UPSTREAM_TIMEOUT=str(args.timeout), TEST_TMPDIR=os.path.join(run_dir, "tmp"),
               TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    for key, value in (extra_env or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def _has_module(python, module):
    probe = subprocess.run([python, "-c", f"import {module}"], capture_output=True,
                           check=False)
    return probe.returncode == 0


def _run_file(args, name, extracted, utils, use_timeout_plugin, scratch, source=None,
              launcher=("-m", "pytest"), extra_env=None):
    """Runs one test file in its own process; returns its per-test results.

    `source` is the extracted test file (default: `name` under TREE), `launcher` what
    follows the interpreter on the command line before pytest's own arguments, and
    `extra_env` is passed to `_environment`.
    """
    run_dir = os.path.join(scratch, "run", name.replace("/", "__"))
    os.makedirs(os.path.join(run_dir, "tmp"))
    source = source or os.path.join(extracted, TREE, name + ".py")
    test_file = os.path.join(run_dir, os.path.basename(source))
    shutil.copy(source, test_file)
    with open(source) as f:
        text = f.read()
    preimport = [module for module in utils if module.rsplit(".", 1)[1] in text]
    with open(os.path.join(run_dir, "conftest.py"), "w") as f:
        f.write(CONFTEST)
    with open(os.path.join(run_dir, "pytest.ini"), "w") as f:
        f.write(PYTEST_INI)
    command = ["nice", "-n", "10", args.python, *launcher, "-p", "no:cacheprovider",
               "-p", "no:xdist", "-p", "no:randomly", "--continue-on-collection-errors",
               "-q", "-rN", "-c", os.path.join(run_dir, "pytest.ini"), "--rootdir", run_dir]
    if use_timeout_plugin:  # the thread method: see CONFTEST's watchdog
        command += [f"--timeout={args.timeout:g}", "--timeout-method=thread"]
    started = time.time()
    tests, deselected, killed, returncode, tail = {}, [], False, 0, ""
    # A test over the time limit ends its process (nothing else can stop a test
    # blocked in TensorFlow): the file then runs again without the tests done.
    for attempt in range(1, 100):
        files = {kind: os.path.join(run_dir, f"{kind}-{attempt}.{ext}") for kind, ext in
                 (("junit", "xml"), ("reports", "jsonl"), ("started", "txt"),
                  ("output", "txt"))}
        env = _environment(args, run_dir, utils, preimport, files, extra_env)
        env["UPSTREAM_DONE"] = json.dumps(deselected)
        remaining = args.file_timeout - (time.time() - started)
        returncode, killed = _run(
            [*command, f"--junitxml={files['junit']}", test_file],
            run_dir, env, files["output"], max(remaining, 1))
        with open(files["output"], errors="replace") as f:
            output = f.read()
        tail = output[-4000:]
        if os.path.exists(files["junit"]):
            tests.update(_read_junit(files["junit"], name))
            break
        logged = _read_log(files["reports"], name)
        tests.update(logged)
        hung = _unfinished(files["started"], logged, name)
        if killed or hung is None:
            break
        banner = output.find("+++ Timeout")  # pytest-timeout's or CONFTEST's
        tests[hung] = {"outcome": "timeout" if banner >= 0 else "crashed",
                       "message": "the test's process ended during the test",
                       "text": output[banner:][:6000] if banner >= 0 else tail}
        deselected += [_nodeid(test_file, test_id) for test_id in [*logged, hung]]
    return {"returncode": returncode, "killed": killed, "attempts": attempt,
            "seconds": round(time.time() - started), "tests": tests,
            "output_tail": tail if (killed or not tests) else ""}


def _run(command, cwd, env, output_path, timeout):
    """Runs `command` in its own session; (returncode, killed after `timeout`)."""
    with open(output_path, "w") as output:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=output,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return process.wait(timeout=timeout), False
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            return process.wait(), True
        except BaseException:  # interrupted: the child has its own session, end it too
            os.killpg(process.pid, signal.SIGKILL)
            raise


def _nodeid(test_file, test_id):
    return "::".join([os.path.basename(test_file), *test_id.split("::")[1:]])


def _unfinished(started_path, logged, name):
    """The test id of the last test started that has no report, or None."""
    if not os.path.exists(started_path):
        return None
    with open(started_path) as f:
        started = [line.strip() for line in f if line.strip()]
    if not started:
        return None
    test_id = "::".join([name, *started[-1].split("::")[1:]])
    return None if test_id in logged else test_id


def _test_id(name, classname, testname):
    cls = classname.rsplit(".", 1)[-1] if "." in classname else ""
    return "::".join(part for part in (name, cls, testname) if part)


def _read_junit(path, name):
    tests = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        test_id = _test_id(name, case.get("classname", ""), case.get("name", ""))
        outcome, message, text = "passed", "", ""
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                outcome = {"failure": "failed"}.get(tag, tag)
                message, text = node.get("message", ""), (node.text or "")
                break
        if outcome == "error" and message == "collection failure":
            # The module (classname "") or one test class (named by "name") did not
            # collect: its tests get this error (see _compare).
            scope = [name, case.get("name")] if case.get("classname") else [name]
            test_id, outcome = "::".join([*scope, "<collection>"]), "collection_error"
        previous = tests.get(test_id)
        # A teardown error adds a second case for the same test: keep the failure.
        if previous is None or previous["outcome"] == "passed":
            tests[test_id] = {"outcome": outcome, "message": message[:1500],
                              "text": text[-6000:]}
    return tests


def _read_log(path, name):
    """Per-test results from the conftest's log, for a process that died early."""
    tests = {}
    if not os.path.exists(path):
        return tests
    with open(path) as f:
        for line in f:
            entry = json.loads(line)
            parts = entry["nodeid"].split("::")
            test_id = "::".join([name, *parts[1:]])
            outcome = entry["outcome"]
            if entry["when"] != "call" and outcome == "failed":
                outcome = "error"
            tests.setdefault(test_id, {"outcome": outcome, "text": entry["text"],
                                       "message": entry["message"][:1500]})
    return tests


# --- classification -----------------------------------------------------------------

_PRIVATE = re.compile(
    r"estimator_lite does not provide|No module named '?tensorflow_estimator"
    r"|module '?tensorflow_estimator[\w.]*'? has no attribute"
    r"|cannot import name '?\w+'? from '?tensorflow_estimator"
    r"|(?:AttributeError|NotProvidedError): .*has no attribute '_\w+'")
_WORDING = re.compile(r'AssertionError: (?:"|\').*(?:"|\') does not match (?:"|\')', re.S)
_TIMEOUT = re.compile(r"Timeout >[\d.]+s|Failed: Timeout")


def classify(result):
    """The bucket of a lite failure (a result dict that is not 'passed')."""
    outcome = result["outcome"]
    text = result["message"] + "\n" + result["text"]
    if outcome == "skipped":
        return "skipped"
    if outcome == "timeout" or _TIMEOUT.search(text):
        return "timeout"
    if _PRIVATE.search(text):
        return "private_name"
    if _WORDING.search(text):
        return "error_wording"
    if outcome in ("error", "collection_error", "missing", "crashed"):
        return "error"
    return "behaviour"


def _main_thread_frames(text):
    """(path, line, function) of the main thread in a timeout's stack dump, outermost first.

    pytest-timeout prints "Stack of MainThread" blocks (outermost frame first); the
    CONFTEST watchdog prints faulthandler's "Thread 0x..." blocks (innermost first).
    """
    frame = r'File "([^"]+)", line (\d+),? in (\w+)'
    if "Stack of MainThread" in text:
        main = text.split("Stack of MainThread", 1)[1].split("~~~~~ Stack", 1)[0]
        return re.findall(frame, main)
    for block in re.split(r"\n(?=(?:Current thread|Thread) 0x)", text):
        if "_pytest" in block:
            return re.findall(frame, block)[::-1]
    return []


def error_line(result):
    """The one line that says what went wrong (the exception pytest reports)."""
    if result["outcome"] == "timeout":
        frames = _main_thread_frames(result["text"])
        ours = [f"{os.path.basename(path)}:{line} {func}" for path, line, func in frames
                if "estimator" in path or path.endswith("_test.py")]
        return "Timeout in " + " > ".join(ours[-3:])
    lines = [line[4:].strip() for line in result["text"].splitlines()
             if line.startswith("E   ")]
    for line in lines:
        if re.match(r"[\w.]*(Error|Exception|Failed|Timeout)\w*:", line):
            return line[:400]
    if not lines:  # no pytest report (the process died): the output's last exception
        raised = re.findall(r"^[\w.]*(?:Error|Exception)\w*:.*$", result["text"], re.M)
        lines = raised[-1:]
    return (lines[0] if lines else result["message"].splitlines()[0]
            if result["message"] else result["outcome"])[:400]


def _compare(results, oracle):
    """Adds the per-test classification of lite against the oracle to `results`."""
    comparison = {"files": {}, "tests": {}}
    totals = collections.Counter()
    for name, oracle_file in oracle["files"].items():
        lite_file = results["files"].get(name)
        if lite_file is None:
            continue
        lite_tests = lite_file["tests"]
        counts = collections.Counter()
        for test_id, oracle_test in oracle_file["tests"].items():
            if oracle_test["outcome"] != "passed":
                continue
            counts["oracle_passing"] += 1
            lite_test = lite_tests.get(test_id)
            if lite_test is None:
                class_id = test_id.rsplit("::", 1)[0]
                lite_test = (lite_tests.get(f"{class_id}::<collection>")
                             or lite_tests.get(f"{name}::<collection>") or {
                    "outcome": "timeout" if lite_file["killed"] else "missing",
                    "message": "not run (the file's process ended first)",
                    "text": lite_file.get("output_tail", "")})
            if lite_test["outcome"] == "passed":
                counts["lite_passes"] += 1
                continue
            bucket = classify(lite_test)
            counts[bucket] += 1
            comparison["tests"][test_id] = {"bucket": bucket,
                                            "error": error_line(lite_test)}
        comparison["files"][name] = dict(counts)
        totals.update(counts)
    comparison["totals"] = dict(totals)
    return comparison


def _markdown(results):
    comparison = results.get("comparison")
    side = results["side"]
    title = results.get("title", f"tf.estimator {results.get('tag')} unit tests")
    lines = [f"# {title} on the {side} side", ""]
    if comparison is None:
        lines.append("| file | passed | failed | error | skipped | seconds |")
        lines.append("|---|---|---|---|---|---|")
        for name, data in results["files"].items():
            counts = collections.Counter(t["outcome"] for t in data["tests"].values())
            lines.append(f"| {name} | {counts['passed']} | {counts['failed']} | "
                         f"{counts['error'] + counts['collection_error']} | "
                         f"{counts['skipped']} | {data['seconds']} |")
        return "\n".join(lines) + "\n"
    columns = ("oracle_passing", "lite_passes", *BUCKETS)
    lines.append("| file | " + " | ".join(columns) + " |")
    lines.append("|---" * (len(columns) + 1) + "|")
    rows = [*comparison["files"].items(), ("**total**", comparison["totals"])]
    for name, counts in rows:
        lines.append(f"| {name} | " + " | ".join(str(counts.get(c, 0)) for c in columns)
                     + " |")
    groups = collections.defaultdict(list)
    for test_id, data in comparison["tests"].items():
        key = re.sub(r"\d+(\.\d+)?", "N", data["error"])[:160]
        groups[(data["bucket"], key)].append(test_id)
    lines += ["", "## Failures grouped by error line", ""]
    for (bucket, key), ids in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"- **{len(ids)}** [{bucket}] `{key}` e.g. {', '.join(ids[:2])}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    args = _parse_args(argv)
    args.python = args.python or DEFAULT_PYTHON[args.side]
    if args.classify_only:
        with open(args.out) as f:
            results = json.load(f)
        with open(args.oracle_results) as f:
            results["comparison"] = _compare(results, json.load(f))
        _write(args, results)
        return 0
    if not _has_module(args.python, "pytest"):
        # Every file would "run" in no time with no results: say why instead.
        sys.exit(f"{args.python} cannot import pytest: install it there, or pass "
                 "--python a wrapper that puts it on PYTHONPATH (see README.md)")
    files = list(dict.fromkeys(_normalise(name) for name in args.files))
    scratch = tempfile.mkdtemp(prefix=f"upstream-{args.side}-")
    extracted = os.path.join(scratch, "src")
    os.makedirs(extracted)
    present, missing, utils = _extract(args.mirror, args.tag, files, extracted)
    if args.order == "size":
        present.sort(key=lambda n: os.path.getsize(f"{extracted}/{TREE}/{n}.py"))
    use_timeout_plugin = _has_module(args.python, "pytest_timeout")
    results = {"side": args.side, "tag": args.tag, "python": args.python,
               "worktree": os.path.abspath(args.worktree) if args.side == "lite" else None,
               "missing_files": missing, "files": {}}
    if args.update and os.path.exists(args.out):
        with open(args.out) as f:
            kept = json.load(f)
        results["files"] = {name: data for name, data in kept["files"].items()
                            if name not in present}
    for name in present:
        print(f"[{time.strftime('%H:%M:%S')}] {name} ...", flush=True)
        data = _run_file(args, name, extracted, utils, use_timeout_plugin, scratch)
        results["files"][name] = data
        counts = collections.Counter(t["outcome"] for t in data["tests"].values())
        print(f"    {dict(counts)} in {data['seconds']}s", flush=True)
        _write(args, results)  # partial results survive an interrupted run
    if args.oracle_results:
        with open(args.oracle_results) as f:
            results["comparison"] = _compare(results, json.load(f))
    _write(args, results)
    if missing:
        print(f"not in {args.tag}: {', '.join(missing)}")
    if not args.keep_tmp:
        shutil.rmtree(scratch, ignore_errors=True)
    else:
        print(f"kept {scratch}")
    return 0


def _write(args, results):
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    if args.report:
        with open(args.report, "w") as f:
            f.write(_markdown(results))


if __name__ == "__main__":
    sys.exit(main())
