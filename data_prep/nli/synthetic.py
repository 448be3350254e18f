"""A seeded synthetic NLI corpus for the quick profile (scaled down, not SNLI): templated
premises with their parse trees, and pair types of two kinds.

*Lexical* types, whose words predict the label (as most SNLI pairs): a hypernym for a
noun (*man -> person*: entailment), an adjective or a place dropped (entailment), an
adjective or a place added (neutral), an antonym adjective, a negated verb or another
place (contradiction).

*Structural* types, whose bag of words is the premise's: subject and object swapped
(contradiction), the same with a fronted place phrase (contradiction), an adjective
moved to the other noun (neutral) — and the paraphrase that fronts or un-fronts the
place phrase (entailment, the common case with the same bag of words).  Because the
paraphrase is far more frequent than the three misleading types, a bag-of-words
classifier learns that a hypothesis with the premise's words is entailed and is
confidently wrong on the structural pairs: they land in CS_λ, as in section 5.

Every sentence is generated with its Penn-Treebank-style parse (``sentence1_parse``,
``sentence2_parse``), so the lexical classifier and the adversary rules read these files
like SNLI's.  Output: ``{train,dev,test}.jsonl`` in SNLI's format plus ``type`` and
``manifest.json`` (counts per split and type, label shares).
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from compsuite.data_prep.common.io import atomic_open
from compsuite.data_prep.common.manifest import is_complete, write_manifest

GENERATOR = "nli.synthetic"
VERSION = "1"

PEOPLE = ["man", "woman", "boy", "girl", "child", "chef", "doctor", "farmer", "dancer",
          "singer", "teacher", "student", "nurse", "pilot", "artist", "worker"]
ANIMALS = ["dog", "cat", "horse", "bird", "goat", "rabbit", "duck", "pony"]
HYPERNYM = {**{p: "person" for p in PEOPLE}, **{a: "animal" for a in ANIMALS}}
VERBS = ["chases", "watches", "follows", "pushes", "greets", "helps", "feeds", "carries",
         "hugs", "calls", "photographs", "paints", "teaches", "kicks", "pulls", "holds"]
BASE_FORM = {v: v[:-3] + "y" if v.endswith("ies") else v[:-2] if v.endswith(("shes", "ches"))
             else v[:-1] for v in VERBS}
ANTONYMS = {"tall": "short", "short": "tall", "young": "old", "old": "young",
            "happy": "sad", "sad": "happy", "wet": "dry", "dry": "wet", "big": "small",
            "small": "big", "quiet": "loud", "loud": "quiet"}
ADJECTIVES = sorted(ANTONYMS)
PLACES = [("in", "park"), ("on", "beach"), ("in", "kitchen"), ("on", "street"),
          ("in", "garden"), ("at", "station"), ("in", "field"), ("on", "bridge")]

#: pair type -> (label, share of the corpus, kind)
TYPES = {
    "hypernym": ("entailment", 0.12, "lexical"),
    "drop_adjective": ("entailment", 0.08, "lexical"),
    "drop_place": ("entailment", 0.08, "lexical"),
    "add_adjective": ("neutral", 0.10, "lexical"),
    "add_place": ("neutral", 0.10, "lexical"),
    "antonym": ("contradiction", 0.08, "lexical"),
    "negation": ("contradiction", 0.06, "lexical"),
    "other_place": ("contradiction", 0.06, "lexical"),
    "paraphrase_fronting": ("entailment", 0.26, "structural-same-label"),
    "role_swap": ("contradiction", 0.03, "structural"),
    "role_swap_fronted": ("contradiction", 0.015, "structural"),
    "moved_adjective": ("neutral", 0.015, "structural"),
}


@dataclass(frozen=True)
class Clause:
    """A transitive clause: subject (adjective, noun), verb, object (adjective, noun),
    an optional place (preposition, noun) at the end or fronted, negation."""

    subj: tuple[str | None, str]
    verb: str
    obj: tuple[str | None, str]
    place: tuple[str, str] | None = None
    fronted: bool = False
    negated: bool = False

    def _np(self, adj: str | None, noun: str, first: bool) -> tuple[list[str], str]:
        det = "A" if first else "a"
        word = adj or noun
        if word[0] in "aeiou":
            det += "n"
        parts = [("DT", det)] + ([("JJ", adj)] if adj else []) + [("NN", noun)]
        return [w for _, w in parts], "(NP " + " ".join(f"({t} {w})" for t, w in parts) + ")"

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
        sw, sp = self._np(*self.subj, first=not words)
        ow, op = self._np(*self.obj, first=False)
        if self.negated:
            vw = ["does", "not", BASE_FORM[self.verb]]
            vp = (f"(VP (VBZ does) (RB not) (VP (VB {BASE_FORM[self.verb]}) {op}"
                  + (f" {pp[1]}" if pp and not self.fronted else "") + "))")
        else:
            vw = [self.verb]
            vp = f"(VP (VBZ {self.verb}) {op}" + (f" {pp[1]}" if pp and not self.fronted else "") + ")"
        words += sw + vw + ow + (pp[0] if pp and not self.fronted else []) + ["."]
        parse += [sp, vp, "(. .)"]
        text = " ".join(words).replace(" ,", ",").replace(" .", ".")
        return text, f"(ROOT (S {' '.join(parse)}))"


def _noun(rng: random.Random, exclude: str | None = None) -> str:
    pool = PEOPLE if rng.random() < 0.7 else ANIMALS
    while True:
        n = rng.choice(pool)
        if n != exclude:
            return n


def _premise(rng: random.Random, kind: str) -> Clause:
    """A premise suited to the pair type."""
    s = _noun(rng)
    o = _noun(rng, exclude=s)
    s_adj = rng.choice(ADJECTIVES) if rng.random() < 0.5 else None
    o_adj = rng.choice(ADJECTIVES) if rng.random() < 0.3 else None
    place = rng.choice(PLACES) if rng.random() < 0.5 else None
    if kind in {"drop_adjective", "antonym", "moved_adjective"}:
        s_adj = s_adj or rng.choice(ADJECTIVES)
        o_adj = None if kind == "moved_adjective" else o_adj
    if kind in {"add_adjective"}:
        s_adj = None
    if kind in {"drop_place", "other_place", "paraphrase_fronting", "role_swap_fronted"}:
        place = place or rng.choice(PLACES)
    if kind == "add_place":
        place = None
    fronted = kind in {"paraphrase_fronting", "role_swap_fronted"} and rng.random() < 0.5
    return Clause((s_adj, s), rng.choice(VERBS), (o_adj, o), place, fronted)


def hypothesis(p: Clause, kind: str, rng: random.Random) -> Clause:
    if kind == "hypernym":
        if rng.random() < 0.5:
            return replace(p, subj=(p.subj[0], HYPERNYM[p.subj[1]]))
        return replace(p, obj=(p.obj[0], HYPERNYM[p.obj[1]]))
    if kind == "drop_adjective":
        return replace(p, subj=(None, p.subj[1]))
    if kind == "drop_place":
        return replace(p, place=None, fronted=False)
    if kind == "add_adjective":
        return replace(p, subj=(rng.choice(ADJECTIVES), p.subj[1]))
    if kind == "add_place":
        return replace(p, place=rng.choice(PLACES))
    if kind == "antonym":
        return replace(p, subj=(ANTONYMS[p.subj[0]], p.subj[1]))
    if kind == "negation":
        return replace(p, negated=True)
    if kind == "other_place":
        return replace(p, place=rng.choice([x for x in PLACES if x[1] != p.place[1]]))
    if kind == "paraphrase_fronting":
        return replace(p, fronted=not p.fronted)
    if kind == "role_swap":
        return replace(p, subj=p.obj, obj=p.subj)
    if kind == "role_swap_fronted":
        return replace(p, subj=p.obj, obj=p.subj, fronted=not p.fronted)
    if kind == "moved_adjective":
        return replace(p, subj=(None, p.subj[1]), obj=(p.subj[0], p.obj[1]))
    raise ValueError(kind)


def generate_pairs(n: int, seed: int, split: str) -> list[dict]:
    rng = random.Random(f"{seed}:{split}")
    kinds = list(TYPES)
    weights = [TYPES[k][1] for k in kinds]
    out = []
    for i in range(n):
        kind = rng.choices(kinds, weights)[0]
        p = _premise(rng, kind)
        h = hypothesis(p, kind, rng)
        (s1, p1), (s2, p2) = p.render(), h.render()
        label = TYPES[kind][0]
        out.append({"pairID": f"syn-{split}-{i}", "sentence1": s1, "sentence2": s2,
                    "sentence1_parse": p1, "sentence2_parse": p2, "gold_label": label,
                    "annotator_labels": [label], "type": kind,
                    "kind": TYPES[kind][2]})
    return out


def write(out: str | Path, seed: int, n_train: int = 20000, n_dev: int = 2000,
          n_test: int = 2000) -> dict:
    out = Path(out)
    args = {"seed": seed, "n_train": n_train, "n_dev": n_dev, "n_test": n_test}
    if is_complete(out, GENERATOR, args, version=VERSION):
        return json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    counts, by_type, labels = {}, {}, {}
    for split, n in (("train", n_train), ("dev", n_dev), ("test", n_test)):
        pairs = generate_pairs(n, seed, split)
        with atomic_open(out / f"{split}.jsonl") as fh:
            for pr in pairs:
                fh.write(json.dumps(pr) + "\n")
        counts[split] = len(pairs)
        by_type[split] = dict(sorted(Counter(p["type"] for p in pairs).items()))
        labels[split] = dict(sorted(Counter(p["gold_label"] for p in pairs).items()))
    return write_manifest(out, generator=GENERATOR, generator_version=VERSION, seed=seed,
                          args=args, files=[f"{s}.jsonl" for s in ("train", "dev", "test")],
                          counts=counts,
                          statistics={"types": by_type, "labels": labels,
                                      "label": "scaled-down: synthetic templates, not SNLI"})


def add_arguments(ap: argparse.ArgumentParser) -> None:
    from compsuite.commands import positive_int

    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--train", type=positive_int, default=20000)
    ap.add_argument("--dev", type=positive_int, default=2000)
    ap.add_argument("--test", type=positive_int, default=2000)


def run(a: argparse.Namespace) -> int:
    m = write(a.out, a.seed, a.train, a.dev, a.test)
    print(f"{a.out}: {m['counts']}", file=sys.stderr)
    return 0
