"""The synthetic templates' lexicon: each word's English and Dutch forms.

``lexicon.tsv`` (beside this module) lists one word per line: its category, English
singular and plural, Dutch singular and plural, and the Dutch singular article (``de`` or
``het``; every Dutch plural takes ``de``).  Verbs give the third person singular and the
plural of the present tense.  The words are those of the authors' vocabulary files
(Dankers et al. 2022, Tables 1a and 3), written in our own format.

A user may pass a lexicon of their own (``--lexicon FILE``) in the same format; errors
name the file and line.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import open_text

LEXICON_PATH = Path(__file__).with_name("lexicon.tsv")

NOUNS = ("people", "elite", "group", "vehicle")
VERBS = ("transitive", "stative", "intransitive")
INVARIABLE = ("adverb", "preposition", "pronoun")
CATEGORIES = NOUNS + VERBS + INVARIABLE
HEADER = ("category", "en_singular", "en_plural", "nl_singular", "nl_plural", "article")

SG, PL = "sg", "pl"


@dataclass(frozen=True)
class Word:
    category: str
    en_sg: str
    en_pl: str | None = None
    nl_sg: str = ""
    nl_pl: str | None = None
    article: str | None = None     # Dutch singular article of a noun

    @property
    def key(self) -> str:
        """The word's name: its English singular (a verb's plural, i.e. its stem)."""
        return self.en_pl if self.category in VERBS else self.en_sg

    def en(self, number: str = SG) -> str:
        return self.en_pl if number == PL and self.en_pl else self.en_sg

    def nl(self, number: str = SG) -> str:
        return self.nl_pl if number == PL and self.nl_pl else self.nl_sg

    def nl_article(self, number: str = SG) -> str:
        """``de`` for every plural, the noun's own article in the singular."""
        return "de" if number == PL else (self.article or "de")


@dataclass(frozen=True)
class Lexicon:
    words: tuple[Word, ...]
    origin: str = "lexicon.tsv"

    def of(self, category: str) -> tuple[Word, ...]:
        return tuple(w for w in self.words if w.category == category)

    @functools.cached_property
    def forms(self) -> dict[str, list[tuple[Word, str]]]:
        """English form -> [(word, number)]: ``cycle`` is a verb and ``bikes`` a noun."""
        out: dict[str, list[tuple[Word, str]]] = {}
        for w in self.words:
            numbers = (SG,) if w.category in INVARIABLE else (SG, PL)
            for n in numbers:
                out.setdefault(w.en(n), []).append((w, n))
        return out

    def lookup(self, token: str, category: str) -> tuple[Word, str] | None:
        for w, n in self.forms.get(token, ()):
            if w.category == category:
                return w, n
        return None

    def word(self, category: str, key: str) -> Word:
        for w in self.of(category):
            if w.key == key:
                return w
        raise KeyError(f"no {category} {key!r} in {self.origin}")


def parse(lines, origin: str = "lexicon.tsv") -> Lexicon:
    words, seen, header_seen = [], set(), False
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if not header_seen:
            if tuple(cols) != HEADER:
                raise DataError(f"{origin}: line {n}: expected the header "
                                f"{' '.join(HEADER)!r}, got {line!r}")
            header_seen = True
            continue
        if len(cols) != len(HEADER):
            raise DataError(f"{origin}: line {n}: {len(cols)} columns, expected {len(HEADER)}")
        cat, en_sg, en_pl, nl_sg, nl_pl, article = (c.strip() for c in cols)
        if cat not in CATEGORIES:
            raise DataError(f"{origin}: line {n}: unknown category {cat!r} "
                            f"(one of {', '.join(CATEGORIES)})")
        dash = {"-", ""}
        if cat in INVARIABLE:
            if en_pl not in dash or nl_pl not in dash:
                raise DataError(f"{origin}: line {n}: {cat} {en_sg!r} has one form; write '-' "
                                "in the plural columns")
            en_pl = nl_pl = None
        elif en_pl in dash or nl_pl in dash:
            raise DataError(f"{origin}: line {n}: {cat} {en_sg!r} needs its plural forms")
        if cat in NOUNS:
            if article not in ("de", "het"):
                raise DataError(f"{origin}: line {n}: noun {en_sg!r} needs the Dutch "
                                f"article 'de' or 'het', got {article!r}")
        elif article not in dash:
            raise DataError(f"{origin}: line {n}: only nouns have an article")
        else:
            article = None
        if not (en_sg and nl_sg) or any(" " in f for f in (en_sg, en_pl or "")):
            raise DataError(f"{origin}: line {n}: English forms must be single words")
        w = Word(cat, en_sg, en_pl, nl_sg, nl_pl, article)
        if (cat, w.key) in seen:
            raise DataError(f"{origin}: line {n}: {cat} {w.key!r} listed twice")
        seen.add((cat, w.key))
        words.append(w)
    if not header_seen:
        raise DataError(f"{origin}: no header line")
    missing = [c for c in CATEGORIES if not any(w.category == c for w in words)]
    if missing:
        raise DataError(f"{origin}: no words of the categories {', '.join(missing)}")
    return Lexicon(tuple(words), origin)


@functools.lru_cache(maxsize=None)
def load(path: str | Path = LEXICON_PATH) -> Lexicon:
    path = Path(path)
    try:
        with open_text(path) as fh:
            return parse(fh, origin=str(path))
    except FileNotFoundError:
        raise DataError(f"{path}: lexicon file not found") from None
