"""Readers for model outputs, all to one in-memory form (:class:`Predictions`).

* fairseq-generate output (``S-``/``T-``/``H-`` lines, any order, ids re-sorted);
* plain files: one hypothesis per line beside one reference per line (OpenNMT-py's
  ``onmt_translate -output`` file is such a hypothesis file), optionally sources;
* TSV with a ``source<TAB>target<TAB>prediction`` header, the format in which the
  PCFG SET authors released their models' predictions.

Every reader checks alignment: mismatched line counts, empty files, missing headers
or malformed lines raise :class:`~compsuite.foundation.errors.DataError` naming
the file and line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import iter_lines, read_aligned, read_lines


@dataclass
class Predictions:
    hypotheses: list[str]
    references: list[str]
    sources: list[str] | None = None
    origin: dict = field(default_factory=dict)  # format and file names, for results files

    def __post_init__(self):
        n = len(self.hypotheses)
        if len(self.references) != n or (self.sources is not None and len(self.sources) != n):
            raise DataError(f"{self.origin}: hypotheses, references and sources differ in length")

    def __len__(self) -> int:
        return len(self.hypotheses)


def read_plain(hyp: str | Path, ref: str | Path, src: str | Path | None = None,
               fmt: str = "plain") -> Predictions:
    """Aligned hypothesis and reference files (and optionally the source file)."""
    paths = [hyp, ref] + ([src] if src is not None else [])
    cols = read_aligned(*paths)
    origin = {"format": fmt, "hyp": str(hyp), "ref": str(ref)}
    if src is not None:
        origin["src"] = str(src)
    return Predictions(cols[0], cols[1], cols[2] if src is not None else None, origin)


TSV_HEADER = ("source", "target", "prediction")


def read_tsv(path: str | Path) -> Predictions:
    """A TSV file whose first line is the header ``source target prediction``."""
    lines = read_lines(path)
    header = tuple(h.strip().lower() for h in lines[0].split("\t"))
    if header != TSV_HEADER:
        raise DataError(
            f"{path}: line 1 must be the header 'source<TAB>target<TAB>prediction', "
            f"found {lines[0][:80]!r}"
        )
    if len(lines) == 1:
        raise DataError(f"{path}: header only, no predictions")
    srcs, refs, hyps = [], [], []
    for i, line in enumerate(lines[1:], start=2):
        parts = line.split("\t")
        if len(parts) != 3:
            raise DataError(f"{path}: line {i} has {len(parts)} tab-separated fields, expected 3")
        srcs.append(parts[0].strip())
        refs.append(parts[1].strip())
        hyps.append(parts[2].strip())
    return Predictions(hyps, refs, srcs, {"format": "tsv", "file": str(path)})


_GEN_LINE = re.compile(r"^([STHD])-(\d+)\t(.*)$")


def read_fairseq_generate(path: str | Path, use_detok: bool = False) -> Predictions:
    """fairseq-generate's stdout: ``S-i``/``T-i`` source/target, ``H-i``/``D-i``
    (score, hypothesis; tokenised / detokenised).  The first hypothesis per id is used
    (beam order); ``use_detok`` takes ``D-`` lines instead of ``H-`` lines."""
    src, ref, hyp = {}, {}, {}
    want = "D" if use_detok else "H"
    for lineno, line in enumerate(iter_lines(path), start=1):
        m = _GEN_LINE.match(line)
        if not m:
            continue  # fairseq logging lines, P- (positional scores), etc.
        kind, idx, rest = m.group(1), int(m.group(2)), m.group(3)
        if kind == "S":
            src[idx] = rest
        elif kind == "T":
            ref[idx] = rest
        elif kind == want:
            score_and_text = rest.split("\t", 1)
            if len(score_and_text) != 2:
                raise DataError(f"{path}: line {lineno}: {kind}- line without score and text")
            hyp.setdefault(idx, score_and_text[1])
    if not hyp:
        raise DataError(f"{path}: no {want}- lines; is this fairseq-generate output?")
    if not ref:
        raise DataError(f"{path}: no T- lines (references); run fairseq-generate on a split "
                        "with targets")
    missing = sorted(set(ref) ^ set(hyp))
    if missing:
        raise DataError(f"{path}: sentence ids {missing[:5]} have a target but no hypothesis "
                        "or the reverse (truncated output?)")
    ids = sorted(hyp)
    if ids != list(range(len(ids))):
        first_missing = next(i for i, j in enumerate(ids) if i != j)
        raise DataError(f"{path}: sentence ids are not 0..{len(ids) - 1} (id {first_missing} "
                        "is missing); truncated output, or sentences fairseq dropped?")
    return Predictions([hyp[i] for i in ids], [ref[i] for i in ids],
                       [src.get(i, "") for i in ids] if src else None,
                       {"format": "fairseq-generate", "file": str(path)})


def read_fairseq_hypotheses(path: str | Path, n: int, use_detok: bool = True) -> list[str]:
    """The best hypothesis per input from fairseq-generate or fairseq-interactive output
    (no ``T-`` reference lines needed): ``D-`` lines (detokenised) when there are any and
    ``use_detok``, else ``H-`` lines; ids must cover 0 .. n-1 (the inputs' order)."""
    hyp: dict[str, dict[int, str]] = {"H": {}, "D": {}}
    for lineno, line in enumerate(iter_lines(path), start=1):
        m = _GEN_LINE.match(line)
        if not m or m.group(1) not in hyp:
            continue
        parts = m.group(3).split("\t", 1)
        if len(parts) != 2:
            raise DataError(f"{path}: line {lineno}: {m.group(1)}- line without score and text")
        hyp[m.group(1)].setdefault(int(m.group(2)), parts[1])
    chosen = hyp["D"] if use_detok and hyp["D"] else hyp["H"]
    if not chosen:
        raise DataError(f"{path}: no H- or D- lines; is this fairseq-generate or "
                        "fairseq-interactive output?")
    missing = sorted(set(range(n)) - set(chosen))
    extra = sorted(set(chosen) - set(range(n)))
    if missing or extra:
        raise DataError(f"{path}: hypotheses for {len(chosen)} ids, expected ids 0..{n - 1}"
                        + (f"; missing {missing[:5]}" if missing else "")
                        + (f"; unexpected {extra[:5]}" if extra else ""))
    return [chosen[i] for i in range(n)]
