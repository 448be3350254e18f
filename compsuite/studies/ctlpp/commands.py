"""The command line of CTL++, as :meth:`compsuite.studies.ctlpp.CTLPP.commands`
gives it: ``compsuite data ctlpp ...`` and ``compsuite eval ctlpp ...``, their
options and what each command does."""
from __future__ import annotations

import argparse
from pathlib import Path

from compsuite.data_prep.ctlpp import CTLConfig
from compsuite.data_prep.ctlpp.dataset import VARIANT_NAMES
from compsuite.toolkits import data_backend_names


# ----------------------------------------------------------------------------- compsuite data ctlpp
def add_data_commands(parser: argparse.ArgumentParser) -> None:
    from compsuite.foundation.arguments import non_negative_int, positive_int

    sub = parser.add_subparsers(dest="action", required=True)
    g = sub.add_parser("generate", help="{train,valid,test_iid,test_ood}.tsv and manifest.json")
    g.add_argument("--variant", choices=list(VARIANT_NAMES), required=True)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--out", required=True)
    g.add_argument("--shared-functions", type=non_negative_int, default=8,
                   help="S: functions in G_o")
    g.add_argument("--shared-symbols", type=non_negative_int, default=2,
                   help="S: symbols a shared function sees from both paths")
    g.add_argument("--n-train", type=positive_int, default=300_000)
    g.add_argument("--n-test", type=positive_int, default=1_000)
    g.add_argument("--max-length", type=positive_int, default=6, help="most functions composed")
    g.add_argument("--n-functions", type=positive_int, default=32,
                   help="functions (even; the quick profile's scaled-down task uses 16)")
    g.add_argument("--single-applications", action="store_true",
                   help="add every function applied once to every symbol to training (A "
                        "and R): the paper's text, not the released code's data")
    g.add_argument("--toolkits", nargs="*", default=[], choices=data_backend_names(),
                   help="also write the data in these toolkits' formats (then the text goes "
                        "to OUT/raw)")
    g.add_argument("--quiet", action="store_true")
    g.set_defaults(func=cmd_generate)


def cmd_generate(a) -> int:
    from compsuite.data_prep.ctlpp.generate import SPLITS, generate
    from compsuite.toolkits import get_backend, write_with_toolkits

    cfg = CTLConfig(variant=a.variant, n_train=a.n_train, n_test=a.n_test,
                    max_length=a.max_length, n_functions=a.n_functions,
                    shared_functions=a.shared_functions, shared_symbols=a.shared_symbols,
                    single_applications=a.single_applications)
    w = write_with_toolkits(Path(a.out), lambda raw: generate(
        raw, cfg, seed=a.seed, progress=not a.quiet), a.toolkits, SPLITS)
    lengths = {s: sorted(map(int, st["per_length"]))
               for s, st in w.manifest["statistics"].items() if "per_length" in st}
    print(f"wrote {w.raw} ({w.manifest['counts']}); lengths per split: {lengths}")
    for tk, folder in w.formats.items():
        # the evaluation splits' names in the toolkit's folder, where it renames them
        names = {k: v for k, v in get_backend(tk).split_names(SPLITS).items()
                 if k not in ("train", "valid")}
        subsets = (" (" + ", ".join(f"{v} = {k}" for k, v in names.items()) + ")"
                   if any(k != v for k, v in names.items()) else "")
        print(f"wrote {folder}{subsets}")
    return 0


# ----------------------------------------------------------------------------- compsuite eval ctlpp
def add_eval_commands(parser: argparse.ArgumentParser) -> None:
    from compsuite.commands import model_arguments

    sub = parser.add_subparsers(dest="action", required=True)
    t = sub.add_parser("test", help="a model in the loop: IID/OOD accuracy by length, the "
                                    "compatibility matrix and the representations")
    model_arguments(t, engine=False)
    t.add_argument("--raw", required=True,
                   help="the dataset's raw folder (test_iid/test_ood .src/.tgt and "
                        "manifest.json), e.g. DATA/ctlpp/A/n600/seed1/raw")
    t.add_argument("--accuracy-only", action="store_true",
                   help="IID/OOD accuracy only (no compatibility, no representations)")
    t.add_argument("--out", help="also write the JSON result here")
    t.add_argument("--json", action="store_true", help="print one JSON object")
    t.set_defaults(func=cmd_test)


def cmd_test(a) -> int:
    from compsuite.commands import model_in_the_loop, model_source, show, write_json
    from compsuite.eval.ctlpp.analyses import analyse

    with model_in_the_loop(a, "classifier", raw=a.raw) as clf:
        res = {**analyse(clf, Path(a.raw), not a.accuracy_only), "model_calls": clf.calls,
               "input": {"raw": a.raw, **model_source(a)}}
    if a.out:
        write_json(a.out, res)
    reps = res.get("representations") or {}
    rows = [[split, res[split]["accuracy"], res[split]["n"]] for split in ("test_iid", "test_ood")]
    footer = ""
    if "compatibility" in res:
        footer = (f"\ncompatibility matrix ({', '.join(res['compatibility']['groups'])}): "
                  f"{res['compatibility']['matrix']}\n")
    if "mean_similarity" in reps:
        footer += f"representation similarity: {reps['mean_similarity']}\n"
    show(res, a.json, ["test", "accuracy", "n"], rows, footer)
    return 0
