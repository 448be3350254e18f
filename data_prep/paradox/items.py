"""The test items: the 20 synonym pairs (``synonyms.tsv``, Table 5) and the 20 idioms
(``idioms.tsv``, Table 7), in the paper's order (the index ``i`` of the released natural
files ``{i}-1.en`` / ``{i}.en`` is a row number here, from 0)."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import open_text

from .templates import Clause

HERE = Path(__file__).parent
SYNONYMS_PATH = HERE / "synonyms.tsv"
IDIOMS_PATH = HERE / "idioms.tsv"


@dataclass(frozen=True)
class Synonym:
    british: str
    american: str
    dutch: str
    clause_sg: str
    clause_pl: str
    dutch_clause_sg: str
    dutch_clause_pl: str
    dutch_forms: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.british

    def clause(self, which: int) -> Clause:
        """The clause with the British (``which=1``) or the American (``2``) term."""
        term = (self.british, self.american)[which - 1]
        return Clause(self.clause_sg.format(term), self.clause_pl.format(term),
                      self.dutch_clause_sg, self.dutch_clause_pl, name=f"{self.name}-{which}",
                      relative=self.clause_sg.startswith("that "))

    @property
    def forms(self) -> tuple[str, ...]:
        """Every form that counts as the synonym's translation: the Dutch forms and the
        English terms themselves (a copied source word)."""
        return tuple(dict.fromkeys(self.dutch_forms + (self.british, self.american)))


@dataclass(frozen=True)
class Idiom:
    idiom: str
    english_keywords: tuple[str, ...]
    dutch_keywords: tuple[str, ...]
    sentence: str

    @property
    def name(self) -> str:
        return self.idiom

    @property
    def keywords(self) -> tuple[str, ...]:
        """The words whose presence marks a literal translation: the Dutch keyword set,
        as the authors' evaluation uses it (it already holds the copied English forms
        they saw, e.g. ``scratch``, ``board``; the English keywords alone, e.g.
        ``while``, are not checked)."""
        return self.dutch_keywords

    def clause(self) -> Clause:
        text = f'that said " {self.sentence} "'
        return Clause(text, text, None, None, name=self.idiom)


def read_rows(path: Path, header: tuple[str, ...]):
    """The rows of a tab-separated item table after its ``header`` line (blank lines and
    ``#`` comments skipped): ``(line number, stripped columns)``; a wrong header or
    column count is an error naming the file and line."""
    seen = False
    with open_text(path) as fh:
        for n, raw in enumerate(fh, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.split("\t")
            if not seen:
                if tuple(cols) != header:
                    raise DataError(f"{path}: line {n}: expected the header {' '.join(header)!r}")
                seen = True
                continue
            if len(cols) != len(header):
                raise DataError(f"{path}: line {n}: {len(cols)} columns, expected {len(header)}")
            yield n, [c.strip() for c in cols]


def split_list(value: str) -> tuple[str, ...]:
    """A comma-separated cell as its stripped, non-empty items."""
    return tuple(v.strip() for v in value.split(",") if v.strip())


@functools.lru_cache(maxsize=None)
def synonyms(path: str | Path = SYNONYMS_PATH) -> tuple[Synonym, ...]:
    path = Path(path)
    out = []
    header = ("british", "american", "dutch", "clause_sg", "clause_pl", "dutch_clause_sg",
              "dutch_clause_pl", "dutch_forms")
    for n, c in read_rows(path, header):
        if "{}" not in c[3] or "{}" not in c[4]:
            raise DataError(f"{path}: line {n}: a clause must hold {{}} for the synonym")
        out.append(Synonym(*c[:7], dutch_forms=split_list(c[7])))
    return tuple(out)


@functools.lru_cache(maxsize=None)
def idioms(path: str | Path = IDIOMS_PATH) -> tuple[Idiom, ...]:
    path = Path(path)
    out = []
    for n, c in read_rows(path, ("idiom", "english_keywords", "dutch_keywords", "sentence")):
        if c[0].lower() not in c[3].lower():
            raise DataError(f"{path}: line {n}: the sentence does not contain {c[0]!r}")
        out.append(Idiom(c[0], split_list(c[1]), split_list(c[2]), c[3]))
    return tuple(out)
