#!/usr/bin/env python3
"""CTL++ as a toy system of the command protocol: an interpreter of the dataset's own
function tables, so it classifies every composition correctly.

The tables come from the manifest of the dataset being evaluated
(``$COMPSUITE_DATA/manifest.json``: ``symbols``, and ``functions``, where
``functions[f][i]`` is f applied to ``symbols[i]``), the tables the generator drew and
computed every target with; each variant (A, R, every S cell) and seed has its own.

* ``classify``: ``g f x`` (functions, then a symbol; the function next to the symbol is
  applied first) -> the resulting symbol.  Any composition of the dataset's functions is
  answered, so the IID and OOD tests and the compatibility matrix (every ``g f x``) all
  score 1.0.  An unknown function or symbol is an error.
* ``features``: the one-hot vector of the answer over the manifest's symbols (in the
  manifest's order): the representation analysis sees every ``f x`` with the same
  result as the same vector.

``--corrupt PERCENT``: a corrupted answer is the next symbol in the sorted symbol set
(sorted as strings: ``"10"`` before ``"2"``; after the last, the first); its features are
the corrupted answer's one-hot vector.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import toy  # noqa: E402


class Tables:
    """The dataset's function tables."""

    def __init__(self, raw: Path):
        path = raw / "manifest.json"
        if not path.is_file():
            raise SystemExit(f"{path}: no such file (COMPSUITE_DATA must be a CTL++ raw folder)")
        m = json.loads(path.read_text(encoding="utf-8"))
        if not {"symbols", "functions"} <= set(m):
            raise SystemExit(f"{path}: no 'symbols' and 'functions' (not a CTL++ dataset)")
        self.symbols: list[str] = [str(s) for s in m["symbols"]]
        index = {s: i for i, s in enumerate(self.symbols)}
        self.table = {f: {x: str(out[index[x]]) for x in self.symbols}
                      for f, out in m["functions"].items()}

    def apply(self, text: str) -> str:
        *functions, symbol = text.split() or [""]
        if symbol not in self.symbols:
            raise toy.RequestError(f"{text!r}: {symbol!r} is not a symbol of the dataset")
        for f in reversed(functions):   # the function next to the symbol first
            if f not in self.table:
                raise toy.RequestError(f"{text!r}: {f!r} is not a function of the dataset")
            symbol = self.table[f][symbol]
        return symbol


def main(argv=None) -> int:
    a = toy.arguments(__doc__).parse_args(argv)
    tables = Tables(toy.data_folder())
    toy.note(f"CTL++ tables: {len(tables.table)} functions, {len(tables.symbols)} symbols; "
             f"corrupting {a.corrupt:g}%")

    def classify(inputs: list) -> list[str]:
        out = []
        for text in toy.strings(inputs):
            answer = tables.apply(text)
            if toy.corrupted(text, a.corrupt):
                answer = toy.next_class(answer, tables.symbols)
            out.append(answer)
        return out

    def features(inputs: list) -> list[list[float]]:
        return [toy.one_hot(c, tables.symbols) for c in classify(inputs)]

    return toy.serve({"classify": classify, "features": features})


if __name__ == "__main__":
    sys.exit(main())
