"""The ``compsuite`` command line.  Subcommands parse arguments and call the rooms
(``data_prep``, ``eval``, the pipeline); no logic lives here.

    compsuite data pcfgset generate --seed 1 --out DIR [--config full|small]
    compsuite data pcfgset interpret [--exceptions]   < sources > meanings
    compsuite data pcfgset stats FILE.src
    compsuite eval accuracy (--fairseq OUT | --hyp H --ref R [--src S] | --tsv F) [--json]
    compsuite run pcfgset --profile quick|paper [--seeds 1 2 3]
    compsuite report pcfgset --profile quick|paper
    compsuite list | compsuite paths
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from compsuite.data_prep.common.io import DataError


def _fail(msg: str, code: int = 2) -> int:
    print(f"compsuite: error: {msg}", file=sys.stderr)
    return code


# ----------------------------------------------------------------------------- data
def cmd_pcfgset_generate(a) -> int:
    from dataclasses import replace

    from compsuite.data_prep.common.writers import write_fairseq, write_onmt
    from compsuite.data_prep.pcfgset import CONFIGS, generate

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
    if "fairseq" in a.toolkits:
        write_fairseq(raw, out / "fairseq-bin")
        print(f"wrote {out / 'fairseq-bin'}")
    if "onmt" in a.toolkits:
        write_onmt(raw, out / "onmt")
        print(f"wrote {out / 'onmt'}")
    return 0


def cmd_ctlpp_generate(a) -> int:
    from compsuite.data_prep.common.writers import write_fairseq
    from compsuite.data_prep.ctlpp import CTLConfig, generate
    from compsuite.data_prep.ctlpp.generate import SPLITS

    cfg = CTLConfig(variant=a.variant, n_train=a.n_train, n_test=a.n_test,
                    max_length=a.max_length, n_functions=a.n_functions,
                    shared_functions=a.shared_functions,
                    shared_symbols=a.shared_symbols)
    out = Path(a.out)
    raw = out / "raw" if a.toolkits else out
    m = generate(raw, cfg, seed=a.seed, progress=not a.quiet)
    print(f"wrote {raw} ({m['counts']}); lengths the graph cannot fill: "
          f"{m['unavailable_lengths']}")
    if "fairseq" in a.toolkits:
        write_fairseq(raw, out / "fairseq-bin", splits=SPLITS)
        print(f"wrote {out / 'fairseq-bin'} (test = test_iid, test1 = test_ood)")
    return 0


def cmd_pcfgset_interpret(a) -> int:
    from compsuite.data_prep.pcfgset.grammar import PCFGSyntaxError, interpret

    src = open(a.input, encoding="utf-8") if a.input else sys.stdin
    name = a.input or "stdin"
    out = sys.stdout
    for lineno, line in enumerate(src, start=1):
        try:
            out.write(interpret(line, exceptions=a.exceptions) + "\n")
        except PCFGSyntaxError as e:
            out.flush()
            return _fail(f"{name}: line {lineno}: {e}: {line.strip()[:120]!r}", 1)
    return 0


def cmd_pcfgset_stats(a) -> int:
    from compsuite.data_prep.common.io import read_lines
    from compsuite.data_prep.pcfgset.generate import describe
    from compsuite.data_prep.pcfgset.grammar import PCFGSyntaxError

    lines = read_lines(a.file)
    try:
        stats = describe(lines)
    except PCFGSyntaxError as e:
        return _fail(f"{a.file}: {e}", 1)
    print(json.dumps(stats, indent=2))
    return 0


# ----------------------------------------------------------------------------- eval
BREAKDOWNS = {"pcfgset": "compsuite.data_prep.pcfgset.grammar:structure"}


def _breakdown_fn(name: str):
    import importlib

    mod, fn = BREAKDOWNS[name].split(":")
    return getattr(importlib.import_module(mod), fn)


def cmd_eval_accuracy(a) -> int:
    from compsuite.eval.metrics.accuracy import accuracy_with_breakdown
    from compsuite.eval.readers.predictions import read_fairseq_generate, read_plain, read_tsv

    if a.fairseq:
        preds = read_fairseq_generate(a.fairseq)
    elif a.tsv:
        preds = read_tsv(a.tsv)
    elif a.hyp and a.ref:
        preds = read_plain(a.hyp, a.ref, a.src)
    else:
        return _fail("give --fairseq FILE, --tsv FILE, or --hyp H with --ref R")
    features = None
    if a.breakdown:
        if preds.sources is None:
            return _fail("--breakdown needs the sources: add --src (or use --fairseq/--tsv)")
        fn = _breakdown_fn(a.breakdown)
        try:
            rows = [fn(s) for s in preds.sources]
        except ValueError as e:
            return _fail(f"--breakdown {a.breakdown}: cannot analyse a source: {e}", 1)
        features = {k: [r[k] for r in rows] for k in rows[0]}
    res = accuracy_with_breakdown(preds.hypotheses, preds.references, features)
    out = {**res.as_dict(), "input": preds.origin}
    if a.out:
        from compsuite.data_prep.common.io import atomic_open

        with atomic_open(a.out) as fh:
            json.dump(out, fh, indent=2)
    if a.plot:
        if not features:
            return _fail("--plot needs --breakdown")
        from compsuite.eval.reports.plots import accuracy_by_feature

        accuracy_by_feature({a.label or "model": res.breakdown}, a.plot)
    if a.json:
        print(json.dumps(out))
    else:
        from compsuite.eval.reports.tables import markdown_table

        print(markdown_table(["metric", "value", "n", "signature"],
                             [["sequence accuracy", res.accuracy, res.n, res.signature]]))
        for feat, groups in res.breakdown.items():
            print(f"\naccuracy by {feat}\n")
            print(markdown_table([feat, "accuracy", "n"],
                                 [[k, v["accuracy"], v["n"]] for k, v in groups.items()]))
    return 0


def cmd_eval_consistency(a) -> int:
    from compsuite.data_prep.common.io import read_aligned, read_lines
    from compsuite.eval.metrics.consistency import consistency
    from compsuite.eval.readers.predictions import read_tsv

    if a.tsv_a and a.tsv_b:
        pa, pb = read_tsv(a.tsv_a), read_tsv(a.tsv_b)
        if len(pa) != len(pb):
            raise DataError(f"{a.tsv_a} has {len(pa)} predictions but {a.tsv_b} has {len(pb)}")
        for i, (x, y) in enumerate(zip(pa.references, pb.references), start=2):
            if x.split() != y.split():
                raise DataError(f"targets differ at line {i} of {a.tsv_a} and {a.tsv_b}: "
                                "the pairs must share their meaning")
        outs_a, outs_b, refs = pa.hypotheses, pb.hypotheses, pa.references
        origin = {"format": "tsv", "a": a.tsv_a, "b": a.tsv_b}
    elif a.hyp_a and a.hyp_b:
        cols = read_aligned(*[p for p in (a.hyp_a, a.hyp_b, a.ref) if p])
        outs_a, outs_b = cols[0], cols[1]
        refs = cols[2] if a.ref else None
        origin = {"format": "plain", "a": a.hyp_a, "b": a.hyp_b, "ref": a.ref}
    else:
        return _fail("give --hyp-a A --hyp-b B [--ref R], or --tsv-a A --tsv-b B")
    cats = None
    if a.categories:
        cats = read_lines(a.categories)
        if len(cats) != len(outs_a):
            raise DataError(f"{a.categories} has {len(cats)} lines for {len(outs_a)} pairs")
    res = consistency(outs_a, outs_b, refs, cats)
    out = {**res.as_dict(), "input": origin}
    if a.json:
        print(json.dumps(out))
    else:
        from compsuite.eval.reports.tables import markdown_table

        keys = ["consistency", "consistent_correct", "consistent_incorrect",
                "consistency_incorrect"]
        print(markdown_table(["", *keys, "n"],
                             [["all", *[getattr(res, k) for k in keys], res.n]]
                             + [[c, *[v.get(k) for k in keys], v["n"]]
                                for c, v in res.breakdown.items()]))
        print(f"signature: {res.signature}")
    return 0


def cmd_eval_localism(a) -> int:
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
    if a.json:
        print(json.dumps(res))
    else:
        from compsuite.eval.reports.tables import markdown_table

        c = res["consistency"]
        print(markdown_table(
            ["n", "consistency", "consistent correct", "consistent incorrect",
             "accuracy (whole)", "accuracy (unrolled)", "model calls"],
            [[res["n"], c["consistency"], c["consistent_correct"], c["consistent_incorrect"],
              res["accuracy_original"], res["accuracy_unrolled"], res["model_calls"]]]))
    return 0


def cmd_eval_overgeneralisation(a) -> int:
    from compsuite.data_prep.common.io import atomic_open
    from compsuite.eval import overgeneralisation as og
    from compsuite.eval.translators import load_translator

    sources, exc, orig = og.read_exception_set(a.exceptions)
    checkpoints = og.list_checkpoints(a.checkpoints)
    res = og.track(checkpoints, lambda p: load_translator(p, a.data, batch_size=a.batch_size),
                   sources, exc, orig, progress=not a.json)
    res["input"] = {"checkpoints": a.checkpoints, "exceptions": a.exceptions}
    if a.out:
        with atomic_open(a.out) as fh:
            json.dump(res, fh, indent=2)
    if a.plot:
        og.plot_profile(res, a.plot, title=Path(a.exceptions).name)
    if a.json:
        print(json.dumps(res))
    else:
        from compsuite.eval.reports.tables import markdown_table

        print(markdown_table([res["profile"][0]["kind"], "memorisation", "overgeneralisation",
                              "neither"],
                             [[r["at"], r["memorisation"], r["overgeneralisation"], r["neither"]]
                              for r in res["profile"]]))
        print(f"peak overgeneralisation {res['peak_overgeneralisation']:.2f} at "
              f"{res['peak_at']['kind']} {res['peak_at']['at']}")
    return 0


def cmd_eval_embeddings(a) -> int:
    from compsuite.data_prep.pcfgset.grammar import FUNCTIONS, TWIN_SUFFIX
    from compsuite.data_prep.pcfgset.splits import SUBSTITUTED
    from compsuite.eval.metrics.embedding_distance import synonym_distances
    from compsuite.eval.translators import load_translator

    tr = load_translator(a.checkpoint, a.data, batch_size=a.batch_size)
    vecs = tr.embeddings(list(FUNCTIONS) + [f + TWIN_SUFFIX for f in SUBSTITUTED])
    res = {"distances": synonym_distances(vecs, FUNCTIONS, SUBSTITUTED),
           "signature": "metric:cosine_distance|embeddings:source-input|version:1",
           "checkpoint": a.checkpoint}
    if a.json:
        print(json.dumps(res))
    else:
        from compsuite.eval.reports.tables import markdown_table

        print(markdown_table(["function", "to its synonym", "to other functions (mean)"],
                             [[f, d["to_synonym"], d["to_other_functions"]]
                              for f, d in res["distances"].items()]))
    return 0


def cmd_eval_released(a) -> int:
    from compsuite.eval.readers.released import score_released, summarise

    rows = score_released(a.folder)
    summary = summarise(rows)
    if a.json:
        print(json.dumps({"summary": summary, "runs": rows}))
        return 0
    from compsuite.eval.reports.tables import fmt, markdown_table

    print(markdown_table(["model", "test", "mean", "std", "runs"],
                         [[s["model"], s["test"], s["mean"], fmt(s["std"]), s["runs"]]
                          for s in summary]))
    return 0


# ----------------------------------------------------------------------------- run / report
def cmd_run(a) -> int:
    from compsuite.pipeline import run_profile, run_test
    from compsuite.registry import get_study

    study = get_study(a.study)
    profile = study.profile(a.profile)
    if study.name == "ctlpp":
        return _run_ctlpp(a, study)
    for t in a.test or []:
        if t not in study.tests:
            return _fail(f"unknown test '{t}' (known: {', '.join(study.tests)})")
    roots = dict(data_root=Path(a.data_root), runs_root=Path(a.runs_root), show=not a.quiet)
    if not a.test:
        run_profile(study, a.profile, seeds=a.seeds, runs=a.runs, **roots)
    tests = [] if a.no_tests else (a.test or list(study.tests))
    runs = [r for r in profile.test_runs if not a.runs or r in a.runs]
    if tests and not runs:
        print(f"no tests: none of {', '.join(a.runs)} is a test run of profile "
              f"{profile.name} ({', '.join(profile.test_runs)})", file=sys.stderr)
        tests = []
    for t in tests:
        if not a.quiet:
            print(f"== test {t}", flush=True)
        run_test(study, t, a.profile, seeds=a.seeds, runs=runs, **roots)
    return cmd_report(a)


def _run_ctlpp(a, study) -> int:
    from compsuite.ctlpp_pipeline import run_grid, run_table1

    if a.test:
        return _fail("CTL++ has no --test; it runs Table 1 and the S grid (--no-grid)")
    roots = dict(data_root=Path(a.data_root), runs_root=Path(a.runs_root), show=not a.quiet)
    run_table1(study, a.profile, seeds=a.seeds, runs=a.runs, jobs=a.jobs, **roots)
    if not (a.no_grid or a.no_tests):
        run_grid(study, a.profile, runs=a.runs, jobs=a.jobs, **roots)
    return cmd_report(a)


def _collect_and_build(study, profile: str, runs_root: Path, out: Path) -> str | None:
    """The study's finished results, built into ``out``; returns what was written, or
    None when nothing has finished."""
    if study.name == "ctlpp":
        from compsuite.ctlpp_pipeline import collect
        from compsuite.eval.reports.ctlpp import build_report

        table1, grid = collect(study, profile, runs_root)
        if not table1 and not grid:
            return None
        build_report(study, profile, table1, grid, out)
        return "report.md, report.json, *.png"
    from compsuite.eval.reports.pcfgset import build_study_report
    from compsuite.pipeline import collect_results, collect_test_results

    results = collect_results(study, profile, runs_root)
    tests = collect_test_results(study, profile, runs_root)
    if not results and not tests:
        return None
    build_study_report(study, profile, results, tests, out)
    return "report.md, report.json, *.png; table.md: task accuracy"


def cmd_report(a) -> int:
    from compsuite.registry import get_study

    study = get_study(a.study)
    profile = study.profile(a.profile).name
    out = Path(a.results_root) / study.name / profile
    written = _collect_and_build(study, profile, Path(a.runs_root), out)
    if written is None:
        return _fail(f"no results under {Path(a.runs_root, study.name, profile)}; "
                     f"run 'compsuite run {study.name} --profile {profile}' first")
    print((out / "report.md").read_text())
    print(f"results in {out}/ ({written})")
    return 0


def cmd_list(a) -> int:
    from compsuite.registry import get_study, studies

    for name in studies():
        s = get_study(name)
        print(f"{name}: {s.title}")
        for pname, p in s.profiles.items():
            print(f"  profile {pname}: dataset {p.dataset}, seeds {p.seeds}, runs {', '.join(p.runs)}; "
                  f"tests on {', '.join(p.test_runs)}")
        for tname, t in s.tests.items():
            print(f"  test {tname}: split {t['split']}, evaluation {t['evaluation']}, "
                  f"model {t.get('model', 'own')}")
    return 0


def cmd_paths(a) -> int:
    from compsuite.registry import ROOT

    print(json.dumps({"checkout": str(ROOT), "fairseq_user_dir": str(ROOT / "fairseq_plugins"),
                      "onmt_configs": str(ROOT / "onmt_configs")}, indent=2))
    return 0


# ----------------------------------------------------------------------------- parser
def _model_arguments(p: argparse.ArgumentParser, folder: bool = False) -> None:
    """The options of every model-in-the-loop command (translator protocol)."""
    if folder:
        p.add_argument("--checkpoints", required=True, help="the run's checkpoint folder")
    else:
        p.add_argument("--checkpoint", required=True, help="a fairseq or OpenNMT-py checkpoint")
    p.add_argument("--data", help="fairseq: the fairseq-bin folder (dictionaries)")
    p.add_argument("--batch-size", type=int, default=256)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="compsuite", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    data = sub.add_parser("data", help="generate and convert datasets")
    dsub = data.add_subparsers(dest="study", required=True)
    pcfg = dsub.add_parser("pcfgset", help="PCFG SET (Hupkes et al. 2020)")
    psub = pcfg.add_subparsers(dest="action", required=True)
    g = psub.add_parser("generate", help="generate the base corpus {train,valid,test}.{src,tgt}")
    g.add_argument("--config", choices=["full", "small"], default="full",
                   help="full = the paper's task; small = the quick profile's scaled-down task")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--out", required=True)
    g.add_argument("--n-pairs", type=int, help="override the number of distinct pairs")
    g.add_argument("--test", choices=["systematicity", "productivity", "substitutivity",
                                      "localism", "overgeneralisation",
                                      "increasing_string_length", "per_function"],
                   help="write a compositionality test's splits instead of the base corpus")
    g.add_argument("--condition", choices=["equally_distributed", "primitive"],
                   default="equally_distributed", help="substitutivity: where synonyms occur")
    g.add_argument("--exception-rate", type=float, default=0.001,
                   help="overgeneralisation: exceptions per occurrence of the least frequent "
                        "function in training (the paper: 0.0001, 0.0005, 0.001, 0.005)")
    g.add_argument("--toolkits", nargs="*", default=[], choices=["fairseq", "onmt"],
                   help="also write fairseq-binarised and/or OpenNMT-py data (then the text "
                        "goes to OUT/raw)")
    g.add_argument("--quiet", action="store_true")
    g.set_defaults(func=cmd_pcfgset_generate)
    i = psub.add_parser("interpret", help="map sources (stdin or --input) to their meanings")
    i.add_argument("--input", help="a file of sources (default: stdin)")
    i.add_argument("--exceptions", action="store_true",
                   help="apply the overgeneralisation exceptions of Table 2")
    i.set_defaults(func=cmd_pcfgset_interpret)
    s = psub.add_parser("stats", help="Table 1 statistics of a source file")
    s.add_argument("file")
    s.set_defaults(func=cmd_pcfgset_stats)

    ctl = dsub.add_parser("ctlpp", help="CTL++ (Csordás et al. 2022)")
    csub = ctl.add_subparsers(dest="action", required=True)
    cg = csub.add_parser("generate", help="{train,valid,test_iid,test_ood}.tsv and manifest.json")
    cg.add_argument("--variant", choices=["A", "R", "S"], required=True)
    cg.add_argument("--seed", type=int, default=1)
    cg.add_argument("--out", required=True)
    cg.add_argument("--shared-functions", type=int, default=8, help="S: functions in G_o")
    cg.add_argument("--shared-symbols", type=int, default=2,
                    help="S: symbols a shared function sees from both paths")
    cg.add_argument("--n-train", type=int, default=300_000)
    cg.add_argument("--n-test", type=int, default=1_000)
    cg.add_argument("--max-length", type=int, default=6, help="most functions composed")
    cg.add_argument("--n-functions", type=int, default=32,
                    help="functions (even; the quick profile's scaled-down task uses 16)")
    cg.add_argument("--toolkits", nargs="*", default=[], choices=["fairseq"],
                    help="also write fairseq-binarised data (then the text goes to OUT/raw)")
    cg.add_argument("--quiet", action="store_true")
    cg.set_defaults(func=cmd_ctlpp_generate)

    ev = sub.add_parser("eval", help="score model outputs")
    esub = ev.add_subparsers(dest="metric", required=True)
    acc = esub.add_parser("accuracy", help="sequence accuracy (exact match)")
    acc.add_argument("--fairseq", help="fairseq-generate output")
    acc.add_argument("--hyp", help="hypotheses, one per line (e.g. onmt_translate -output)")
    acc.add_argument("--ref", help="references, one per line")
    acc.add_argument("--src", help="sources, one per line (for --breakdown)")
    acc.add_argument("--tsv", help="TSV with a 'source target prediction' header")
    acc.add_argument("--breakdown", choices=sorted(BREAKDOWNS),
                     help="accuracy by input structure (pcfgset: length, #functions, depth)")
    acc.add_argument("--json", action="store_true", help="print one JSON object")
    acc.add_argument("--out", help="also write the JSON result to this file")
    acc.add_argument("--plot", help="write a PNG of the breakdown (needs --breakdown)")
    acc.add_argument("--label", help="model label in the plot")
    acc.set_defaults(func=cmd_eval_accuracy)
    con = esub.add_parser("consistency", help="consistency over aligned output pairs (Table 6)")
    con.add_argument("--hyp-a", help="outputs for the first inputs (e.g. test.src)")
    con.add_argument("--hyp-b", help="outputs for the paired inputs (e.g. test_twin.src)")
    con.add_argument("--ref", help="references: adds the correct/incorrect breakdown")
    con.add_argument("--tsv-a", help="TSV predictions (source target prediction) for the first inputs")
    con.add_argument("--tsv-b", help="TSV predictions for the paired inputs")
    con.add_argument("--categories", help="one category per pair (e.g. test.category)")
    con.add_argument("--json", action="store_true", help="print one JSON object")
    con.set_defaults(func=cmd_eval_consistency)
    loc = esub.add_parser("localism", help="whole vs unrolled computation, model in the loop")
    _model_arguments(loc)
    loc.add_argument("--unrolled", required=True, help="unrolled_test.tsv")
    loc.add_argument("--traces", help="write per-sample traces (JSON lines) here")
    loc.add_argument("--json", action="store_true", help="print one JSON object")
    loc.set_defaults(func=cmd_eval_localism)
    ovg = esub.add_parser("overgeneralisation",
                          help="memorisation vs overgeneralisation at every saved checkpoint")
    _model_arguments(ovg, folder=True)
    ovg.add_argument("--exceptions", required=True,
                     help="prefix of the exception files, e.g. DIR/test_pcfg_ratio=0.001")
    ovg.add_argument("--out", help="write the JSON result here")
    ovg.add_argument("--plot", help="write the area plot (PNG) here")
    ovg.add_argument("--json", action="store_true", help="print one JSON object")
    ovg.set_defaults(func=cmd_eval_overgeneralisation)
    emb = esub.add_parser("embeddings", help="cosine distances function <-> synonym (Table 5)")
    _model_arguments(emb)
    emb.add_argument("--json", action="store_true", help="print one JSON object")
    emb.set_defaults(func=cmd_eval_embeddings)
    rel = esub.add_parser("released", help="score the PCFG SET authors' released prediction "
                                           "files (model_predictions/<model>/<test>/...)")
    rel.add_argument("folder", help="the model_predictions folder")
    rel.add_argument("--json", action="store_true", help="print one JSON object")
    rel.set_defaults(func=cmd_eval_released)

    for name, func, helptext in (("run", cmd_run, "data, training, predictions, scores, report"),
                                 ("report", cmd_report, "tables and plots from finished runs")):
        r = sub.add_parser(name, help=helptext)
        r.add_argument("study")
        r.add_argument("--profile", default="quick")
        r.add_argument("--runs-root", default="runs")
        r.add_argument("--results-root", default="results")
        if name == "run":
            r.add_argument("--seeds", type=int, nargs="+")
            r.add_argument("--runs", nargs="+", help="only these runs (architecture-toolkit)")
            r.add_argument("--test", nargs="+", metavar="NAME",
                           help="only these compositionality tests, not the task runs "
                                "(see compsuite list)")
            r.add_argument("--no-tests", action="store_true",
                           help="only the task runs (task accuracy), no tests")
            r.add_argument("--no-grid", action="store_true",
                           help="CTL++: only Table 1, not the S-variant grid")
            r.add_argument("--jobs", type=int, metavar="N",
                           help="CTL++: trainings side by side, each with an equal share "
                                "of the CPU threads (default: the profile's `jobs`, else 1)")
            r.add_argument("--data-root", default="DATA")
            r.add_argument("--quiet", action="store_true", help="no progress bars")
        r.set_defaults(func=func)

    sub.add_parser("list", help="studies, profiles and runs").set_defaults(func=cmd_list)
    sub.add_parser("paths", help="where the plugins and configs are").set_defaults(func=cmd_paths)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # e.g. piped into `head`
        sys.stderr.close()
        return 0
    except (DataError, FileNotFoundError, KeyError, ValueError, RuntimeError) as e:
        return _fail(str(e) if not isinstance(e, KeyError) else str(e.args[0]), 1)


if __name__ == "__main__":
    sys.exit(main())
