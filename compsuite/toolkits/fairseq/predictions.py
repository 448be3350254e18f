"""fairseq-generate's output (``S-``/``T-``/``H-`` lines, any order, ids re-sorted)
read into :class:`compsuite.models.predictions.Predictions`.
"""
from __future__ import annotations

import re
from pathlib import Path

from compsuite.models.predictions import Predictions
from compsuite.foundation.errors import DataError
from compsuite.foundation.io import iter_lines

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
                       {"format": "fairseq-generate", "file": str(path)}, Path(path))



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


def rendered(dictionary: Path, lines: list[str], escape_unk: bool = False) -> list[str]:
    """``lines`` as fairseq-generate shows them (its ``S-``/``T-`` lines): each token
    through the dictionary, an unknown one as ``<unk>`` (``escape_unk``: as a target's)."""
    from compsuite.toolkit_noise import import_toolkit

    import_toolkit("fairseq")    # first: fairseq's import-time noise kept off the terminal
    from fairseq.data import Dictionary

    d = Dictionary.load(str(dictionary))
    return [d.string(d.encode_line(line, add_if_not_exist=False), escape_unk=escape_unk)
            for line in lines]
