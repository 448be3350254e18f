"""One registry of studies -> datasets, runs (architecture x toolkit) and profiles.

Each study is declared in ``compsuite/experiments/<study>.yaml``; adding a study is
adding such a file (and its modules), not editing code here.  Lookups of unknown
names fail with the known names and the nearest match, in the manner of
lm-evaluation-harness's registry.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Iterator, TypeVar

import yaml

EXPERIMENTS_DIR = Path(__file__).with_name("experiments")
ROOT = Path(__file__).resolve().parent.parent  # the checkout (editable install)

T = TypeVar("T")

#: How a test's model outputs are scored (see compsuite/pipeline.py: evaluate_test).
EVALUATIONS = ("accuracy", "consistency", "localism", "overgeneralisation", "per_function",
               "by_length")
TEST_MODELS = ("own", "base")  # a test trains its own model, or evaluates the task model


class RegistryError(KeyError):
    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class Registry(Generic[T]):
    """A name -> entry mapping that rejects duplicates and suggests near names."""

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str, entry: T) -> T:
        if name in self._entries:
            raise RegistryError(f"{self.kind} '{name}' is already registered")
        self._entries[name] = entry
        return entry

    def get(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            near = difflib.get_close_matches(name, list(self._entries), n=1)
            hint = f"; did you mean '{near[0]}'?" if near else ""
            known = ", ".join(sorted(self._entries)) or "none"
            raise RegistryError(f"unknown {self.kind} '{name}' (known: {known}){hint}") from None

    def __contains__(self, name: str) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def items(self):
        return self._entries.items()


@dataclass
class Run:
    """One architecture trained with one toolkit."""

    name: str
    architecture: str
    toolkit: str  # "fairseq" or "onmt"
    paper_setup: bool  # the toolkit the paper used for this architecture
    config: str | None = None  # onmt: base YAML (relative to the checkout)
    args: dict[str, Any] = field(default_factory=dict)  # fairseq: fairseq-train arguments
    profiles: dict[str, Any] = field(default_factory=dict)  # profile -> override (file or args)


@dataclass
class Profile:
    name: str
    dataset: str
    seeds: list[int]
    runs: list[str]
    description: str = ""
    test_runs: list[str] = field(default_factory=list)  # the runs that take the tests


@dataclass
class Study:
    name: str
    title: str
    paper: str
    config_version: int
    datasets: dict[str, dict]
    architectures: dict[str, dict]
    runs: Registry[Run]
    profiles: Registry[Profile]
    generation: dict[str, Any]
    source: Path
    tests: dict[str, dict] = field(default_factory=dict)

    def profile(self, name: str) -> Profile:
        return self.profiles.get(name)

    def run(self, name: str) -> Run:
        return self.runs.get(name)


def _require(d: dict, key: str, where: str):
    if key not in d:
        raise ValueError(f"{where}: missing required key '{key}'")
    return d[key]


def load_study(path: str | Path) -> Study:
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: malformed YAML: {e}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected a mapping at the top level")
    name = _require(raw, "study", str(path))
    archs = _require(raw, "architectures", str(path))
    datasets = _require(raw, "datasets", str(path))
    runs: Registry[Run] = Registry(f"run of study '{name}'")
    for run_name, spec in _require(raw, "runs", str(path)).items():
        where = f"{path}: runs.{run_name}"
        arch = _require(spec, "architecture", where)
        if arch not in archs:
            raise ValueError(f"{where}: unknown architecture '{arch}'")
        toolkit = _require(spec, "toolkit", where)
        if toolkit not in ("fairseq", "onmt"):
            raise ValueError(f"{where}: toolkit must be 'fairseq' or 'onmt', not '{toolkit}'")
        runs.register(run_name, Run(run_name, arch, toolkit, bool(spec.get("paper_setup", False)),
                                    spec.get("config"), spec.get("args", {}) or {},
                                    spec.get("profiles", {}) or {}))
    profiles: Registry[Profile] = Registry(f"profile of study '{name}'")
    for prof_name, spec in _require(raw, "profiles", str(path)).items():
        where = f"{path}: profiles.{prof_name}"
        ds = _require(spec, "dataset", where)
        if ds not in datasets:
            raise ValueError(f"{where}: unknown dataset '{ds}'")
        for r in _require(spec, "runs", where):
            runs.get(r)
        test_runs = list(spec.get("test_runs") or
                         [r for r in spec["runs"] if runs.get(r).paper_setup] or spec["runs"])
        for r in test_runs:
            if r not in spec["runs"]:
                raise ValueError(f"{where}: test run '{r}' is not one of the profile's runs "
                                 "(tests on the task model need the task run)")
        profiles.register(prof_name, Profile(prof_name, ds, list(spec.get("seeds", [1])),
                                             list(spec["runs"]), spec.get("description", ""),
                                             test_runs))
    tests = raw.get("tests", {}) or {}
    for test_name, spec in tests.items():
        where = f"{path}: tests.{test_name}"
        _require(spec, "split", where)
        if _require(spec, "evaluation", where) not in EVALUATIONS:
            raise ValueError(f"{where}: evaluation must be one of {', '.join(EVALUATIONS)}")
        if spec.get("model", "own") not in TEST_MODELS:
            raise ValueError(f"{where}: model must be one of {', '.join(TEST_MODELS)}")
    return Study(name, raw.get("title", name), raw.get("paper", ""),
                 int(raw.get("config_version", 1)), datasets, archs, runs, profiles,
                 raw.get("generation", {}) or {}, path, tests)


_STUDIES: Registry[Path] | None = None


def studies() -> Registry[Path]:
    global _STUDIES
    if _STUDIES is None:
        reg: Registry[Path] = Registry("study")
        for p in sorted(EXPERIMENTS_DIR.glob("*.yaml")):
            reg.register(p.stem, p)
        _STUDIES = reg
    return _STUDIES


def default_studies() -> list[str]:
    """The studies ``./run_all.sh`` runs when none is named: every study whose YAML does
    not say ``run_all: false`` (a study still being built)."""
    out = []
    for name, path in studies().items():
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        if raw.get("run_all", True):
            out.append(name)
    return out


def get_study(name: str) -> Study:
    return load_study(studies().get(name))
