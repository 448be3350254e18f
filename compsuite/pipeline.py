"""Chains the rooms for one study: data -> training -> predictions -> scores -> report.

Each step is also a command of its own (``compsuite data``, the toolkit commands,
``compsuite eval``, ``compsuite report``); this module only runs them in order and
skips a step whose outputs exist (checked by manifest, ``train.json``, or the
prediction file, all written atomically), so an interrupted run resumes.

Layout::

    DATA/<study>/<dataset>/seed<S>/{raw, fairseq-bin, onmt}   (+ manifest.json each)
    runs/<study>/<profile>/<run>/seed<S>/                      (config, log, checkpoints,
                                                                predictions, result-test.json)
    results/<study>/<profile>/                                 (results.json, table.md, *.png)
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from compsuite.data_prep.common.io import atomic_open, sha256_file
from compsuite.data_prep.common.manifest import is_complete
from compsuite.data_prep.common.writers import write_fairseq, write_onmt
from compsuite.eval.metrics.accuracy import accuracy_with_breakdown
from compsuite.eval.readers.predictions import read_fairseq_generate, read_plain
from compsuite.registry import ROOT, Study
from compsuite.toolkits import PREDICT, TRAIN, DataPaths

GENERATORS = {}


def _generator(name: str):
    if not GENERATORS:
        from compsuite.data_prep import pcfgset

        GENERATORS["pcfgset"] = pcfgset
    if name not in GENERATORS:
        raise KeyError(f"unknown generator '{name}' (known: {', '.join(GENERATORS)})")
    return GENERATORS[name]


def git_revision() -> str | None:
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, capture_output=True, text=True).stdout.strip()
        return rev + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def prepare_data(study: Study, dataset: str, seed: int, data_root: Path,
                 show: bool = True) -> DataPaths:
    spec = study.datasets[dataset]
    gen = _generator(spec["generator"])
    cfg = gen.CONFIGS[spec["config"]]
    base = data_root / study.name / dataset / f"seed{seed}"
    paths = DataPaths(base / "raw", base / "fairseq-bin", base / "onmt")
    if not is_complete(paths.raw, gen.GENERATOR, cfg.as_args()):
        gen.generate(paths.raw, cfg, seed=seed, progress=show)
    write_fairseq(paths.raw, paths.fairseq_bin)
    write_onmt(paths.raw, paths.onmt)
    return paths


def score_predictions(run_dir: Path, toolkit: str, prediction_file: Path, data: DataPaths,
                      split: str, features_of=None) -> dict:
    if toolkit == "fairseq":
        preds = read_fairseq_generate(prediction_file)
    else:
        preds = read_plain(prediction_file, data.raw / f"{split}.tgt", data.raw / f"{split}.src",
                           fmt="onmt_translate")
    features = None
    if features_of is not None and preds.sources is not None:
        rows = [features_of(s) for s in preds.sources]
        features = {k: [r[k] for r in rows] for k in rows[0]} if rows else None
    res = accuracy_with_breakdown(preds.hypotheses, preds.references, features)
    return {**res.as_dict(), "predictions": preds.origin,
            "predictions_sha256": sha256_file(prediction_file)}


def run_profile(study: Study, profile_name: str, seeds: list[int] | None = None,
                runs: list[str] | None = None, data_root: Path = Path("DATA"),
                runs_root: Path = Path("runs"), show: bool = True) -> list[dict]:
    """Train, predict and score every run of a profile; returns the per-run results."""
    from compsuite.data_prep.pcfgset.grammar import structure

    profile = study.profile(profile_name)
    revision = git_revision()
    results = []
    for seed in seeds or profile.seeds:
        data = prepare_data(study, profile.dataset, seed, data_root, show)
        for run_name in runs or profile.runs:
            run = study.run(run_name)
            run_dir = runs_root / study.name / profile.name / run.name / f"seed{seed}"

            def compute():
                train_info = TRAIN[run.toolkit](run, profile.name, data, run_dir, seed, show=show)
                pred = PREDICT[run.toolkit](run_dir, data, "test", study.generation, show=show)
                scored = score_predictions(run_dir, run.toolkit, pred, data, "test", structure)
                return {
                    "study": study.name, "profile": profile.name, "run": run.name,
                    "architecture": run.architecture, "toolkit": run.toolkit,
                    "paper_setup": run.paper_setup, "dataset": profile.dataset,
                    "dataset_label": study.datasets[profile.dataset]["label"], "seed": seed,
                    "split": "test", "checkpoint": train_info["checkpoint"],
                    "train_wall_s": train_info.get("wall_s"), "generation": study.generation,
                    "config_version": study.config_version, "git": revision, **scored,
                }

            results.append(_stored(run_dir / "result-test.json", compute))
    return results


def _stored(result_file: Path, compute) -> dict:
    """A run's result: read back when ``result_file`` exists (the step is done);
    otherwise computed, written atomically and read back (one form: what is on disk)."""
    if not result_file.is_file():
        result = compute()
        with atomic_open(result_file) as fh:
            json.dump(result, fh, indent=2)
    return json.loads(result_file.read_text())


def collect_results(study: Study, profile_name: str, runs_root: Path = Path("runs")) -> list[dict]:
    """Every finished result of a profile's runs (any seed), for the report."""
    profile = study.profile(profile_name)
    results = []
    for run_name in profile.runs:
        base = runs_root / study.name / profile.name / run_name
        for f in sorted(base.glob("seed*/result-test.json")):
            results.append(json.loads(f.read_text()))
    return results


# ----------------------------------------------------------------------------- the tests
def prepare_test_data(study: Study, test: str, dataset: str, seed: int, data_root: Path,
                      show: bool = True) -> DataPaths:
    """A test's splits (skipped when their manifest matches) and both toolkits' data."""
    from compsuite.data_prep.common.manifest import read_manifest
    from compsuite.data_prep.pcfgset.splits import SPLIT_GENERATOR, TESTS

    spec = study.tests[test]
    ds = study.datasets[dataset]
    cfg = _generator(ds["generator"]).CONFIGS[ds["config"]]
    options = spec.get("options", {}) or {}
    base = data_root / study.name / dataset / test / f"seed{seed}"
    paths = DataPaths(base / "raw", base / "fairseq-bin", base / "onmt")
    m = read_manifest(paths.raw)
    done = (m is not None and m.get("seed") == seed and m["args"].get("test") == spec["split"]
            and m["args"].get("base") == cfg.as_args()
            and all(m["args"].get(k) == v for k, v in options.items())
            and is_complete(paths.raw, SPLIT_GENERATOR, m["args"]))
    if not done:
        TESTS[spec["split"]](paths.raw, cfg, seed=seed, **options)
    write_fairseq(paths.raw, paths.fairseq_bin)
    write_onmt(paths.raw, paths.onmt)
    return paths


def evaluate_test(spec: dict, data: DataPaths, run_dir: Path, checkpoint: str,
                  generation: dict) -> dict:
    """Score one trained run on its test, through the translator protocol."""
    from compsuite.data_prep.common.io import read_aligned, read_lines
    from compsuite.eval import localism
    from compsuite.eval import overgeneralisation as og
    from compsuite.eval.metrics.consistency import consistency
    from compsuite.eval.translators import load_translator

    raw = data.raw
    batch = generation.get("batch_size", 256)

    def load(path):
        return load_translator(path, data.fairseq_bin, batch_size=batch,
                               max_length=generation.get("max_length", 512))

    kind = spec["evaluation"]
    if kind == "overgeneralisation":
        rate = spec.get("options", {}).get("exception_rate", 0.001)
        src, exc, orig = og.read_exception_set(raw / f"test_pcfg_ratio={rate:g}")
        return og.track(og.list_checkpoints(run_dir / "checkpoints"), load, src, exc, orig)
    tr = load(checkpoint)
    if kind == "per_function":
        from compsuite.data_prep.pcfgset.grammar import FUNCTIONS

        per = {}
        for fn in FUNCTIONS:
            srcs, refs = read_aligned(raw / f"test_{fn}.src", raw / f"test_{fn}.tgt")
            per[fn] = accuracy_with_breakdown(tr.translate(srcs), refs).accuracy
        return {"per_function": per, "accuracy": sum(per.values()) / len(per),
                "n_per_function": len(srcs)}
    if kind == "localism":
        res = localism.run(tr, localism.read_unrolled(raw / "unrolled_test.tsv"))
        traces = res.pop("traces")
        with atomic_open(run_dir / "localism-traces.jsonl") as fh:
            for t in traces:
                fh.write(json.dumps(t) + "\n")
        return {**res, "model_calls": tr.calls}
    srcs, refs, cats = read_aligned(raw / "test.src", raw / "test.tgt", raw / "test.category")
    outs = tr.translate(srcs)
    if kind == "accuracy":
        return accuracy_with_breakdown(outs, refs, {"category": cats}).as_dict()
    twins = read_lines(raw / "test_twin.src")
    outs_twin = tr.translate(twins)
    return {"consistency": consistency(outs, outs_twin, refs, cats).as_dict(),
            "accuracy": accuracy_with_breakdown(outs, refs).accuracy,
            "accuracy_twin": accuracy_with_breakdown(outs_twin, refs).accuracy}


def run_test(study: Study, test: str, profile_name: str, seeds: list[int] | None = None,
             runs: list[str] | None = None, data_root: Path = Path("DATA"),
             runs_root: Path = Path("runs"), show: bool = True) -> list[dict]:
    """Train every run of a profile on a test's splits and score it with the test."""
    spec = study.tests[test]
    profile = study.profile(profile_name)
    revision = git_revision()
    results = []
    for seed in seeds or profile.seeds:
        data = prepare_test_data(study, test, profile.dataset, seed, data_root, show)
        for run_name in runs or profile.runs:
            run = study.run(run_name)
            run_dir = runs_root / study.name / profile.name / test / run.name / f"seed{seed}"

            def compute():
                extra = (spec.get("train", {}) or {}).get(run.toolkit)
                info = TRAIN[run.toolkit](run, profile.name, data, run_dir, seed, show=show,
                                          extra=extra)
                return {"study": study.name, "test": test, "profile": profile.name,
                        "run": run.name, "architecture": run.architecture,
                        "toolkit": run.toolkit, "seed": seed,
                        "dataset_label": study.datasets[profile.dataset]["label"],
                        "checkpoint": info["checkpoint"], "evaluation": spec["evaluation"],
                        "config_version": study.config_version, "git": revision,
                        **evaluate_test(spec, data, run_dir, info["checkpoint"],
                                        study.generation)}

            results.append(_stored(run_dir / "result.json", compute))
    return results
