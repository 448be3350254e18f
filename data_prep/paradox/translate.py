"""``compsuite data paradox translate``: template English on stdin, rule-based Dutch on
stdout (one sentence per line).  A sentence outside the lexicon or the templates is an
error naming the word (exit status 2); ``--keep-going`` writes an empty line instead and
counts them on stderr.

``compsuite data paradox check --released DIR`` translates the authors' released
``synthetic_<T>.en`` files in DIR and compares with their ``.nl``: every line must match,
except the released template-9 lines with the known defect (``die dat ,``), which are
flagged and counted.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Iterable, Sequence, TextIO

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import read_aligned, stdin_lines, translate_stream

from . import templates as T
from .lexicon import LEXICON_PATH, load


def translate_any(line: str, lex=None, clauses=()) -> str:
    """A template sentence, or two joined as ``S1 , and S2 .`` (``S1 , en S2 .``)."""
    parts = line.split(" , and ")
    if len(parts) == 1:
        return T.translate(line, lex, clauses)
    if len(parts) != 2:
        raise T.TemplateError(f"{line!r}: more than two conjuncts")
    first = T.translate(parts[0] + " .", lex, clauses)[:-2]
    second = parts[1]
    second = T.translate(second[:1].upper() + second[1:], lex, clauses)
    return f"{first} , en {second[:1].lower() + second[1:]}"


def translate_lines(lines: Iterable[str], out: TextIO, err: TextIO, keep_going: bool = False,
                    lexicon: str | Path = LEXICON_PATH, origin: str = "<stdin>") -> int:
    lex = load(lexicon)
    return translate_stream(lines, lambda line: translate_any(line, lex), T.TemplateError,
                            out, err, keep_going, origin)


def check_released(folder: str | Path, lexicon: str | Path = LEXICON_PATH,
                   max_examples: int = 10) -> dict:
    """Compare our Dutch with every released ``synthetic_<T>.{en,nl}`` pair in ``folder``.

    Per template and in total: ``lines``, ``covered`` (parsed), ``exact``, ``defects``
    (the released line has the template-9 defect and ours is the grammatical form),
    ``mismatches``; ``exact_rate`` = exact / (covered - defects)."""
    folder = Path(folder)
    lex = load(lexicon)
    files = sorted(folder.glob("synthetic_*.en"),
                   key=lambda p: int(re.sub(r"\D", "", p.stem) or 0))
    if not files:
        raise DataError(f"{folder}: no synthetic_<T>.en files")
    per, examples = {}, {"mismatches": [], "failures": []}
    for en_path in files:
        nl_path = en_path.with_suffix(".nl")
        en, nl = read_aligned(en_path, nl_path)
        c = dict(lines=len(en), covered=0, exact=0, defects=0, mismatches=0)
        for k, (e, d) in enumerate(zip(en, nl), 1):
            try:
                ours = T.translate(e, lex)
            except T.TemplateError as x:
                if len(examples["failures"]) < max_examples:
                    examples["failures"].append(f"{en_path}: line {k}: {x}")
                continue
            c["covered"] += 1
            if ours == d:
                c["exact"] += 1
            elif T.released_defect(e, d, ours):
                c["defects"] += 1
            else:
                c["mismatches"] += 1
                if len(examples["mismatches"]) < max_examples:
                    examples["mismatches"].append(
                        {"file": str(en_path), "line": k, "english": e, "released": d, "ours": ours})
        per[en_path.stem] = c
    total = {k: sum(c[k] for c in per.values()) for k in ("lines", "covered", "exact", "defects",
                                                           "mismatches")}
    judged = total["covered"] - total["defects"]
    total["coverage"] = total["covered"] / total["lines"] if total["lines"] else None
    total["exact_rate"] = total["exact"] / judged if judged else None
    return {"folder": str(folder), "total": total, "per_file": per, **examples}


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--keep-going", action="store_true",
                    help="write an empty line for a sentence that cannot be translated and "
                         "report their number on stderr (default: stop, exit 2)")
    ap.add_argument("--lexicon", default=str(LEXICON_PATH))


def run(args: argparse.Namespace) -> int:
    return translate_lines(stdin_lines(), sys.stdout, sys.stderr, args.keep_going, args.lexicon)


def add_check_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--released", required=True,
                    help="folder with the authors' synthetic_<T>.en and .nl files")
    ap.add_argument("--lexicon", default=str(LEXICON_PATH))
    ap.add_argument("--json", action="store_true", help="print the whole comparison as JSON")


def run_check(args: argparse.Namespace) -> int:
    res = check_released(args.released, args.lexicon)
    if args.json:
        print(json.dumps(res, indent=2, ensure_ascii=False))
    else:
        t = res["total"]
        print(f"{t['lines']} released lines, {t['covered']} covered ({t['coverage']:.1%}); "
              f"{t['exact']} identical, {t['defects']} released template-9 defects "
              f"('die dat ,', ours grammatical), {t['mismatches']} other differences")
        for name, c in res["per_file"].items():
            print(f"  {name}: {c}")
        for m in res["mismatches"]:
            print(f"  differs: {m}")
    return 0 if res["total"]["mismatches"] == 0 else 1


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="compsuite data paradox translate", description=__doc__)
    add_arguments(ap)
    return run(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
