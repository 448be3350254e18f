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


def task_run(study: Study, profile, run_name: str, seed: int, data: DataPaths,
             runs_root: Path, revision: str | None, show: bool = True) -> tuple[dict, Path]:
    """Train (or find) one run of a profile on the task, predict and score its test
    split; returns the stored result and the run folder."""
    from compsuite.data_prep.pcfgset.grammar import structure

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

    return _stored(run_dir / "result-test.json", compute), run_dir


def run_profile(study: Study, profile_name: str, seeds: list[int] | None = None,
                runs: list[str] | None = None, data_root: Path = Path("DATA"),
                runs_root: Path = Path("runs"), show: bool = True) -> list[dict]:
    """Train, predict and score every run of a profile; returns the per-run results."""
    profile = study.profile(profile_name)
    revision = git_revision()
    results = []
    for seed in seeds or profile.seeds:
        data = prepare_data(study, profile.dataset, seed, data_root, show)
        for run_name in runs or profile.runs:
            results.append(task_run(study, profile, run_name, seed, data, runs_root, revision,
                                    show)[0])
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


def collect_test_results(study: Study, profile_name: str,
                         runs_root: Path = Path("runs")) -> dict[str, list[dict]]:
    """Every finished test result of a profile: test name -> results (any run, seed)."""
    out = {}
    for test in study.tests:
        base = runs_root / study.name / profile_name / test
        found = [json.loads(f.read_text()) for f in sorted(base.glob("*/seed*/result.json"))]
        if found:
            out[test] = found
    return out


# ----------------------------------------------------------------------------- the tests
def prepare_test_data(study: Study, test: str, dataset: str, seed: int, data_root: Path,
                      show: bool = True, toolkit_data: bool = True) -> DataPaths:
    """A test's splits (skipped when their manifest matches) and, when the test trains
    its own model (``toolkit_data``), both toolkits' data."""
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
        TESTS[spec["split"]](paths.raw, cfg, seed=seed, progress=show, **options)
    if toolkit_data:
        write_fairseq(paths.raw, paths.fairseq_bin)
        write_onmt(paths.raw, paths.onmt)
    return paths


def check_same_corpus(test_raw: Path, task_raw: Path, test: str) -> None:
    """A test on the task model must draw its samples from the task's own corpus."""
    for name in ("train.src", "train.tgt"):
        if (test_raw / name).is_file() and sha256_file(test_raw / name) != sha256_file(
                task_raw / name):
            raise RuntimeError(f"test '{test}': {test_raw / name} differs from the task corpus "
                               f"{task_raw / name}; its samples would not come from the task "
                               "model's training data")


def _translator_loader(dictionary_dir: Path, generation: dict):
    from compsuite.eval.translators import load_translator

    def load(path):
        return load_translator(path, dictionary_dir, batch_size=generation.get("batch_size", 256),
                               max_length=generation.get("max_length", 512))
    return load


def evaluate_test(spec: dict, data: DataPaths, run_dir: Path, checkpoint: str,
                  generation: dict, dictionary_dir: Path | None = None,
                  base_checkpoint: str | None = None,
                  base_dictionary_dir: Path | None = None) -> dict:
    """Score one trained run on its test, through the translator protocol.
    ``dictionary_dir``: the fairseq-binarised folder of the model's training data
    (default: the test's own); ``base_checkpoint``: the task model, scored on the same
    test inputs when the test asks for it (``compare_base``), with the dictionaries of
    its own training data, ``base_dictionary_dir`` (a fairseq model read with another
    corpus's dictionary would map every token to the wrong embedding)."""
    from compsuite.data_prep.common.io import read_aligned, read_lines
    from compsuite.eval import localism
    from compsuite.eval import overgeneralisation as og
    from compsuite.eval.metrics.accuracy import sequence_accuracy
    from compsuite.eval.metrics.consistency import consistency, eos_problem_share

    raw = data.raw
    load = _translator_loader(dictionary_dir or data.fairseq_bin, generation)
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
            per[fn] = sequence_accuracy(tr.translate(srcs), refs).accuracy
        return {"per_function": per, "accuracy": sum(per.values()) / len(per),
                "n_per_function": len(srcs)}
    if kind == "by_length":
        srcs, refs, lengths = read_aligned(raw / "increasing_length.src",
                                           raw / "increasing_length.tgt",
                                           raw / "increasing_length.category")
        return accuracy_with_breakdown(tr.translate(srcs), refs, {"length": lengths}).as_dict()
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
        from compsuite.data_prep.pcfgset.grammar import structure

        n_fn = [str(structure(s)["n_functions"]) for s in srcs]
        res = accuracy_with_breakdown(outs, refs, {"category": cats, "n_functions": n_fn}).as_dict()
        res["eos_problem"] = eos_problem_share(outs, refs)
        if spec.get("compare_base") and base_checkpoint:
            if base_dictionary_dir is None:
                raise ValueError("compare_base needs the task model's data folder")
            base_outs = _translator_loader(base_dictionary_dir, generation)(
                base_checkpoint).translate(srcs)
            res["task_model"] = {
                **accuracy_with_breakdown(base_outs, refs, {"n_functions": n_fn}).as_dict(),
                "checkpoint": base_checkpoint, "eos_problem": eos_problem_share(base_outs, refs)}
        return res
    twins = read_lines(raw / "test_twin.src")
    outs_twin = tr.translate(twins)
    res = {"consistency": consistency(outs, outs_twin, refs, cats).as_dict(),
           "accuracy": sequence_accuracy(outs, refs).accuracy,
           "accuracy_twin": sequence_accuracy(outs_twin, refs).accuracy}
    res["embedding_distances"] = embedding_distances(tr, checkpoint)
    return res


def embedding_distances(translator, checkpoint: str) -> dict:
    """Table 5: cosine distances of each substituted function's input embedding to its
    synonym's and (mean) to the other functions'."""
    from compsuite.data_prep.pcfgset.grammar import FUNCTIONS, TWIN_SUFFIX
    from compsuite.data_prep.pcfgset.splits import SUBSTITUTED
    from compsuite.eval.metrics.embedding_distance import synonym_distances

    vecs = translator.embeddings(list(FUNCTIONS) + [f + TWIN_SUFFIX for f in SUBSTITUTED])
    return {"distances": synonym_distances(vecs, FUNCTIONS, SUBSTITUTED),
            "signature": "metric:cosine_distance|embeddings:source-input|version:1",
            "checkpoint": checkpoint}


def _train_extra(spec: dict, profile: str, toolkit: str) -> dict | None:
    """A test's training options for one toolkit: ``train: {toolkit: {...}}`` merged
    with ``train: {profiles: {profile: {toolkit: {...}}}}``."""
    train = spec.get("train", {}) or {}
    per_profile = ((train.get("profiles") or {}).get(profile) or {}).get(toolkit)
    merged = {**(train.get(toolkit) or {}), **(per_profile or {})}
    return merged or None


def run_test(study: Study, test: str, profile_name: str, seeds: list[int] | None = None,
             runs: list[str] | None = None, data_root: Path = Path("DATA"),
             runs_root: Path = Path("runs"), show: bool = True) -> list[dict]:
    """Every test run of a profile (default: its ``test_runs``) on one test: trained on
    the test's split (``model: own``), or the task model (``model: base``), then scored
    with the test's evaluation."""
    spec = study.tests[test]
    own = spec.get("model", "own") == "own"
    profile = study.profile(profile_name)
    revision = git_revision()
    results = []
    for seed in seeds or profile.seeds:
        task_data = prepare_data(study, profile.dataset, seed, data_root, show)
        data = prepare_test_data(study, test, profile.dataset, seed, data_root, show,
                                 toolkit_data=own)
        if not own:
            check_same_corpus(data.raw, task_data.raw, test)
        for run_name in runs or profile.test_runs:
            run = study.run(run_name)
            run_dir = runs_root / study.name / profile.name / test / run.name / f"seed{seed}"

            def compute():
                needs_task = not own or spec.get("compare_base")
                task = (task_run(study, profile, run_name, seed, task_data, runs_root,
                                 revision, show)[0] if needs_task else None)
                if own:
                    info = TRAIN[run.toolkit](run, profile.name, data, run_dir, seed, show=show,
                                              extra=_train_extra(spec, profile.name,
                                                                 run.toolkit))
                    checkpoint, dictionary = info["checkpoint"], data.fairseq_bin
                else:
                    checkpoint, dictionary = task["checkpoint"], task_data.fairseq_bin
                return {"study": study.name, "test": test, "profile": profile.name,
                        "run": run.name, "architecture": run.architecture,
                        "toolkit": run.toolkit, "seed": seed, "model": spec.get("model", "own"),
                        "dataset_label": study.datasets[profile.dataset]["label"],
                        "checkpoint": checkpoint, "evaluation": spec["evaluation"],
                        "config_version": study.config_version, "git": revision,
                        **evaluate_test(spec, data, run_dir, checkpoint, study.generation,
                                        dictionary, task["checkpoint"] if task else None,
                                        task_data.fairseq_bin)}

            results.append(_stored(run_dir / "result.json", compute))
    return results
