"""The command line of the NLI study, as :meth:`compsuite.studies.nli.NLI.commands`
gives it: ``compsuite data nli ...`` and ``compsuite eval nli ...``, their
options and what each command does."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from compsuite.foundation.errors import ConfigError
from compsuite.foundation.names import near
from compsuite.studies.nli import DEFAULT_LAMBDAS


def add_data_commands(parser: argparse.ArgumentParser) -> None:
    from compsuite.data_prep.nli import adversaries, synthetic

    sub = parser.add_subparsers(dest="action", required=True)
    a = sub.add_parser("adversaries", help="SOSWAP and ADDAMOD from an SNLI/MNLI jsonl's parses")
    adversaries.add_arguments(a)
    a.set_defaults(func=adversaries.run)
    s = sub.add_parser("synthetic", help="the quick profile's seeded synthetic NLI corpus")
    synthetic.add_arguments(s)
    s.set_defaults(func=synthetic.run)
    p = sub.add_parser("prepare", help="a dataset from jsonl files: raw text, adversaries, "
                                       "the lexical classifier's LMS")
    p.add_argument("--train", nargs="+", required=True, help="training jsonl file(s)")
    p.add_argument("--valid", required=True, help="validation jsonl")
    p.add_argument("--eval", nargs="+", required=True, metavar="NAME=JSONL",
                   help="evaluation sets (the first gives the adversaries)")
    p.add_argument("--lexical-train", nargs="*", default=[],
                   help="files the lexical classifier learns from (default: --train)")
    p.add_argument("--rules", choices=("strict", "lenient"), default="strict")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--pools", action="store_true",
                   help="also build the training premises' adversaries (augmentation pool)")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_prepare)


def cmd_prepare(a) -> int:
    from compsuite.data_prep.nli.corpus import Source, build

    evals = {}
    for item in a.eval:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise ConfigError(f"--eval {item}: NAME=JSONL")
        evals[name] = Path(path)
    source = Source(Path(a.out).name, [Path(p) for p in a.train], Path(a.valid), evals,
                    lexical_train=[Path(p) for p in a.lexical_train])
    m = build(a.out, source, rules=a.rules, seed=a.seed, pools=a.pools)
    print(f"wrote {a.out}: {m['counts']}")
    return 0


def add_eval_commands(parser: argparse.ArgumentParser) -> None:
    from compsuite.commands import model_arguments

    sub = parser.add_subparsers(dest="action", required=True)
    s = sub.add_parser("score", help="score any system's predictions (pairID<TAB>label)")
    s.add_argument("--data", dest="dataset", metavar="DATA", required=True,
                   help="a prepared dataset folder (DATA/nli/<dataset>/...: raw/, lexical/)")
    src = s.add_mutually_exclusive_group(required=True)
    src.add_argument("--predictions",
                     help="pairID<TAB>label for the evaluation set (labels: entailment, "
                          "neutral, contradiction or e/n/c)")
    model_arguments(s, engine=False, sources=src, batch_size=256,
                    checkpoint="a classifier in the loop: a fairseq checkpoint (with --bin) "
                               "or a Hugging Face model folder; classifies the set and both "
                               "adversaries",
                    reads="as --checkpoint",
                    dictionaries=("--bin", "with a fairseq --checkpoint: its fairseq-bin "
                                           "folder (dictionaries)"))
    s.add_argument("--set", help="the evaluation set (default: the first)")
    s.add_argument("--soswap", help="predictions on the SOSWAP set (pairID<TAB>label)")
    s.add_argument("--addamod", help="predictions on the ADDAMOD set")
    s.add_argument("--lambdas", type=float, nargs="+", default=list(DEFAULT_LAMBDAS))
    s.add_argument("--out", help="also write the scores here (JSON)")
    s.set_defaults(func=cmd_score)


def cmd_score(a) -> int:
    from compsuite.data_prep.nli.corpus import read_lms, read_split
    from compsuite.data_prep.nli.lexical import check_lambda
    from compsuite.eval.nli import scores as score
    from compsuite.foundation.io import atomic_open
    from compsuite.foundation.manifest import read_manifest

    root = Path(a.dataset)
    m = read_manifest(root / "raw")
    if m is None:
        raise ConfigError(f"{root}: no raw/manifest.json (prepare the dataset first)")
    sets = m["statistics"]["eval_sets"]
    name = a.set or next(iter(sets))
    if name not in sets:
        raise ConfigError(f"--set {name}: the dataset's sets are {', '.join(sets)}"
                          f"{near(name, sets)}")
    lambdas = [check_lambda(v) for v in a.lambdas]
    rows = json.loads((root / "lexical" / "rows.json").read_text(encoding="utf-8"))
    cols = read_split(root / "raw", sets[name])
    if a.predictions:
        pred = score.align(cols["pairid"], score.read_predictions(a.predictions),
                           a.predictions)
        adversaries = {k: getattr(a, k) for k in ("soswap", "addamod") if getattr(a, k)}
    else:   # a model in the loop: it classifies the set and both adversaries
        predicted = classify_sets(a, root / "raw", [sets[name], "adv_soswap", "adv_addamod"])
        pred = predicted[sets[name]]
        adversaries = {"soswap": predicted["adv_soswap"], "addamod": predicted["adv_addamod"]}
    out = {"set": name, "score": score.score_dev(cols["label"], pred, read_lms(root, name),
                                                 lambdas, rows["signature"]),
           "adversaries": {}}
    for kind, source in adversaries.items():
        adv = read_split(root / "raw", f"adv_{kind}")
        p = source if isinstance(source, list) else score.align(
            adv["pairid"], score.read_predictions(source), source)
        out["adversaries"][kind] = score.score_adversary(p, adv["label"])
    s = out["score"]
    print(f"{name}: accuracy {s['whole']:.2f} on {s['n']} pairs; " + "; ".join(
        f"CS_{k} {v['accuracy']:.2f} ({v['n']})" if v["accuracy"] is not None
        else f"CS_{k} - (0)" for k, v in s["cs"].items()))
    for kind, r in out["adversaries"].items():
        sh = r["shares"]
        print(f"{kind}: E {sh['entailment']:.1f} / C {sh['contradiction']:.1f} / "
              f"N {sh['neutral']:.1f} on {r['n']} pairs")
    print(s["signature"])
    if a.out:
        with atomic_open(Path(a.out)) as fh:
            json.dump(out, fh, indent=1)
    return 0


def classify_sets(a, raw: Path, splits: list[str]) -> dict[str, list[str]]:
    """The predictions of the model of ``--checkpoint`` or ``--model-cmd`` on each raw
    split (kept in a temporary folder only)."""
    import tempfile

    from compsuite.commands import model_in_the_loop
    from compsuite.eval.nli.predict import predict_split

    with model_in_the_loop(a, "classifier", raw=raw) as clf, \
            tempfile.TemporaryDirectory(prefix="compsuite-nli-") as tmp:
        return {s: predict_split(clf, raw, s, Path(tmp))[1] for s in splits}
