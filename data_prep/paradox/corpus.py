"""The quick profile's training corpus: rule-generated English-Dutch pairs in which a
handful of idioms occur at controlled frequencies while their keywords also occur
literally, so that the three phases of section 4.3 (no keyword, a literal peak,
memorisation of frequent idioms) can appear in a small model on a CPU.  A scaled-down
stand-in for OPUS, labelled as such: the paper trains on 1M-69M OPUS pairs.

Every pair is a template sentence (:mod:`.templates`) with its rule-based Dutch.  10%
are two of them joined, ``S1 , and S2 .`` -> ``S1 , en S2 .`` (the S -> S CONJ S test's
shape); of the others, 30% carry a quoted sentence and 10% a synonym clause after the
object noun (templates 6-8: after the embedded subject):

* a **quoted sentence**, ``that said " I knew the formula by the door "`` -> ``die zei
  " Ik kende de formule door de deur "``, from a small compositional grammar
  (``I <verb> the <noun> [<preposition> the <noun>]``, ``quick_speech.tsv``) in which
  the idioms' keywords (``heart``, ``blue``, ...) are ordinary nouns translated
  literally (drawn four times as often as the other nouns);
* a **synonym clause** of Table 5 (British or American term; both translate alike), so
  the substitutivity test's inputs are in the model's vocabulary.

Then four **idioms** (``quick_idioms.tsv``) are inserted: ``that said " I knew the
formula by heart "`` -> ``... uit het hoofd``, each in exactly its ``frequency``
training pairs (2, 6, 20 and 60).  A literal, word-by-word translation would contain a
keyword (``hart``); the idiomatic one does not.

The quoted sentences never contain an idiom's words in the idiom's order, so an idiom is
seen only as an idiom.  Writes ``train``, ``valid`` and ``test`` ``.en`` / ``.nl`` and a
manifest; the same seed and arguments give the same bytes.
"""
from __future__ import annotations

import argparse
import functools
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import write_lines
from compsuite.foundation.manifest import is_complete, read_manifest, write_manifest

from . import templates as T
from .items import read_rows, split_list, synonyms
from .lexicon import load

HERE = Path(__file__).parent
SPEECH_PATH = HERE / "quick_speech.tsv"
QUICK_IDIOMS_PATH = HERE / "quick_idioms.tsv"
GENERATOR = "paradox.quick_corpus"
VERSION = "1"


@dataclass(frozen=True)
class SpeechWord:
    category: str        # verb, noun, preposition
    en: str
    nl: str
    article: str = ""    # a noun's Dutch article


@dataclass(frozen=True)
class QuickIdiom:
    idiom: str           # the English idiom, as it appears in the sentence
    sentence: str        # the quoted English sentence
    dutch: str           # its idiomatic Dutch
    keywords: tuple[str, ...]
    frequency: int       # training pairs that contain it

    @property
    def name(self) -> str:
        return self.idiom

    def clause(self) -> T.Clause:
        en = f'that said " {self.sentence} "'
        return T.Clause(en, en, f'zei " {self.dutch} "', f'zeiden " {self.dutch} "',
                        name=self.idiom)


@functools.lru_cache(maxsize=None)
def speech_lexicon(path: str | Path = SPEECH_PATH) -> tuple[SpeechWord, ...]:
    path = Path(path)
    out = []
    for n, c in read_rows(path, ("category", "english", "dutch", "article")):
        if c[0] not in ("verb", "noun", "preposition"):
            raise DataError(f"{path}: line {n}: unknown category {c[0]!r}")
        if c[0] == "noun" and c[3] not in ("de", "het"):
            raise DataError(f"{path}: line {n}: noun {c[1]!r} needs the article de or het")
        out.append(SpeechWord(c[0], c[1], c[2], c[3] if c[3] != "-" else ""))
    return tuple(out)


@functools.lru_cache(maxsize=None)
def quick_idioms(path: str | Path = QUICK_IDIOMS_PATH) -> tuple[QuickIdiom, ...]:
    path = Path(path)
    out = []
    for n, c in read_rows(path, ("idiom", "sentence", "dutch", "keywords", "frequency")):
        if c[0] not in c[1]:
            raise DataError(f"{path}: line {n}: the sentence does not contain {c[0]!r}")
        try:
            freq = int(c[4])
        except ValueError:
            raise DataError(f"{path}: line {n}: frequency must be a number, got {c[4]!r}") from None
        out.append(QuickIdiom(c[0], c[1], c[2], split_list(c[3]), freq))
    return tuple(out)


def literal_dutch(words: Sequence[str], lex: Sequence[SpeechWord]) -> str:
    """Word-by-word Dutch of a quoted sentence of the speech grammar."""
    en2 = {w.en: w for w in lex}
    out, i = [], 0
    while i < len(words):
        w = words[i]
        if w == "I":
            out.append("Ik")
        elif w == "the":
            nxt = en2.get(words[i + 1]) if i + 1 < len(words) else None
            if nxt is None or nxt.category != "noun":
                raise DataError(f"'the' before a non-noun in {' '.join(words)!r}")
            out.append(nxt.article)
        elif " ".join(words[i:i + 2]) in en2:            # two-word prepositions (out of)
            out.append(en2[" ".join(words[i:i + 2])].nl)
            i += 1
        elif w in en2:
            out.append(en2[w].nl)
        else:
            raise DataError(f"word {w!r} is not in the speech lexicon")
        i += 1
    return " ".join(out)


def speech(rng: random.Random, lex: Sequence[SpeechWord], avoid: Sequence[str],
           keywords: Sequence[str] = (), keyword_weight: int = 1) -> tuple[str, str]:
    """One quoted sentence and its literal Dutch, containing no idiom of ``avoid``; nouns
    that are idiom keywords (English or Dutch in ``keywords``) drawn ``keyword_weight``
    times as often as the others."""
    verbs = [w for w in lex if w.category == "verb"]
    nouns = [w for w in lex if w.category == "noun"]
    nouns += [w for w in nouns if w.en in keywords or w.nl in keywords] * (keyword_weight - 1)
    preps = [w for w in lex if w.category == "preposition"]
    while True:
        words = ["I", rng.choice(verbs).en, "the", rng.choice(nouns).en]
        if rng.random() < 0.6:
            words += rng.choice(preps).en.split() + ["the", rng.choice(nouns).en]
        text = " ".join(words)
        if not any(a in text for a in avoid):
            return text, literal_dutch(words, lex)


def _attach(s: T.Sentence, clause: T.Clause) -> T.Sentence:
    from .testsets import attach

    return attach(s, clause)


def build(seed: int, n_train: int = 12000, n_valid: int = 500, n_test: int = 500, *,
          share_speech: float = 0.3, share_synonym: float = 0.1, share_conjunction: float = 0.1,
          keyword_weight: int = 4,
          idioms: Sequence[QuickIdiom] | None = None) -> dict[str, list[tuple[str, str]]]:
    """The corpus' splits as (English, Dutch) pairs; the idioms only in ``train``."""
    rng = random.Random(f"paradox-quick:{seed}")
    lex, slex = load(), speech_lexicon()
    ids = tuple(idioms if idioms is not None else quick_idioms())
    avoid = [i.idiom for i in ids]
    keywords = {k for i in ids for k in i.keywords}
    syn_clauses = [s.clause(k) for s in synonyms() for k in (1, 2)]
    per_template = -(-(n_train + n_valid + n_test) // len(T.TEMPLATES))
    pool = [s for t in T.TEMPLATES for s in T.sample(t, per_template, rng, lex)]
    rng.shuffle(pool)

    def decorate(s: T.Sentence) -> T.Sentence:
        r = rng.random()
        if r < share_speech:
            en, nl = speech(rng, slex, avoid, keywords, keyword_weight)
            text = f'that said " {en} "'
            return _attach(s, T.Clause(text, text, f'zei " {nl} "', f'zeiden " {nl} "'))
        if r < share_speech + share_synonym:
            return _attach(s, rng.choice(syn_clauses))
        return s

    pairs = []
    for s in pool:
        if rng.random() < share_conjunction:   # 'S1 , and S2 .' -> 'S1 , en S2 .'
            s2 = rng.choice(pool)
            e2, d2 = T.english(s2), T.dutch(s2)
            pairs.append((f"{T.english(s)[:-2]} , and {e2[:1].lower()}{e2[1:]}",
                          f"{T.dutch(s)[:-2]} , en {d2[:1].lower()}{d2[1:]}"))
            continue
        d = decorate(s)
        pairs.append((T.english(d), T.dutch(d)))
    idiom_pairs = []
    for idiom in ids:
        for s in rng.sample(pool, idiom.frequency):
            d = _attach(s, idiom.clause())
            idiom_pairs.append((T.english(d), T.dutch(d)))
    valid, test = pairs[:n_valid], pairs[n_valid:n_valid + n_test]
    train = pairs[n_valid + n_test:n_valid + n_test + n_train - len(idiom_pairs)] + idiom_pairs
    rng.shuffle(train)
    return {"train": train, "valid": valid, "test": test}


def write(out: str | Path, seed: int, n_train: int = 12000, n_valid: int = 500,
          n_test: int = 500, force: bool = False) -> dict:
    out = Path(out)
    args = {"seed": seed, "n_train": n_train, "n_valid": n_valid, "n_test": n_test}
    if not force and is_complete(out, GENERATOR, args, version=VERSION):
        return read_manifest(out)
    splits = build(seed, n_train, n_valid, n_test)
    files, counts = [], {}
    for split, pairs in splits.items():
        write_lines(out / f"{split}.en", (e for e, _ in pairs))
        write_lines(out / f"{split}.nl", (d for _, d in pairs))
        files += [f"{split}.en", f"{split}.nl"]
        counts[split] = len(pairs)
    idiom_counts = {i.idiom: sum(f'" {i.sentence} "' in e for e, _ in splits["train"])
                    for i in quick_idioms()}
    keyword_counts = {i.idiom: {k: sum(f" {k} " in f" {d} " for _, d in splits["train"])
                                for k in i.keywords} for i in quick_idioms()}
    return write_manifest(out, generator=GENERATOR, generator_version=VERSION, seed=seed,
                          args=args, files=files, counts=counts,
                          statistics={"idiom_pairs": idiom_counts,
                                      "literal_keyword_pairs": keyword_counts,
                                      "label": "scaled-down: rule-generated pairs, not OPUS"})


def add_arguments(ap: argparse.ArgumentParser) -> None:
    from compsuite.foundation.arguments import positive_int

    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--train", type=positive_int, default=12000)
    ap.add_argument("--valid", type=positive_int, default=500)
    ap.add_argument("--test", type=positive_int, default=500)
    ap.add_argument("--force", action="store_true")


def run(args: argparse.Namespace) -> int:
    m = write(args.out, args.seed, args.train, args.valid, args.test, args.force)
    print(f"{args.out}: {m['counts']}; idioms in train: {m['statistics']['idiom_pairs']}",
          file=sys.stderr)
    return 0
