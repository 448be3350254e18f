"""What SGET's metrics (:mod:`.metrics`) and its partial match (:mod:`.partial`) both read:
the 42 generalisation patterns as scoring sees them (:data:`PATTERNS`: category, Table 3
group, whether Table 10 reports a partial match and what it checks, from the generator's
table in ``data_prep/sget/patterns.py``) and the normalisation every metric applies to a
sentence first (:func:`normalise`)."""
from __future__ import annotations

import re
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass
from typing import Mapping, Sequence

IN_DISTRIBUTION = "in_distribution"


# ----------------------------------------------------------------------------- patterns
@dataclass(frozen=True)
class PatternInfo:
    name: str
    label: str            # Table 10's wording
    category: str         # Table 1's category
    group: str            # Table 3: "lexical", "lexical+morphological", "structural"
    partial: bool         # Table 10 reports a partial match
    target: str           # what partial match checks: "noun", "verb", "phrase" or "" (none)
    role: str = ""        # phrase patterns: the role of the target phrase ("subj", "iobj", "")
    size: int = 2000      # sentences in the generalisation set (section 4.1.2)


_LEX, _MOR, _STR = "lexical", "lexical+morphological", "structural"
#: Table 3's groups, in its order
GROUPS = (_LEX, _MOR, _STR)

_GROUPS = {"Lexical": _LEX, "Lex. + Mor.": _MOR, "Structural": _STR}
_ROLES = {"modified_subject": "subj", "modified_recipient": "iobj"}


def table_from_generator() -> "OrderedDict[str, PatternInfo]":
    """The generator's pattern table (``data_prep/sget/patterns.py``, the one source of
    truth: names, Table 10 labels, Table 3 groups, sizes) with what partial match
    checks: the target noun (primitive substitution), the target verb (structural and
    tense alternations) or the target phrase and its role (the structural patterns)."""
    from compsuite.data_prep.sget import patterns as G

    out: OrderedDict = OrderedDict()
    for p in G.PATTERNS:
        target, role = "", ""
        if p.partial_match:
            if p.group == G.PRIMITIVE_SUBSTITUTION:
                target = "noun"
            elif p.group in (G.PRIMITIVE_STRUCTURAL_ALTERNATION, G.TENSE_ALTERNATION):
                target = "verb"
            else:
                target, role = "phrase", _ROLES.get(p.builder, "")
        out[p.name] = PatternInfo(p.name, p.label, p.group, _GROUPS[p.table3_group],
                                  p.partial_match, target, role, p.size)
    return out


PATTERNS: "OrderedDict[str, PatternInfo]" = table_from_generator()

def _key(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


def pattern_info(name: str, table: Mapping[str, PatternInfo] = PATTERNS) -> PatternInfo:
    """The table's entry for ``name`` (case, spaces and hyphens ignored); KeyError naming
    the known patterns otherwise."""
    if name in table:
        return table[name]
    by_key = {_key(k): v for k, v in table.items()}
    try:
        return by_key[_key(name)]
    except KeyError:
        raise KeyError(f"unknown SGET pattern {name!r}; known: {', '.join(table)}") from None


def partial_patterns(table: Mapping[str, PatternInfo] = PATTERNS) -> list[str]:
    """The patterns Table 10 scores by partial match (31 in :data:`PATTERNS`)."""
    return [n for n, p in table.items() if p.partial]


def group_of(patterns: Sequence[str], table: Mapping[str, PatternInfo] = PATTERNS,
             in_distribution: str = "in-distribution") -> list[str]:
    """Table 3's group of each line's pattern (``in_distribution`` lines get that label)."""
    return [in_distribution if p == IN_DISTRIBUTION else pattern_info(p, table).group
            for p in patterns]


# ----------------------------------------------------------------------------- normalisation
_WS = re.compile(r"\s+")


def normalise(text: str) -> str:
    """NFKC, then every whitespace character removed (joins BPE pieces as well)."""
    return _WS.sub("", unicodedata.normalize("NFKC", text))
