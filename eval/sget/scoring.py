"""SGET translations scored from files: one split of a trained model's translations in
the study's evaluation (:func:`score_split`), and any system's translations of a data
folder, the ``compsuite eval sget score`` command (:func:`score_folder`,
:func:`score_rows`).  The scores themselves are :func:`compsuite.eval.sget.metrics.score_set`'s.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import read_lines, write_lines
from compsuite.models.predictions import Predictions

from .metrics import parse_gen_info, score_set
from .patterns import normalise


def score_split(split: str, pred: Predictions, text: Path, out_dir: Path, *,
                gen_info_file: Path, cache_dir: Path | None = None, n_process: int = 1,
                show: bool = False) -> dict:
    """A model's translations of ``split`` (``pred``, as the backend read its output)
    scored against the plain text of the encoding (``text``:
    ``{split}.{en,ja,pattern}`` and ``train.en``); the translations joined into plain
    Japanese are written to ``out_dir/{split}.ja``.  The generalisation set is scored by
    partial match too when ``gen_info_file`` (the generator's target words) exists, its
    parses in up to ``n_process`` processes."""
    hyps = list(pred.hypotheses)
    refs = read_lines(text / f"{split}.ja")
    if len(hyps) != len(refs):
        raise DataError(f"{pred.path}: {len(hyps)} lines for {len(refs)} references")
    write_lines(out_dir / f"{split}.ja", [normalise(h) for h in hyps])
    gen_info = None
    if split == "gen" and gen_info_file.is_file():
        gen_info = parse_gen_info(read_lines(gen_info_file))
    if show:
        print(f"scoring {split} ({len(hyps):,} lines)", file=sys.stderr, flush=True)
    res = score_set(
        hyps, refs, read_lines(text / f"{split}.en"), read_lines(text / f"{split}.pattern"),
        gen_info=gen_info, partial=gen_info is not None,
        train_sources=read_lines(text / "train.en") if split == "gen" else None,
        cache_dir=cache_dir, n_process=n_process, show=show)
    if split == "gen" and gen_info is None:
        res["partial_not_scored_because"] = (
            "no gen_info.tsv (target words): the released data has none")
    return res


def score_folder(folder: Path, split: str, hyps: Sequence[str], origin: dict, *,
                 rows: list | None = None, no_partial: bool = False,
                 bleu_tokenize: str = "sudachi", show: bool = False) -> dict:
    """``hyps`` scored against ``folder/{split}.txt`` (the released files or the
    generator's output, or its ``rows`` already read; the folder's ``gen_info.tsv``
    gives partial match its target words and its ``train.txt`` Table 7's longest
    training source); ``origin`` (where the translations came from) is recorded under
    ``input``; ``show``: partial match's progress bars."""
    from compsuite.data_prep.sget.preprocess import read_released

    folder = Path(folder)
    if rows is None:
        rows = read_released(folder / f"{split}.txt")
    if len(hyps) != len(rows):
        what = origin.get("hyps") or origin.get("checkpoint")
        raise DataError(f"{what}: {len(hyps)} translations for "
                        f"{len(rows)} lines of {folder / f'{split}.txt'}")
    info_file = folder / "gen_info.tsv"
    gen_info = (parse_gen_info(read_lines(info_file))
                if split == "gen" and info_file.is_file() else None)
    partial = not no_partial and gen_info is not None
    train = folder / "train.txt"
    res = score_set(hyps, [r.japanese for r in rows], [r.english for r in rows],
                    [r.pattern for r in rows], gen_info=gen_info, partial=partial,
                    train_sources=[r.english for r in read_released(train)]
                    if split == "gen" and train.is_file() else None,
                    bleu_tokenize=bleu_tokenize, show=show)
    res["input"] = {**origin, "data": str(folder), "split": split}
    if not partial and split == "gen" and not no_partial:
        res["partial_not_scored_because"] = f"no {info_file} (target words)"
    return res


def score_rows(res: dict) -> tuple[list[str], list[list], str]:
    """The scores as a table (header, rows: all lines, then each pattern) and the line
    after it (the BLEU signature)."""
    def pct(x):
        return None if x is None else round(100 * x, 1)

    header = ["pattern", "n", "exact (%)", "BLEU", "partial (%)"]
    rows = [["all", res["n"], pct(res["exact_match"]), round(res["bleu"]["score"], 1),
             pct(res.get("partial_match"))]]
    for p, c in (res.get("per_pattern") or {}).items():
        rows.append([p, c["n"], pct(c["exact_match"]), round(c["bleu"], 1),
                     pct(c["partial_match"])])
    return header, rows, f"\nBLEU: {res['bleu']['signature']}\n"
