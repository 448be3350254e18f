"""The probabilistic grammar of SGET's English side (Kumon et al. 2024, section 3.2.2 and
appendix B): rule probabilities over the rules of :mod:`.grammar`, Zipfian word
probabilities, and a sampler that builds sentences as trees of that grammar.

Rule probabilities.  The paper sets them "similarly to COGS and SLOG, adjusted to
reflect the addition of new rules" without listing them; the weights below are the
shares of each construction in the released in-distribution development pairs (counted
by parsing them with :mod:`.grammar`; no sentence is stored), so the generated
in-distribution data has the release's mix of constructions:

* what a sentence is (:data:`ROOT_WEIGHTS`): a statement, or a wh-question about the
  subject or the object of a transitive verb (appendix A.3: every training question
  has the subject-verb-object order);
* the verb phrase of a main clause (:data:`MAIN_VP`), of a ``that``-clause
  (:data:`EMBEDDED_VP`), of a subject relative clause (:data:`RC_SUBJECT_VP`), of an
  object relative clause (:data:`RC_OBJECT_GAP`: the gap is a direct object or the
  theme of a double object) and of a ``to``-infinitive (:data:`INFINITIVE_VP`);
* tense: the simple past, except the main verb of a transitive statement, which is in
  the present with probability :data:`PRESENT_SHARE` (the only present tense of the
  released in-distribution data; passives are always past);
* noun phrases by position (:data:`SLOTS`): the share of proper nouns, and for the
  direct object and the theme of a ditransitive the shares of a prepositional phrase,
  a relative clause and adjectives.  Only these object positions are ever modified
  (section 3.2.1: the training set has modifiers in the direct object position only);
* recursion depths (:data:`DEPTHS`): a ``that``-clause, a prepositional phrase, a
  relative clause (then nested by centre embedding) or an adjective sequence is
  started with the depth drawn from {1, 2, 4} (section 3.2.1; depth 3 and 5-6 are the
  generalisation set's).

Words.  Each class (animate and inanimate nouns, proper nouns, verbs of a frame,
adjectives) has Zipfian probabilities, p(word) proportional to 1/rank (appendix B);
the rank order puts first the words most frequent in the released pairs
(:data:`RANK_HEAD`), then the rest in lexicon order.  Agents and recipients are
animate, ditransitive themes inanimate; the selectional restrictions of
:mod:`.selection` hold unless switched off.  No content word occurs twice in a
sentence (section 3.2.4), and the generalisation patterns' target words
(:mod:`.patterns`) are never drawn at random: they occur only where a builder puts
them.
"""
from __future__ import annotations

import bisect
import itertools
import random
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

from . import selection
from .grammar import Node
from .lexicon import Lexicon, Noun, ProperNoun, Verb
from .trees import GAP, adj_leaf, det, head, node, noun_leaf, prep_leaf, proper_leaf, \
    verb_leaf, word

# ----------------------------------------------------------------------------- rules
ROOT_WEIGHTS = {"statement": 4760, "wh_object": 159, "wh_subject": 80}
MAIN_VP = {"trans": 740, "passive": 562, "passive_by": 542, "intr": 488, "cp": 412,
           "passive_do": 274, "unacc": 270, "passive_to": 262, "passive_to_by": 256,
           "passive_do_by": 253, "dat_to": 247, "dat_do": 232, "inf": 208}
EMBEDDED_VP = {"passive": 65, "intr": 58, "passive_by": 57, "trans": 57, "unacc": 34,
               "passive_do": 33, "dat_to": 31, "dat_do": 29, "passive_to": 25,
               "passive_to_by": 23, "inf": 23, "passive_do_by": 22}
RC_KIND = {"rc_subject": 85, "rc_object": 69}
RC_SUBJECT_VP = {"intr": 27, "trans": 20, "unacc": 19, "inf": 11, "dat_do": 8}
RC_OBJECT_GAP = {"trans": 68, "dat_do": 7}
INFINITIVE_VP = {"trans": 76, "intr": 58, "cp": 45, "dat_do": 26, "dat_to": 20, "unacc": 17}
#: the frame of a passive without a recipient ("The cake was eaten", "The book was given")
PASSIVE_FRAME = {"trans": 8, "dat_to": 1, "dat_do": 1}
PRESENT_SHARE = 244 / (244 + 588)
WHO_FOR_OBJECT = 0.43  # "who" for an animate object gap (the rest "what" over things)
DEPTHS: Mapping[str, Mapping[int, float]] = {
    "cp": {1: 0.94, 2: 0.05, 4: 0.01},
    "pp": {1: 0.90, 2: 0.09, 4: 0.01},
    "rc": {1: 0.94, 2: 0.05, 4: 0.01},
    "adj": {1: 0.76, 2: 0.21, 4: 0.03},
}


@dataclass(frozen=True)
class Slot:
    """A noun-phrase position: probabilities of a proper noun, and of a prepositional
    phrase, a relative clause and adjectives on a common noun."""

    proper: float
    pp: float = 0.0
    rc: float = 0.0
    adj: float = 0.0


SLOTS: Mapping[str, Slot] = {
    "subject": Slot(0.216),
    "cp_subject": Slot(0.20),
    "question_subject": Slot(0.26),
    "rc_subject": Slot(0.08),
    "object": Slot(0.117, pp=0.10, rc=0.155, adj=0.16),
    "theme": Slot(0.0, pp=0.12, adj=0.14),
    "plain_object": Slot(0.117),
    "recipient": Slot(0.32),
    "agent": Slot(0.32),
    "pp_object": Slot(0.0),
}

#: Verb-phrase kinds: the frame of the verb and the role of the surface subject.
AGENTIVE = ("intr", "trans", "dat_to", "dat_do", "cp", "inf")
KIND_FRAME = {"intr": "intr", "unacc": "unacc", "trans": "trans", "dat_to": "dat_to",
              "dat_do": "dat_do", "cp": "cp", "inf": "inf",
              "passive_to": "dat_to", "passive_to_by": "dat_to",
              "passive_do": "dat_do", "passive_do_by": "dat_do"}


def subject_surface(kind: str) -> str:
    """How the selectional list sees a clause's subject: an unaccusative's subject is
    checked only when inanimate (``subject``); a passive's subject is the verb's
    direct object and always checked (``object``); agents and recipients are checked
    for animacy only."""
    return "subject" if kind == "unacc" else "object"


def subject_role(kind: str) -> str:
    if kind in AGENTIVE:
        return "agent"
    if kind.startswith("passive_do"):
        return "recipient"
    return "theme"


#: words first in the Zipfian rank order (the most frequent in the released pairs)
RANK_HEAD = {
    "inanimate": "book game plant newspaper ball house radio cup key box guitar flower "
                 "wine chair seed drink plate leaf shoe cake bag hat present ring mirror",
    "animate": "child friend mother teacher girl father patient student boy president "
               "director dog pupil king baby horse customer manager doctor judge fish "
               "prince guy writer visitor",
    "proper": "Liam Olivia Noah Emma Oliver Ava William Isabella Elijah Sophia Amelia "
              "Charlotte James Lucas Benjamin Mason Abigail Michael Luna Ethan Henry "
              "Alexander John Ella Camila",
    "verb": "give find know hold see bring change say offer call help like run send "
            "return hear want grow mean pass break think draw sell eat",
    "adjective": "new rare precious blue red unique square fresh small beautiful cheap "
                 "round sharp dangerous heavy big light flat young fat Russian youthful "
                 "funny tiny smart",
}

#: the usual order of English adjectives before a noun: opinion, size, quality,
#: shape, age, colour, origin
ADJECTIVE_ORDER = {
    **dict.fromkeys("beautiful cute funny kind polite humble smart calm dangerous precious "
                    "rare unique cheap".split(), 0),
    **dict.fromkeys("big small tiny huge tall short".split(), 1),
    **dict.fromkeys("fat thin skinny obese heavy light strong".split(), 2),
    **dict.fromkeys("round square flat sharp".split(), 3),
    **dict.fromkeys("new old young youthful fresh".split(), 4),
    **dict.fromkeys("red blue green".split(), 5),
    **dict.fromkeys("British Chinese Japanese Russian English".split(), 6),
}


def draw(rng: random.Random, weights: Mapping):
    keys = list(weights)
    return rng.choices(keys, [weights[k] for k in keys])[0]


class Exhausted(Exception):
    """No word satisfies the constraints at this point of a sentence; the builder
    starts the sentence again."""


class _Pool:
    """Words of one class with Zipfian cumulative weights."""

    def __init__(self, items: Sequence, ranks: Sequence[int]):
        self.items = list(items)
        self.cum = list(itertools.accumulate(1.0 / r for r in ranks))

    def draw(self, rng: random.Random, ok: Callable[[object], bool], key=lambda e: e) -> object:
        if not self.items:
            raise Exhausted()
        total = self.cum[-1]
        for _ in range(30):
            e = self.items[bisect.bisect_right(self.cum, rng.random() * total)]
            if ok(e):
                return e
        good = [i for i, e in enumerate(self.items) if ok(e)]
        if not good:
            raise Exhausted()
        weights = [self.cum[i] - (self.cum[i - 1] if i else 0.0) for i in good]
        return self.items[rng.choices(good, weights)[0]]


class Vocabulary:
    """The lexicon split into Zipfian pools, without the banned (target) words, with the
    candidates of each (verb, role) cached."""

    def __init__(self, lexicon: Lexicon, banned: Iterable[str], restrictions: bool):
        self.lx = lexicon
        self.banned = frozenset(banned)
        self.restrictions = restrictions
        self.sel = selection.load()

        def ranked(entries: list, head_key: str, name=lambda e: e.english) -> list:
            head = {w: i for i, w in enumerate(RANK_HEAD[head_key].split())}
            order = sorted(range(len(entries)),
                           key=lambda i: (head.get(name(entries[i]), len(head)), i))
            return [entries[i] for i in order]

        nouns = [n for n in lexicon.nouns.values() if n.english not in self.banned]
        self.animate = ranked([n for n in nouns if n.cls == "animate"], "animate")
        self.inanimate = ranked([n for n in nouns if n.cls == "inanimate"], "inanimate")
        self.proper = ranked([p for p in lexicon.proper_nouns.values()
                              if p.english not in self.banned], "proper")
        self.verbs = ranked([v for v in lexicon.verbs.values() if v.base not in self.banned],
                            "verb", name=lambda v: v.base)
        adjs = [a for a in lexicon.adjectives.values() if a.english not in self.banned]
        self.adjectives = _Pool(ranked(adjs, "adjective"), range(1, len(adjs) + 1))
        # one Zipfian rank over all common nouns (animate and inanimate interleaved by
        # their own ranks), so a pool of mixed nouns keeps both heads frequent
        self.noun_rank = {n.english: i + 1 for i, n in enumerate(self.animate)}
        self.noun_rank.update({n.english: i + 1 for i, n in enumerate(self.inanimate)})
        self.proper_rank = {p.english: i + 1 for i, p in enumerate(self.proper)}
        self.verb_rank = {v.base: i + 1 for i, v in enumerate(self.verbs)}
        self._cache: dict = {}

    # ------------------------------------------------------------------ pools
    def nouns(self, key: tuple, ok: Callable[[Noun], bool]) -> _Pool:
        pool = self._cache.get(("n",) + key)
        if pool is None:
            items = [n for n in self.animate + self.inanimate if ok(n)]
            items.sort(key=lambda n: (self.noun_rank[n.english], n.cls))
            pool = _Pool(items, [self.noun_rank[n.english] for n in items])
            self._cache[("n",) + key] = pool
        return pool

    def propers(self, key: tuple, ok: Callable[[ProperNoun], bool]) -> _Pool:
        pool = self._cache.get(("p",) + key)
        if pool is None:
            items = [p for p in self.proper if ok(p)]
            pool = _Pool(items, [self.proper_rank[p.english] for p in items])
            self._cache[("p",) + key] = pool
        return pool

    def verb_pool(self, frame: str) -> _Pool:
        pool = self._cache.get(("v", frame))
        if pool is None:
            items = [v for v in self.verbs if frame in v.frames]
            pool = _Pool(items, [self.verb_rank[v.base] for v in items])
            self._cache[("v", frame)] = pool
        return pool

    def signature(self, verb: Verb, role: str, frame: str | None, surface: str) -> tuple:
        """What decides which nouns fit ``role`` of ``verb``: verbs with the same
        signature share their candidate pools."""
        if role == "agent":
            return ("agent", verb.restrictions.get("subj", "any"))
        if role == "recipient":
            return ("recipient",)
        accepted = self.sel.verbs.get(verb.base) if self.restrictions else None
        return ("theme", verb.restrictions.get("obj_class", "any"),
                frame in ("dat_to", "dat_do"), surface,
                None if accepted is None or selection.ANY in accepted else accepted)

    def fits(self, verb: Verb, role: str, noun, frame: str | None, surface: str) -> bool:
        """:func:`.selection.compatible`, computed from the signature (fast)."""
        return self.fits_signature(self.signature(verb, role, frame, surface), noun)

    def fits_signature(self, sig: tuple, noun) -> bool:
        cls = noun.cls
        if isinstance(noun, ClassProxy):  # a wh-word: some noun of its class must fit
            key = ("proxy", sig, cls)
            ok = self._cache.get(key)
            if ok is None:
                ok = any(self.fits_signature(sig, n)
                         for n in (self.animate if cls == "animate" else self.inanimate))
                self._cache[key] = ok
            return ok
        if sig[0] == "agent":
            return sig[1] == "any" or sig[1] == cls
        if sig[0] == "recipient":
            return cls == "animate"
        _, obj_class, dative, surface, accepted = sig
        if obj_class != "any" and obj_class != cls:
            return False
        if dative and cls != "inanimate":
            return False
        if accepted is None or (surface == "subject" and cls == "animate"):
            return True
        sem = "person" if isinstance(noun, ProperNoun) else self.sel.noun_class[noun.english]
        return sem in accepted


@dataclass
class NP:
    """What a builder asks of a noun phrase: a given word (a target), a modifier
    (``("pp", depth)``, ``("rc", depth)``, ``("adj", depth)``, ``("none",)``; None
    draws one from the slot), proper or common (None: draw)."""

    entry: object = None
    mod: tuple | None = None
    proper: bool | None = None
    cls: str | None = None  # animate | inanimate


NONE = ("none",)


class Sampler:
    """Builds sentence trees.  One instance per random stream; :meth:`start` begins a
    sentence (the set of content words already used)."""

    def __init__(self, rng: random.Random, vocab: Vocabulary):
        self.rng = rng
        self.v = vocab
        self.lx = vocab.lx
        self.used: set[str] = set()
        #: recursive constructions open on the path being built: a drawn construction
        #: never nests in one of its own kind, so a sentence's depths are those drawn
        self.path: list[str] = []
        self.fallbacks = 0  # relative-clause heads with no verb accepting them twice

    def start(self) -> None:
        self.used = set()
        self.path = []

    def allowed(self, weights: Mapping[str, float]) -> dict:
        """``weights`` without ``cp`` while a that-clause is open on the path."""
        if "cp" in self.path:
            return {k: w for k, w in weights.items() if k != "cp"}
        return dict(weights)

    # ------------------------------------------------------------------ words
    def _free(self, e) -> bool:
        return (e.base if isinstance(e, Verb) else e.english) not in self.used

    def take(self, e):
        name = e.base if isinstance(e, Verb) else e.english
        if name in self.used:
            raise Exhausted()
        self.used.add(name)
        return e

    def verb(self, frame: str, ok: Callable[[Verb], bool] = lambda v: True) -> Verb:
        return self.take(self.pick(frame, ok))

    def pick(self, frame: str, ok: Callable[[Verb], bool] = lambda v: True) -> Verb:
        """A free verb of ``frame`` satisfying ``ok``, not yet marked used."""
        pool = self.v.verb_pool(frame)
        return pool.draw(self.rng, lambda v: self._free(v) and ok(v))

    def noun_for(self, verb: Verb | None, role: str, frame: str | None, surface: str,
                 proper: bool, extra: Callable = lambda n: True):
        """A noun (or proper noun) that may fill ``role`` of ``verb``."""
        if verb is None:  # no verb: the object of a preposition (``role``)
            sel = self.v.sel
            ok = (lambda n: sel.preposition_accepts(role, n))
            key = ("prep", role)
        else:
            sig = self.v.signature(verb, role, frame, surface)
            ok = (lambda n: self.v.fits_signature(sig, n))
            key = sig
        if proper:
            pool = self.v.propers(key, ok)
        else:
            pool = self.v.nouns(key, ok)
        return self.take(pool.draw(self.rng, lambda n: self._free(n) and extra(n)))

    # ------------------------------------------------------------------ noun phrases
    def np(self, slot: str, verb: Verb | None, role: str, frame: str | None,
           surface: str, spec: NP | None = None, ctx: str = "main") -> Node:
        spec = spec or NP()
        s = SLOTS[slot]
        rng = self.rng
        if spec.entry is not None:
            entry = self.take(spec.entry)
        else:
            proper = spec.proper
            if proper is None:
                proper = rng.random() < s.proper
                if proper and verb is not None and not any(
                        self.v.fits(verb, role, p, frame, surface) for p in self.v.proper[:1]):
                    proper = False
            extra = (lambda n: True) if spec.cls is None else (lambda n: n.cls == spec.cls)
            try:
                entry = self.noun_for(verb, role, frame, surface, proper, extra)
            except Exhausted:
                if spec.proper is not None:
                    raise
                entry = self.noun_for(verb, role, frame, surface, not proper, extra)
        if isinstance(entry, ProperNoun):
            if spec.mod not in (None, NONE):
                raise Exhausted()
            return node("NP", "proper", proper_leaf(entry))
        mod = spec.mod
        if mod is None:
            r = rng.random()
            if r < s.pp and "pp" not in self.path:
                mod = ("pp", draw(rng, DEPTHS["pp"]))
            elif s.pp <= r < s.pp + s.rc and "rc" not in self.path:
                mod = ("rc", draw(rng, DEPTHS["rc"]))
            else:
                mod = NONE
            if rng.random() < s.adj:
                mod = mod + (("adj", draw(rng, DEPTHS["adj"])),)
        return self.common_np(entry, mod, verb, ctx)

    def det(self, nbar: Node) -> tuple:
        """``a`` or ``the`` (even odds); ``the`` before a vowel sound, since the grammar
        has no ``an`` (the released data never write ``a`` before one either)."""
        first = nbar.children[0].token
        if first[0].lower() in "aeio" or (first[0].lower() == "u" and
                                          not first.lower().startswith(("uni", "use"))):
            self.rng.random()  # keep the stream in step
            return det("the")
        return det(self.rng.choice(("a", "the")))

    def nbar(self, noun: Noun, n_adj: int) -> Node:
        adjs = []
        for _ in range(n_adj):
            adjs.append(self.take(self.v.adjectives.draw(self.rng, self._free)))
        adjs.sort(key=lambda a: ADJECTIVE_ORDER.get(a.english, 3))
        out = node("NBAR", "noun", noun_leaf(noun))
        for a in reversed(adjs):
            out = node("NBAR", "adj", adj_leaf(a), ("NBAR", out))
        return out

    def common_np(self, noun: Noun, mod: tuple, verb: Verb | None = None,
                  ctx: str = "main") -> Node:
        """``mod``: ``("none",)``, ``("pp", d)``, ``("rc", d)`` or ``("adj", d)``,
        optionally followed by ``("adj", d)`` for adjectives on the same noun."""
        n_adj = 0
        kind, rest = mod[0], mod[1:]
        if kind == "adj":
            n_adj, rest = mod[1], ()
            kind = "none"
        elif rest and isinstance(rest[-1], tuple):
            n_adj = rest[-1][1]
            rest = rest[:-1]
        nbar = ("NBAR", self.nbar(noun, n_adj))
        d = self.det(nbar[1])
        if kind == "pp":
            self.path.append("pp")
            try:
                return node("NP", "np_pp", d, nbar, ("PP", self.pp_chain(rest[0])))
            finally:
                self.path.pop()
        if kind == "rc":
            rc_kind = rest[1] if len(rest) > 1 else None
            self.path.append("rc")
            try:
                return node("NP", "np_rc", d, nbar, ("RC", self.rc(noun, rest[0], rc_kind)))
            finally:
                self.path.pop()
        return node("NP", "np", d, nbar)

    def pp_chain(self, depth: int) -> Node:
        """``P NP`` with ``depth`` prepositional phrases in all (each on the noun before)."""
        preps = list(self.lx.prepositions.values())
        prep = self.rng.choice(preps)
        obj = self.noun_for(None, prep.english, None, "object", False)
        nbar = ("NBAR", node("NBAR", "noun", noun_leaf(obj)))
        d = self.det(nbar[1])
        if depth > 1:
            np = node("NP", "np_pp", d, nbar, ("PP", self.pp_chain(depth - 1)))
        else:
            np = node("NP", "np", d, nbar)
        return node("PP", "pp", prep_leaf(prep), ("NP", np))

    # ------------------------------------------------------------------ relative clauses
    def rc(self, head: Noun, depth: int, kind: str | None = None, tense: str = "past") -> Node:
        """A relative clause on ``head``.  Depth 1: subject or object extraction
        (:data:`RC_KIND`); deeper: centre embedding, the subject of each object
        relative clause carrying the next one.  ``kind`` ``rc_iobj``: the gap is the
        recipient of a ``to``-dative (a generalisation structure)."""
        rng = self.rng
        if kind is None:
            kind = "rc_object" if depth > 1 else draw(rng, RC_KIND)
        if kind == "rc_subject":
            vp_kind = draw(rng, RC_SUBJECT_VP)
            if head.cls != "animate":
                vp_kind = "unacc"
            vp = self.vp(vp_kind, tense, "rc", subject=head)
            return node("RC", "rc_subject", word("that"), (f"VP[{tense}]", vp))
        if kind == "rc_iobj":
            verb = self.verb("dat_to", lambda v: self.v.fits(v, "recipient", head, "dat_to",
                                                             "object"))
            subj = self.np("rc_subject", verb, "agent", "dat_to", "subject", NP(mod=NONE))
            theme = self.np("plain_object", verb, "theme", "dat_to", "object", NP(mod=NONE))
            vpg = node(f"VPG[{tense}]", "dat_to", verb_leaf(verb, "dat_to", tense),
                       ("NP", theme), word("to"), GAP)
            clause = node(f"CLAUSE_GAP[{tense}]", "clause", ("NP", subj), (f"VPG[{tense}]", vpg))
            return node("RC", "rc_object", word("that"), (f"CLAUSE_GAP[{tense}]", clause))
        gap = draw(rng, RC_OBJECT_GAP) if depth == 1 else "trans"
        frame = gap

        def accepts(v: Verb) -> bool:
            return self.v.fits(v, "theme", head, frame, "object")

        try:
            verb = self.verb(frame, accepts)
        except Exhausted:
            # the head fits no verb of this frame twice over: keep the first pair only
            self.fallbacks += 1
            verb = self.verb(frame, lambda v: selection.compatible(
                v, "theme", head, False, frame=frame))
        if depth > 1:
            subj_noun = self.noun_for(verb, "agent", frame, "subject", False)
            nb = self.nbar(subj_noun, 0)
            subj = node("NP", "np_rc", self.det(nb), ("NBAR", nb),
                        ("RC", self.rc(subj_noun, depth - 1, "rc_object", tense)))
        else:
            subj = self.np("rc_subject", verb, "agent", frame, "subject", NP(mod=NONE))
        if frame == "trans":
            vpg = node(f"VPG[{tense}]", "trans", verb_leaf(verb, "trans", tense), GAP)
        else:
            recip = self.np("recipient", verb, "recipient", frame, "object", NP(mod=NONE))
            vpg = node(f"VPG[{tense}]", "dat_do", verb_leaf(verb, "dat_do", tense),
                       ("NP", recip), GAP)
        clause = node(f"CLAUSE_GAP[{tense}]", "clause", ("NP", subj), (f"VPG[{tense}]", vpg))
        return node("RC", "rc_object", word("that"), (f"CLAUSE_GAP[{tense}]", clause))

    # ------------------------------------------------------------------ verb phrases
    def pick_verb(self, frame: str, subject, role: str, verb: Verb | None = None,
                  surface: str = "subject") -> Verb:
        if verb is not None:
            return self.take(verb)
        if subject is None:
            return self.verb(frame)
        return self.verb(frame, lambda v: self.v.fits(v, role, subject, frame, surface))

    def vp(self, kind: str, tense: str, ctx: str, *, subject=None, verb: Verb | None = None,
           specs: Mapping[str, NP] | None = None, lhs: str | None = None,
           cp_depth: int = 0, inner: Callable[[], Node] | None = None,
           passive_frame: str | None = None, infinitive: tuple | None = None) -> Node:
        """A verb phrase of ``kind`` (a rule name of ``VP``: ``trans``, ``passive_by``
        ...) whose subject (already chosen, or None for a wh-word) is ``subject``.
        ``specs`` asks for given noun phrases by role (``theme``, ``recipient``,
        ``agent``); ``cp_depth`` > 0 nests that many ``that``-clauses (``inner`` builds
        the innermost clause, default: one of :data:`EMBEDDED_VP`)."""
        specs = specs or {}
        lhs = lhs or (f"VP[{tense}]" if tense != "base" else "VPI")
        form = tense if tense != "base" else "base"
        obj_slot = "plain_object" if ctx == "rc" else "object"
        theme_slot = "plain_object" if ctx == "rc" else "theme"
        if kind.startswith("passive"):
            frame = KIND_FRAME.get(kind) or passive_frame or draw(self.rng, PASSIVE_FRAME)
            srole = subject_role(kind)
            v = self.pick_verb(frame, subject, srole, verb, subject_surface(kind))
            kids = [word("was"), verb_leaf(v, frame, "pp")]
            if kind.startswith("passive_to"):
                kids += [word("to"), ("NP", self.np("recipient", v, "recipient", frame, "object",
                                                    specs.get("recipient", NP(mod=NONE))))]
            elif kind.startswith("passive_do"):
                kids += [("NP", self.np(theme_slot, v, "theme", frame, "object",
                                        specs.get("theme")))]
            if kind.endswith("_by"):
                kids += [word("by"), ("NP", self.np("agent", v, "agent", frame, "object",
                                                    specs.get("agent", NP(mod=NONE))))]
            return node("VP[past]", kind, *kids)
        frame = KIND_FRAME[kind]
        srole = subject_role(kind)
        v = self.pick_verb(frame, subject, srole, verb, subject_surface(kind))
        vl = verb_leaf(v, frame, form)
        if kind in ("intr", "unacc"):
            return node(lhs, kind, vl)
        if kind == "trans":
            obj = self.np(obj_slot, v, "theme", frame, "object", specs.get("theme"))
            return node(lhs, kind, vl, ("NP", obj))
        if kind in ("dat_to", "dat_do"):
            theme = self.np(theme_slot, v, "theme", frame, "object", specs.get("theme"))
            recip = self.np("recipient", v, "recipient", frame, "object",
                            specs.get("recipient", NP(mod=NONE)))
            if kind == "dat_to":
                return node(lhs, kind, vl, ("NP", theme), word("to"), ("NP", recip))
            return node(lhs, kind, vl, ("NP", recip), ("NP", theme))
        if kind == "cp":
            depth = cp_depth or self.cp_depth()
            self.path.append("cp")
            try:
                embedded = self.cp_clause(depth - 1, inner)
            finally:
                self.path.pop()
            return node(lhs, kind, vl, word("that"), ("CLAUSE", embedded))
        if kind == "inf":
            if infinitive is not None:  # (kind, verb) of the infinitive, by a builder
                inf_kind, inf_verb = infinitive
            else:
                inf_kind, inf_verb = draw(self.rng, self.allowed(INFINITIVE_VP)), None
            inner_vp = self.vp(inf_kind, "base", ctx, subject=subject, verb=inf_verb)
            return node(lhs, kind, vl, word("to"), ("VPI", inner_vp))
        raise ValueError(f"unknown verb-phrase kind {kind!r}")

    def cp_depth(self) -> int:
        """The depth of a that-clause chain drawn here: from :data:`DEPTHS`, or, inside
        a builder's complement clause, the one that keeps the total a training depth."""
        open_ = self.path.count("cp")
        if not open_:
            return draw(self.rng, DEPTHS["cp"])
        fits = {d: w for d, w in DEPTHS["cp"].items() if open_ + d in DEPTHS["cp"]}
        return draw(self.rng, fits) if fits else 1

    def cp_clause(self, more: int, inner: Callable[[], Node] | None = None) -> Node:
        """The clause after ``that``: ``more`` further ``that``-clauses, then ``inner``
        (or a clause of :data:`EMBEDDED_VP`)."""
        if more > 0:
            return self.clause("cp", kind="cp", cp_depth=more, inner=inner)
        if inner is not None:
            return inner()
        return self.clause("cp", kind=draw(self.rng, EMBEDDED_VP))

    def clause(self, ctx: str = "main", *, kind: str | None = None, tense: str | None = None,
               verb: Verb | None = None, subject: NP | None = None,
               specs: Mapping[str, NP] | None = None, cp_depth: int = 0,
               inner: Callable[[], Node] | None = None, passive_frame: str | None = None,
               infinitive: tuple | None = None) -> Node:
        """``CLAUSE``: a subject and a verb phrase (kind drawn from the context's
        weights unless given; the subject drawn to suit the verb)."""
        rng = self.rng
        weights = MAIN_VP if ctx == "main" else EMBEDDED_VP
        kind = kind or draw(rng, self.allowed(weights))
        if tense is None:
            tense = "pres" if (ctx == "main" and kind == "trans"
                               and rng.random() < PRESENT_SHARE) else "past"
        if kind.startswith("passive"):
            tense = "past"
        slot = {"main": "subject", "cp": "cp_subject", "question": "question_subject"}.get(
            ctx, "subject")
        subject = subject or NP(mod=NONE)
        srole = subject_role(kind)
        frame = KIND_FRAME.get(kind) or passive_frame or draw(rng, PASSIVE_FRAME)
        surf = subject_surface(kind)
        # the verb first (it constrains the subject), unless the subject is given
        if subject.entry is not None:
            subj_entry = subject.entry
            v = verb
            if v is None:
                v = self.verb(frame, lambda x: self.v.fits(x, srole, subj_entry, frame,
                                                           surf))
            else:
                self.take(v)
        else:
            v = self.take(verb) if verb is not None else self.verb(frame)
        subj = self.np(slot, v, srole, frame, surf, subject, ctx)
        subj_entry = head(subj)
        self.used.discard(v.base)
        vp = self.vp(kind, tense, ctx, subject=subj_entry, verb=v, specs=specs,
                     cp_depth=cp_depth, inner=inner, passive_frame=frame,
                     infinitive=infinitive)
        return node("CLAUSE", "clause", ("NP", subj), (f"VP[{tense}]", vp))

    # ------------------------------------------------------------------ sentences
    def statement(self, clause: Node) -> Node:
        st = node("STATEMENT", "declarative", ("CLAUSE", clause))
        sts = node("STATEMENTS", "single", ("STATEMENT", st), word("."))
        return node("ROOT", "statements", ("STATEMENTS", sts))

    def question(self, q: Node) -> Node:
        return node("ROOT", "question", ("QUESTION", q), word("?"))

    def wh_subject(self, kind: str = "trans", tense: str = "past",
                   specs: Mapping[str, NP] | None = None) -> Node:
        """``Who found the cake?`` (``kind``: the verb phrase)."""
        srole = subject_role(kind)
        frame = KIND_FRAME.get(kind) or draw(self.rng, PASSIVE_FRAME)
        if srole in ("agent", "recipient"):
            wh = "who"
        else:
            wh = "who" if self.rng.random() < 0.5 else "what"
        cls = "animate" if wh == "who" else "inanimate"
        proxy = ClassProxy(cls)
        v = self.verb(frame, lambda x: self.v.fits(x, srole, proxy, frame,
                                                   subject_surface(kind)))
        self.used.discard(v.base)
        vp = self.vp(kind, tense, "question", subject=proxy, verb=v, specs=specs,
                     passive_frame=frame)
        q = node("QUESTION", "wh_subject", ("WH", node("WH", wh, word(wh))),
                 (f"VP[{tense}]", vp))
        return self.question(q)

    def gap_vp(self, kind: str, gap: str, tense: str, wh_cls: str,
               specs: Mapping[str, NP] | None = None, ctx: str = "question") -> Node:
        """``VPG[tense]``: a verb phrase whose ``gap`` (``theme`` or ``recipient``) is
        extracted; the filler has class ``wh_cls``."""
        specs = specs or {}
        frame = kind
        proxy = ClassProxy(wh_cls)
        v = self.verb(frame, lambda x: self.v.fits(x, gap, proxy, frame, "object"))
        lhs = f"VPG[{tense}]"
        vl = verb_leaf(v, frame, tense)
        if kind == "trans":
            return node(lhs, "trans", vl, GAP)
        if kind == "dat_to":
            if gap == "theme":
                recip = self.np("recipient", v, "recipient", frame, "object",
                                specs.get("recipient", NP(mod=NONE)))
                return node(lhs, "dat_to", vl, GAP, word("to"), ("NP", recip))
            theme = self.np("plain_object", v, "theme", frame, "object",
                            specs.get("theme", NP(mod=NONE)))
            return node(lhs, "dat_to", vl, ("NP", theme), word("to"), GAP)
        if kind == "dat_do":
            recip = self.np("recipient", v, "recipient", frame, "object",
                            specs.get("recipient", NP(mod=NONE)))
            return node(lhs, "dat_do", vl, ("NP", recip), GAP)
        raise ValueError(f"no gap verb phrase of kind {kind!r}")

    def wh_object(self, kind: str = "trans", gap: str = "theme",
                  subject: NP | None = None, long: bool = False) -> Node:
        """``What did Emma find?``; ``long``: the gap is inside a ``that``-clause
        (``What did Liam think that the girl break?``)."""
        rng = self.rng
        if gap == "recipient":
            wh = "who"
        elif kind == "trans":
            wh = "who" if rng.random() < WHO_FOR_OBJECT else "what"
        else:
            wh = "what"
        cls = "animate" if wh == "who" else "inanimate"
        vpg = self.gap_vp(kind, gap, "base", cls)
        inner_verb = vpg.children[0].entry
        subj = self.np("question_subject", inner_verb, "agent", kind, "subject",
                       subject or NP(mod=NONE))
        clause = node("CLAUSE_GAP[base]", "clause", ("NP", subj), ("VPG[base]", vpg))
        if long:
            cpv = self.verb("cp")
            outer_subj = self.np("question_subject", cpv, "agent", "cp", "subject", NP(mod=NONE))
            outer = node("VPG[base]", "cp", verb_leaf(cpv, "cp", "base"), word("that"),
                         ("CLAUSE_GAP[base]", clause))
            clause = node("CLAUSE_GAP[base]", "clause", ("NP", outer_subj), ("VPG[base]", outer))
        q = node("QUESTION", "wh_object", ("WH", node("WH", wh, word(wh))), word("did"),
                 ("CLAUSE_GAP[base]", clause))
        return self.question(q)

    def in_distribution(self) -> Node:
        """One sentence of the in-distribution grammar."""
        what = draw(self.rng, ROOT_WEIGHTS)
        if what == "wh_subject":
            return self.wh_subject("trans")
        if what == "wh_object":
            return self.wh_object("trans")
        return self.statement(self.clause("main"))

    def primitive(self, entry) -> Node:
        if isinstance(entry, Verb):
            frame = sorted(entry.frames - {"inf"})[0]
            leaf = verb_leaf(entry, frame, "base")
        elif isinstance(entry, ProperNoun):
            leaf = proper_leaf(entry)
        else:
            leaf = noun_leaf(entry)
        return node("ROOT", "primitive", ("PRIMITIVE", node("PRIMITIVE", "word", leaf)))

    def embed(self, inner: Callable[[], Node]) -> Node:
        """A main clause ``<subject> <verb>-ed that <inner clause>``: the generalisation
        set's sentences with the target constituent in a complement clause."""
        return self.clause("main", kind="cp", tense="past", cp_depth=1, inner=inner)


class ClassProxy:
    """Stands for a noun class where no noun is drawn (a wh-word, the head a builder
    will draw): a verb fits it when it fits some noun of the class."""

    english = "?"

    def __init__(self, cls: str):
        self.cls = cls


def topicalise(tree: Node) -> Node | None:
    """The topicalised form of a statement whose main clause has a modified object
    (``Olivia found a book in the house.`` -> ``A book in the house , Olivia found.``),
    or None when it has none.  The object must be the direct object of a transitive
    verb or the theme of a ditransitive and carry a prepositional phrase, a relative
    clause or an adjective (section 3.2.1; Wu et al. 2023)."""
    if tree.rule.name != "statements" or tree.children[0].rule.name != "single":
        return None
    st = tree.children[0].children[0]
    if st.rule.name != "declarative":
        return None
    clause = st.children[0]
    subj, vp = clause.children
    name = vp.rule.name
    if name not in ("trans", "dat_to", "dat_do"):
        return None
    tense = vp.rule.lhs[3:-1]
    kids = vp.children
    vl = kids[0]
    theme_i = {"trans": 1, "dat_to": 1, "dat_do": 2}[name]
    theme = kids[theme_i]
    if not _modified(theme):
        return None
    sym = vl.category
    lhs = f"VPG[{tense}]"
    if name == "trans":
        vpg = node(lhs, "trans", ("@" + sym, vl), GAP)
    elif name == "dat_to":
        vpg = node(lhs, "dat_to", ("@" + sym, vl), GAP, word("to"), ("NP", kids[3]))
    else:
        vpg = node(lhs, "dat_do", ("@" + sym, vl), ("NP", kids[1]), GAP)
    cg = node(f"CLAUSE_GAP[{tense}]", "clause", ("NP", subj), (lhs, vpg))
    top = node("STATEMENT", "topic", ("NP", theme), word(","), (f"CLAUSE_GAP[{tense}]", cg))
    sts = node("STATEMENTS", "single", ("STATEMENT", top), word("."))
    return node("ROOT", "statements", ("STATEMENTS", sts))


def _modified(np: Node) -> bool:
    if np.rule.name in ("np_pp", "np_rc"):
        return True
    return np.rule.name == "np" and np.children[1].rule.name == "adj"


def concatenate(statements: Sequence[Node]) -> Node:
    """Clauses run together before one full stop (Wu et al. 2023): ROOT trees of single
    declarative statements -> one ROOT."""
    parts = [t.children[0].children[0] for t in statements]
    rest = node("STATEMENTS", "single", ("STATEMENT", parts[-1]), word("."))
    for st in reversed(parts[:-1]):
        rest = node("STATEMENTS", "concat", ("STATEMENT", st), ("STATEMENTS", rest))
    return node("ROOT", "statements", ("STATEMENTS", rest))
