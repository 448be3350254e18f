"""One NLI dataset made ready for training and testing: the text the toolkits read, the
adversary sets, and the lexical classifier's scores, in one folder.

:func:`build` takes a :class:`Source` (which jsonl files with parses hold the training
pairs, the validation pairs and each evaluation set: SNLI / MultiNLI from a user's
paths, or the quick profile's synthetic corpus) and writes, under ``root``:

* ``adversaries/eval/``: SOSWAP and ADDAMOD built from the premises of the first
  evaluation set (Table 2; :func:`compsuite.data_prep.nli.adversaries.build`, the
  adjective lexicon from the training files); ``adversaries/train/``: the same from the
  training premises, the pool adversarial augmentation draws from (Table 4, footnote 6:
  "Adv-Training data was created from SNLI training set"), when asked for;
* ``raw/{split}.{premise,hypothesis,label,pairid}``, line-aligned, the words of each
  sentence read from its parse (Penn Treebank tokens; bracket tokens such as ``-LRB-``
  written as the characters they stand for) and separated by spaces.  Splits:
  ``train``, ``valid``, one per evaluation set (the first is ``test``, the others
  ``test_<name>``), ``adv_soswap``, ``adv_addamod`` and ``pool_soswap``,
  ``pool_addamod``;
* beside them, for the tree and feature-based models (S-TLSTM, G-TLSTM, DIIN),
  ``raw/{split}.{premise,hypothesis}_{pos,tree,chars}`` (:mod:`.trees`): one Penn
  Treebank tag per word, the binary parse as shift-reduce transitions (the file's
  ``sentence{1,2}_binary_parse`` when the pair has one, as SNLI and MultiNLI do, else
  our head-outward binarisation of ``sentence{1,2}_parse``: the adversaries and the
  synthetic corpus), and each word's characters;
* ``lexical/``: the softmax-regression classifier of section 5
  (:class:`compsuite.data_prep.nli.lexical.LexicalClassifier`) trained on the training
  pairs (or on the files ``lexical_train`` names: the paper trains it on SNLI + MNLI),
  each evaluation set's LMS (``<set>.lms``, one value a line, in the set's order), and
  ``rows.json``: per set, the Human row (a random annotator's label, footnote 10; only
  where pairs carry several annotator labels), the Majority Vote row, the lexical
  classifier's own accuracy, the sizes of CS_λ and the pairs with the highest LMS
  (Fig. 2's kind of example).

Every part is skipped when its manifest matches its inputs, so a rerun costs nothing;
the same inputs and seed give the same bytes.
"""
from __future__ import annotations

import json
import sys
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import atomic_open, sha256_file
from compsuite.foundation.manifest import is_complete, write_manifest

from . import adversaries, trees
from .snli import LABELS, Pair, ReadStats, read_jsonl
from .trees import PTB_TOKENS  # noqa: F401  (where it was defined before .trees)

GENERATOR = "nli.corpus"
#: the lexical classifier's and the reference analysis's version
VERSION = "1"
#: the raw folder's version: 2 added the pos, tree and chars streams (a folder of
#: version 1 is rebuilt; the lexical classifier, whose inputs did not change, is not)
RAW_VERSION = "2"
SIDES = ("premise", "hypothesis", "label", "pairid")
#: the per-word streams of each sentence (``{split}.premise_pos``, ...)
FEATURE_SIDES = tuple(f"{side}_{f}" for side in ("premise", "hypothesis")
                      for f in trees.FEATURES)
#: λ values whose CS sizes rows.json records (Table 5's three and section 5.4's 0.95)
SIZE_LAMBDAS = (0.5, 0.6, 0.7, 0.95)
#: the λ grid of the accuracy-by-λ curves
LAMBDA_GRID = tuple(round(0.05 * i, 2) for i in range(20))


@dataclass
class Source:
    """Where a dataset's pairs come from (jsonl files with parses).  ``evals``: name ->
    file, in order (the first is the ``test`` split and gives the adversaries)."""

    name: str
    train: list[Path]
    valid: Path
    evals: dict[str, Path]
    label: str = ""
    lexical_train: list[Path] = field(default_factory=list)


def eval_split(index: int, name: str) -> str:
    """The raw split of the ``index``-th evaluation set."""
    return "test" if index == 0 else f"test_{name}"


def splits_of(source: Source, pools: bool) -> tuple[str, ...]:
    out = ["train", "valid"] + [eval_split(i, n) for i, n in enumerate(source.evals)]
    out += ["adv_soswap", "adv_addamod"]
    if pools:
        out += ["pool_soswap", "pool_addamod"]
    return tuple(out)


def words(tree) -> list[str]:
    return trees.words_of(tree)


def _read(paths, stats: ReadStats | None = None) -> list[Pair]:
    out: list[Pair] = []
    for p in paths:
        out += list(read_jsonl(p, stats=stats))
    return out


def write_split(raw: Path, split: str, pairs: list[Pair]) -> int:
    """``raw/{split}.{premise,hypothesis,label,pairid}`` and the six per-word streams
    ``{split}.{premise,hypothesis}_{pos,tree,chars}``.  An empty sentence (a parse
    without words) or a binary parse whose leaves are not the parse's words is an
    error naming the pair's file and line."""
    if not pairs:
        raise DataError(f"split '{split}' has no pairs")
    names = SIDES + FEATURE_SIDES
    with ExitStack() as stack:
        out = {n: stack.enter_context(atomic_open(raw / f"{split}.{n}")) for n in names}
        for p in pairs:
            where = f"{p.source}:{p.line}"
            sides = (("premise", p.premise_tree, p.premise_binary_parse, "sentence1"),
                     ("hypothesis", p.hypothesis_tree, p.hypothesis_binary_parse,
                      "sentence2"))
            lines = {"label": p.label, "pairid": p.pair_id}
            for side, tree, binary, key in sides:
                if not tree.leaves():
                    raise DataError(f"{where}: a sentence without words in its parse")
                streams = trees.sentence_streams(tree, binary,
                                                 f"{where}: {key}_binary_parse")
                lines[side] = streams.pop("words")
                lines.update({f"{side}_{f}": v for f, v in streams.items()})
            for n in names:
                out[n].write(lines[n] + "\n")
    return len(pairs)


def read_split(raw: Path, split: str, extra=()) -> dict[str, list[str]]:
    """The four line-aligned files of a split, and the ``extra`` streams named
    (``premise_tree``, ...; an error names a file whose line count differs)."""
    from compsuite.foundation.io import read_lines

    cols = {s: read_lines(raw / f"{split}.{s}") for s in SIDES + tuple(extra)}
    n = len(cols["label"])
    for s, lines in cols.items():
        if len(lines) != n:
            raise DataError(f"{raw / f'{split}.{s}'}: {len(lines)} lines, "
                            f"{raw / f'{split}.label'}: {n}")
    return cols


# ----------------------------------------------------------------------------- the build
def build(root: str | Path, source: Source, *, rules: str = "strict", seed: int = 1,
          pools: bool = False, lexical: dict | None = None, show: bool = True) -> dict:
    """Write the dataset (see the module docstring); returns the raw manifest."""
    root = Path(root)
    lexical = dict(lexical or {})
    train_files = [str(Path(p).resolve()) for p in source.train]
    first_eval = next(iter(source.evals.values()))
    adv_eval = adversaries.build(first_eval, root / "adversaries" / "eval", rules=rules,
                                 seed=seed, lexicon_from=train_files, show=show)
    adv_train = None
    if pools:
        adv_train = _pools(source, root, rules, seed, train_files, show)
    raw = root / "raw"
    splits = splits_of(source, pools)
    args = {"source": source.name, "train": train_files, "valid": str(Path(source.valid).resolve()),
            "evals": {k: str(Path(v).resolve()) for k, v in source.evals.items()},
            "rules": rules, "seed": seed, "pools": pools,
            "adversaries": adv_eval["sha256"],
            "pool_adversaries": adv_train["sha256"] if adv_train else None}
    if not is_complete(raw, GENERATOR, args, version=RAW_VERSION):
        if show:
            print(f"nli data: {raw}", file=sys.stderr, flush=True)
        stats = ReadStats()
        counts = {"train": write_split(raw, "train", _read(source.train, stats)),
                  "valid": write_split(raw, "valid", _read([source.valid], stats))}
        for i, (name, path) in enumerate(source.evals.items()):
            split = eval_split(i, name)
            counts[split] = write_split(raw, split, _read([path], stats))
        for kind in ("soswap", "addamod"):
            counts[f"adv_{kind}"] = write_split(
                raw, f"adv_{kind}", _read([root / "adversaries" / "eval" / f"{kind}.jsonl"]))
            if pools:
                counts[f"pool_{kind}"] = write_split(
                    raw, f"pool_{kind}",
                    _read([root / "adversaries" / "train" / f"{kind}.jsonl"]))
        write_manifest(raw, generator=GENERATOR, generator_version=RAW_VERSION, seed=seed,
                       args=args, files=[f"{s}.{side}" for s in splits
                                         for side in SIDES + FEATURE_SIDES],
                       counts=counts,
                       dropped={"no gold label ('-')": stats.as_dict()["skipped"]},
                       statistics={"eval_sets": {n: eval_split(i, n) for i, n in
                                                 enumerate(source.evals)},
                                   "adversaries": adv_eval["counts"],
                                   "pool_adversaries": adv_train["counts"] if adv_train else None,
                                   "label": source.label},
                       packages=("compsuite",))
    build_lexical(root, source, seed=seed, show=show, **lexical)
    return json.loads((raw / "manifest.json").read_text(encoding="utf-8"))


def _pools(source: Source, root: Path, rules: str, seed: int, train_files: list[str],
           show: bool) -> dict:
    """Adversaries from every training file's premises (one build per file, merged)."""
    out = root / "adversaries" / "train"
    if len(source.train) == 1:
        return adversaries.build(source.train[0], out, rules=rules, seed=seed,
                                 lexicon_from=train_files, show=show)
    parts = [adversaries.build(p, out / f"part{i}", rules=rules, seed=seed,
                               lexicon_from=train_files, show=show)
             for i, p in enumerate(source.train)]
    counts = {"soswap": 0, "addamod": 0}
    for kind in counts:
        with atomic_open(out / f"{kind}.jsonl") as fh:
            for i in range(len(parts)):
                text = (out / f"part{i}" / f"{kind}.jsonl").read_text(encoding="utf-8")
                fh.write(text)
                counts[kind] += text.count("\n")
    return {"sha256": {k: sha256_file(out / f"{k}.jsonl") for k in counts}, "counts": counts}


# ----------------------------------------------------------------------------- lexical
def build_lexical(root: Path, source: Source, *, seed: int = 1, C: float | None = None,
                  hash_bits: int | None = None, show: bool = True) -> dict:
    """``lexical/``: the classifier, each evaluation set's LMS and ``rows.json``."""
    from . import lexical as lex

    out = root / "lexical"
    files = [str(Path(p).resolve()) for p in (source.lexical_train or source.train)]
    args = {"train": files, "evals": {k: str(Path(v).resolve()) for k, v in source.evals.items()},
            "seed": seed, "C": C, "hash_bits": hash_bits}
    if is_complete(out, GENERATOR + ".lexical", args, version=VERSION):
        return json.loads((out / "rows.json").read_text(encoding="utf-8"))
    if show:
        print(f"nli lexical classifier: training on {len(files)} file(s)", file=sys.stderr,
              flush=True)
    train = _read(files)
    clf = lex.LexicalClassifier(C=C, seed=seed, hash_bits=hash_bits).fit(train)
    clf.save(out / "classifier.pkl")
    train_gold = [p.label for p in _read(source.train)]
    rows = {"signature": clf.signature(), "C": clf.C, "train_pairs": len(train), "sets": {}}
    for name, path in source.evals.items():
        pairs = _read([path])
        probs = clf.predict_proba(pairs)
        gold = [p.label for p in pairs]
        values = lex.lms(probs, gold)
        with atomic_open(out / f"{name}.lms") as fh:
            fh.writelines(f"{v:.6f}\n" for v in values)
        pred = [LABELS[i] for i in probs.argmax(axis=1)]
        rows["sets"][name] = reference_rows(pairs, values, pred, train_gold, seed)
    with atomic_open(out / "rows.json") as fh:
        json.dump(rows, fh, indent=1)
    write_manifest(out, generator=GENERATOR + ".lexical", generator_version=VERSION, seed=seed,
                   args=args, files=["classifier.pkl", "rows.json"] +
                   [f"{n}.lms" for n in source.evals],
                   counts={n: r["n"] for n, r in rows["sets"].items()},
                   statistics={"C": clf.C, "signature": clf.signature()},
                   packages=("compsuite", "scikit-learn"))
    return rows


def _row(flags, values, lambdas=(0.5, 0.6, 0.7)) -> dict:
    """Accuracy (percent) of per-pair flags (None: not scored) on the whole set and on
    each CS_λ."""
    def pct(idx):
        scored = [flags[i] for i in idx if flags[i] is not None]
        return 100.0 * sum(scored) / len(scored) if scored else None

    out = {"whole": pct(range(len(flags))), "cs": {}}
    for lam in lambdas:
        idx = [i for i, v in enumerate(values) if v >= lam]
        out["cs"][str(lam)] = {"accuracy": pct(idx), "n": len(idx)}
    return out


def reference_rows(pairs: list[Pair], values: list[float], lexical_pred: list[str],
                   train_gold: list[str], seed: int = 1, top: int = 5) -> dict:
    """The rows of Table 5 that need no trained model, for one evaluation set."""
    from . import lexical as lex

    gold = [p.label for p in pairs]
    several = any(len(p.annotator_labels or []) > 1 for p in pairs)
    human = None
    if several:
        flags = [f if len(p.annotator_labels or []) > 1 else None
                 for f, p in zip(lex.human_correct(pairs, seed), pairs)]
        human = _row(flags, values)
        human["expected"] = 100.0 * lex.human_accuracy(
            [p for p in pairs if len(p.annotator_labels or []) > 1], seed)["expected"]
    order = sorted(range(len(pairs)), key=lambda i: (-values[i], pairs[i].pair_id))[:top]
    return {
        "n": len(pairs),
        "human": human,
        "majority": _row(lex.majority_correct(gold, train_gold), values),
        "majority_label": lex.majority_label(train_gold),
        "lexical": _row([g == p for g, p in zip(gold, lexical_pred)], values),
        "cs_sizes": {str(lam): sum(v >= lam for v in values) for lam in SIZE_LAMBDAS},
        "high_lms_examples": [{"pairID": pairs[i].pair_id, "premise": pairs[i].premise,
                               "hypothesis": pairs[i].hypothesis, "gold": gold[i],
                               "lexical_prediction": lexical_pred[i],
                               "lms": round(values[i], 4)} for i in order],
    }


def read_lms(root: Path, name: str) -> list[float]:
    path = Path(root) / "lexical" / f"{name}.lms"
    if not path.is_file():
        raise DataError(f"{path}: no LMS values (build the dataset first)")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            out.append(float(line))
        except ValueError:
            raise DataError(f"{path}:{n}: not a number: {line!r}") from None
    return out


# ----------------------------------------------------------------------------- reference sample
def reference_analysis(sample: str | Path, out: str | Path, *, seed: int = 1, folds: int = 5,
                       show: bool = True) -> dict:
    """What needs no trained model, on an SNLI-format sample (the quick profile runs it
    on the shipped reference sample of SNLI dev): the adversary rules (strict and
    lenient, the adjective lexicon from the sample itself), the Human and Majority Vote
    rows, and the lexical classifier's CS_λ sizes, cross-fitted: the pairs split into
    ``folds`` groups by premise, each group's LMS from a classifier trained on the
    others (a sample has no training set of its own).  ``out/summary.json``."""
    from . import lexical as lex

    out = Path(out)
    sample = Path(sample).resolve()
    args = {"sample": str(sample), "sha256": sha256_file(sample), "seed": seed, "folds": folds}
    if is_complete(out, GENERATOR + ".reference", args, version=VERSION):
        return json.loads((out / "summary.json").read_text(encoding="utf-8"))
    summary: dict = {"sample": sample.name, "adversaries": {}}
    for rules in ("strict", "lenient"):
        m = adversaries.build(sample, out / f"adversaries_{rules}", rules=rules, seed=seed,
                              show=show)
        summary["adversaries"][rules] = {
            "counts": m["counts"], "yield_per_premise": m["statistics"]["yield_per_premise"],
            "yield_per_pair": m["statistics"]["yield_per_pair"]}
    stats = ReadStats()
    pairs = _read([sample], stats)
    premises = sorted({p.premise for p in pairs})
    import random

    rng = random.Random(seed)
    rng.shuffle(premises)
    fold_of = {p: i % folds for i, p in enumerate(premises)}
    probs: list = [None] * len(pairs)
    Cs = []
    # each pair's features once, not once per fold it is in (the groups and labels the
    # classifier would take from the pairs themselves are given with them)
    feats = [lex.pair_features(p) for p in pairs]
    for k in range(folds):
        train = [i for i, p in enumerate(pairs) if fold_of[p.premise] != k]
        test = [i for i, p in enumerate(pairs) if fold_of[p.premise] == k]
        clf = lex.LexicalClassifier(seed=seed).fit(
            [feats[i] for i in train], labels=[pairs[i].label for i in train],
            groups=[pairs[i].premise for i in train])
        Cs.append(clf.C)
        for i, row in zip(test, clf.predict_proba([feats[i] for i in test])):
            probs[i] = row
    import numpy as np

    probs = np.array(probs)
    gold = [p.label for p in pairs]
    values = lex.lms(probs, gold)
    pred = [LABELS[i] for i in probs.argmax(axis=1)]
    summary.update({"pairs": len(pairs), "skipped": stats.as_dict()["skipped"],
                    "premises": len(premises), "folds": folds, "C_per_fold": Cs,
                    "rows": reference_rows(pairs, values, pred, gold, seed),
                    "paper_snli_dev": {"cs_sizes": {"0.7": 999, "0.95": 148},
                                       "human": 88.32,
                                       "adversaries": {"soswap": 971, "addamod": 1783}}})
    with atomic_open(out / "summary.json") as fh:
        json.dump(summary, fh, indent=1)
    write_manifest(out, generator=GENERATOR + ".reference", generator_version=VERSION,
                   seed=seed, args=args, files=["summary.json"], counts={"pairs": len(pairs)},
                   packages=("compsuite", "scikit-learn"))
    return summary
