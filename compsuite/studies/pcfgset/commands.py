"""The command line of PCFG SET, as :meth:`compsuite.studies.pcfgset.PCFGSet.commands`
gives it: ``compsuite data pcfgset ...`` and ``compsuite eval pcfgset ...``, their
options and what each command does."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from compsuite.data_prep.pcfgset import CONFIGS
from compsuite.data_prep.pcfgset.splits import TESTS
from compsuite.foundation.errors import ConfigError, DataError
from compsuite.foundation.io import iter_lines, stdin_lines
from compsuite.toolkits import data_backend_names


# ----------------------------------------------------------------------------- compsuite data pcfgset
def add_data_commands(parser: argparse.ArgumentParser) -> None:
    from compsuite.foundation.arguments import positive_float, positive_int

    sub = parser.add_subparsers(dest="action", required=True)
    g = sub.add_parser("generate", help="generate the base corpus {train,valid,test}.{src,tgt}")
    g.add_argument("--config", choices=list(CONFIGS), default="full",
                   help="full = the paper's task; small = the quick profile's scaled-down task")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--out", required=True)
    g.add_argument("--n-pairs", type=positive_int, help="override the number of distinct pairs")
    g.add_argument("--test", choices=list(TESTS),
                   help="write a compositionality test's splits instead of the base corpus")
    g.add_argument("--condition", choices=["equally_distributed", "primitive"],
                   default="equally_distributed", help="substitutivity: where synonyms occur")
    g.add_argument("--exception-rate", type=positive_float, default=0.001,
                   help="overgeneralisation: per Table 2 pair, exceptions per training "
                        "occurrence of the pair's less frequent function (the paper: "
                        "0.0001, 0.0005, 0.001, 0.005)")
    g.add_argument("--toolkits", nargs="*", default=[], choices=data_backend_names(),
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
    from compsuite.data_prep.pcfgset.dataset import write_corpus
    from compsuite.toolkits import write_with_toolkits

    options = ({"condition": a.condition} if a.test == "substitutivity" else
               {"exception_rate": a.exception_rate} if a.test == "overgeneralisation" else {})
    w = write_with_toolkits(Path(a.out), lambda raw: write_corpus(
        raw, a.config, seed=a.seed, n_pairs=a.n_pairs, test=a.test, options=options,
        progress=not a.quiet), a.toolkits)
    print(f"wrote {w.raw} ({w.manifest['counts']}); dropped: {w.manifest['dropped']}")
    for folder in w.formats.values():
        print(f"wrote {folder}")
    return 0


def cmd_interpret(a) -> int:
    from compsuite.data_prep.pcfgset.grammar import PCFGSyntaxError, interpret

    lines = iter_lines(a.input) if a.input else (line.rstrip("\n") for line in stdin_lines())
    name = a.input or "stdin"
    out, lineno = sys.stdout, 0
    for lineno, line in enumerate(lines, start=1):
        try:
            out.write(interpret(line, exceptions=a.exceptions) + "\n")
        except PCFGSyntaxError as e:
            out.flush()
            raise DataError(f"{name}: line {lineno}: {e}: {line.strip()[:120]!r}") from None
    if a.input and not lineno:
        raise DataError(f"{a.input}: file is empty")
    return 0


def cmd_stats(a) -> int:
    from compsuite.data_prep.pcfgset.generate import describe
    from compsuite.data_prep.pcfgset.grammar import PCFGSyntaxError
    from compsuite.foundation.io import read_lines

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
    from compsuite.commands import model_in_the_loop, model_source, show
    from compsuite.eval.pcfgset import localism
    from compsuite.foundation.io import atomic_open

    samples = localism.read_unrolled(a.unrolled)
    with model_in_the_loop(a) as translator:
        res = localism.run(translator, samples, "translate whole and unrolled",
                           show=not a.json)
    traces = res.pop("traces")
    res.update(model_calls=translator.calls, model_batches=translator.batches,
               input={"unrolled": a.unrolled, **model_source(a)})
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
    from compsuite.commands import engine_settings, show, user_system_given, write_json
    from compsuite.eval.pcfgset import overgeneralisation as og
    from compsuite.eval.pcfgset.plots import overgeneralisation_areas
    from compsuite.toolkits import load_translator, saved_checkpoints

    sources, exc, orig = og.read_exception_set(a.exceptions)
    if user_system_given(a):   # a program, a served model: one model, no checkpoints
        from compsuite.commands import model_in_the_loop, model_source

        source = model_source(a)
        with model_in_the_loop(a) as model:
            res = og.track([("final", 0, a.model_cmd or json.dumps(source))],
                           lambda _: model, sources, exc, orig)
        res["input"] = {**source, "exceptions": a.exceptions}
    else:
        res = og.track(og.listed(saved_checkpoints(a.checkpoints)),
                       lambda p: load_translator(p, a.data, batch_size=a.batch_size,
                                                         **engine_settings(a)),
                       sources, exc, orig, progress=not a.json,
                       desc="exception inputs per checkpoint")
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
    from compsuite.commands import model_in_the_loop, model_source, show
    from compsuite.eval.pcfgset.evaluations import embedding_distances

    with model_in_the_loop(a) as model:
        if "embed" not in model.capabilities:
            raise ConfigError(f"{model.name} gives no input embeddings")
        res = embedding_distances(model, next(iter(model_source(a).values())))
    show(res, a.json, ["function", "to its synonym", "to other functions (mean)"],
         [[f, d["to_synonym"], d["to_other_functions"]] for f, d in res["distances"].items()])
    return 0


def cmd_released(a) -> int:
    from compsuite.commands import show
    from compsuite.eval.pcfgset.released import score_released, summarise
    from compsuite.eval.reports.tables import fmt

    rows = score_released(a.folder)
    summary = summarise(rows)
    show({"summary": summary, "runs": rows}, a.json, ["model", "test", "mean", "std", "runs"],
         [[s["model"], s["test"], s["mean"], fmt(s["std"]), s["runs"]] for s in summary])
    return 0
