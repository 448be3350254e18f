"""Builders of SGET's generalisation sentences and training exposures, one function per
kind of pattern (named in :mod:`.patterns`: ``Pattern.builder`` and
``Pattern.exposure``).

Every builder takes a :class:`.sampler.Sampler` (whose sentence has just been
started), the pattern, the target word (lexical patterns; cycled so that the five
targets are equally frequent) or the depth (recursion patterns), and whether the target
constituent goes inside a complement clause (appendix B: for every pattern except CP
recursion and the wh-questions, half the generalisation sentences are built that way:
``Liam said that <the sentence>``).  It returns a ROOT tree of the grammar; a builder
that runs out of words raises :class:`.sampler.Exhausted` and is called again.

The rest of every sentence is drawn from the in-distribution grammar (the same weights
as the training set), so a generalisation sentence differs from training only in what
its pattern is about.
"""
from __future__ import annotations

from typing import Callable

from .grammar import Node
from .lexicon import Verb
from .patterns import Pattern
from .sampler import MAIN_VP, NONE, NP, ClassProxy, Sampler, draw

#: main-clause verb phrases whose subject is the agent (and the unaccusative's theme)
SUBJECT_KINDS = {k: MAIN_VP[k] for k in ("trans", "intr", "cp", "unacc", "dat_to", "dat_do",
                                         "inf")}
PASSIVES = {"passive": MAIN_VP["passive"], "passive_by": MAIN_VP["passive_by"]}


def _wrap(s: Sampler, clause: Callable[[str], Node], in_cp: bool) -> Node:
    """A statement of ``clause(ctx)``; inside ``<subject> <verb>-ed that ...`` when
    ``in_cp``."""
    if in_cp:
        return s.statement(s.embed(lambda: clause("cp")))
    return s.statement(clause("main"))


# ----------------------------------------------------------------------------- lexical
def noun_in_object(s: Sampler, p: Pattern, target, in_cp: bool = False) -> Node:
    """The target noun after the verb: direct object, or recipient of a ditransitive or
    of a passive with ``to`` (an inanimate target: object or ditransitive theme)."""
    if target.cls == "animate":
        kinds = {"trans": 5, "dat_to": 2, "dat_do": 2, "passive_to": 0.5, "passive_to_by": 0.5}
    else:
        kinds = {"trans": 6, "dat_to": 2, "dat_do": 2}
    kind = draw(s.rng, kinds)
    role = "theme" if kind == "trans" or target.cls != "animate" else "recipient"
    frame = {"passive_to": "dat_to", "passive_to_by": "dat_to"}.get(kind, kind)
    surface = "object"

    def clause(ctx: str) -> Node:
        verb = s.pick(frame, lambda v: s.v.fits(v, role, target, frame, surface))
        return s.clause(ctx, kind=kind, verb=verb, specs={role: NP(entry=target, mod=NONE)})

    return _wrap(s, clause, in_cp)


def noun_as_object(s: Sampler, p: Pattern, target, in_cp: bool = False) -> Node:
    """Training exposure: the target noun as direct object or recipient (active)."""
    kind = draw(s.rng, {"trans": 5, "dat_to": 2, "dat_do": 2})
    role = "theme" if kind == "trans" else "recipient"

    def clause(ctx: str) -> Node:
        verb = s.pick(kind, lambda v: s.v.fits(v, role, target, kind, "object"))
        return s.clause(ctx, kind=kind, verb=verb, specs={role: NP(entry=target, mod=NONE)})

    return _wrap(s, clause, in_cp)


def noun_in_subject(s: Sampler, p: Pattern, target, in_cp: bool = False) -> Node:
    """The target noun as the subject of an active clause."""
    kind = draw(s.rng, SUBJECT_KINDS)

    def clause(ctx: str) -> Node:
        return s.clause(ctx, kind=kind, subject=NP(entry=target, mod=NONE))

    return _wrap(s, clause, in_cp)


noun_as_subject = noun_in_subject  # the training exposure of Subj -> Obj


def primitive(s: Sampler, p: Pattern, target, in_cp: bool = False) -> Node:
    """Training exposure: the word alone."""
    return s.primitive(target)


def verb_in_infinitive(s: Sampler, p: Pattern, target: Verb, in_cp: bool = False) -> Node:
    """``Mason decided to jump.``: the target verb as the infinitive of a past verb."""
    def clause(ctx: str) -> Node:
        return s.clause(ctx, kind="inf", tense="past", infinitive=("intr", target))

    return _wrap(s, clause, in_cp)


def _verb_clause(kind: str, tense: str | None = None, frame: str | None = None):
    def build(s: Sampler, p: Pattern, target: Verb, in_cp: bool = False) -> Node:
        def clause(ctx: str) -> Node:
            return s.clause(ctx, kind=kind, tense=tense, verb=target, passive_frame=frame)

        return _wrap(s, clause, in_cp)

    build.__doc__ = f"The target verb in a clause of kind {kind!r}" + (
        f", tense {tense!r}." if tense else ".")
    return build


verb_active = _verb_clause("trans", "past")
verb_object_omitted = _verb_clause("intr")
verb_unaccusative = _verb_clause("unacc")
verb_pp_dative = _verb_clause("dat_to")
verb_double_object = _verb_clause("dat_do")


def verb_passive(s: Sampler, p: Pattern, target: Verb, in_cp: bool = False) -> Node:
    """The target verb in the passive, with or without a by-phrase."""
    kind = draw(s.rng, PASSIVES)
    return _verb_clause(kind, "past", "trans")(s, p, target, in_cp)


def _exposure_verb_active(s: Sampler, p: Pattern, target: Verb, in_cp: bool = False) -> Node:
    """Training exposure of Active -> Passive: the target verb as an active transitive,
    in either tense of the in-distribution grammar."""
    return s.statement(s.clause("main", kind="trans", verb=target))


def present_ditransitive(s: Sampler, p: Pattern, target: Verb, in_cp: bool = False) -> Node:
    kind = s.rng.choice(("dat_to", "dat_do"))
    return _verb_clause(kind, "pres")(s, p, target, in_cp)


def past_ditransitive(s: Sampler, p: Pattern, target: Verb, in_cp: bool = False) -> Node:
    kind = s.rng.choice(("dat_to", "dat_do"))
    return _verb_clause(kind, "past")(s, p, target, in_cp)


present_infinitive = _verb_clause("inf", "pres")
past_infinitive = _verb_clause("inf", "past")


def present_complement(s: Sampler, p: Pattern, target: Verb, in_cp: bool = False) -> Node:
    def clause(ctx: str) -> Node:
        return s.clause(ctx, kind="cp", tense="pres", verb=target, cp_depth=1)

    return _wrap(s, clause, in_cp)


def past_complement(s: Sampler, p: Pattern, target: Verb, in_cp: bool = False) -> Node:
    return s.statement(s.clause("main", kind="cp", tense="past", verb=target))


def _transitive_and(past_kind: Callable) -> Callable:
    def build(s: Sampler, p: Pattern, target: Verb, in_cp: bool = False) -> Node:
        which = s.rng.randrange(3)
        if which == 2:
            return past_kind(s, p, target)
        tense = ("past", "pres")[which]
        return s.statement(s.clause("main", kind="trans", tense=tense, verb=target))

    build.__doc__ = ("Training exposure: the target verb as a transitive in the past or the "
                     f"present, or {past_kind.__name__} (a third each).")
    return build


transitive_and_past_ditransitive = _transitive_and(past_ditransitive)
transitive_and_past_infinitive = _transitive_and(past_infinitive)
transitive_and_past_complement = _transitive_and(past_complement)


# ----------------------------------------------------------------------------- structural
_MODIFIER = {"pp": ("pp", 1), "rc": ("rc", 1), "adj": ("adj", 1)}


def _modifier(p: Pattern) -> tuple:
    return _MODIFIER[p.name.split("_")[1]]  # obj_pp_to_..., obj_rc_to_..., obj_adj_to_...


def modified_subject(s: Sampler, p: Pattern, target=None, in_cp: bool = False) -> Node:
    """The subject carries the pattern's modifier (PP, relative clause, adjective)."""
    kind = draw(s.rng, MAIN_VP)
    mod = _modifier(p)

    def clause(ctx: str) -> Node:
        return s.clause(ctx, kind=kind, subject=NP(mod=mod, proper=False))

    return _wrap(s, clause, in_cp)


def modified_recipient(s: Sampler, p: Pattern, target=None, in_cp: bool = False) -> Node:
    """The recipient of a ditransitive carries the pattern's modifier."""
    kind = draw(s.rng, {"dat_to": 6, "dat_do": 4})
    mod = _modifier(p)

    def clause(ctx: str) -> Node:
        return s.clause(ctx, kind=kind, specs={"recipient": NP(mod=mod, proper=False)})

    return _wrap(s, clause, in_cp)


def recursion(s: Sampler, p: Pattern, depth: int, in_cp: bool = False) -> Node:
    """A recursion of the pattern's kind to ``depth``: nested that-clauses, or a direct
    object (a ditransitive's theme for PPs, as in appendix E.5's example) with stacked
    PPs, centre-embedded relative clauses or adjectives."""
    kind = p.recursion
    if kind == "cp":
        return s.statement(s.clause("main", kind="cp", cp_depth=depth))
    if kind == "pp":
        vp_kind = draw(s.rng, {"trans": 6, "dat_to": 2, "dat_do": 2})
        spec = NP(mod=("pp", depth), proper=False)
    elif kind == "rc":
        vp_kind, spec = "trans", NP(mod=("rc", depth, "rc_object"), proper=False)
    else:
        vp_kind = draw(s.rng, {"trans": 6, "dat_to": 2, "dat_do": 2})
        spec = NP(mod=("adj", depth), proper=False)

    def clause(ctx: str) -> Node:
        return s.clause(ctx, kind=vp_kind, specs={"theme": spec})

    return _wrap(s, clause, in_cp)


def iobj_relative_clause(s: Sampler, p: Pattern, target=None, in_cp: bool = False) -> Node:
    """``The visitor liked the guy that the friend gave the plant to.``"""
    def clause(ctx: str) -> Node:
        spec = NP(mod=("rc", 1, "rc_iobj"), proper=False, cls="animate")
        verb = s.pick("trans", lambda v: s.v.fits(v, "theme", ClassProxy("animate"), "trans",
                                                   "object"))
        return s.clause(ctx, kind="trans", verb=verb, specs={"theme": spec})

    return _wrap(s, clause, in_cp)


def wh_question(s: Sampler, p: Pattern, target=None, in_cp: bool = False) -> Node:
    """The wh-question patterns (none has a complement-clause half)."""
    rng = s.rng
    if p.name == "iobj_extracted_wh":
        return s.wh_object("dat_to", gap="recipient")
    if p.name == "wh_active_subject":
        return s.wh_subject(draw(rng, {k: MAIN_VP[k] for k in
                                       ("intr", "cp", "dat_to", "dat_do", "inf")}))
    if p.name == "wh_passive_subject":
        return s.wh_subject(draw(rng, {k: w for k, w in MAIN_VP.items()
                                       if k.startswith("passive")}))
    if p.name == "wh_dobj_ditransitive":
        return s.wh_object(rng.choice(("dat_to", "dat_do")), gap="theme")
    if p.name == "wh_subject_with_pp":
        return s.wh_object("trans", subject=NP(mod=("pp", 1), proper=False))
    if p.name == "wh_long_movement":
        return s.wh_object("trans", long=True)
    raise ValueError(f"no wh-question builder for {p.name!r}")


BUILDERS: dict[str, Callable] = {
    "noun_in_object": noun_in_object, "noun_in_subject": noun_in_subject,
    "verb_in_infinitive": verb_in_infinitive, "verb_passive": verb_passive,
    "verb_active": verb_active, "verb_pp_dative": verb_pp_dative,
    "verb_double_object": verb_double_object, "present_ditransitive": present_ditransitive,
    "present_infinitive": present_infinitive, "present_complement": present_complement,
    "modified_subject": modified_subject, "modified_recipient": modified_recipient,
    "recursion": recursion, "iobj_relative_clause": iobj_relative_clause,
    "wh_question": wh_question,
}
EXPOSURES: dict[str, Callable] = {
    "noun_as_subject": noun_as_subject, "noun_as_object": noun_as_object,
    "primitive": primitive, "verb_active": _exposure_verb_active, "verb_passive": verb_passive,
    "verb_object_omitted": verb_object_omitted, "verb_unaccusative": verb_unaccusative,
    "verb_double_object": verb_double_object, "verb_pp_dative": verb_pp_dative,
    "past_ditransitive": past_ditransitive,
    "transitive_and_past_ditransitive": transitive_and_past_ditransitive,
    "past_infinitive": past_infinitive,
    "transitive_and_past_infinitive": transitive_and_past_infinitive,
    "past_complement": past_complement,
    "transitive_and_past_complement": transitive_and_past_complement,
}


def lexical_entry(lexicon, word: str):
    """The lexicon entry of a target word (noun, proper noun or verb)."""
    for table in (lexicon.nouns, lexicon.proper_nouns, lexicon.verbs):
        if word in table:
            return table[word]
    raise KeyError(f"target word {word!r} is not in the lexicon")


__all__ = ["BUILDERS", "EXPOSURES", "lexical_entry"]
