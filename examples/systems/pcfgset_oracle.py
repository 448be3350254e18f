#!/usr/bin/env python3
"""PCFG SET as a toy system of the command protocol: the suite's own interpreter
(compsuite.data_prep.pcfgset.grammar.interpret) answers every source, so it is perfect
on the task and on every compositionality test.

* ``translate``: a source (``copy A1 B1``, synonyms ``<function>_twin`` included) -> its
  meaning (``A1 B1``).  Any well-formed expression is interpreted, also the localism
  test's unrolled steps holding the program's own earlier outputs; an input that is not
  a PCFG SET expression gets the empty output (a wrong answer, noted on stderr).
* ``embed``: a function token (or its ``_twin`` synonym, or ``,``) -> a one-hot vector
  over the ten functions and the separator; a synonym has its function's vector
  (Table 5's distance to the synonym is 0, to the other functions 1); other tokens: null.

``--exceptions``: the overgeneralisation test's Table 2 remapping.  ``never`` (the
default) follows the rules everywhere: on the exception inputs every output is the
original (compositional) target, overgeneralisation 1.0, memorisation 0.0.  ``always``
applies the exceptions, as a model that memorised its overgeneralisation training split
would (memorisation 1.0); ``auto`` applies them only when COMPSUITE_DATA is the
overgeneralisation test's data (its manifest says ``test: overgeneralisation``).

``--corrupt PERCENT``: a corrupted translation is the correct one with the token ``X0``
appended (a well-formed symbol no corpus uses, so a corrupted output fed back by the
localism test is still an expression).  Embeddings are never corrupted.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import toy  # noqa: E402

from compsuite.data_prep.pcfgset.grammar import (  # noqa: E402
    FUNCTIONS, SEPARATOR, PCFGSyntaxError, base_function, interpret)

#: the token a corrupted translation gets appended
EXTRA = "X0"
#: the embedding's dimensions
VOCABULARY = (*FUNCTIONS, SEPARATOR)


def uses_exceptions(mode: str) -> bool:
    """Whether to apply Table 2's exceptions (``--exceptions``)."""
    if mode != "auto":
        return mode == "always"
    data = os.environ.get(toy.DATA_VAR)
    manifest = Path(data) / "manifest.json" if data else None
    if manifest is None or not manifest.is_file():
        return False
    args = json.loads(manifest.read_text(encoding="utf-8")).get("args") or {}
    return args.get("test") == "overgeneralisation"


def translator(percent: float, exceptions: bool):
    def translate(inputs: list) -> list[str]:
        outputs = []
        for source in toy.strings(inputs):
            try:
                out = interpret(source, exceptions=exceptions)
            except PCFGSyntaxError as e:
                toy.note(f"not a PCFG SET expression ({e}): {source[:120]!r}")
                out = ""
            outputs.append(toy.corrupt_translation(out, EXTRA)
                           if toy.corrupted(source, percent) else out)
        return outputs
    return translate


def embed(inputs: list) -> list:
    out = []
    for token in toy.strings(inputs):
        name = token if token == SEPARATOR else base_function(token)
        out.append(toy.one_hot(name, VOCABULARY) if name in VOCABULARY else None)
    return out


def main(argv=None) -> int:
    ap = toy.arguments(__doc__)
    ap.add_argument("--exceptions", choices=("never", "always", "auto"), default="never",
                    help="apply the overgeneralisation exceptions of Table 2 (default: never)")
    a = ap.parse_args(argv)
    exceptions = uses_exceptions(a.exceptions)
    toy.note(f"PCFG SET interpreter, exceptions {'on' if exceptions else 'off'}, "
             f"corrupting {a.corrupt:g}%")
    return toy.serve({"translate": translator(a.corrupt, exceptions), "embed": embed})


if __name__ == "__main__":
    sys.exit(main())
