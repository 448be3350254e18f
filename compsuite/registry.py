"""One registry of studies -> runs (architecture x toolkit) -> profiles.

A study is a YAML file, ``compsuite/experiments/<study>.yaml`` (or one in a folder
named by ``COMPSUITE_EXPERIMENTS``), and the module it names (``module:``, by default
``compsuite.studies.<study>``).  The YAML may ``include:`` shared files (their
mappings are merged, the including file's values win); ``_base.yaml`` holds what
every study shares.  This module reads the keys every study has (``runs``,
``profiles``, ``architectures``, ``generation``, ``toolkit_defaults``; the study's, a
profile's and a run's ``generation`` as :class:`~compsuite.models.decoding.Decoding`,
each over the one before); the study's module declares and validates its own keys.
Unknown keys are errors that name the file and the key.

Lookups of unknown names fail with the known names and the nearest match, in the
manner of lm-evaluation-harness's registry.  Nothing here names a study.
"""
from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Iterable

from compsuite.foundation.errors import ConfigError
from compsuite.foundation.io import load_mapping
from compsuite.foundation.names import Registry, near
from compsuite.models.decoding import decoding
from compsuite.resources import EXECUTORS, check_resources
from compsuite.schema import check_keys, mapping, positive, seed_list
from compsuite.studies.base import Profile, Run, Study, StudySpec

EXPERIMENTS_DIR = Path(__file__).with_name("experiments")


# ----------------------------------------------------------------------------- the YAML
#: Keys of a study file that this module reads; a study's module adds its own.
STUDY_KEYS = frozenset({"study", "include", "module", "title", "paper", "config_version",
                        "run_all", "architectures", "runs", "profiles", "generation",
                        "toolkit_defaults"})
PROFILE_KEYS = frozenset({"description", "seeds", "runs", "jobs", "threads", "generation",
                          "executor", "resources"})
RUN_KEYS = frozenset({"architecture", "toolkit", "paper_setup", "config", "args", "profiles",
                      "gpu", "resources", "generation"})


def deep_merge(base: dict, over: dict) -> dict:
    """``over`` on top of ``base``: mappings merge key by key, anything else replaces."""
    out = dict(base)
    for k, v in over.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, dict) and isinstance(
            out.get(k), dict) else v
    return out


def read_yaml(path: str | Path, _seen: tuple[Path, ...] = ()) -> dict:
    """A study file with its ``include:`` files merged underneath (paths relative to
    the including file)."""
    path = Path(path)
    if path.resolve() in _seen:
        raise ConfigError(f"{path}: include loop ({' -> '.join(map(str, _seen))})")
    raw = load_mapping(path)
    includes = raw.pop("include", None) or []
    merged: dict = {}
    for inc in [includes] if isinstance(includes, str) else includes:
        merged = deep_merge(merged, read_yaml(path.parent / inc, _seen + (path.resolve(),)))
    return deep_merge(merged, raw)


def require(d: dict, key: str, where: str):
    if key not in d:
        raise ConfigError(f"{where}: missing required key '{key}'")
    return d[key]


def parse_spec(raw: dict, path: Path, study_keys: Iterable[str] = (),
               profile_keys: Iterable[str] = ()) -> StudySpec:
    """The generic part of a study file; ``study_keys``/``profile_keys``: the keys the
    study's module adds (anything else is an error)."""
    from compsuite.toolkits import backend_names

    where = str(path)
    check_keys(raw, STUDY_KEYS | set(study_keys), where)
    name = require(raw, "study", where)
    if name != path.stem:
        raise ConfigError(f"{path}: study '{name}' must be named like its file ('{path.stem}')")
    archs = mapping(require(raw, "architectures", where), f"{where}: architectures")
    archs = {a: {"paper_name": a, **(spec or {})} for a, spec in archs.items()}
    defaults = check_keys(raw.get("toolkit_defaults") or {}, backend_names(),
                          f"{where}: toolkit_defaults")
    profile_names = list(mapping(require(raw, "profiles", where), f"{where}: profiles"))
    runs: Registry[Run] = Registry(f"run of study '{name}'")
    for run_name, spec in mapping(require(raw, "runs", where), f"{where}: runs").items():
        at = f"{where}: runs.{run_name}"
        check_keys(spec, RUN_KEYS, at)
        arch = require(spec, "architecture", at)
        if arch not in archs:
            raise ConfigError(f"{at}: unknown architecture '{arch}'{near(arch, archs)}")
        toolkit = require(spec, "toolkit", at)
        if toolkit not in backend_names():
            raise ConfigError(f"{at}: unknown toolkit '{toolkit}' (known: "
                              f"{', '.join(backend_names())}){near(toolkit, backend_names())}")
        overrides = check_keys(spec.get("profiles") or {}, profile_names, f"{at}.profiles")
        gpu = mapping(spec.get("gpu") or {}, f"{at}.gpu")
        # a Slurm job's resources in each profile (compsuite/executors.py)
        resources = check_keys(spec.get("resources") or {}, profile_names, f"{at}.resources")
        resources = {p: check_resources(r, f"{at}.resources.{p}") for p, r in resources.items()}
        # its decoding settings in a profile, over the profile's (checked below)
        generation = check_keys(spec.get("generation") or {}, profile_names, f"{at}.generation")
        generation = {p: decoding(g, f"{at}.generation.{p}") for p, g in generation.items()}
        runs.register(run_name, Run(run_name, arch, toolkit, bool(spec.get("paper_setup", False)),
                                    spec.get("config"), dict(spec.get("args") or {}),
                                    dict(overrides), dict(defaults.get(toolkit) or {}),
                                    dict(gpu), where, resources, generation))
    profiles: Registry[Profile] = Registry(f"profile of study '{name}'")
    study_generation = decoding(raw.get("generation") or {}, f"{where}: generation")
    for prof_name, spec in raw["profiles"].items():
        at = f"{where}: profiles.{prof_name}"
        check_keys(spec, PROFILE_KEYS | set(profile_keys), at)
        prof_runs = require(spec, "runs", at)
        for r in prof_runs:
            if r not in runs:
                raise ConfigError(f"{at}: unknown run '{r}'{near(r, runs)}")
        jobs = spec.get("jobs", 1)
        positive(jobs, f"{at}.jobs")
        threads = spec.get("threads", 1)
        positive(threads, f"{at}.threads")
        # the decoding settings, checked once here (the study's under the profile's)
        generation = study_generation.over(decoding(spec.get("generation") or {},
                                                    f"{at}.generation"),
                                           where=f"{at}.generation")
        executor = spec.get("executor")
        if executor is not None and executor not in EXECUTORS:
            raise ConfigError(f"{at}.executor: one of {', '.join(EXECUTORS)}, not "
                              f"{executor!r}{near(str(executor), EXECUTORS)}")
        resources = check_resources(spec.get("resources"), f"{at}.resources")
        options = {k: v for k, v in spec.items() if k not in PROFILE_KEYS}
        profiles.register(prof_name, Profile(prof_name, spec.get("description", ""),
                                             seed_list(spec.get("seeds", [1]), at),
                                             list(prof_runs), jobs, options, generation,
                                             executor=executor, resources=resources,
                                             threads=threads))
    for _, run in runs.items():   # a run's settings over each profile's
        for prof_name, own in run.generation.items():
            profiles.get(prof_name).generation.over(
                own, where=f"{where}: runs.{run.name}.generation.{prof_name}")
    return StudySpec(name, raw.get("title", name), raw.get("paper", ""),
                     int(raw.get("config_version", 1)),
                     module_of(raw, path), archs, runs, profiles,
                     study_generation, path, raw, bool(raw.get("run_all", True)))


# ----------------------------------------------------------------------------- studies
def experiment_dirs() -> list[Path]:
    """Where study files live: the suite's own, then the folders in
    ``COMPSUITE_EXPERIMENTS`` (separated by ``os.pathsep``), for studies of your own."""
    extra = [Path(p) for p in os.environ.get("COMPSUITE_EXPERIMENTS", "").split(os.pathsep) if p]
    return [EXPERIMENTS_DIR, *extra]


def studies() -> Registry[Path]:
    """Study name -> its YAML file (files whose name starts with '_' are includes)."""
    reg: Registry[Path] = Registry("study")
    for folder in experiment_dirs():
        for p in sorted(Path(folder).glob("*.yaml")):
            if not p.name.startswith("_"):
                reg.register(p.stem, p)
    return reg


def module_of(raw: dict, path: Path) -> str:
    """The module a study file names (``module:``), by default
    ``compsuite.studies.<study>``."""
    return raw.get("module") or f"compsuite.studies.{raw.get('study') or path.stem}"


def study_class(module: str, source: Path | None = None) -> type[Study]:
    """The study class a module exports as ``STUDY`` (``source``: the study file that
    names the module, for the error when it is not found)."""
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if not (e.name and module.startswith(e.name)):
            raise
        if source is None:
            raise ConfigError(f"study module '{module}' not found") from None
        if "module" in read_yaml(source):
            raise ConfigError(f"{source}: study module '{module}' not found (module: must "
                              "name an importable module; is its folder on PYTHONPATH?)"
                              ) from None
        raise ConfigError(f"{source}: study module '{module}' not found; a study file names "
                          "its module with 'module:' (without it, compsuite.studies.<study> is "
                          "used): add 'module: <the module that exports STUDY>' to "
                          f"{Path(source).name}") from None
    cls = getattr(mod, "STUDY", None)
    if not (isinstance(cls, type) and issubclass(cls, Study)):
        raise ConfigError(f"study module '{module}' defines no STUDY (a compsuite.studies."
                          "base.Study subclass)")
    return cls


def load_study(path: str | Path) -> Study:
    """Read, check and instantiate the study in ``path``."""
    path = Path(path)
    raw = read_yaml(path)
    cls = study_class(module_of(raw, path), path)
    study = cls(parse_spec(raw, path, cls.study_keys, cls.profile_keys))
    study.validate()
    return study


def get_study(name: str) -> Study:
    return load_study(studies().get(name))


def study_module(name: str) -> str:
    path = studies().get(name)
    return module_of(read_yaml(path), path)


def load_plugins() -> dict[str, type[Study]]:
    """Import every study's module (so that its evaluations and breakdowns register);
    returns name -> class."""
    return {name: study_class(study_module(name), path) for name, path in studies().items()}


def default_studies() -> list[str]:
    """The studies ``./run_all.sh`` runs when none is named: every study whose YAML does
    not say ``run_all: false`` (a study still being built)."""
    return [name for name, path in studies().items() if read_yaml(path).get("run_all", True)]
