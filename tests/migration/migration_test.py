"""The migration corpus: real tf.estimator-style programs run after an import swap.

Each program in examples/migration/ runs as a subprocess on estimator_lite and,
when ESTIMATOR_LITE_TF215_PYTHON names a TF 2.15 + tensorflow-estimator 2.15
interpreter, unchanged but for the import line on tf.estimator. Both runs must
exit 0, pass the program's own checks (global_step, quality, signatures, stderr
lines) and agree: same metric keys, values within the program's stated tolerance
(tests/migration/runner.py explains each), identical export signatures and facts.
Programs run one after the other (a few seconds each per backend).
"""

import ast
import os

import pytest

from tests.migration import runner

NOT_FOUND = "must have exactly one line"


@pytest.mark.slow
@pytest.mark.parametrize("prog", runner.all_programs(), ids=lambda p: p.name)
def test_program_runs_alike_on_estimator_lite_and_tf_estimator(prog, tmp_path):
    lite, oracle, problems = runner.run_both(prog, str(tmp_path))
    assert problems == [], "\n".join(problems)
    # Whichever side could run produced the recorded metrics and signatures.
    ran = [r for r in (lite, oracle) if r is not None and r.result is not None]
    if not ran and prog.legacy_keras and not runner.oracle_env.legacy_keras_available():
        # The install hint was checked above; the program itself needs tf-keras.
        pytest.skip(runner.oracle_env.LEGACY_KERAS_REASON)
    assert ran, "no backend produced a MIGRATION_RESULT line"
    for one in ran:
        assert one.result["metrics"]["global_step"] == prog.global_step


@pytest.mark.parametrize("prog", runner.all_programs(), ids=lambda p: p.name)
def test_program_differs_from_tf_estimator_only_in_its_import_line(prog):
    with open(prog.path) as f:
        original = f.read()
    swapped = runner.oracle_source(prog)
    changed = [(a, b) for a, b in zip(original.splitlines(), swapped.splitlines(),
                                      strict=True) if a != b]
    assert changed == [(prog.swap_line, prog.oracle_import)]
    assert "estimator_lite" not in _imported_modules(swapped)


def _imported_modules(source):
    modules = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module.split(".")[0])
    return modules


@pytest.mark.parametrize("count", [0, 2])
def test_swap_import_needs_exactly_one_swap_line(count):
    source = "import os\n" + (runner.SWAP_LINE + "\n") * count
    with pytest.raises(ValueError, match=NOT_FOUND):
        runner.swap_import(source, runner.TF_ESTIMATOR_IMPORT)


def test_corpus_covers_the_required_kinds_of_program():
    names = {p.name for p in runner.all_programs()}
    assert len(names) >= 6
    assert os.path.exists(os.path.join(runner.PROGRAM_DIR, "README.md"))
    assert any(p.legacy_keras for p in runner.PROGRAMS)
    assert any(p.master_tf_config for p in runner.PROGRAMS)
    assert any(p.oracle_import == runner.TF_ESTIMATOR_V1_IMPORT for p in runner.PROGRAMS)
    tf1_programs = [p for p in runner.all_programs() if p.swap_line == runner.V1_SWAP_LINE]
    assert len(tf1_programs) >= 2
    for prog in runner.all_programs():
        assert os.path.exists(prog.path), prog.path
