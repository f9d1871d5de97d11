"""Run the estimator tests of libraries built on tf.estimator, on the oracle or on lite.

tensorflow-gan, tensorflow-lattice, tensorflow-ranking, adanet and
neural-structured-learning ship unit tests for their estimator code. This harness
extracts those test files (and the test-only helper modules they import) from git
mirrors of the libraries, at the commits of the releases CI installs, and runs them
with the machinery of `run_upstream.py`: one pytest process per file, a generated
conftest, per-test outcomes from junit XML, and the same buckets for the tests that
pass on the oracle but not on lite. The libraries themselves are the installed
wheels; only their tests come from the mirrors.

- oracle: TF 2.15 + tensorflow-estimator 2.15 (`.venv-tf215`), `python -m pytest`;
- lite: TF 2.21 + tf-keras with this checkout on PYTHONPATH,
  `python -m estimator_lite.run -m pytest` with TF_USE_LEGACY_KERAS=1 (the libraries
  are Keras 2 code).

`library_shims.py` runs in the conftest on both sides (see its docstring).

Usage:
  python tests/upstream/run_libraries.py --side oracle --out oracle.json
  python tests/upstream/run_libraries.py --side lite --out lite.json \\
      --oracle-results oracle.json --report lite.md [--libraries adanet ...]
"""

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_upstream  # noqa: E402  (this folder is not a package)

MIRROR_ROOT = "/work/.mirror"
SHIMS = os.path.join(HERE, "library_shims.py")
# name: (mirror folder, commit of the pinned release, test files, helper modules).
# The commits: lattice v2.0.13, adanet v0.9.0 and nsl v1.4.0 are tags; tfgan 2.1.0
# is the commit that set version.py to 2.1.0 (the repo has no tags); ranking 0.5.5
# is the commit that set its version.py to 0.5.5 (the tags stop at v0.5.3).
# Helper modules are served under their package paths (adanet's wheel lacks
# testing_utils; the mirror's copy is the one its tests were written with).
# `tf1`: the test files are TF1 programs (`test_util.run_v1_only`: every test skips
# under TF2 behaviour), as the library's tests ran under TF 1.x: they run with
# `import tensorflow.compat.v1 as tf` and v2 behaviour disabled, on both sides.
Library = collections.namedtuple("Library", "mirror commit files helpers tf1",
                                 defaults=(False,))
LIBRARIES = {
    "tfgan": Library("tensorflow+gan", "723ce1e3627778b979f048d817f834f253611ff4", (
        "tensorflow_gan/python/estimator/gan_estimator_test",
        "tensorflow_gan/python/estimator/stargan_estimator_test",
        "tensorflow_gan/python/estimator/latent_gan_estimator_test",
        "tensorflow_gan/python/estimator/tpu_gan_estimator_test",
    ), ("tensorflow_gan/python/estimator/tpu_gan_estimator_test_lib",)),
    "lattice": Library("tensorflow+lattice", "v2.0.13", (
        "tensorflow_lattice/python/estimators_test",
    ), ()),
    "ranking": Library("tensorflow+ranking", "5b1d1338c1cb76507466d062e2d48bae57b17ac4", (
        "tensorflow_ranking/python/estimator_test",
        "tensorflow_ranking/python/keras/estimator_test",
        "tensorflow_ranking/python/head_test",  # the ranking head's EstimatorSpecs
        "tensorflow_ranking/python/model_test",  # the model_fn it builds
        "tensorflow_ranking/python/feature_test",  # its feature columns in estimators
    ), ()),
    "adanet": Library("tensorflow+adanet", "v0.9.0", (
        "adanet/core/estimator_test",
        "adanet/core/estimator_v2_test",
        "adanet/core/tpu_estimator_test",
        "adanet/core/iteration_test",
        "adanet/core/ensemble_builder_test",
        "adanet/core/eval_metrics_test",
        "adanet/autoensemble/estimator_test",
        "adanet/autoensemble/estimator_v2_test",
        "adanet/autoensemble/tpu_estimator_test",
    ), ("adanet/core/testing_utils",)),
    "nsl": Library("tensorflow+neural-structured-learning", "v1.4.0", (
        "neural_structured_learning/estimator/adversarial_regularization_test",
        "neural_structured_learning/estimator/graph_regularization_test",
    ), (), True),
}


# The files that take a quarter of an hour or more on two cores (lattice trains 35
# models; adanet's estimator_test grows ~95 ensembles): `--sample-long N` runs every
# N-th of their tests (CI's choice, see tests/third_party/library_suites_test.py).
LONG_FILES = ("lattice:tensorflow_lattice/python/estimators_test",
              "adanet:adanet/core/estimator_test")


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirror-root", default=MIRROR_ROOT,
                        help="folder of the <owner>+<name>/repo git mirrors")
    parser.add_argument("--side", required=True, choices=("lite", "oracle"))
    parser.add_argument("--python", help="interpreter (default: per side)")
    parser.add_argument("--worktree", default=run_upstream.REPO_ROOT,
                        help="estimator_lite checkout put on PYTHONPATH (lite side)")
    parser.add_argument("--libraries", nargs="+", default=list(LIBRARIES),
                        choices=list(LIBRARIES))
    parser.add_argument("--files", nargs="+",
                        help="only these test ids' files: LIBRARY:PATH (no '.py')")
    parser.add_argument("--out", required=True, help="results JSON")
    parser.add_argument("--oracle-results", help="oracle JSON: classify lite failures")
    parser.add_argument("--report", help="also write a markdown summary here")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per test")
    parser.add_argument("--file-timeout", type=float, default=3600,
                        help="seconds per test file (the process is killed after)")
    parser.add_argument("--sample-long", type=int, default=1, metavar="N",
                        help="run every N-th test of LONG_FILES (default: all)")
    parser.add_argument("--select", metavar="EXPR",
                        help="only the tests pytest's `-k EXPR` selects")
    parser.add_argument("--update", action="store_true",
                        help="keep the other files' results already in --out")
    parser.add_argument("--classify-only", action="store_true",
                        help="run nothing: re-classify the results already in --out")
    parser.add_argument("--brief", action="store_true",
                        help="leave the failure texts out of --out (a committed oracle)")
    parser.add_argument("--keep-tmp", action="store_true")
    return parser.parse_args(argv)


def mirror_dir(root, library):
    """The bare git directory of `library`'s mirror."""
    return os.path.join(root, LIBRARIES[library].mirror, "repo")


def missing_mirrors(root, libraries=tuple(LIBRARIES)):
    """The libraries whose mirror (at the pinned commit) is not under `root`."""
    missing = []
    for library in libraries:
        probe = subprocess.run(
            ["git", "--git-dir", mirror_dir(root, library), "cat-file", "-e",
             LIBRARIES[library].commit + "^{commit}"], capture_output=True, check=False)
        if probe.returncode != 0:
            missing.append(library)
    return missing


def _extract(root, library, dest):
    """Extracts `library`'s test files and helpers into dest; (files, helper modules)."""
    spec = LIBRARIES[library]
    paths = [f"{path}.py" for path in (*spec.files, *spec.helpers)]
    archive = subprocess.run(["git", "--git-dir", mirror_dir(root, library), "archive",
                              spec.commit, "--", *paths], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", dest], input=archive, check=True)
    if spec.tf1:
        for path in spec.files:
            _as_tf1_program(os.path.join(dest, path + ".py"))
    helpers = {path.replace("/", "."): os.path.join(dest, path + ".py")
               for path in spec.helpers}
    return list(spec.files), helpers


def _as_tf1_program(path):
    """Rewrites the test file's `import tensorflow as tf` to TF1's API."""
    with open(path) as f:
        text = f.read()
    text = text.replace("\nimport tensorflow as tf\n",
                        "\nimport tensorflow.compat.v1 as tf\n", 1)
    with open(path, "w") as f:
        f.write(text)


def _side_environment(args, library, name):
    """What the side, library and file add to run_upstream's test environment."""
    env = {"UPSTREAM_SHIMS": SHIMS, "UPSTREAM_LIBRARY": library,
           "UPSTREAM_TF1": "1" if LIBRARIES[library].tf1 else "0",
           "UPSTREAM_EVERY_NTH": str(args.sample_long if name in LONG_FILES else 1)}
    if args.side == "lite":
        env["UPSTREAM_INSTALL"] = "0"  # estimator_lite.run installs it
    else:
        env["TF_USE_LEGACY_KERAS"] = None  # TF 2.15's tf.keras is Keras 2 already
    return env


def _launcher(side, select=None):
    pytest = ("-m", "pytest", *(("-k", select) if select else ()))
    return ("-m", "estimator_lite.run", *pytest) if side == "lite" else pytest


def run(args):
    """Runs the selected libraries' test files; returns the results dict."""
    scratch = tempfile.mkdtemp(prefix=f"libraries-{args.side}-")
    use_timeout_plugin = run_upstream._has_module(args.python, "pytest_timeout")
    results = {"side": args.side, "title": "Libraries' estimator unit tests",
               "sample_long": args.sample_long,
               "python": args.python, "tag": "pinned releases",
               "commits": {name: LIBRARIES[name].commit for name in args.libraries},
               "worktree": os.path.abspath(args.worktree) if args.side == "lite" else None,
               "missing_files": [], "files": {}}
    if args.update and os.path.exists(args.out):
        with open(args.out) as f:
            results["files"] = json.load(f)["files"]
    for library in args.libraries:
        extracted = os.path.join(scratch, "src", library)
        os.makedirs(extracted)
        files, helpers = _extract(args.mirror_root, library, extracted)
        for path in files:
            name = f"{library}:{path}"
            if args.files and name not in args.files:
                continue
            print(f"[{time.strftime('%H:%M:%S')}] {name} ...", flush=True)
            data = run_upstream._run_file(
                args, name, extracted, helpers, use_timeout_plugin, scratch,
                source=os.path.join(extracted, path + ".py"),
                launcher=_launcher(args.side, args.select),
                extra_env=_side_environment(args, library, name))
            results["files"][name] = data
            counts = collections.Counter(t["outcome"] for t in data["tests"].values())
            print(f"    {dict(counts)} in {data['seconds']}s", flush=True)
            run_upstream._write(args, results)
    if not args.keep_tmp:
        shutil.rmtree(scratch, ignore_errors=True)
    else:
        print(f"kept {scratch}")
    return results


def _sampled_like(oracle, results):
    """The oracle's results less the tests of LONG_FILES a sampled run leaves out:
    it keeps every N-th in collection order (the order the oracle ran them), as the
    lite side's conftest does, so a sampled test lite did not run still counts."""
    every = results.get("sample_long", 1)
    if every == 1:
        return oracle
    for name in LONG_FILES:
        if name in oracle["files"] and name in results["files"]:
            tests = list(oracle["files"][name]["tests"].items())
            oracle["files"][name]["tests"] = dict(tests[::every])
    return oracle


def library_counts(results):
    """{library: {oracle_passing, lite_passes, ...}} from a classified results dict."""
    totals = collections.defaultdict(collections.Counter)
    for name, counts in results["comparison"]["files"].items():
        totals[name.split(":", 1)[0]].update(counts)
    return {library: dict(counts) for library, counts in totals.items()}


def main(argv=None):
    args = _parse_args(argv)
    args.python = args.python or run_upstream.DEFAULT_PYTHON[args.side]
    if args.classify_only:
        with open(args.out) as f:
            results = json.load(f)
    else:
        missing = missing_mirrors(args.mirror_root, args.libraries)
        if missing:
            print(f"no mirror at the pinned commit for: {', '.join(missing)}")
            return 2
        results = run(args)
    if args.oracle_results:
        with open(args.oracle_results) as f:
            oracle = _sampled_like(json.load(f), results)
        results["comparison"] = run_upstream._compare(results, oracle)
        results["comparison"]["libraries"] = library_counts(results)
        for library, counts in sorted(results["comparison"]["libraries"].items()):
            print(f"{library}: {counts.get('lite_passes', 0)} of "
                  f"{counts.get('oracle_passing', 0)} oracle-passing tests pass on lite")
    if args.brief:
        results = brief(results)
    run_upstream._write(args, results)
    return 0


def brief(results):
    """`results` with each test's outcome and first message line only."""
    for data in results["files"].values():
        data["output_tail"] = ""
        for test in data["tests"].values():
            test["text"] = ""
            test["message"] = test["message"].split("\n", 1)[0][:200]
    return results


if __name__ == "__main__":
    sys.exit(main())
