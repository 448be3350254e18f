#!/usr/bin/env python3
"""The paradox of compositionality (English -> Dutch) as a toy system of the command
protocol: the suite's own rule-based Dutch (compsuite.data_prep.paradox.translate), the
rules the generated corpus and the synthetic test sets are written with.

* ``translate``: an English sentence (a test's ``<test>.en`` line, the corpus's
  ``raw/{split}.src``) -> its Dutch.  Template sentences (and two joined by ``, and``)
  are parsed and realised by the templates' rules, with the clauses the tests attach:
  Table 5's synonym clauses (both terms translate alike) and the generated corpus's four
  idioms (``quick_idioms.tsv``), translated idiomatically as the corpus does, and the
  corpus's other quoted sentences (``that said " I knew the formula by the door "``),
  word by word as the corpus does.  A line
  outside the templates (the overgeneralisation test's random-word lines) is translated
  word by word from the lexicon, a quick idiom by its idiomatic Dutch, other words
  copied.  On the generated data (the tiny and quick profiles) the consistency tests
  score 1.0 (NP -> VP, S -> S CONJ S, substitutivity) and overgeneralisation 0.0.
  Not perfect outside them: Table 7's idioms (the paper profile) have no rule-based
  Dutch (their OPUS sentences are copied word by word, keywords included), and natural
  or semi-natural OPUS sentences are outside the templates.

``--corrupt PERCENT``: a corrupted translation of a line holding a quick idiom renders
the idiom literally (the corpus's word-by-word Dutch of the quoted sentence, which holds
one of the idiom's keywords: it counts as overgeneralised); any other corrupted line is
the correct Dutch with the token ``FOUT`` appended.  So the corrupting program's
overgeneralisation is the corrupted share of the idiom inputs, and a pair of the
consistency tests stays consistent exactly when both or neither of its two inputs is
corrupted (synonym consistency, which looks at the synonym's word only, stays 1.0).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import toy  # noqa: E402

from compsuite.data_prep.paradox import corpus, items, templates as T  # noqa: E402
from compsuite.data_prep.paradox.lexicon import load  # noqa: E402
from compsuite.data_prep.paradox.translate import translate_any  # noqa: E402
from compsuite.foundation.errors import DataError  # noqa: E402

#: the token a corrupted translation (of a line without an idiom) gets appended
EXTRA = "FOUT"
#: a quoted sentence the generated corpus attaches to a noun
QUOTE = re.compile(r'that said " (.+?) "')


class Idiom:
    """A quick idiom: its English words, and its Dutch in the quoted sentence and alone
    (idiomatic and literal)."""

    def __init__(self, q: corpus.QuickIdiom, speech):
        self.words = q.idiom.split()
        literal = corpus.literal_dutch(q.sentence.split(), speech)
        before = q.sentence[:q.sentence.index(q.idiom)].split()
        prefix = corpus.literal_dutch(before, speech).split() if before else []
        self.sentence = {False: q.dutch, True: literal}
        self.alone = {lit: " ".join(s.split()[len(prefix):]) for lit, s in self.sentence.items()}
        en = f'that said " {q.sentence} "'
        self.clause = {lit: T.Clause(en, en, f'zei " {s} "', f'zeiden " {s} "', name=q.idiom)
                       for lit, s in self.sentence.items()}

    def at(self, tokens: list[str], i: int) -> bool:
        return tokens[i:i + len(self.words)] == self.words


class Translator:
    def __init__(self):
        self.lex = load()
        self.speech = corpus.speech_lexicon()
        self.idioms = [Idiom(q, self.speech) for q in corpus.quick_idioms()]
        synonyms = [s.clause(k) for s in items.synonyms() for k in (1, 2)]
        self.clauses = {lit: synonyms + [i.clause[lit] for i in self.idioms]
                        for lit in (False, True)}

    def has_idiom(self, line: str) -> bool:
        tokens = line.split()
        return any(i.at(tokens, k) for i in self.idioms for k in range(len(tokens)))

    def dutch(self, line: str, literal: bool = False) -> str:
        try:
            return translate_any(line, self.lex, self.clauses[literal] + self.quotes(line))
        except DataError:
            return self.word_by_word(line, literal)

    def quotes(self, line: str) -> list[T.Clause]:
        """Clauses for the corpus's other quoted sentences (``that said " I knew the
        formula by the door "``), in its word-by-word Dutch; none for a quote outside the
        speech grammar."""
        out = []
        for quote in QUOTE.findall(line):
            try:
                nl = corpus.literal_dutch(quote.split(), self.speech)
            except DataError:
                continue
            en = f'that said " {quote} "'
            out.append(T.Clause(en, en, f'zei " {nl} "', f'zeiden " {nl} "'))
        return out

    def word_by_word(self, line: str, literal: bool) -> str:
        tokens, out, k = line.split(), [], 0
        while k < len(tokens):
            idiom = next((i for i in self.idioms if i.at(tokens, k)), None)
            if idiom is not None:
                out.append(idiom.alone[literal])
                k += len(idiom.words)
                continue
            forms = self.lex.forms.get(tokens[k]) or self.lex.forms.get(tokens[k].lower())
            out.append(forms[0][0].nl(forms[0][1]) if forms else tokens[k])
            k += 1
        return " ".join(out)

    def answer(self, line: str, percent: float) -> str:
        if not toy.corrupted(line, percent):
            return self.dutch(line)
        if self.has_idiom(line):
            return self.dutch(line, literal=True)
        return toy.corrupt_translation(self.dutch(line), EXTRA)


def main(argv=None) -> int:
    a = toy.arguments(__doc__).parse_args(argv)
    tr = Translator()
    toy.note(f"paradox rule-based Dutch ({len(tr.idioms)} quick idioms); "
             f"corrupting {a.corrupt:g}%")
    return toy.serve({"translate": lambda inputs: [tr.answer(x, a.corrupt)
                                                   for x in toy.strings(inputs)]})


if __name__ == "__main__":
    sys.exit(main())
