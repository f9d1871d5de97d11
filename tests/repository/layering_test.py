"""The package's layers import only downwards (see estimator_lite/__init__.py and
docs/architecture.md)."""

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PACKAGE = os.path.join(ROOT, "estimator_lite")


def _modules(folder):
    base = os.path.join(PACKAGE, folder)
    return sorted(os.path.join(dirpath, f) for dirpath, _, files in os.walk(base)
                  for f in files if f.endswith(".py"))


def _imported_modules(path):
    """Absolute module names imported by `path` (`from a import b` gives a and a.b)."""
    with open(path) as f:
        tree = ast.parse(f.read())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def _package_imports(path):
    """The estimator_lite modules `path` imports, as 'estimator_lite.x.y'."""
    return {n for n in _imported_modules(path)
            if n == "estimator_lite" or n.startswith("estimator_lite.")}


def _layer_violations(path, allowed_prefixes):
    bad = []
    for name in _package_imports(path):
        if not any(name == p or name.startswith(p + ".") for p in allowed_prefixes):
            bad.append(name)
    return sorted(bad)


@pytest.mark.parametrize("path", _modules("_engine"), ids=os.path.basename)
def test_engine_imports_no_public_module(path):
    allowed = ("estimator_lite._engine", "estimator_lite._tf", "estimator_lite._pycompat",
               "estimator_lite._keras")
    assert _layer_violations(path, allowed) == []


# The spec modules: the vocabulary a model_fn and an exporter speak (EstimatorSpec,
# ModeKeys, receivers, export outputs, SavedModel writing, Exporter). They sit under
# the orchestration modules, so techniques may build on them.
SPEC_MODULES = ("estimator_lite.model_fn", "estimator_lite.export",
                "estimator_lite.exporter")
SPEC_PATHS = [os.path.join(PACKAGE, "model_fn.py"), os.path.join(PACKAGE, "exporter.py")]
SPEC_PATHS += _modules("export")
BELOW_API = ("estimator_lite._engine", "estimator_lite._tf", "estimator_lite._pycompat",
             "estimator_lite._keras")


def _violations_below_root(path, allowed):
    """Like _layer_violations, where `from estimator_lite import m` counts as m only."""
    return [n for n in _layer_violations(path, allowed) if n != "estimator_lite"]


@pytest.mark.parametrize("path", SPEC_PATHS, ids=os.path.basename)
def test_spec_modules_import_only_specs_engine_and_tf(path):
    assert _violations_below_root(path, SPEC_MODULES + BELOW_API) == []


@pytest.mark.parametrize("path", _modules("techniques"), ids=os.path.basename)
def test_techniques_never_import_estimator_or_training(path):
    forbidden = ("estimator_lite.estimator", "estimator_lite.training")
    bad = [n for n in _package_imports(path)
           if n in forbidden or n.startswith(tuple(f + "." for f in forbidden))]
    assert bad == []


@pytest.mark.parametrize("path", _modules("techniques"), ids=os.path.basename)
def test_techniques_import_only_specs_techniques_engine_and_tf(path):
    # Nothing that imports `estimator` or `training` either.
    allowed = SPEC_MODULES + BELOW_API + ("estimator_lite.techniques",)
    assert _violations_below_root(path, allowed) == []


def test_tf_module_imports_nothing_of_the_package():
    assert _package_imports(os.path.join(PACKAGE, "_tf.py")) == set()


def test_keras_module_imports_only_tf_and_pycompat():
    path = os.path.join(PACKAGE, "_keras.py")
    assert _layer_violations(path, ("estimator_lite._tf", "estimator_lite._pycompat")) == []


# canned/ builds on the heads, the optimizers, the specs and the engine: none of them
# may import it back (at the top or inside a function).
BELOW_CANNED = sorted(set(_modules("head") + _modules("_engine") + _modules("optimizers")
                          + SPEC_PATHS))


def _canned_imports(path):
    return sorted(n for n in _package_imports(path)
                  if n == "estimator_lite.canned" or n.startswith("estimator_lite.canned."))


@pytest.mark.parametrize("path", BELOW_CANNED,
                         ids=lambda p: os.path.relpath(p, PACKAGE))
def test_heads_optimizers_specs_and_engine_import_nothing_from_canned(path):
    assert _canned_imports(path) == []


def test_the_modules_below_canned_are_found():
    names = {os.path.relpath(p, PACKAGE) for p in BELOW_CANNED}
    assert {"head/base_head.py", "optimizers/mapping.py", "model_fn.py",
            "_engine/train_session.py", "export/outputs.py"} <= names


@pytest.mark.parametrize("path", _modules("optimizers"), ids=os.path.basename)
def test_optimizers_import_only_engine_keras_and_tf(path):
    assert _violations_below_root(path, BELOW_API + ("estimator_lite.optimizers",)) == []


# "Is this a collective job?" is answered in one module, _engine/topology.py: it reads
# the strategy (`distribute.is_collective`, where the strategies' class names are)
# and the cluster into a record of facts, which every other module reads.
TOPOLOGY = "_engine/topology.py"
# The strategy test and the class names it reads.
STRATEGY_TEST = {"is_collective", "_MULTI_WORKER"}
# topology's answer for a bare strategy, where no RunConfig exists yet
# (`run_config`: a cluster of workers only is valid TF_CONFIG for a collective
# strategy).
ASKS_ABOUT_A_STRATEGY = {"run_config.py"}
# The job kinds: outside topology, only the record's facts are read.
JOB_KINDS = {"LOCAL", "PS", "COLLECTIVE"}


def _references(tree):
    """(line, name, owner) of every name `tree` reads or imports; owner is the module
    name an attribute is read from (`topology.COLLECTIVE`), else None."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.lineno, node.id, None
        elif isinstance(node, ast.Attribute):
            owner = node.value.id if isinstance(node.value, ast.Name) else None
            yield node.lineno, node.attr, owner
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                yield node.lineno, alias.name, node.module.rsplit(".", 1)[-1]
        elif isinstance(node, ast.Constant) and node.value == "collective":
            yield node.lineno, "'collective'", None


def _collective_questions(path):
    """Where `path` asks whether a job is collective other than by reading a
    `topology.Topology` record: ['line: name']."""
    relative = os.path.relpath(path, PACKAGE).replace(os.sep, "/")
    if relative == TOPOLOGY:
        return []
    with open(path) as f:
        tree = ast.parse(f.read())
    found = []
    for line, name, owner in _references(tree):
        if (name in STRATEGY_TEST and relative != "_engine/distribute.py"
                or name == "runs_collectives" and relative not in ASKS_ABOUT_A_STRATEGY
                or name in JOB_KINDS and owner == "topology"
                or name == "'collective'"):
            found.append(f"{line}: {name}")
    return found


@pytest.mark.parametrize("path", _modules(""), ids=lambda p: os.path.relpath(p, PACKAGE))
def test_only_topology_decides_whether_a_job_is_collective(path):
    assert _collective_questions(path) == []


def test_the_collective_checker_sees_each_way_of_asking(tmp_path):
    bad = tmp_path / "training_like.py"
    bad.write_text("from estimator_lite._engine import distribute, topology\n"
                   "from estimator_lite._engine.topology import COLLECTIVE\n"
                   "a = distribute.is_collective(None)\n"
                   "b = topology.runs_collectives(None)\n"
                   "c = record.kind == topology.COLLECTIVE or record.kind == 'collective'\n"
                   "d = record.workers_hold_variables\n")
    assert _collective_questions(str(bad)) == [
        "2: COLLECTIVE", "3: is_collective", "4: runs_collectives", "5: COLLECTIVE",
        "5: 'collective'"]


# The compatibility room serves tf.estimator's module paths (docs/compatibility.md):
# the working modules never import it, so they read as if those paths did not exist.
# Only the opt-in entry points that install the paths do.
COMPAT_IMPORTERS = ("install.py", "run.py")
ROOM = "estimator_lite._compat"


def _working_modules():
    """Every module of the package except the room's own and its importers."""
    paths = []
    for dirpath, _, files in os.walk(PACKAGE):
        for f in files:
            relpath = os.path.relpath(os.path.join(dirpath, f), PACKAGE)
            if (f.endswith(".py") and relpath not in COMPAT_IMPORTERS
                    and not relpath.startswith("_compat" + os.sep)):
                paths.append(os.path.join(dirpath, f))
    return sorted(paths)


@pytest.mark.parametrize("path", _working_modules(),
                         ids=lambda p: os.path.relpath(p, PACKAGE))
def test_working_modules_never_import_the_compatibility_room(path):
    assert sorted(n for n in _package_imports(path)
                  if n == ROOM or n.startswith(ROOM + ".")) == []


def test_the_working_modules_are_found():
    names = {os.path.relpath(p, PACKAGE) for p in _working_modules()}
    assert {"estimator.py", "training.py", "head/base_head.py", "__init__.py"} <= names
    assert not any(n.startswith("_compat") for n in names) and "install.py" not in names


def test_checker_sees_a_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from estimator_lite import training\n"
                   "from estimator_lite._engine import timer\n")
    assert _layer_violations(str(bad), ("estimator_lite._engine",)) == [
        "estimator_lite", "estimator_lite.training"]


def test_checker_sees_a_canned_import_inside_a_function(tmp_path):
    bad = tmp_path / "head_like.py"
    bad.write_text("from estimator_lite import optimizers\n"
                   "def train_op():\n"
                   "    from estimator_lite.canned import optimizers as o\n"
                   "    import estimator_lite.canned.dnn\n"
                   "    return o\n")
    assert _canned_imports(str(bad)) == [
        "estimator_lite.canned", "estimator_lite.canned.dnn",
        "estimator_lite.canned.optimizers"]
