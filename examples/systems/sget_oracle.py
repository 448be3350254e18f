#!/usr/bin/env python3
"""SGET (English -> Japanese) as a toy system of the command protocol: the suite's own
rule-based translator, the rules the generator writes its Japanese with.

* ``translate``: a plain English sentence (what a model with its own tokenizer reads:
  the dataset's ``plain/{split}.src``, ``Dataset.text``) -> plain Japanese.  The sentence
  is parsed with the grammar of compsuite.data_prep.sget.grammar and transduced by
  compsuite.data_prep.sget.translate, which gives exactly the generator's Japanese for
  every sentence of the generated data (checked on every split of the main,
  no_restrictions and no_concatenation parts).  A sentence the rules cannot parse (one of
  the authors' 5,000 released dev sentences, for one) is looked up in the gold pairs of
  the dataset's plain text (``$COMPSUITE_TEXT/{split}.src`` -> ``.tgt``): an oracle for
  those sentences only, counted on stderr.  Neither: the empty output (wrong).

``--corrupt PERCENT``: a corrupted translation is the correct one with the token ``誤り``
appended after a space: exact match (whitespace removed) fails, BLEU drops a little,
partial match (the target translated, in its role) mostly stays: the correct sentence is
still there.
``--no-lookup`` turns the gold lookup off (rules only).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import toy  # noqa: E402

from compsuite.data_prep.sget.lexicon import load  # noqa: E402
from compsuite.data_prep.sget.translate import TranslationError, translate  # noqa: E402

#: the token a corrupted translation gets appended
EXTRA = "誤り"


class Gold:
    """English -> Japanese from the plain-text folder's ``{split}.src`` / ``.tgt``
    pairs, read when first needed."""

    def __init__(self, folder: Path | None):
        self.folder = folder
        self.pairs: dict[str, str] | None = None
        self.used = 0

    def get(self, english: str) -> str | None:
        if self.folder is None:
            return None
        if self.pairs is None:
            self.pairs = {}
            for src in sorted(self.folder.glob("*.src")):
                tgt = src.with_suffix(".tgt")
                if tgt.is_file():
                    en = src.read_text(encoding="utf-8").splitlines()
                    ja = tgt.read_text(encoding="utf-8").splitlines()
                    self.pairs.update(zip(en, ja))
        hit = self.pairs.get(english)
        self.used += hit is not None
        return hit


def main(argv=None) -> int:
    ap = toy.arguments(__doc__)
    ap.add_argument("--no-lookup", action="store_true",
                    help="rules only: no gold lookup for the sentences they cannot parse")
    a = ap.parse_args(argv)
    lexicon = load()
    gold = Gold(None if a.no_lookup else toy.text_folder())
    toy.note(f"SGET rule-based translation, gold lookup "
             f"{'in ' + str(gold.folder) if gold.folder else 'off'}; corrupting {a.corrupt:g}%")

    def japanese(english: str) -> str:
        try:
            return translate(english, lexicon)
        except TranslationError as e:
            hit = gold.get(english)
            toy.note(f"rules failed ({e}); {'gold lookup' if hit is not None else 'no answer'}"
                     f" for {english!r} ({gold.used} looked up so far)")
            return hit if hit is not None else ""

    def translate_batch(inputs: list) -> list[str]:
        out = []
        for english in toy.strings(inputs):
            ja = japanese(english)
            out.append(toy.corrupt_translation(ja, EXTRA) if toy.corrupted(english, a.corrupt)
                       else ja)
        return out

    return toy.serve({"translate": translate_batch})


if __name__ == "__main__":
    sys.exit(main())
