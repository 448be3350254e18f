"""PCFG SET (Hupkes, Dankers, Mul and Bruni 2020): task accuracy and the
compositionality tests, as a study of the suite.

YAML (``compsuite/experiments/pcfgset.yaml``), besides the keys every study has:

* ``datasets``: name -> ``{config: full|small, label}`` (the generator's configs);
* ``tests``: name -> ``{split, options, evaluation, model, compare_base, train}``:
  ``split`` the generator of ``compsuite data pcfgset generate --test``, ``options``
  its arguments, ``evaluation`` a registered evaluation (:mod:`compsuite.eval.pcfgset`),
  ``model`` ``own`` (trained on the test's training split) or ``base`` (the task model
  of the same run and seed; the split's training corpus must be the task corpus),
  ``compare_base`` also scores the task model on the test's inputs (Table 4),
  ``train`` options added to a run's training config for this test, per toolkit and
  under ``profiles:`` per profile;
* in a profile: ``dataset`` and ``test_runs`` (the runs that take the tests; by
  default those in the toolkit the paper used).

Units: ``task/<run>/seed<S>`` (train on the task corpus, predict with the toolkit's
command, score; part ``task``) and ``<test>/<run>/seed<S>`` for every test and test
run (part: the test's name).  Data: ``DATA/pcfgset/<dataset>/seed<S>/`` and
``DATA/pcfgset/<dataset>/<test>/seed<S>/``.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from compsuite.data_prep.common.io import DataError, iter_lines, sha256_file
from compsuite.engine import Context, Unit
from compsuite.errors import ConfigError
from compsuite.registry import EVALUATIONS, Profile, check_keys, near, require
from compsuite.studies.base import Study
from compsuite.toolkits import Dataset, backend_names

import compsuite.eval.pcfgset as evaluations  # noqa: F401  (registers the evaluations)

TEST_KEYS = {"split", "options", "evaluation", "model", "compare_base", "train"}
MODELS = ("own", "base")


class PCFGSet(Study):
    study_keys = frozenset({"datasets", "tests"})
    profile_keys = frozenset({"dataset", "test_runs"})

    @classmethod
    def commands(cls):
        return {"data": add_data_commands, "eval": add_eval_commands}

    # ------------------------------------------------------------------ YAML
    @property
    def datasets(self) -> dict[str, dict]:
        return self.spec.raw["datasets"]

    @property
    def tests(self) -> dict[str, dict]:
        return self.spec.raw.get("tests") or {}

    def validate(self) -> None:
        from compsuite.data_prep.pcfgset import CONFIGS
        from compsuite.data_prep.pcfgset.splits import TESTS

        for name, ds in require(self.spec.raw, "datasets", str(self.source)).items():
            at = self.where("datasets", name)
            check_keys(ds, {"config", "label"}, at)
            config = require(ds, "config", at)
            if config not in CONFIGS:
                raise ConfigError(f"{at}: unknown config '{config}' (known: "
                                  f"{', '.join(CONFIGS)}){near(config, CONFIGS)}")
        for name, prof in self.profiles.items():
            at = self.where("profiles", name)
            ds = require(prof.options, "dataset", at)
            if ds not in self.datasets:
                raise ConfigError(f"{at}: unknown dataset '{ds}'{near(ds, self.datasets)}")
            for r in self.test_runs(prof):
                if r not in prof.runs:
                    raise ConfigError(f"{at}: test run '{r}' is not one of the profile's runs "
                                      "(tests on the task model need the task run)")
        for name, spec in self.tests.items():
            at = self.where("tests", name)
            check_keys(spec, TEST_KEYS, at)
            split = require(spec, "split", at)
            if split not in TESTS:
                raise ConfigError(f"{at}: unknown split '{split}' (known: {', '.join(TESTS)})")
            ev = require(spec, "evaluation", at)
            if ev not in EVALUATIONS:
                raise ConfigError(f"{at}: unknown evaluation '{ev}' (known: "
                                  f"{', '.join(EVALUATIONS)}){near(ev, EVALUATIONS)}")
            if spec.get("model", "own") not in MODELS:
                raise ConfigError(f"{at}: model must be one of {', '.join(MODELS)}")
            train = spec.get("train") or {}
            check_keys(train, set(backend_names()) | {"profiles"}, f"{at}.train")
            check_keys(train.get("profiles") or {}, self.profiles, f"{at}.train.profiles")

    def test_runs(self, profile: Profile) -> list[str]:
        """The runs that take the tests: the profile's ``test_runs``, else its runs in
        the toolkit the paper used, else all its runs."""
        return list(profile.options.get("test_runs")
                    or [r for r in profile.runs if self.run(r).paper_setup] or profile.runs)

    def train_options(self, test: str, profile: str, toolkit: str) -> dict | None:
        """A test's training options for one toolkit: ``train: {toolkit: {...}}`` merged
        with ``train: {profiles: {profile: {toolkit: {...}}}}``."""
        train = self.tests[test].get("train") or {}
        per_profile = ((train.get("profiles") or {}).get(profile) or {}).get(toolkit)
        merged = {**(train.get(toolkit) or {}), **(per_profile or {})}
        return merged or None

    # ------------------------------------------------------------------ units
    def parts(self, profile: Profile) -> dict[str, str]:
        out = {"task": "task accuracy of every run (Table 3's first row)"}
        for name, spec in self.tests.items():
            out[name] = (f"{spec['split']} split, evaluation {spec['evaluation']}, "
                         f"{spec.get('model', 'own')} model")
        return out

    def plan(self, profile: Profile, seeds=None, runs=None) -> list[Unit]:
        ds = profile.options["dataset"]
        seeds = seeds or profile.seeds
        test_runs = [r for r in self.test_runs(profile) if not runs or r in runs]
        units = [Unit("task", r, s, ds, f"task/{r}/seed{s}")
                 for s in seeds for r in runs or profile.runs]
        for test, spec in self.tests.items():
            own = spec.get("model", "own") == "own"
            for s in seeds:
                for r in test_runs:
                    task = f"task/{r}/seed{s}"
                    units.append(Unit(
                        test, r, s, f"{ds}/{test}", f"{test}/{r}/seed{s}",
                        params={"test": test, "evaluation": spec["evaluation"],
                                "model": "own" if own else "base"},
                        model_from=None if own else task,
                        needs=(task,) if (spec.get("compare_base") or not own) else (),
                        train_options=self.train_options(test, profile.name,
                                                         self.run(r).toolkit) if own else None))
        return units

    def prepare(self, dataset: str, seed: int, profile: Profile, data_root: Path,
                show: bool = True) -> Dataset:
        from compsuite.data_prep.common.manifest import is_complete, read_manifest
        from compsuite.data_prep.pcfgset import CONFIGS, GENERATOR, generate
        from compsuite.data_prep.pcfgset.generate import GENERATOR_VERSION
        from compsuite.data_prep.pcfgset.splits import SPLIT_GENERATOR, TESTS

        base_name, _, test = dataset.partition("/")
        spec = self.datasets[base_name]
        cfg = CONFIGS[spec["config"]]
        if not test:
            data = Dataset(data_root / "pcfgset" / base_name / f"seed{seed}",
                           label=spec["label"])
            if not is_complete(data.raw, GENERATOR, cfg.as_args(), version=GENERATOR_VERSION):
                generate(data.raw, cfg, seed=seed, progress=show)
            return data
        t = self.tests[test]
        options = t.get("options") or {}
        data = Dataset(data_root / "pcfgset" / base_name / test / f"seed{seed}",
                       label=spec["label"])
        m = read_manifest(data.raw)
        done = (m is not None and m.get("seed") == seed and m["args"].get("test") == t["split"]
                and m["args"].get("base") == cfg.as_args()
                and all(m["args"].get(k) == v for k, v in options.items())
                and is_complete(data.raw, SPLIT_GENERATOR, m["args"], version=GENERATOR_VERSION))
        if not done:
            TESTS[t["split"]](data.raw, cfg, seed=seed, progress=show, **options)
        return data

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, ctx: Context) -> dict:
        from compsuite.eval.pcfgset import task_accuracy

        if ctx.unit.part == "task":
            return task_accuracy(ctx)
        spec = self.tests[ctx.unit.part]
        if not ctx.unit.trains:
            check_same_corpus(ctx.data.raw, ctx.model_data.raw, ctx.unit.part)
        return EVALUATIONS.get(spec["evaluation"])(ctx, spec)

    def report(self, profile: str, results: list[dict], out_dir: Path) -> str:
        from compsuite.eval.reports.pcfgset import build_study_report

        task = [r for r in results if r["part"] == "task"]
        tests = {t: [r for r in results if r["part"] == t] for t in self.tests}
        build_study_report(self, profile, task, {t: rs for t, rs in tests.items() if rs},
                           out_dir)
        return "report.md, report.json, *.png; table.md: task accuracy; <test>.md per test"


def check_same_corpus(test_raw: Path, task_raw: Path, test: str) -> None:
    """A test on the task model must draw its samples from the task's own corpus."""
    for name in ("train.src", "train.tgt"):
        if (test_raw / name).is_file() and sha256_file(test_raw / name) != sha256_file(
                task_raw / name):
            raise ConfigError(f"test '{test}': {test_raw / name} differs from the task corpus "
                              f"{task_raw / name}; its samples would not come from the task "
                              "model's training data")


STUDY = PCFGSet


# ----------------------------------------------------------------------------- compsuite data pcfgset
def add_data_commands(parser: argparse.ArgumentParser) -> None:
    from compsuite.data_prep.pcfgset import CONFIGS
    from compsuite.data_prep.pcfgset.splits import TESTS

    sub = parser.add_subparsers(dest="action", required=True)
    g = sub.add_parser("generate", help="generate the base corpus {train,valid,test}.{src,tgt}")
    g.add_argument("--config", choices=list(CONFIGS), default="full",
                   help="full = the paper's task; small = the quick profile's scaled-down task")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--out", required=True)
    g.add_argument("--n-pairs", type=int, help="override the number of distinct pairs")
    g.add_argument("--test", choices=list(TESTS),
                   help="write a compositionality test's splits instead of the base corpus")
    g.add_argument("--condition", choices=["equally_distributed", "primitive"],
                   default="equally_distributed", help="substitutivity: where synonyms occur")
    g.add_argument("--exception-rate", type=float, default=0.001,
                   help="overgeneralisation: per Table 2 pair, exceptions per training "
                        "occurrence of the pair's less frequent function (the paper: "
                        "0.0001, 0.0005, 0.001, 0.005)")
    g.add_argument("--toolkits", nargs="*", default=[], choices=backend_names(),
                   help="also write the data in these toolkits' formats (then the text goes "
                        "to OUT/raw)")
    g.add_argument("--quiet", action="store_true")
    g.set_defaults(func=cmd_generate)
    i = sub.add_parser("interpret", help="map sources (stdin or --input) to their meanings")
    i.add_argument("--input", help="a file of sources (default: stdin)")
    i.add_argument("--exceptions", action="store_true",
                   help="apply the overgeneralisation exceptions of Table 2")
    i.set_defaults(func=cmd_interpret)
    s = sub.add_parser("stats", help="Table 1 statistics of a source file")
    s.add_argument("file")
    s.set_defaults(func=cmd_stats)


def cmd_generate(a) -> int:
    from dataclasses import replace

    from compsuite.data_prep.pcfgset import CONFIGS, generate
    from compsuite.toolkits import get_backend

    cfg = CONFIGS[a.config]
    if a.n_pairs:
        cfg = replace(cfg, n_pairs=a.n_pairs)
    out = Path(a.out)
    raw = out / "raw" if a.toolkits else out
    if a.test:
        from compsuite.data_prep.pcfgset.splits import TESTS

        options = ({"condition": a.condition} if a.test == "substitutivity" else
                   {"exception_rate": a.exception_rate} if a.test == "overgeneralisation" else {})
        m = TESTS[a.test](raw, cfg, seed=a.seed, **options)
    else:
        m = generate(raw, cfg, seed=a.seed, progress=not a.quiet)
    print(f"wrote {raw} ({m['counts']}); dropped: {m['dropped']}")
    for tk in a.toolkits:
        print(f"wrote {get_backend(tk).write_data(Dataset(out))}")
    return 0


def cmd_interpret(a) -> int:
    from compsuite.data_prep.pcfgset.grammar import PCFGSyntaxError, interpret

    lines = iter_lines(a.input) if a.input else (line.rstrip("\n") for line in sys.stdin)
    name = a.input or "stdin"
    out = sys.stdout
    for lineno, line in enumerate(lines, start=1):
        try:
            out.write(interpret(line, exceptions=a.exceptions) + "\n")
        except PCFGSyntaxError as e:
            out.flush()
            raise DataError(f"{name}: line {lineno}: {e}: {line.strip()[:120]!r}") from None
    return 0


def cmd_stats(a) -> int:
    from compsuite.data_prep.common.io import read_lines
    from compsuite.data_prep.pcfgset.generate import describe
    from compsuite.data_prep.pcfgset.grammar import PCFGSyntaxError

    try:
        stats = describe(read_lines(a.file))
    except PCFGSyntaxError as e:
        raise DataError(f"{a.file}: {e}") from None
    print(json.dumps(stats, indent=2))
    return 0


# ----------------------------------------------------------------------------- compsuite eval pcfgset
def add_eval_commands(parser: argparse.ArgumentParser) -> None:
    from compsuite.commands import model_arguments

    sub = parser.add_subparsers(dest="action", required=True)
    loc = sub.add_parser("localism", help="whole vs unrolled computation, model in the loop")
    model_arguments(loc)
    loc.add_argument("--unrolled", required=True, help="unrolled_test.tsv")
    loc.add_argument("--traces", help="write per-sample traces (JSON lines) here")
    loc.add_argument("--json", action="store_true", help="print one JSON object")
    loc.set_defaults(func=cmd_localism)
    ovg = sub.add_parser("overgeneralisation",
                         help="memorisation vs overgeneralisation at every saved checkpoint")
    model_arguments(ovg, folder=True)
    ovg.add_argument("--exceptions", required=True,
                     help="prefix of the exception files, e.g. DIR/test_pcfg_ratio=0.001")
    ovg.add_argument("--out", help="write the JSON result here")
    ovg.add_argument("--plot", help="write the area plot (PNG) here")
    ovg.add_argument("--json", action="store_true", help="print one JSON object")
    ovg.set_defaults(func=cmd_overgeneralisation)
    emb = sub.add_parser("embeddings", help="cosine distances function <-> synonym (Table 5)")
    model_arguments(emb)
    emb.add_argument("--json", action="store_true", help="print one JSON object")
    emb.set_defaults(func=cmd_embeddings)
    rel = sub.add_parser("released", help="score the PCFG SET authors' released prediction "
                                          "files (model_predictions/<model>/<test>/...)")
    rel.add_argument("folder", help="the model_predictions folder")
    rel.add_argument("--json", action="store_true", help="print one JSON object")
    rel.set_defaults(func=cmd_released)


def cmd_localism(a) -> int:
    from compsuite.commands import show
    from compsuite.data_prep.common.io import atomic_open
    from compsuite.eval import localism
    from compsuite.eval.translators import load_translator

    samples = localism.read_unrolled(a.unrolled)
    translator = load_translator(a.checkpoint, a.data, batch_size=a.batch_size)
    res = localism.run(translator, samples)
    traces = res.pop("traces")
    res.update(model_calls=translator.calls, model_batches=translator.batches,
               input={"unrolled": a.unrolled, "checkpoint": a.checkpoint})
    if a.traces:
        with atomic_open(a.traces) as fh:
            for t in traces:
                fh.write(json.dumps(t) + "\n")
    c = res["consistency"]
    show(res, a.json, ["n", "consistency", "consistent correct", "consistent incorrect",
                       "accuracy (whole)", "accuracy (unrolled)", "model calls"],
         [[res["n"], c["consistency"], c["consistent_correct"], c["consistent_incorrect"],
           res["accuracy_original"], res["accuracy_unrolled"], res["model_calls"]]])
    return 0


def cmd_overgeneralisation(a) -> int:
    from compsuite.commands import show, write_json
    from compsuite.eval import overgeneralisation as og
    from compsuite.eval.reports.plots import overgeneralisation_areas
    from compsuite.eval.translators import load_translator

    sources, exc, orig = og.read_exception_set(a.exceptions)
    checkpoints = og.list_checkpoints(a.checkpoints)
    res = og.track(checkpoints, lambda p: load_translator(p, a.data, batch_size=a.batch_size),
                   sources, exc, orig, progress=not a.json)
    res["input"] = {"checkpoints": a.checkpoints, "exceptions": a.exceptions}
    if a.out:
        write_json(a.out, res)
    if a.plot:
        overgeneralisation_areas(res, a.plot, title=Path(a.exceptions).name)
    show(res, a.json, [res["profile"][0]["kind"], "memorisation", "overgeneralisation", "neither"],
         [[r["at"], r["memorisation"], r["overgeneralisation"], r["neither"]]
          for r in res["profile"]],
         f"peak overgeneralisation {res['peak_overgeneralisation']:.2f} at "
         f"{res['peak_at']['kind']} {res['peak_at']['at']}\n")
    return 0


def cmd_embeddings(a) -> int:
    from compsuite.commands import show
    from compsuite.eval.pcfgset import embedding_distances
    from compsuite.eval.translators import load_translator

    res = embedding_distances(load_translator(a.checkpoint, a.data, batch_size=a.batch_size),
                              a.checkpoint)
    show(res, a.json, ["function", "to its synonym", "to other functions (mean)"],
         [[f, d["to_synonym"], d["to_other_functions"]] for f, d in res["distances"].items()])
    return 0


def cmd_released(a) -> int:
    from compsuite.commands import show
    from compsuite.eval.readers.released import score_released, summarise
    from compsuite.eval.reports.tables import fmt

    rows = score_released(a.folder)
    summary = summarise(rows)
    show({"summary": summary, "runs": rows}, a.json, ["model", "test", "mean", "std", "runs"],
         [[s["model"], s["test"], s["mean"], fmt(s["std"]), s["runs"]] for s in summary])
    return 0
