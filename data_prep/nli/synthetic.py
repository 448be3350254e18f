"""A seeded synthetic NLI corpus for the quick profile (scaled down, not SNLI): templated
premises with their parse trees, and pair types of two kinds.

Premises: *[Place,] a [adj] noun [with a [adj] thing] [adverb] verbs a [adj] noun [with a
[adj] thing] [adverb] [place] [time].*  A verb is transitive (*chases a dog*) or
reciprocal with a ``with`` complement (*plays with a dog*).

*Lexical* types, whose words predict the label (as most SNLI pairs): a hypernym for a
noun (*man -> person*: entailment), an adjective, a ``with`` modifier or a place dropped
(entailment) or added (neutral), an antonym adjective, a negated verb or another place
(contradiction).

*Structural* types, whose bag of words is the premise's.  Those that keep the meaning
(entailment, the common case): the place phrase fronted or un-fronted, the adverb moved
between the verb's two sides, the place and time phrases reordered, and the two
participants of a reciprocal verb exchanged (*a man plays with a dog* / *a dog plays
with a man*).  Those that do not (neutral, rare): an adjective moved to the other noun
phrase (*a tall man greets a dog* / *a man greets a tall dog*) and a ``with`` modifier
moved to the other noun phrase.  A bag-of-words classifier learns that a hypothesis with
the premise's words is entailed and is confidently wrong on the misleading pairs: they
land in CS_λ, as in section 5.  Every pair whose hypothesis has exactly the premise's
words (:data:`SAME_WORDS`, determiners and capitals included) has an adverb, so that
for every premise shape the reorderings that keep the meaning outnumber those that do
not: not even a bag-of-words model that counts tokens can tell them apart.

Two choices follow the paper's findings.  The corpus holds no subject-object swap of a
transitive verb (SNLI hardly has any): the SOSWAP adversaries built from the test
premises are new to every model, which mostly call them entailment (Table 2).  And the
misleading structural pairs of training are built on short premises only (no ``with``
modifiers, adjectives and place as in general), while half of those of dev and test are
built on long ones (adjectives, ``with`` modifiers on both noun phrases, a place, often
a time: :data:`LONG_SHARE`): the contrast is the same, inside longer phrases.

Every sentence is generated with its Penn-Treebank-style parse (``sentence1_parse``,
``sentence2_parse``), so the lexical classifier, the adversary rules and the tree
models read these files like SNLI's.  Output: ``{train,dev,test}.jsonl`` in SNLI's
format plus ``type``, ``kind`` and ``long``, and ``manifest.json`` (counts per split and
type, label shares, long pairs per type).
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from compsuite.foundation.io import atomic_open
from compsuite.foundation.manifest import is_complete, write_manifest

GENERATOR = "nli.synthetic"
VERSION = "2"

PEOPLE = ["man", "woman", "boy", "girl", "child", "chef", "doctor", "farmer", "dancer",
          "singer", "teacher", "student", "nurse", "pilot", "artist", "worker"]
ANIMALS = ["dog", "cat", "horse", "bird", "goat", "rabbit", "duck", "pony"]
HYPERNYM = {**{p: "person" for p in PEOPLE}, **{a: "animal" for a in ANIMALS}}
#: what a noun phrase's ``with`` modifier holds (*a man with a red hat*)
THINGS = ["hat", "scarf", "bag", "ball", "kite", "box", "flag", "umbrella"]
VERBS = ["chases", "watches", "follows", "pushes", "greets", "helps", "feeds", "carries",
         "hugs", "calls", "photographs", "paints", "teaches", "kicks", "pulls", "holds"]
#: symmetric verbs with a ``with`` complement (*a man plays with a dog* = *a dog plays
#: with a man*): their participants can trade places (the strict SOSWAP rules take no
#: premise of theirs: no object NP follows the verb)
RECIPROCAL = ["plays", "talks", "dances", "walks", "argues", "wrestles", "chats", "races"]
BASE_FORM = {v: v[:-3] + "y" if v.endswith("ies") else v[:-2] if v.endswith(("shes", "ches"))
             else v[:-1] for v in VERBS + RECIPROCAL}
ANTONYMS = {"tall": "short", "short": "tall", "young": "old", "old": "young",
            "happy": "sad", "sad": "happy", "wet": "dry", "dry": "wet", "big": "small",
            "small": "big", "quiet": "loud", "loud": "quiet"}
ADJECTIVES = sorted(ANTONYMS)
PLACES = [("in", "park"), ("on", "beach"), ("in", "kitchen"), ("on", "street"),
          ("in", "garden"), ("at", "station"), ("in", "field"), ("on", "bridge")]
#: manner adverbs, before the verb or after the object (*a man quickly chases a dog* =
#: *a man chases a dog quickly*)
ADVERBS = ["quickly", "slowly", "happily", "gently", "quietly", "eagerly"]
#: time phrases (preposition, noun; *in the morning*, *at night*), after or before the place
TIMES = [("in", "morning"), ("in", "evening"), ("at", "night"), ("at", "noon"),
         ("after", "lunch"), ("before", "dinner")]

E, N, C = "entailment", "neutral", "contradiction"
#: pair type -> (label, share of the corpus, kind)
TYPES = {
    "hypernym": (E, 0.10, "lexical"),
    "drop_adjective": (E, 0.06, "lexical"),
    "drop_place": (E, 0.05, "lexical"),
    "drop_modifier": (E, 0.04, "lexical"),
    "add_adjective": (N, 0.08, "lexical"),
    "add_place": (N, 0.07, "lexical"),
    "add_modifier": (N, 0.05, "lexical"),
    "antonym": (C, 0.07, "lexical"),
    "negation": (C, 0.07, "lexical"),
    "other_place": (C, 0.05, "lexical"),
    "paraphrase_fronting": (E, 0.08, "structural-same-label"),
    "adverb_order": (E, 0.10, "structural-same-label"),
    "pp_order": (E, 0.06, "structural-same-label"),
    "reciprocal_swap": (E, 0.08, "structural-same-label"),
    "moved_adjective": (N, 0.025, "structural"),
    "moved_modifier": (N, 0.015, "structural"),
}
#: the types whose hypothesis has exactly the premise's words (case and determiners
#: included), so that not even a/an or a capital tells them apart: the reorderings that
#: keep the meaning and those that do not
SAME_WORDS = {"adverb_order", "pp_order", "reciprocal_swap", "moved_adjective", "moved_modifier"}
#: the share of premises with a manner adverb (those of SAME_WORDS all have one, so that
#: the reorderings that keep the meaning are the majority for every premise shape)
ADVERB_SHARE = 0.35
#: the share of premises (of the types that allow them) with a reciprocal verb
RECIPROCAL_SHARE = 0.2
#: per split, the share of the structural (bag-misleading) pairs built on long premises
#: (adjectives, ``with`` modifiers on both noun phrases, a place): rare in training,
#: half of dev and test, so that the contrast must be found inside longer phrases
LONG_SHARE = {"train": 0.0, "dev": 0.5, "test": 0.5}
HEAD, MOD = "head", "mod"


@dataclass(frozen=True)
class NP:
    """*a [adj] noun [with a [adj] thing]*: a head noun with an optional adjective and
    an optional ``with`` modifier ``(adjective or None, thing)``."""

    adj: str | None
    noun: str
    mod: tuple[str | None, str] | None = None

    def get(self, level: str) -> str | None:
        return self.adj if level == HEAD else self.mod[0]

    def put(self, level: str, adj: str | None) -> "NP":
        return replace(self, adj=adj) if level == HEAD else replace(self, mod=(adj, self.mod[1]))

    def levels(self) -> list[str]:
        return [HEAD] + ([MOD] if self.mod else [])


def _base_np(adj: str | None, noun: str, first: bool) -> tuple[list[str], str]:
    det = "A" if first else "a"
    if (adj or noun)[0] in "aeiou":
        det += "n"
    parts = [("DT", det)] + ([("JJ", adj)] if adj else []) + [("NN", noun)]
    return [w for _, w in parts], "(NP " + " ".join(f"({t} {w})" for t, w in parts) + ")"


def render_np(np: NP, first: bool) -> tuple[list[str], str]:
    words, parse = _base_np(np.adj, np.noun, first)
    if np.mod:
        mw, mp = _base_np(*np.mod, first=False)
        words, parse = words + ["with"] + mw, f"(NP {parse} (PP (IN with) {mp}))"
    return words, parse


@dataclass(frozen=True)
class Clause:
    """A transitive clause: subject and object noun phrases, verb, an optional place
    (preposition, noun) at the end or fronted, negation."""

    subj: NP
    verb: str
    obj: NP
    place: tuple[str, str] | None = None
    fronted: bool = False
    negated: bool = False
    time: tuple[str, str] | None = None
    time_first: bool = False
    adverb: str | None = None
    adverb_first: bool = False

    def slots(self) -> list[tuple[str, str]]:
        """The (noun phrase, level) places an adjective can stand."""
        return [(r, lv) for r in ("subj", "obj") for lv in getattr(self, r).levels()]

    def get(self, slot: tuple[str, str]) -> str | None:
        return getattr(self, slot[0]).get(slot[1])

    def put(self, slot: tuple[str, str], adj: str | None) -> "Clause":
        return replace(self, **{slot[0]: getattr(self, slot[0]).put(slot[1], adj)})

    def render(self) -> tuple[str, str]:
        """(sentence, parse)."""
        words, parse = [], []
        pp = None
        if self.place:
            prep, noun = self.place
            pp_words = [prep.capitalize() if self.fronted else prep, "the", noun]
            pp = (pp_words, f"(PP (IN {pp_words[0]}) (NP (DT the) (NN {noun})))")
        if pp and self.fronted:
            words += pp[0] + [","]
            parse += [pp[1], "(, ,)"]
        sw, sp = render_np(self.subj, first=not words)
        ow, op = render_np(self.obj, first=False)
        end = [pp] if pp and not self.fronted else []
        if self.time:
            prep, noun = self.time
            tp = ([prep, "the", noun], f"(PP (IN {prep}) (NP (DT the) (NN {noun})))") \
                if prep == "in" else ([prep, noun], f"(PP (IN {prep}) (NP (NN {noun})))")
            end = [tp] + end if self.time_first else end + [tp]
        tail = "".join(f" {x[1]}" for x in end)
        if self.verb in RECIPROCAL:      # intransitive, the other participant in a PP
            ow, op = ["with"] + ow, f"(PP (IN with) {op})"
        adv_end = []
        if self.adverb and (self.negated or not self.adverb_first):
            adv_end, op = [self.adverb], f"{op} (ADVP (RB {self.adverb}))"
        elif self.adverb:
            sw, sp = sw + [self.adverb], f"{sp} (ADVP (RB {self.adverb}))"
        if self.negated:
            vw = ["does", "not", BASE_FORM[self.verb]]
            vp = f"(VP (VBZ does) (RB not) (VP (VB {BASE_FORM[self.verb]}) {op}{tail}))"
        else:
            vw = [self.verb]
            vp = f"(VP (VBZ {self.verb}) {op}{tail})"
        words += sw + vw + ow + adv_end + [w for x in end for w in x[0]] + ["."]
        parse += [sp, vp, "(. .)"]
        text = " ".join(words).replace(" ,", ",").replace(" .", ".")
        return text, f"(ROOT (S {' '.join(parse)}))"


def _noun(rng: random.Random, exclude: str | None = None) -> str:
    pool = PEOPLE if rng.random() < 0.7 else ANIMALS
    while True:
        n = rng.choice(pool)
        if n != exclude:
            return n


def _adj(rng: random.Random, p: float) -> str | None:
    return rng.choice(ADJECTIVES) if rng.random() < p else None


def _np(rng: random.Random, noun: str, p_adj: float, p_mod: float) -> NP:
    adj = _adj(rng, p_adj)
    mod = (_adj(rng, p_adj / 2), rng.choice(THINGS)) if rng.random() < p_mod else None
    return NP(adj, noun, mod)


def _with_mod(rng: random.Random, np: NP) -> NP:
    return np if np.mod else replace(np, mod=(None, rng.choice(THINGS)))


def _premise(rng: random.Random, kind: str, long: bool) -> Clause:
    """A premise suited to the pair type; ``long``: adjectives, ``with`` modifiers and a
    place wherever the type allows them."""
    structural = TYPES[kind][2] == "structural"
    p_adj, p_mod = (0.8, 1.0) if long else (0.4, 0.0 if structural else 0.25)
    s = _noun(rng)
    o = _noun(rng, exclude=s)
    reciprocal = kind == "reciprocal_swap" or rng.random() < RECIPROCAL_SHARE
    verb = rng.choice(RECIPROCAL if reciprocal else VERBS)
    c = Clause(_np(rng, s, p_adj, p_mod), verb, _np(rng, o, p_adj * 0.75, p_mod),
               rng.choice(PLACES) if long or rng.random() < 0.5 else None,
               time=rng.choice(TIMES) if rng.random() < (0.5 if long else 0.25) else None)
    adverb = kind in SAME_WORDS or rng.random() < ADVERB_SHARE
    c = replace(c, time_first=bool(c.time and c.place and rng.random() < 0.5),
                adverb=rng.choice(ADVERBS) if adverb else None, adverb_first=rng.random() < 0.5)
    if kind in {"drop_adjective", "antonym"} and not any(c.get(x) for x in c.slots()):
        c = c.put(rng.choice(c.slots()), rng.choice(ADJECTIVES))
    if kind == "add_adjective" and all(c.get(x) for x in c.slots()):
        c = c.put(rng.choice(c.slots()), None)
    if kind == "drop_modifier" and not (c.subj.mod or c.obj.mod):
        role = rng.choice(["subj", "obj"])
        c = replace(c, **{role: _with_mod(rng, getattr(c, role))})
    if kind in {"add_modifier", "moved_modifier"} and c.subj.mod and c.obj.mod:
        role = rng.choice(["subj", "obj"])
        c = replace(c, **{role: replace(getattr(c, role), mod=None)})
    if kind == "moved_modifier" and not (c.subj.mod or c.obj.mod):
        role = rng.choice(["subj", "obj"])
        c = replace(c, **{role: _with_mod(rng, getattr(c, role))})
    if kind == "moved_adjective":
        # one adjective moves between the two noun phrases, at the same level (head
        # nouns, or the nouns of both ``with`` modifiers): the source has one, the
        # target none
        level = MOD if c.subj.mod and c.obj.mod and rng.random() < 0.5 else HEAD
        src, dst = rng.sample(["subj", "obj"], 2)
        c = c.put((src, level), c.get((src, level)) or rng.choice(ADJECTIVES))
        c = c.put((dst, level), None)
    if kind in {"drop_place", "other_place", "paraphrase_fronting", "pp_order"}:
        c = replace(c, place=c.place or rng.choice(PLACES))
    if kind == "pp_order":
        c = replace(c, time=c.time or rng.choice(TIMES))
    if kind == "add_place":
        c = replace(c, place=None)
    if kind == "paraphrase_fronting" and rng.random() < 0.5:
        c = replace(c, fronted=True)
    return c


def hypothesis(p: Clause, kind: str, rng: random.Random) -> Clause:
    if kind == "hypernym":
        role = rng.choice(["subj", "obj"])
        np = getattr(p, role)
        return replace(p, **{role: replace(np, noun=HYPERNYM[np.noun])})
    if kind == "drop_adjective":
        return p.put(rng.choice([x for x in p.slots() if p.get(x)]), None)
    if kind == "drop_place":
        return replace(p, place=None, fronted=False, time_first=False)
    if kind == "drop_modifier":
        role = rng.choice([r for r in ("subj", "obj") if getattr(p, r).mod])
        return replace(p, **{role: replace(getattr(p, role), mod=None)})
    if kind == "add_adjective":
        return p.put(rng.choice([x for x in p.slots() if not p.get(x)]), rng.choice(ADJECTIVES))
    if kind == "add_place":
        return replace(p, place=rng.choice(PLACES))
    if kind == "add_modifier":
        role = rng.choice([r for r in ("subj", "obj") if not getattr(p, r).mod])
        return replace(p, **{role: _with_mod(rng, getattr(p, role))})
    if kind == "antonym":
        slot = rng.choice([x for x in p.slots() if p.get(x)])
        return p.put(slot, ANTONYMS[p.get(slot)])
    if kind == "negation":
        return replace(p, negated=True)
    if kind == "other_place":
        return replace(p, place=rng.choice([x for x in PLACES if x[1] != p.place[1]]))
    if kind == "paraphrase_fronting":
        return replace(p, fronted=not p.fronted)
    if kind == "pp_order":
        return replace(p, time_first=not p.time_first)
    if kind == "adverb_order":
        return replace(p, adverb_first=not p.adverb_first)
    if kind == "reciprocal_swap":
        return replace(p, subj=p.obj, obj=p.subj)
    if kind == "moved_adjective":
        moves = [(x, y) for x in p.slots() for y in p.slots()
                 if x[0] != y[0] and x[1] == y[1] and p.get(x) and not p.get(y)]
        src, dst = rng.choice(moves)
        return p.put(src, None).put(dst, p.get(src))
    if kind == "moved_modifier":
        src, dst = ("subj", "obj") if p.subj.mod else ("obj", "subj")
        return replace(p, **{src: replace(getattr(p, src), mod=None),
                             dst: replace(getattr(p, dst), mod=getattr(p, src).mod)})
    raise ValueError(kind)


def leaves(parse: str) -> list[str]:
    """The words of a parse written by :meth:`Clause.render`."""
    return re.findall(r"\(\S+ ([^()\s]+)\)", parse)


def generate_pairs(n: int, seed: int, split: str) -> list[dict]:
    if split not in LONG_SHARE:
        raise ValueError(f"split {split!r}: one of {', '.join(LONG_SHARE)}")
    rng = random.Random(f"{seed}:{split}")
    kinds = list(TYPES)
    weights = [TYPES[k][1] for k in kinds]
    out = []
    for i in range(n):
        kind = rng.choices(kinds, weights)[0]
        long = TYPES[kind][2] == "structural" and rng.random() < LONG_SHARE[split]
        while True:
            p = _premise(rng, kind, long)
            h = hypothesis(p, kind, rng)
            (s1, p1), (s2, p2) = p.render(), h.render()
            if kind not in SAME_WORDS or sorted(leaves(p1)) == sorted(leaves(p2)):
                break
        label = TYPES[kind][0]
        out.append({"pairID": f"syn-{split}-{i}", "sentence1": s1, "sentence2": s2,
                    "sentence1_parse": p1, "sentence2_parse": p2, "gold_label": label,
                    "annotator_labels": [label], "type": kind,
                    "kind": TYPES[kind][2], "long": long})
    return out


def write(out: str | Path, seed: int, n_train: int = 20000, n_dev: int = 2000,
          n_test: int = 2000) -> dict:
    out = Path(out)
    args = {"seed": seed, "n_train": n_train, "n_dev": n_dev, "n_test": n_test}
    if is_complete(out, GENERATOR, args, version=VERSION):
        return json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    counts, by_type, labels, long = {}, {}, {}, {}
    for split, n in (("train", n_train), ("dev", n_dev), ("test", n_test)):
        pairs = generate_pairs(n, seed, split)
        with atomic_open(out / f"{split}.jsonl") as fh:
            for pr in pairs:
                fh.write(json.dumps(pr) + "\n")
        counts[split] = len(pairs)
        by_type[split] = dict(sorted(Counter(p["type"] for p in pairs).items()))
        labels[split] = dict(sorted(Counter(p["gold_label"] for p in pairs).items()))
        long[split] = dict(sorted(Counter(p["type"] for p in pairs if p["long"]).items()))
    return write_manifest(out, generator=GENERATOR, generator_version=VERSION, seed=seed,
                          args=args, files=[f"{s}.jsonl" for s in ("train", "dev", "test")],
                          counts=counts,
                          statistics={"types": by_type, "labels": labels, "long": long,
                                      "label": "scaled-down: synthetic templates, not SNLI"})


def add_arguments(ap: argparse.ArgumentParser) -> None:
    from compsuite.foundation.arguments import positive_int

    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--train", type=positive_int, default=20000)
    ap.add_argument("--dev", type=positive_int, default=2000)
    ap.add_argument("--test", type=positive_int, default=2000)


def run(a: argparse.Namespace) -> int:
    m = write(a.out, a.seed, a.train, a.dev, a.test)
    print(f"{a.out}: {m['counts']}", file=sys.stderr)
    return 0
