"""Selectional restrictions of SGET (Kumon et al. 2024, section 3.2.4) and the animacy
constraints of its grammar.

Two layers decide whether a noun may fill an argument of a verb:

1. **Animacy** (always on; part of the PCFG, as in COGS and SLOG): agents and
   recipients are animate, the theme of a ditransitive is inanimate, and a verb's
   ``subj=``/``obj_class=`` keys of ``lexicon.tsv`` hold (:func:`.lexicon.compatible`).
2. **The compatibility list** (the switch ``restrictions``; off reproduces the paper's
   Table 5 ablation): the verb-noun pairs of ``selectional.tsv``.  As in the paper, it
   is checked for a verb and its direct object (the theme after the verb: transitive
   object, either object position of a ditransitive's theme, the theme of a passive
   double object, and the subject of a passive, which is the verb's direct object)
   and for a verb and an *inanimate* subject (unaccusatives); an animate subject of
   an unaccusative is not checked.  Where
   the paper replaced a noun that violates the list by one from the list, the
   generator draws the noun from the compatible ones in the first place.  A noun that
   is the theme of two verbs (the head of an object relative clause) is drawn for the
   first verb and the relative clause's verb is then drawn among the verbs that accept
   it, so both pairs hold; where no verb does, the sentence keeps the first pair only
   and the generator counts it (the paper's own limitation, "a noun is involved in
   multiple pairs").

``selectional.tsv`` holds the list as noun classes (every common noun of the lexicon
in exactly one, proper nouns being persons), groups of classes and, for every verb
with a theme, the classes it accepts; :func:`pairs` expands it into the explicit
(verb, noun) list.  It also holds the nouns each preposition takes, a grammar
constraint that holds with the switch off too.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from .lexicon import Lexicon, LexiconError, Noun, ProperNoun, Verb, compatible as _animacy
from .lexicon import load as load_lexicon

SELECTION_PATH = Path(__file__).with_name("selectional.tsv")
#: frames whose verb has a theme argument
THEME_FRAMES = frozenset({"trans", "unacc", "dat_to", "dat_do"})
ANY = "any"


@dataclass(frozen=True)
class Selection:
    """The parsed ``selectional.tsv``: noun -> class, verb -> accepted classes,
    preposition -> accepted classes (groups already expanded)."""

    noun_class: Mapping[str, str]
    verbs: Mapping[str, frozenset[str]]
    prepositions: Mapping[str, frozenset[str]]
    classes: tuple[str, ...]

    def class_of(self, noun: Noun | ProperNoun) -> str:
        if isinstance(noun, ProperNoun):
            return "person"
        try:
            return self.noun_class[noun.english]
        except KeyError:
            raise LexiconError(f"noun {noun.english!r} has no class in {SELECTION_PATH.name}")

    def accepts(self, verb: str, noun: Noun | ProperNoun) -> bool:
        """Whether the pair (verb, noun as its theme) is in the compatibility list."""
        wanted = self.verbs.get(verb)
        if wanted is None:
            raise LexiconError(f"verb {verb!r} has no theme classes in {SELECTION_PATH.name}")
        return ANY in wanted or self.class_of(noun) in wanted

    def preposition_accepts(self, prep: str, noun: Noun | ProperNoun) -> bool:
        wanted = self.prepositions.get(prep, frozenset({ANY}))
        return ANY in wanted or self.class_of(noun) in wanted


def parse_lines(lines: Iterable[str], origin: str = "selectional") -> Selection:
    classes: dict[str, list[str]] = {}
    groups: dict[str, list[str]] = {}
    verbs: dict[str, list[str]] = {}
    preps: dict[str, list[str]] = {}
    for n, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3 or fields[0] not in ("C", "G", "V", "P"):
            raise LexiconError(f"{origin}:{n}: expected C|G|V|P<TAB>name<TAB>items")
        kind, name, items = fields[0], fields[1].strip(), fields[2].split()
        table = {"C": classes, "G": groups, "V": verbs, "P": preps}[kind]
        if name in table:
            raise LexiconError(f"{origin}:{n}: {kind} {name!r} is listed twice")
        table[name] = items

    def expand(items: list[str], where: str, seen: tuple[str, ...] = ()) -> frozenset[str]:
        out: set[str] = set()
        for it in items:
            if it == ANY or it in classes:
                out.add(it)
            elif it in groups and it not in seen:
                out |= expand(groups[it], where, seen + (it,))
            else:
                raise LexiconError(f"{origin}: {where}: unknown class or group {it!r}")
        return frozenset(out)

    noun_class: dict[str, str] = {}
    for cls, nouns in classes.items():
        for noun in nouns:
            if noun in noun_class:
                raise LexiconError(f"{origin}: noun {noun!r} is in classes "
                                   f"{noun_class[noun]!r} and {cls!r}")
            noun_class[noun] = cls
    return Selection(noun_class=noun_class,
                     verbs={v: expand(c, f"verb {v!r}") for v, c in verbs.items()},
                     prepositions={p: expand(c, f"preposition {p!r}") for p, c in preps.items()},
                     classes=tuple(classes))


@functools.lru_cache(maxsize=None)
def load(path: str | Path = SELECTION_PATH) -> Selection:
    path = Path(path)
    with path.open(encoding="utf-8") as fh:
        return parse_lines(fh, origin=path.name)


def check(selection: Selection | None = None, lexicon: Lexicon | None = None) -> list[str]:
    """Problems between the list and the lexicon: a common noun without a class (or a
    classified word the lexicon lacks), a verb with a theme frame but no entry."""
    sel, lx = selection or load(), lexicon or load_lexicon()
    problems = [f"noun {n!r} has no class" for n in sorted(set(lx.nouns) - set(sel.noun_class))]
    problems += [f"class member {n!r} is not a noun of the lexicon"
                 for n in sorted(set(sel.noun_class) - set(lx.nouns))]
    problems += [f"verb {v.base!r} has a theme frame but no entry" for v in lx.verbs.values()
                 if v.frames & THEME_FRAMES and v.base not in sel.verbs]
    problems += [f"verb {v!r} is not in the lexicon" for v in sorted(set(sel.verbs) - set(lx.verbs))]
    return problems


def pairs(selection: Selection | None = None, lexicon: Lexicon | None = None
          ) -> list[tuple[str, str]]:
    """The compatibility list: every (verb, noun) pair of the lexicon the list accepts
    (proper nouns included, as persons), sorted."""
    sel, lx = selection or load(), lexicon or load_lexicon()
    nouns = [*lx.nouns.values(), *lx.proper_nouns.values()]
    return sorted((v, n.english) for v in sel.verbs if v in lx.verbs
                  for n in nouns if sel.accepts(v, n))


def compatible(verb: Verb, role: str, noun: Noun | ProperNoun, restrictions: bool = True,
               frame: str | None = None, surface: str = "object") -> bool:
    """May ``noun`` fill ``role`` of ``verb``?

    ``role``: ``agent`` (subject of an agentive frame), ``theme`` or ``recipient``.
    ``frame`` (``trans``, ``dat_to`` ...) adds the ditransitive theme's inanimacy;
    ``surface``: ``subject`` for an unaccusative's subject (the list is checked only
    when it is inanimate), ``object`` for every other theme (direct objects and a
    passive's subject; see the module docstring).  Animacy always holds; the list only with ``restrictions``.
    """
    if role == "agent":
        return _animacy(verb, "subj", noun)
    if role == "recipient":
        return _animacy(verb, "recipient", noun)
    if role != "theme":
        raise ValueError(f"role must be 'agent', 'theme' or 'recipient', not {role!r}")
    if not _animacy(verb, "obj", noun):
        return False
    if frame in ("dat_to", "dat_do") and noun.cls != "inanimate":
        return False
    if not restrictions:
        return True
    if surface == "subject" and noun.cls == "animate":
        return True
    return load().accepts(verb.base, noun)
