"""fairseq's data writer: a dataset's raw text binarised with fairseq's own
``fairseq-preprocess`` (:func:`write_fairseq`), and sentence pairs with their features
(:func:`write_fairseq_pairs`).
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Sequence

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import atomic_open
from compsuite.foundation.manifest import is_complete
from compsuite.toolkits.writing import (SPLITS, begin_writing, complete_writing, run_logged,
                                        toolkit_command)

PAIR_SIDES = ("premise", "hypothesis", "label")
#: per-word streams a sentence pair may carry beside its words
#: (``{split}.premise_<F>``, ``{split}.hypothesis_<F>``; fairseq_plugins/doc.md)
PAIR_FEATURES = ("pos", "tree", "chars")
#: a ``chars`` line's word separator; ``tree`` lines' shift and reduce
WORD_SEP, SHIFT, REDUCE = "<w>", "S", "R"


def write_fairseq(raw_dir: str | Path, out_dir: str | Path, splits: Sequence[str] = SPLITS,
                  workers: int = 1, allow_unknown: bool = False,
                  joined_dictionary: bool = False) -> dict:
    """Binarise ``raw_dir/{split}.{src,tgt}`` into ``out_dir`` with fairseq-preprocess
    (``joined_dictionary``: one vocabulary for both sides)."""
    raw_dir, out_dir = Path(raw_dir), Path(out_dir)
    args = {"raw_dir": str(raw_dir), "splits": list(splits), "allow_unknown": allow_unknown,
            "source_lang": "src", "target_lang": "tgt"}
    if joined_dictionary:   # only when set: earlier manifests stay complete
        args["joined_dictionary"] = True
    begun = begin_writing(raw_dir, out_dir, "fairseq-preprocess", args, splits, allow_unknown)
    if begun is None:
        return {"skipped": True}
    counts, tmp = begun
    cmd = toolkit_command("fairseq-preprocess") + [
        "--source-lang", "src", "--target-lang", "tgt", "--destdir", str(tmp),
        "--workers", str(workers),
    ] + (["--joined-dictionary"] if joined_dictionary else [])
    for split, flag in (("train", "--trainpref"), ("valid", "--validpref")):
        if split in splits:
            cmd += [flag, str(raw_dir / split)]
    subsets = fairseq_subsets(splits)
    if subsets:
        cmd += ["--testpref", ",".join(str(raw_dir / s) for s in subsets)]
    run_logged(cmd, tmp / "preprocess.log", "fairseq-preprocess")
    return complete_writing(tmp, out_dir, "fairseq-preprocess", args, counts,
                     ("compsuite", "fairseq-fixed", "torch"), {"fairseq_subsets": subsets})



def fairseq_subsets(splits: Sequence[str]) -> dict[str, str]:
    """The ``--gen-subset`` name of each evaluation split: fairseq-preprocess names the
    comma-separated test prefixes ``test``, ``test1``, ``test2``, ..."""
    tests = [s for s in splits if s not in ("train", "valid")]
    tests.sort(key=lambda s: s != "test")  # 'test' keeps its name when present
    return {s: "test" if i == 0 else f"test{i}" for i, s in enumerate(tests)}



def pair_features(raw_dir: Path, splits: Sequence[str]) -> tuple[list[str], dict]:
    """The :data:`PAIR_FEATURES` whose two files exist for every split, and, for the
    others found in some splits only, the splits that lack them."""
    present, partial = [], {}
    for f in PAIR_FEATURES:
        missing = [s for s in splits if not all((raw_dir / f"{s}.{side}_{f}").is_file()
                                                for side in ("premise", "hypothesis"))]
        if not missing:
            present.append(f)
        elif len(missing) < len(splits):
            partial[f] = missing
    return present, partial



def feature_words(feature: str, tokens: list[str]) -> int:
    """How many words a line of a per-word stream covers: its tags (``pos``), its
    shifts (``tree``, which must build one binary tree) or its words (``chars``, none
    empty); a :class:`ValueError` saying what is wrong otherwise."""
    if feature == "tree":
        depth = 0
        for i, t in enumerate(tokens, 1):
            if t not in (SHIFT, REDUCE):
                raise ValueError(f"transition {i} is {t!r} (not {SHIFT} or {REDUCE})")
            depth += 1 if t == SHIFT else -1
            if depth < 1:
                raise ValueError(f"transition {i} reduces a stack of one item")
        if depth != 1:
            raise ValueError(f"the transitions leave {depth} stack items, not one tree")
        return tokens.count(SHIFT)
    if feature == "chars":
        if not tokens or tokens[0] == WORD_SEP or tokens[-1] == WORD_SEP or any(
                a == b == WORD_SEP for a, b in zip(tokens, tokens[1:])):
            raise ValueError(f"a word without characters (between {WORD_SEP!r} separators)")
        return tokens.count(WORD_SEP) + 1
    return len(tokens)



def check_features(raw_dir: Path, split: str, words: dict[str, list[str]],
                   features: Sequence[str]) -> None:
    """Each per-word stream of ``split`` has one line per pair, covering as many words
    as the sentence (errors name file and line)."""
    for f in features:
        for side in ("premise", "hypothesis"):
            path = raw_dir / f"{split}.{side}_{f}"
            lines = path.read_text(encoding="utf-8").splitlines()
            if len(lines) != len(words[side]):
                raise DataError(f"{path} has {len(lines)} lines, "
                                f"{raw_dir / f'{split}.{side}'} has {len(words[side])}")
            for i, (line, sentence) in enumerate(zip(lines, words[side]), 1):
                try:
                    n = feature_words(f, line.split())
                except ValueError as e:
                    raise DataError(f"{path}:{i}: {e}") from None
                if n != len(sentence.split()):
                    raise DataError(f"{path}:{i}: {n} words, {raw_dir / f'{split}.{side}'}:"
                                    f"{i} has {len(sentence.split())}")



def check_pairs(raw_dir: Path, splits: Sequence[str],
                features: Sequence[str] = ()) -> dict[str, int]:
    """Line counts of ``{split}.{premise,hypothesis,label}``: equal in each split, no
    empty sentence, evaluation labels among the training ones, and each of the
    per-word ``features`` (:func:`check_features`) aligned with its sentences (errors
    name file, line)."""
    counts: dict[str, int] = {}
    train_labels: set[str] | None = None
    for split in splits:
        cols = {}
        for side in PAIR_SIDES:
            path = raw_dir / f"{split}.{side}"
            if not path.is_file():
                raise DataError(f"{path}: no such file")
            cols[side] = path.read_text(encoding="utf-8").splitlines()
        n = len(cols["premise"])
        for side in PAIR_SIDES[1:]:
            if len(cols[side]) != n:
                raise DataError(f"{raw_dir / f'{split}.{side}'} has {len(cols[side])} lines, "
                                f"{raw_dir / f'{split}.premise'} has {n}")
        if n == 0:
            raise DataError(f"{raw_dir / f'{split}.premise'} is empty")
        for side in PAIR_SIDES:
            for i, line in enumerate(cols[side], 1):
                if not line.strip():
                    raise DataError(f"{raw_dir / f'{split}.{side}'}:{i}: empty line")
        if split == "train":
            train_labels = set(cols["label"])
        elif train_labels is not None:
            for i, lab in enumerate(cols["label"], 1):
                if lab not in train_labels:
                    raise DataError(f"{raw_dir / f'{split}.label'}:{i}: class {lab!r} is not "
                                    f"among the training labels ({', '.join(sorted(train_labels))})")
        check_features(raw_dir, split, cols, features)
        counts[split] = n
    return counts



def write_fairseq_pairs(raw_dir: str | Path, out_dir: str | Path,
                        splits: Sequence[str] = SPLITS, workers: int = 1) -> dict:
    """Binarise sentence pairs ``raw_dir/{split}.{premise,hypothesis,label}`` for
    ``--task sentence_pair_classification`` (fairseq_plugins/doc.md): one joined word
    dictionary for both sentences, and the classes pinned in sorted order (a
    ``--srcdict``), so class indices do not depend on label frequencies.  Test splits
    are fairseq's ``test``, ``test1``, ... in :func:`fairseq_subsets` order.

    Each per-word stream F of :data:`PAIR_FEATURES` whose ``{split}.premise_F`` and
    ``{split}.hypothesis_F`` exist for every split is checked against the sentences
    and binarised too (``--source-lang premise_F --target-lang hypothesis_F
    --joined-dictionary``: ``dict.premise_F.txt``); the manifest's ``pair_features``
    says which, ``pair_features_partial`` which were left out for missing in some
    splits (and which splits)."""
    raw_dir, out_dir = Path(raw_dir), Path(out_dir)
    splits = list(splits)
    features, partial = pair_features(raw_dir, splits)
    args = {"raw_dir": str(raw_dir), "splits": splits, "layout": "sentence_pair"}
    if features:   # only when there are some: earlier manifests stay complete
        args["pair_features"] = features
    if is_complete(out_dir, "fairseq-preprocess", args):
        return {"skipped": True}
    if "train" not in splits:
        raise DataError(f"{raw_dir}: sentence pairs need a train split")
    counts = check_pairs(raw_dir, splits, features)
    tmp = out_dir.with_name(out_dir.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    classes = sorted(set((raw_dir / "train.label").read_text(encoding="utf-8").split()))
    with atomic_open(tmp / "classes.txt") as fh:
        fh.writelines(f"{c} 1\n" for c in classes)
    subsets = fairseq_subsets(splits)
    prefs = ["--trainpref", str(raw_dir / "train")]
    if "valid" in splits:
        prefs += ["--validpref", str(raw_dir / "valid")]
    if subsets:
        prefs += ["--testpref", ",".join(str(raw_dir / s) for s in subsets)]
    base = ["--destdir", str(tmp), "--workers", str(workers)]
    calls = [base + ["--source-lang", "premise", "--target-lang", "hypothesis",
                     "--joined-dictionary"] + prefs,
             base + ["--only-source", "--source-lang", "label", "--padding-factor", "1",
                     "--srcdict", str(tmp / "classes.txt")] + prefs]
    calls += [base + ["--source-lang", f"premise_{f}", "--target-lang", f"hypothesis_{f}",
                      "--joined-dictionary"] + prefs for f in features]
    # one process for all the calls: each would otherwise spend seconds importing fairseq
    with atomic_open(tmp / "preprocess-calls.json") as fh:
        json.dump(calls, fh, indent=1)
    run_logged([sys.executable, "-m", "compsuite.toolkits.fairseq.preprocess_many",
                str(tmp / "preprocess-calls.json")], tmp / "preprocess-all.log",
               "fairseq-preprocess (sentences, labels"
               + "".join(f", {f}" for f in features) + ")")
    return complete_writing(tmp, out_dir, "fairseq-preprocess", args, counts,
                     ("compsuite", "fairseq-fixed", "torch"),
                     {"fairseq_subsets": subsets, "classes": classes,
                      "pair_features": features, "pair_features_partial": partial})

