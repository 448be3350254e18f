"""The house's rules, checked over the code as it stands (docs/architecture.md):

* each study of the suite in one place per layer (compsuite/studies/<study>/,
  data_prep/<study>/, eval/<study>/ with its report builder and paper numbers);
* the core (CLI, runner, registry, schema, toolkit backends, the foundation) names no
  study, and no shared code (the core, the shared rooms of eval/ and data_prep/common)
  imports one, whichever studies are registered;
* no module imports a private name of another module;
* no function over 80 lines in the suite's packages (compsuite/, eval/, data_prep/,
  fairseq_plugins/: every top-level folder of the checkout with an __init__.py);
* study options declared as schemas: no study overrides validate();
* a study's commands take their model's options from compsuite.commands.model_arguments.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

from compsuite.foundation.checkout import ROOT
from compsuite.registry import EXPERIMENTS_DIR, load_plugins, read_yaml, studies
from compsuite.studies.base import Study
from compsuite.studies.evaluations import BREAKDOWNS, EVALUATIONS

#: the suite's own studies: every YAML in compsuite/experiments (not the example's)
SUITE = sorted(n for n, p in studies().items() if Path(p).parent == EXPERIMENTS_DIR)
SHARED_EVAL = {"__init__.py", "metrics", "readers", "reports"}
MAX_LINES = 80
#: the suite's Python packages: the installed ones (compsuite, and eval and data_prep
#: under its namespace) and fairseq_plugins, shipped for fairseq's --user-dir
PACKAGES = sorted(p.parent.name for p in ROOT.glob("*/__init__.py"))


def python_files(*folders: str):
    for folder in folders:
        for p in sorted((ROOT / folder).rglob("*.py")):
            if "__pycache__" not in p.parts:
                yield p


def test_the_suite_has_its_five_studies():
    assert {"pcfgset", "ctlpp", "sget", "paradox", "nli"} <= set(SUITE)


@pytest.mark.parametrize("name", SUITE)
def test_each_study_has_one_home_per_layer(name):
    assert (ROOT / "compsuite" / "studies" / name / "__init__.py").is_file()
    assert (ROOT / "compsuite" / "studies" / name / "commands.py").is_file()
    assert (ROOT / "data_prep" / name / "__init__.py").is_file()
    assert (ROOT / "data_prep" / name / "doc.md").is_file()
    assert (ROOT / "eval" / name / "__init__.py").is_file()
    assert (ROOT / "eval" / name / "paper_numbers.yaml").is_file()
    report = importlib.import_module(f"compsuite.eval.{name}.report")
    params = list(inspect.signature(report.build_report).parameters)
    assert params == ["study", "profile", "results", "out_dir"], params


def test_the_top_of_eval_holds_only_what_studies_share():
    top = {p.name for p in (ROOT / "eval").iterdir() if p.name != "__pycache__"}
    assert top - set(SUITE) <= SHARED_EVAL, sorted(top - set(SUITE) - SHARED_EVAL)


def study_words() -> set[str]:
    """Every name that identifies a registered study, read from the registry (no list
    kept by hand): its name, its paper's authors, and the evaluations and breakdowns
    it registers (an evaluation named after a shared metric in eval/metrics/, such as
    accuracy, names no study)."""
    load_plugins()
    words = set(studies())
    for name, path in studies().items():
        paper = str(read_yaml(path).get("paper", ""))
        authors = paper.split("(", 1)[0] if "(" in paper else ""
        words |= {a.strip().lower() for a in re.split(r",| and ", authors) if a.strip()}
    shared_metrics = {p.stem for p in (ROOT / "eval" / "metrics").glob("*.py")}
    words |= {name for name in [*EVALUATIONS, *BREAKDOWNS] if name not in shared_metrics}
    return {w.lower() for w in words}


def core_files() -> list[Path]:
    core = [ROOT / "compsuite" / f for f in ("cli.py", "runner.py", "registry.py", "schema.py",
                                               "commands.py", "studies/base.py",
                                               "studies/evaluations.py")]
    return core + sorted((ROOT / "compsuite" / "foundation").glob("*.py")) + sorted(
        (ROOT / "compsuite" / "toolkits").rglob("*.py")) + sorted(
        (ROOT / "compsuite" / "models").rglob("*.py"))


def shared_files() -> list[Path]:
    """The core and the shared rooms of eval/ and data_prep/."""
    files = core_files()
    for folder in sorted(SHARED_EVAL - {"__init__.py"}):
        path = ROOT / "eval" / folder
        files += list(python_files(f"eval/{folder}")) if path.is_dir() else [path]
    return files + list(python_files("data_prep/common"))


def test_core_names_no_study():
    """The CLI, runner, registry, schema and toolkit backends name no study, in code or
    words; covers every registered study: adding one extends the words checked."""
    words = study_words()
    assert {"pcfgset", "sget", "localism", "hupkes", "kumon"} <= words   # read, not empty
    pattern = re.compile(r"\b(" + "|".join(sorted(map(re.escape, words))) + r")\b")
    for f in core_files():
        found = pattern.findall(f.read_text(encoding="utf-8").lower())
        assert not found, f"{f.relative_to(ROOT)} names {sorted(set(found))}"


def imported_modules(path: Path) -> set[str]:
    """Absolute names of what ``path`` imports (relative imports resolved)."""
    rel = path.relative_to(ROOT).with_suffix("")
    package = ["compsuite", *rel.parts[:-1]] if rel.parts[0] in ("eval", "data_prep") else \
        list(rel.parts[:-1])
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            out |= {mod} | {f"{mod}.{a.name}" for a in node.names}
    return out


def test_shared_code_imports_no_study():
    """Shared code (the core, eval/'s shared rooms, data_prep/common) does not depend on
    any registered study's modules (a shared metric may cite the paper that defined it;
    it may not import a study)."""
    study_modules = re.compile(r"^compsuite\.(eval|data_prep|studies)\.(" +
                               "|".join(map(re.escape, studies())) + r")(\.|$)")
    for f in shared_files():
        bad = sorted(m for m in imported_modules(f) if study_modules.match(m))
        assert not bad, f"{f.relative_to(ROOT)} imports {bad}"


def test_no_module_imports_a_private_name_of_another():
    offenders = []
    for p in python_files("compsuite", "eval", "data_prep", "fairseq_plugins"):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (
                    node.level or (node.module or "").split(".")[0] in
                    {"compsuite", "fairseq_plugins"}):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        offenders.append(f"{p.relative_to(ROOT)}:{node.lineno} {alias.name}")
    assert not offenders, offenders


def test_no_function_is_over_80_lines():
    assert {"compsuite", "eval", "data_prep", "fairseq_plugins"} <= set(PACKAGES), PACKAGES
    long = []
    for p in python_files(*PACKAGES):
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = n.end_lineno - n.lineno + 1
                if lines > MAX_LINES:
                    long.append(f"{p.relative_to(ROOT)}:{n.lineno} {n.name} ({lines} lines)")
    assert not long, long


@pytest.mark.parametrize("name", SUITE)
def test_study_options_are_declared_not_hand_validated(name):
    cls = load_plugins()[name]
    assert cls.validate is Study.validate, f"{name} overrides validate(): declare a schema"
    assert cls.profile_schema is not None


#: the options of a model in the loop, declared once: compsuite.commands.model_arguments
MODEL_OPTIONS = {"--checkpoint", "--checkpoints", "--model-cmd", "--model-timeout",
                 "--batch-size", "--engine", "--compute-type", "--device"}


def test_study_commands_take_their_model_options_from_one_declaration():
    """No study's command line declares a model option itself (with its own default):
    it calls compsuite.commands.model_arguments, whose parameters say what differs."""
    bad = []
    for p in python_files("compsuite/studies"):
        for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                    n.func.attr == "add_argument" and n.args and \
                    isinstance(n.args[0], ast.Constant) and n.args[0].value in MODEL_OPTIONS:
                bad.append(f"{p.relative_to(ROOT)}:{n.lineno} {n.args[0].value}")
    assert not bad, bad
