"""The two toolkit writers: every study's raw ``{split}.{src,tgt}`` text goes through
these, so what differs between fairseq and OpenNMT-py lives here only.

* :func:`write_fairseq` binarises with fairseq's own ``fairseq-preprocess``;
* :func:`write_onmt` writes OpenNMT-py's text corpus and vocabularies with
  OpenNMT-py's own ``onmt_build_vocab``.

Both first check that the evaluation splits use no token absent from training
(a clear error naming file, line and token; ``allow_unknown`` to accept them, as
some generalisation tests deliberately do), both write into a temporary folder and
move it into place, and both leave a manifest.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from compsuite.foundation.errors import DataError, ToolkitError
from compsuite.foundation.io import atomic_open, iter_lines
from compsuite.foundation.manifest import is_complete, write_manifest
from compsuite.processes import run

SPLITS = ("train", "valid", "test")


def toolkit_command(name: str) -> list[str]:
    """A toolkit console script from the running environment (beside ``sys.executable``)."""
    local = Path(sys.executable).with_name(name)
    if local.exists():
        return [str(local)]
    found = shutil.which(name)
    if not found:
        raise ToolkitError(f"'{name}' not found; run scripts/setup_env.sh first")
    return [found]


def run_logged(cmd: Sequence[str], log: Path, what: str, cwd: Path | None = None) -> None:
    """Run a toolkit command, its output into ``log``; on failure show the log's tail."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as fh:
        rc = run(list(cmd), stdout=fh, stderr=subprocess.STDOUT, cwd=cwd)
    if rc != 0:
        tail = "".join(log.read_text(encoding="utf-8", errors="replace").splitlines(True)[-15:])
        raise ToolkitError(f"{what} failed (exit {rc}); log {log}:\n{tail}")


def vocabulary(path: Path) -> set[str]:
    vocab: set[str] = set()
    for line in iter_lines(path):
        vocab.update(line.split())
    return vocab


def check_known_tokens(raw_dir: Path, splits: Sequence[str], sides=("src", "tgt")) -> dict:
    """Raise :class:`DataError` at the first token of a non-training split that never
    occurs in training (per side).  Returns the vocabulary sizes."""
    sizes = {}
    for side in sides:
        vocab = vocabulary(raw_dir / f"train.{side}")
        sizes[side] = len(vocab)
        for split in splits:
            if split == "train":
                continue
            path = raw_dir / f"{split}.{side}"
            for lineno, line in enumerate(iter_lines(path), start=1):
                for tok in line.split():
                    if tok not in vocab:
                        raise DataError(
                            f"{path}: line {lineno}: token {tok!r} never occurs in "
                            f"{raw_dir / f'train.{side}'} (pass allow_unknown to accept)"
                        )
    return sizes


def check_aligned(raw_dir: Path, splits: Sequence[str]) -> dict[str, int]:
    counts = {}
    for split in splits:
        n_src = sum(1 for _ in iter_lines(raw_dir / f"{split}.src"))
        n_tgt = sum(1 for _ in iter_lines(raw_dir / f"{split}.tgt"))
        if n_src != n_tgt:
            raise DataError(f"{raw_dir / f'{split}.src'} has {n_src} lines but "
                            f"{raw_dir / f'{split}.tgt'} has {n_tgt}")
        if n_src == 0:
            raise DataError(f"{raw_dir / f'{split}.src'} is empty")
        counts[split] = n_src
    return counts


def _begin(raw_dir: Path, out_dir: Path, writer: str, args: dict, splits: Sequence[str],
           allow_unknown: bool) -> tuple[dict, Path] | None:
    """None when ``out_dir`` already holds this output (by manifest); otherwise check
    the input and return (line counts, a fresh temporary folder beside ``out_dir``)."""
    if is_complete(out_dir, writer, args):
        return None
    counts = check_aligned(raw_dir, splits)
    if not allow_unknown:
        check_known_tokens(raw_dir, splits)
    tmp = out_dir.with_name(out_dir.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    return counts, tmp


def _complete(tmp: Path, out_dir: Path, writer: str, args: dict, counts: dict,
              packages: Sequence[str], extra: dict | None = None) -> dict:
    """Move the finished temporary folder into place and write its manifest."""
    files = sorted(p.name for p in tmp.iterdir() if p.is_file())
    if out_dir.exists():
        shutil.rmtree(out_dir)
    tmp.rename(out_dir)
    return write_manifest(out_dir, generator=writer, generator_version="1", seed=None,
                          args=args, files=files, counts=counts, packages=packages,
                          extra=extra)


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
    begun = _begin(raw_dir, out_dir, "fairseq-preprocess", args, splits, allow_unknown)
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
    return _complete(tmp, out_dir, "fairseq-preprocess", args, counts,
                     ("compsuite", "fairseq-fixed", "torch"), {"fairseq_subsets": subsets})


def fairseq_subsets(splits: Sequence[str]) -> dict[str, str]:
    """The ``--gen-subset`` name of each evaluation split: fairseq-preprocess names the
    comma-separated test prefixes ``test``, ``test1``, ``test2``, ..."""
    tests = [s for s in splits if s not in ("train", "valid")]
    tests.sort(key=lambda s: s != "test")  # 'test' keeps its name when present
    return {s: "test" if i == 0 else f"test{i}" for i, s in enumerate(tests)}


PAIR_SIDES = ("premise", "hypothesis", "label")
#: per-word streams a sentence pair may carry beside its words
#: (``{split}.premise_<F>``, ``{split}.hypothesis_<F>``; fairseq_plugins/doc.md)
PAIR_FEATURES = ("pos", "tree", "chars")
#: a ``chars`` line's word separator; ``tree`` lines' shift and reduce
WORD_SEP, SHIFT, REDUCE = "<w>", "S", "R"


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
    run_logged([sys.executable, "-m", "compsuite.data_prep.common.fairseq_preprocess_many",
                str(tmp / "preprocess-calls.json")], tmp / "preprocess-all.log",
               "fairseq-preprocess (sentences, labels"
               + "".join(f", {f}" for f in features) + ")")
    return _complete(tmp, out_dir, "fairseq-preprocess", args, counts,
                     ("compsuite", "fairseq-fixed", "torch"),
                     {"fairseq_subsets": subsets, "classes": classes,
                      "pair_features": features, "pair_features_partial": partial})


def write_onmt(raw_dir: str | Path, out_dir: str | Path, splits: Sequence[str] = SPLITS,
               allow_unknown: bool = False) -> dict:
    """Copy the text corpus into ``out_dir`` and build ``src.vocab``/``tgt.vocab`` there
    with onmt_build_vocab over the training split."""
    raw_dir, out_dir = Path(raw_dir), Path(out_dir)
    args = {"raw_dir": str(raw_dir), "splits": list(splits), "allow_unknown": allow_unknown}
    begun = _begin(raw_dir, out_dir, "onmt_build_vocab", args, splits, allow_unknown)
    if begun is None:
        return {"skipped": True}
    counts, tmp = begun
    for split in splits:
        for side in ("src", "tgt"):
            shutil.copyfile(raw_dir / f"{split}.{side}", tmp / f"{split}.{side}")
    config = tmp / "build_vocab.yaml"
    with atomic_open(config) as fh:
        # Paths are relative to the folder, so the folder can be moved as a whole.
        fh.write(
            "# onmt_build_vocab -config build_vocab.yaml (run from this folder)\n"
            "save_data: samples\nsrc_vocab: src.vocab\ntgt_vocab: tgt.vocab\n"
            "n_sample: -1\noverwrite: true\n"
            "data:\n  corpus_1:\n    path_src: train.src\n    path_tgt: train.tgt\n"
        )
    cmd = toolkit_command("onmt_build_vocab") + ["-config", "build_vocab.yaml"]
    log = tmp / "build_vocab.log"
    run_logged(cmd, log, "onmt_build_vocab", cwd=tmp)
    for name in ("src.vocab", "tgt.vocab"):
        if not (tmp / name).is_file() or (tmp / name).stat().st_size == 0:
            raise ToolkitError(f"onmt_build_vocab wrote no {name}; see {log}")
    return _complete(tmp, out_dir, "onmt_build_vocab", args, counts,
                     ("compsuite", "OpenNMT-py", "torch"))
