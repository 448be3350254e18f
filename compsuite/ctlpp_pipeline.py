"""CTL++ end to end: data per variant and seed, fairseq training of each classifier
(``--user-dir fairseq_plugins``, fairseq's own loop), evaluation on the IID and OOD
tests, the representation analysis, and the S-variant grid.

Layout::

    DATA/ctlpp/<variant>/<size>/seed<S>/{raw, fairseq-bin}
    runs/ctlpp/<profile>/<variant>/<run>/seed<S>/    (train.log, checkpoints, result.json)
    results/ctlpp/<profile>/                         (report.md, report.json, *.png)

Every step is skipped when its output exists (manifest, ``train.json``,
``result.json``), so an interrupted run resumes.
"""
from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path

import yaml

from compsuite.data_prep.common.manifest import is_complete, read_manifest
from compsuite.data_prep.common.writers import write_fairseq
from compsuite.pipeline import _stored, git_revision
from compsuite.registry import Study
from compsuite.toolkits import TRAIN, DataPaths


def profile_spec(study: Study, profile: str) -> dict:
    """The profile's CTL++-specific keys (variants, data sizes, grid) from the YAML."""
    raw = yaml.safe_load(Path(study.source).read_text(encoding="utf-8"))
    spec = raw["profiles"][profile]
    for key in ("variants", "data"):
        if key not in spec:
            raise ValueError(f"{study.source}: profiles.{profile}: missing '{key}'")
    check_data_keys(spec["data"], f"{study.source}: profiles.{profile}.data")
    return spec


def check_data_keys(data: dict, where: str) -> None:
    """A profile's ``data:`` may set the generator's sizes (not the variant or S's
    parameters, which the runner sets); anything else is an error naming ``where``."""
    from compsuite.data_prep.ctlpp import CTLConfig

    allowed = set(CTLConfig.__dataclass_fields__) - {"variant", "shared_functions",
                                                     "shared_symbols"}
    if set(data) - allowed:
        raise ValueError(f"{where}: unknown keys {sorted(set(data) - allowed)}; "
                         f"allowed: {', '.join(sorted(allowed))}")


def prepare(variant: str, seed: int, data: dict, data_root: Path, show: bool = True,
            shared_functions: int | None = None, shared_symbols: int | None = None) -> DataPaths:
    from compsuite.data_prep.ctlpp import GENERATOR, CTLConfig, generate
    from compsuite.data_prep.ctlpp.generate import SPLITS

    kw = {k: v for k, v in (("shared_functions", shared_functions),
                            ("shared_symbols", shared_symbols)) if v is not None}
    check_data_keys(data, "CTL++ data")
    cfg = CTLConfig(**{**data, **kw, "variant": variant})
    name = (f"S-f{cfg.shared_functions}-s{cfg.shared_symbols}" if variant == "S"
            else variant)
    default = CTLConfig(variant=variant)
    size = f"n{cfg.n_train}" + "".join(   # a scaled-down task gets its own folder
        f"-{tag}{getattr(cfg, key)}" for key, tag in
        (("n_symbols", "sym"), ("n_functions", "f"), ("max_length", "len"))
        if getattr(cfg, key) != getattr(default, key))
    base = data_root / "ctlpp" / name / size / f"seed{seed}"
    paths = DataPaths(base / "raw", base / "fairseq-bin", base / "onmt")
    if not is_complete(paths.raw, GENERATOR, cfg.as_args()):
        generate(paths.raw, cfg, seed=seed, progress=show)
    write_fairseq(paths.raw, paths.fairseq_bin, splits=SPLITS)
    return paths


def evaluate(checkpoint: str, data: DataPaths, analyses: bool = True) -> dict:
    """IID and OOD accuracy (per length) and, with ``analyses``, the compatibility
    matrix and the representation similarities of the trained classifier."""
    from compsuite.data_prep.common.io import read_aligned
    from compsuite.eval.ctlpp import (FairseqClassifier, accuracy_by_length,
                                      compatibility_matrix, representation_similarity)

    clf = FairseqClassifier(checkpoint, data.fairseq_bin)
    out = {}
    for split in ("test_iid", "test_ood"):
        src, tgt = read_aligned(data.raw / f"{split}.src", data.raw / f"{split}.tgt")
        out[split] = accuracy_by_length(src, clf.predict(src), tgt)
    if analyses:
        m = read_manifest(data.raw)
        out["compatibility"] = compatibility_matrix(clf, m["functions"], m["symbols"],
                                                    m["groups"])
        out["representations"] = representation_similarity(clf, m["functions"], m["symbols"],
                                                           m["groups"])
    return out


def _one(study: Study, profile: str, run_name: str, variant_dir: str, data: DataPaths,
         seed: int, runs_root: Path, revision, show: bool, analyses: bool, extra: dict,
         threads: int | None = None) -> dict:
    run = study.run(run_name)
    run_dir = runs_root / study.name / profile / variant_dir / run.name / f"seed{seed}"

    def compute():
        info = TRAIN["fairseq"](run, profile, data, run_dir, seed, show=show, threads=threads)
        return {"study": study.name, "profile": profile, "run": run.name,
                "architecture": run.architecture, "seed": seed, **extra,
                "checkpoint": info["checkpoint"], "train_wall_s": info.get("wall_s"),
                "git": revision, "config_version": study.config_version,
                **evaluate(info["checkpoint"], data, analyses)}

    return _stored(run_dir / "result.json", compute)


def jobs_for(study: Study, profile: str, jobs: int | None = None) -> int:
    """How many trainings run side by side: ``jobs``, else the profile's ``jobs``
    (default 1)."""
    n = jobs if jobs is not None else profile_spec(study, profile).get("jobs", 1)
    if not isinstance(n, int) or n < 1:
        where = "--jobs" if jobs is not None else f"{study.source}: profiles.{profile}.jobs"
        raise ValueError(f"{where} must be a positive integer, not {n!r}")
    return n


def _execute(tasks: list, jobs: int) -> list[dict]:
    """Run ``tasks`` (each trains one model in a subprocess, then evaluates it; called
    with the CPU threads its training may use, None for torch's default), ``jobs`` at a
    time; results in the order given.  With several jobs, each training gets an equal
    share of the CPU threads."""
    if jobs <= 1 or len(tasks) <= 1:
        return [t(None) for t in tasks]
    from concurrent.futures import ThreadPoolExecutor

    import compsuite.eval.ctlpp  # noqa: F401  (import fairseq once, before the threads)

    threads = max(1, (os.cpu_count() or 1) // jobs)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(t, threads) for t in tasks]
        return [f.result() for f in futures]


def run_table1(study: Study, profile: str, seeds=None, runs=None, data_root=Path("DATA"),
               runs_root=Path("runs"), show=True, jobs: int | None = None) -> list[dict]:
    spec = profile_spec(study, profile)
    prof = study.profile(profile)
    jobs = jobs_for(study, profile, jobs)   # a bad value fails before any data is made
    revision = git_revision()
    tasks = []
    for variant in spec["variants"]:
        for seed in seeds or prof.seeds:
            data = prepare(variant, seed, spec["data"], data_root, show)
            for run_name in runs or prof.runs:
                tasks.append(partial(_one, study, profile, run_name, variant, data, seed,
                                     runs_root, revision, show, True, {"variant": variant}))
    return _execute(tasks, jobs)


def run_grid(study: Study, profile: str, runs=None, data_root=Path("DATA"),
             runs_root=Path("runs"), show=True, jobs: int | None = None) -> list[dict]:
    """The S variant over shared functions x shared symbols (figures 4, 7, 8)."""
    spec = profile_spec(study, profile)
    grid = spec.get("grid")
    if not grid:
        return []
    jobs = jobs_for(study, profile, jobs)
    revision = git_revision()
    tasks = []
    for k in grid["shared_functions"]:
        for m in grid["shared_symbols"]:
            for seed in grid.get("seeds", [1]):
                data = prepare("S", seed, spec["data"], data_root, show, k, m)
                extra = {"variant": "S", "shared_functions": k, "shared_symbols": m}
                for run_name in runs or grid["runs"]:
                    tasks.append(partial(_one, study, profile, run_name, f"S-f{k}-s{m}", data,
                                         seed, runs_root, revision, show, False, extra))
    return _execute(tasks, jobs)


def collect(study: Study, profile: str, runs_root=Path("runs")) -> tuple[list, list]:
    base = runs_root / study.name / profile
    table1, grid = [], []
    for f in sorted(base.glob("*/*/seed*/result.json")):
        r = json.loads(f.read_text())
        (grid if "shared_functions" in r else table1).append(r)
    return table1, grid
