"""The ten synthetic templates (Dankers et al. 2022, Tables 1a and 3), their English and
their rule-based Dutch, and a parser that reads a template sentence back.

A sentence is a :class:`Sentence`: its template number and the words in its slots, each
noun phrase an :class:`NP` (noun, number, and optionally a relative clause attached to it
by a test, :class:`Clause`).  :func:`english` and :func:`dutch` realise it; :func:`parse`
reads English back (and fails naming the word or the slot it could not fill), so
``dutch(parse(line))`` is the rule-based translation of any template sentence.

The Dutch rules (doc.md has worked examples):

* main clauses are verb-second: subject, finite verb, then an adverb, then the object
  (``De schilder begrijpt voorzichtig de directeur .``);
* subordinate clauses are verb-final, an adverb before the verb
  (``... dat de schilders zeker huilen .``);
* relative clauses take ``dat`` after a singular *het*-noun and ``die`` otherwise, are
  verb-final, and a comma closes one that is followed by a verb
  (``Het meisje dat lacht , bewondert de president .``);
* articles come from each noun's entry (``de`` for every plural), the quantity noun of
  template 5 is followed by ``van`` and a bare plural (``Het team van slagers``), the
  coordinated subject of template 4 takes a plural verb, and the first letter is a capital.

The authors' released Dutch has one known defect: template 9 with a singular *het*-noun
subject reads ``Het meisje die dat , ...`` (the relative pronoun ``die``, then ``dat``
where the verb should be).  We write the grammatical form; :func:`released_defect` tells
such released lines apart so a comparison can flag and count them.
"""
from __future__ import annotations

import functools
import itertools
import random
from dataclasses import dataclass, replace

from compsuite.foundation.errors import DataError

from .lexicon import PL, SG, Lexicon, Word, load

TEMPLATES = tuple(range(1, 11))

#: Each template's shape, as Table 1a writes it.
SHAPES = {
    1: "The Npeople V the Nsl-elite .",
    2: "The Npeople Adv V the Nsl-elite .",
    3: "The Npeople P the Nsl-vehicle V the Nsl-elite .",
    4: "The Npeople and the Npeople Vpl the Nsl-elite .",
    5: "The Nsl-quantity of Npl-people P the Nsl-vehicle Vsl the Nsl-elite .",
    6: "The Npeople Vstative that the Npl-people Vpl-intransitive .",
    7: "The Npeople Adv Vstative that the Npl-people Vpl-intransitive .",
    8: "The Npeople Vstative that the Npl-people Vpl-intransitive Adv .",
    9: "The Npeople that Vintransitive V the Nsl-elite .",
    10: "The Npeople that V Pro V the Nsl-elite .",
}


class TemplateError(DataError):
    """An English sentence the templates cannot read."""


@dataclass(frozen=True)
class Clause:
    """A relative clause a test attaches to a noun phrase (a synonym's or an idiom's):
    English and Dutch after a singular and after a plural head.  ``nl`` is ``None`` when
    the clause has no rule-based Dutch (then :func:`dutch` refuses the sentence)."""
    en_sg: str
    en_pl: str
    nl_sg: str | None = None
    nl_pl: str | None = None
    name: str = ""
    relative: bool = True          # a relative clause (die/dat first) or a PP ("met ...")

    def en(self, number: str) -> str:
        return self.en_pl if number == PL else self.en_sg

    def nl(self, number: str) -> str | None:
        return self.nl_pl if number == PL else self.nl_sg


@dataclass(frozen=True)
class NP:
    noun: Word
    number: str = SG
    clause: Clause | None = None


@dataclass(frozen=True)
class Sentence:
    template: int
    subj: NP                        # the head noun phrase (T5: the quantity noun)
    verb: Word                      # the main verb
    obj: NP | None = None           # the elite object (not in T6-8)
    adv: Word | None = None         # T2, T7, T8
    prep: Word | None = None        # T3, T5
    vehicle: NP | None = None       # T3, T5
    subj2: NP | None = None         # T4: the second conjunct; T5: the bare plural
    emb_subj: NP | None = None      # T6-8: the embedded subject
    emb_verb: Word | None = None     # T6-8 embedded verb; T9 and T10 the relative clause's
    pron: Word | None = None        # T10
    question_verb: bool = False     # the main verb in its bare form (after 'Did')

    def with_np(self, slot: str, np: NP) -> "Sentence":
        return replace(self, **{slot: np})


# ----------------------------------------------------------------------------- English
def _en_np(np: NP, *, article: bool = True) -> list[str]:
    out = (["the"] if article else []) + [np.noun.en(np.number)]
    if np.clause is not None:
        out += np.clause.en(np.number).split()
    return out


def _en_verb(v: Word, number: str) -> str:
    return v.en(number)


def _main(s: Sentence, number: str) -> str:
    """The main verb: agreeing, or its bare form (the plural) in a question."""
    return s.verb.en(PL if s.question_verb else number)


def english_tokens(s: Sentence, question: bool = False) -> list[str]:
    """The sentence's words; ``question=True`` gives the yes/no question
    (``Did the poet criticise the king ?``: ``Did`` and the main verb's bare form)."""
    t, n = s.template, s.subj.number
    if question:
        return ["Did"] + [w if i else w.lower() for i, w in
                          enumerate(english_tokens(replace(s, question_verb=True))[:-1])] + ["?"]
    if t in (1, 2, 3):
        out = _en_np(s.subj)
        if t == 2:
            out += [s.adv.en()]
        if t == 3:
            out += [s.prep.en()] + _en_np(s.vehicle)
        out += [_main(s, n)] + _en_np(s.obj)
    elif t == 4:
        out = _en_np(s.subj) + ["and"] + _en_np(s.subj2) + [_main(s, PL)] + _en_np(s.obj)
    elif t == 5:
        out = (_en_np(s.subj) + ["of"] + _en_np(s.subj2, article=False) + [s.prep.en()]
               + _en_np(s.vehicle) + [_main(s, n)] + _en_np(s.obj))
    elif t in (6, 7, 8):
        out = _en_np(s.subj) + ([s.adv.en()] if t == 7 else []) + [_main(s, n), "that"]
        out += _en_np(s.emb_subj) + [_en_verb(s.emb_verb, s.emb_subj.number)]
        out += [s.adv.en()] if t == 8 else []
    elif t == 9:
        out = _en_np(s.subj) + ["that", _en_verb(s.emb_verb, n), _main(s, n)] + _en_np(s.obj)
    elif t == 10:
        out = (_en_np(s.subj) + ["that", _en_verb(s.emb_verb, n), s.pron.en(), _main(s, n)]
               + _en_np(s.obj))
    else:
        raise ValueError(f"no template {t}")
    out[0] = out[0][:1].upper() + out[0][1:]
    return out + ["."]


def english(s: Sentence) -> str:
    return " ".join(english_tokens(s))


# ----------------------------------------------------------------------------- Dutch
def relative_pronoun(np: NP) -> str:
    """``dat`` after a singular *het*-noun, ``die`` otherwise."""
    return "dat" if np.number == SG and np.noun.nl_article(SG) == "het" else "die"


def _nl_np(np: NP, *, before_verb: bool = False, article: bool = True) -> list[str]:
    out = ([np.noun.nl_article(np.number)] if article else []) + [np.noun.nl(np.number)]
    if np.clause is not None:
        nl = np.clause.nl(np.number)
        if nl is None:
            raise TemplateError(f"the clause {np.clause.en(np.number)!r} has no Dutch")
        out += ([relative_pronoun(np)] if np.clause.relative else []) + nl.split()
        if before_verb and np.clause.relative:
            out.append(",")
    return out


def dutch_tokens(s: Sentence) -> list[str]:
    t, n = s.template, s.subj.number
    obj = _nl_np(s.obj) if s.obj is not None else []
    if t in (1, 2, 3):
        out = _nl_np(s.subj, before_verb=t != 3)
        if t == 3:
            out += [s.prep.nl()] + _nl_np(s.vehicle, before_verb=True)
        out += [s.verb.nl(n)] + ([s.adv.nl()] if t == 2 else []) + obj
    elif t == 4:
        out = _nl_np(s.subj) + ["en"] + _nl_np(s.subj2, before_verb=True) + [s.verb.nl(PL)] + obj
    elif t == 5:
        out = (_nl_np(s.subj) + ["van"] + _nl_np(s.subj2, article=False) + [s.prep.nl()]
               + _nl_np(s.vehicle, before_verb=True) + [s.verb.nl(n)] + obj)
    elif t in (6, 7, 8):
        out = _nl_np(s.subj, before_verb=True) + [s.verb.nl(n)]
        out += ([s.adv.nl()] if t == 7 else []) + ["dat"]
        out += _nl_np(s.emb_subj, before_verb=True) + ([s.adv.nl()] if t == 8 else [])
        out += [s.emb_verb.nl(s.emb_subj.number)]
    elif t == 9:
        out = _nl_np(s.subj) + [relative_pronoun(s.subj), s.emb_verb.nl(n), ",", s.verb.nl(n)] + obj
    elif t == 10:
        out = (_nl_np(s.subj) + [relative_pronoun(s.subj), s.pron.nl(), s.emb_verb.nl(n), ",",
                                 s.verb.nl(n)] + obj)
    else:
        raise ValueError(f"no template {t}")
    out[0] = out[0][:1].upper() + out[0][1:]
    return out + ["."]


def dutch(s: Sentence) -> str:
    return " ".join(dutch_tokens(s))


def released_defect(english_line: str, released_dutch: str, ours: str) -> bool:
    """Whether a released Dutch line differs from ours only by the known template-9
    defect: ``die dat ,`` where the relative clause should be (``dat <verb> ,``)."""
    rel, our = released_dutch.split(), ours.split()
    if "die dat ," not in released_dutch or len(rel) != len(our):
        return False
    i = rel.index("die")
    return (rel[:i] == our[:i] and rel[i:i + 3] == ["die", "dat", ","] and our[i] == "dat"
            and rel[i + 3:] == our[i + 3:])


# ----------------------------------------------------------------------------- parsing
#: Each template as slots: literal words, or (kind, slot, category[, number]) where kind
#: is ``np`` (article + noun [+ clause]), ``bare`` (noun), ``v`` (verb) or ``w`` (word).
PATTERNS = {
    1: [("np", "subj", "people"), ("v", "verb", "transitive"), ("np", "obj", "elite")],
    2: [("np", "subj", "people"), ("w", "adv", "adverb"), ("v", "verb", "transitive"),
        ("np", "obj", "elite")],
    3: [("np", "subj", "people"), ("w", "prep", "preposition"), ("np", "vehicle", "vehicle"),
        ("v", "verb", "transitive"), ("np", "obj", "elite")],
    4: [("np", "subj", "people"), "and", ("np", "subj2", "people"), ("v", "verb", "transitive"),
        ("np", "obj", "elite")],
    5: [("np", "subj", "group"), "of", ("bare", "subj2", "people"), ("w", "prep", "preposition"),
        ("np", "vehicle", "vehicle"), ("v", "verb", "transitive"), ("np", "obj", "elite")],
    6: [("np", "subj", "people"), ("v", "verb", "stative"), "that", ("np", "emb_subj", "people"),
        ("v", "emb_verb", "intransitive")],
    7: [("np", "subj", "people"), ("w", "adv", "adverb"), ("v", "verb", "stative"), "that",
        ("np", "emb_subj", "people"), ("v", "emb_verb", "intransitive")],
    8: [("np", "subj", "people"), ("v", "verb", "stative"), "that", ("np", "emb_subj", "people"),
        ("v", "emb_verb", "intransitive"), ("w", "adv", "adverb")],
    9: [("np", "subj", "people"), "that", ("v", "emb_verb", "intransitive"),
        ("v", "verb", "transitive"), ("np", "obj", "elite")],
    10: [("np", "subj", "people"), "that", ("v", "emb_verb", "transitive"),
         ("w", "pron", "pronoun"), ("v", "verb", "transitive"), ("np", "obj", "elite")],
}

_KIND_NAMES = {"people": "a person noun", "elite": "an elite noun", "group": "a quantity noun",
               "vehicle": "a vehicle noun", "transitive": "a transitive verb",
               "stative": "a verb taking a that-clause", "intransitive": "an intransitive verb",
               "adverb": "an adverb", "preposition": "a preposition", "pronoun": "a pronoun"}


def _match(pattern, tokens, lex: Lexicon, clauses):
    """Match tokens (final '.' removed) against one pattern.  Returns (slots, None) or
    (None, (position reached, what was expected))."""
    slots, i = {}, 0
    for el in pattern:
        if isinstance(el, str):
            if i < len(tokens) and tokens[i] == el:
                i += 1
                continue
            return None, (i, repr(el))
        kind, slot, cat = el
        if kind == "np":
            if not (i < len(tokens) and tokens[i].lower() == "the"):
                return None, (i, "'the'")
            i += 1
        hit = lex.lookup(tokens[i], cat) if i < len(tokens) else None
        if hit is None:
            return None, (i, _KIND_NAMES[cat])
        word, number = hit
        i += 1
        if kind in ("np", "bare"):
            clause = None
            for c in clauses:
                words = c.en(number).split()
                if tokens[i:i + len(words)] == words:
                    clause, i = c, i + len(words)
                    break
            slots[slot] = NP(word, number, clause)
        elif kind == "v":
            slots[slot] = (word, number)
        else:
            slots[slot] = word
    if i != len(tokens):
        return None, (i, "the end of the sentence")
    return slots, None


def _agree(template: int, slots: dict, line: str) -> Sentence:
    def need(verb_slot, number, who):
        word, got = slots[verb_slot]
        if got != number:
            raise TemplateError(f"{line!r}: the verb {word.en(got)!r} does not agree with "
                                f"{who} (expected {word.en(number)!r})")
        return word

    subj = slots["subj"]
    fields = {k: v for k, v in slots.items() if not isinstance(v, tuple)}
    if template == 4:
        fields["verb"] = need("verb", PL, "the coordinated subject")
    else:
        fields["verb"] = need("verb", subj.number, f"the subject 'the {subj.noun.en(subj.number)}'")
    if "emb_verb" in slots:
        if template in (6, 7, 8):
            emb = slots["emb_subj"]
            fields["emb_verb"] = need("emb_verb", emb.number,
                                      f"the subject 'the {emb.noun.en(emb.number)}'")
        else:
            fields["emb_verb"] = need("emb_verb", subj.number,
                                      f"the relative clause's head 'the {subj.noun.en(subj.number)}'")
    if template == 5 and slots["subj2"].number != PL:
        raise TemplateError(f"{line!r}: 'of' takes a plural noun, got "
                            f"{slots['subj2'].noun.en(SG)!r}")
    return Sentence(template, **fields)


def parse(line: str, lex: Lexicon | None = None, clauses=()) -> Sentence:
    """Read one template sentence (space-separated, ending in ``.``).  ``clauses`` are the
    relative clauses a test may have attached to a noun phrase.  Raises
    :class:`TemplateError` naming an unknown word, or the word where the best-matching
    template stopped and what it expected there."""
    lex = lex or load()
    tokens = line.split()
    if not tokens or tokens[-1] != ".":
        raise TemplateError(f"{line!r}: a template sentence ends in ' .'")
    tokens = tokens[:-1]
    if tokens:
        tokens[0] = tokens[0][:1].lower() + tokens[0][1:]
    known = {"the", "and", "of", "that"} | set(lex.forms)
    known |= {w for c in clauses for n in (SG, PL) for w in c.en(n).split()}
    for k, tok in enumerate(tokens):
        if tok not in known:
            raise TemplateError(f"{line!r}: unknown word {tok!r} (word {k + 1}), not in "
                                f"{lex.origin}")
    best = (-1, "", 0)
    for t in TEMPLATES:
        slots, fail = _match(PATTERNS[t], tokens, lex, clauses)
        if slots is not None:
            return _agree(t, slots, line)
        if fail[0] > best[0]:
            best = (fail[0], fail[1], t)
    pos, expected, t = best
    got = repr(tokens[pos]) if pos < len(tokens) else "the end of the sentence"
    raise TemplateError(f"{line!r}: fits no template; the closest, template {t} "
                        f"({SHAPES[t]}), expected {expected} at word {pos + 1}, got {got}")


def translate(line: str, lex: Lexicon | None = None, clauses=()) -> str:
    """The rule-based Dutch of one English template sentence."""
    return dutch(parse(line, lex, clauses))


# ----------------------------------------------------------------------------- sampling
def _nps(words, numbers=(SG, PL)):
    return [NP(w, n) for w in words for n in numbers]


def space(template: int, lex: Lexicon | None = None) -> tuple[Sentence, ...]:
    """Every sentence of a template, in a fixed order: subjects of either number, the
    elite object and the vehicle singular, the embedded subject plural; the two nouns of
    template 4 are different words of one number, the subject and embedded subject of
    templates 6-8 different words, and template 10's two verbs different verbs (as in
    every released line)."""
    return _space(template, lex or load())


@functools.lru_cache(maxsize=32)
def _space(template: int, lex: Lexicon) -> tuple[Sentence, ...]:
    people, elite = lex.of("people"), _nps(lex.of("elite"), (SG,))
    subjects, vehicles = _nps(people), _nps(lex.of("vehicle"), (SG,))
    trans, stative, intrans = lex.of("transitive"), lex.of("stative"), lex.of("intransitive")
    advs, preps, prons = lex.of("adverb"), lex.of("preposition"), lex.of("pronoun")
    plural_people = _nps(people, (PL,))
    S = Sentence
    if template == 1:
        it = (S(1, s, v, o) for s, v, o in itertools.product(subjects, trans, elite))
    elif template == 2:
        it = (S(2, s, v, o, adv=a) for s, a, v, o in itertools.product(subjects, advs, trans, elite))
    elif template == 3:
        it = (S(3, s, v, o, prep=p, vehicle=veh)
              for s, p, veh, v, o in itertools.product(subjects, preps, vehicles, trans, elite))
    elif template == 4:
        it = (S(4, s, v, o, subj2=s2)
              for s, s2, v, o in itertools.product(subjects, subjects, trans, elite)
              if s.noun != s2.noun and s.number == s2.number)
    elif template == 5:
        it = (S(5, g, v, o, prep=p, vehicle=veh, subj2=pp)
              for g, pp, p, veh, v, o in itertools.product(_nps(lex.of("group"), (SG,)),
                                                          plural_people, preps, vehicles,
                                                          trans, elite))
    elif template in (6, 8):
        it = (S(template, s, v, adv=a if template == 8 else None, emb_subj=e, emb_verb=iv)
              for s, v, e, iv, a in itertools.product(subjects, stative, plural_people, intrans,
                                                      advs if template == 8 else [None])
              if s.noun != e.noun)
    elif template == 7:
        it = (S(7, s, v, adv=a, emb_subj=e, emb_verb=iv)
              for s, a, v, e, iv in itertools.product(subjects, advs, stative, plural_people, intrans)
              if s.noun != e.noun)
    elif template == 9:
        it = (S(9, s, v, o, emb_verb=iv) for s, iv, v, o in itertools.product(subjects, intrans,
                                                                                trans, elite))
    elif template == 10:
        it = (S(10, s, v, o, emb_verb=ev, pron=p)
              for s, ev, p, v, o in itertools.product(subjects, trans, prons, trans, elite)
              if ev != v)
    else:
        raise ValueError(f"no template {template}")
    return tuple(it)


def sample(template: int, n: int, rng: random.Random, lex: Lexicon | None = None) -> list[Sentence]:
    """``n`` different sentences of a template drawn uniformly without replacement (all of
    them, shuffled, when the template has fewer)."""
    sentences = space(template, lex)
    return rng.sample(sentences, min(n, len(sentences)))
