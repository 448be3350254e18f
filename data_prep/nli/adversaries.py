"""SOSWAP and ADDAMOD adversaries (Nie, Wang and Bansal 2019, section 3.1) built from
the premises' constituency parses.

The authors applied their rules to CoreNLP 3.8.0 dependency parses and never released
the code; the rules here read the Stanford PCFG constituency parses that SNLI and
MultiNLI ship (``sentence1_parse``), so no parser runs.  Every example records the
rule that produced it (``rule``) and every premise that yields nothing is counted
under the reason it failed (the manifest's ``dropped``).  Two rule sets:

``strict`` (the default) keeps what the paper describes and nothing that needs
guessing; ``lenient`` also takes complex noun phrases, fronted phrases and verb
agreement by rule.  The doc (data_prep/nli/doc.md) gives worked examples.

**SOSWAP** (label contradiction): p' is the premise with its subject and object
swapped.

* The premise is ``ROOT -> S``; the S is ``NP VP (.)`` (lenient: a fronted PP, ADVP,
  SBAR or S and its comma may come first; they stay in place).
* The VP chain: auxiliaries (a finite verb followed by a VP: *is playing*, *has
  eaten*, *can see*) are walked down to the lexical VP, whose first child is the main
  verb (a ``VB*`` tag).  A copular main verb (a form of *be*, *become*, *seem*,
  *remain*) has no object: dropped.  A VP of coordinated verbs or VPs is dropped.
* The object is the NP directly after the main verb (a particle, a PP or an S in
  between: dropped).  Its head (the last noun of its first base NP) must be a noun
  (``NN*``): an NP headed by a mis-tagged word (``(NP (VBG holding))``) is dropped, and
  so is an adverbial NP of time or measure (*play all day*, *ran a mile*: the head is in
  :data:`ADVERBIAL_NOUNS`).  Pronouns are dropped (case would need changing).
* strict: subject and object are base NPs (determiners, numbers, adjectives,
  possessives and nouns only) whose heads are nouns; lenient: any NP with a noun head
  (its PPs, relative clauses and participles move with it).
* Agreement: the finite verb is re-agreed with the new subject's number (plural: a
  ``NNS``/``NNPS`` head or a coordination): *is/are*, *was/were*, *has/have*,
  *does/do*.  When the finite verb is the main verb in the present tense (*eats*), a
  change of number is dropped in strict mode and inflected by rule in lenient mode.
* Determiners move with their nouns (the whole NP moves); the first word is
  capitalised and the old subject's first word lower-cased unless it is a proper noun.

**ADDAMOD** (label neutral): an adjective observed modifying both of two different
nouns of the premise is added to one noun in p' (the new premise) and to the other in
h.

* Noun entities are the premise's base NPs whose head is a common noun (``NN``,
  ``NNS``; lenient: proper nouns too).  The two must have different head words.
* The lexicon counts (adjective, noun) pairs in a corpus's parses: a ``JJ`` before the
  head noun inside a base NP.  An adjective qualifies when it was seen with both nouns
  (strict: at least twice with each; lenient: once) and is in neither NP.
* strict: neither NP has an adjective already (no stacking); lenient: the adjective is
  placed after the ones there.  The adjective goes before the noun compound (*a red
  tennis ball*); *a/an* before it is repaired; a sentence-initial adjective is
  capitalised.
* One example per premise: the (noun, noun, adjective) triple and which noun goes to
  p' are drawn with a generator seeded by the seed and the premise.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import atomic_open
from compsuite.foundation.manifest import is_complete, write_manifest

from .snli import Pair, ReadStats, Tree, read_jsonl

GENERATOR = "nli.adversaries"
VERSION = "1"
RULE_SETS = ("strict", "lenient")
COPULAS = {"is", "are", "was", "were", "am", "be", "been", "being", "'s", "'re", "'m",
           "become", "becomes", "became", "becoming", "seem", "seems", "seemed",
           "seeming", "remain", "remains", "remained", "remaining"}
#: head nouns of adverbial NPs (time, duration, measure): not objects
ADVERBIAL_NOUNS = {"today", "tonight", "yesterday", "tomorrow", "morning", "afternoon",
                   "evening", "night", "day", "days", "week", "weeks", "weekend",
                   "month", "months", "year", "years", "time", "times", "hour", "hours",
                   "minute", "minutes", "while", "mile", "miles", "way", "home",
                   "outside", "inside", "downstairs", "upstairs", "lot", "bit"}
PRONOUN_TAGS = {"PRP", "WP", "EX"}
NOUN_TAGS = {"NN", "NNS", "NNP", "NNPS"}
PLURAL_TAGS = {"NNS", "NNPS"}
#: tags a strict (base) NP may hold
BASE_TAGS = {"DT", "PDT", "CD", "JJ", "JJR", "JJS", "NN", "NNS", "NNP", "NNPS",
             "PRP$", "POS", "VBN", "VBG"}
AGREE = {("is", True): "are", ("are", False): "is", ("was", True): "were",
         ("were", False): "was", ("has", True): "have", ("have", False): "has",
         ("does", True): "do", ("do", False): "does"}
#: capitalised adjectives that keep their capital inside a sentence (nationalities and
#: the like); any other word opening the moved subject is lower-cased unless a proper noun
PROPER_ADJECTIVES = {
    "african", "american", "arab", "arabic", "asian", "australian", "brazilian",
    "british", "canadian", "caucasian", "chinese", "christian", "cuban", "dutch",
    "egyptian", "english", "european", "french", "german", "greek", "hispanic", "indian",
    "irish", "israeli", "italian", "japanese", "jewish", "korean", "latino", "latina",
    "mexican", "middle-eastern", "muslim", "native", "oriental", "polish", "russian",
    "scottish", "spanish", "swedish", "thai", "turkish", "vietnamese", "western", "eastern",
    "christmas", "halloween"}
CLITICS = {"n't", "'s", "'re", "'ll", "'ve", "'m", "'d", "'"}
PTB_BRACKETS = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]",
                "-LCB-": "{", "-RCB-": "}", "``": '"', "''": '"'}


class Dropped(Exception):
    """Why a premise yields no adversary (the message is the manifest's reason)."""


# ----------------------------------------------------------------------------- text
def detokenize(tokens: list[str]) -> str:
    """A sentence from PTB tokens (sacremoses' Moses detokeniser after joining the
    clitics PTB splits off: *do n't* -> *don't*)."""
    from sacremoses import MosesDetokenizer

    out: list[str] = []
    for t in tokens:
        t = PTB_BRACKETS.get(t, t)
        if out and t.lower() in CLITICS:
            out[-1] += t
        else:
            out.append(t)
    if "en" not in _DETOK:
        _DETOK["en"] = MosesDetokenizer(lang="en")
    return _DETOK["en"].detokenize(out)


_DETOK: dict = {}


def an(word: str) -> str:
    """The indefinite article before ``word``."""
    w = word.lower()
    if w.startswith(("hour", "honest", "honor", "heir")):
        return "an"
    if w.startswith(("uni", "use", "usu", "euro", "one", "ewe", "ubiq", "uto")):
        return "a"
    return "an" if w[:1] in "aeiou" else "a"


def _capitalise(word: str) -> str:
    return word[:1].upper() + word[1:]


# ----------------------------------------------------------------------------- NPs
def is_base_np(t: Tree) -> bool:
    return t.label == "NP" and all(isinstance(c, Tree) and c.is_preterminal for c in t.children)


def np_head(t: Tree) -> Tree | None:
    """The head preterminal of an NP: the last noun of its first base NP (``A man in
    a hat`` -> man); None when that base NP ends in no noun, or an NP is coordinated."""
    node = t
    while not is_base_np(node):
        kids = node.kids
        if not kids or kids[0].label != "NP" or any(k.label == "CC" for k in kids):
            return None
        node = kids[0]
    tags = [c for c in node.children if c.label != "POS"]
    return tags[-1] if tags else None


def np_plural(t: Tree) -> bool:
    if any(k.label == "CC" for k in t.kids):
        return True
    head = np_head(t)
    if head is not None and head.label in PRONOUN_TAGS:
        return head.word.lower() in {"they", "we", "you", "them", "us"}
    return head is not None and head.label in PLURAL_TAGS


def _check_np(t: Tree, role: str, rules: str) -> None:
    if any(k.label == "CC" for k in t.kids):
        if rules == "strict":
            raise Dropped(f"{role} is a coordination")
        return
    head = np_head(t)
    if head is None:
        raise Dropped(f"{role} has no head noun")
    if head.label in PRONOUN_TAGS:
        raise Dropped(f"{role} is a pronoun")
    if head.label not in NOUN_TAGS:
        raise Dropped(f"{role} head is not a noun (mis-tagged: {head.label} {head.word})")
    if rules == "strict" and not (is_base_np(t) and all(c.label in BASE_TAGS for c in t.children)):
        raise Dropped(f"{role} is not a base NP (strict)")


# ----------------------------------------------------------------------------- SOSWAP
@dataclass
class Example:
    kind: str
    rule: str
    source: Pair
    premise: Tree
    hypothesis: Tree
    detail: dict

    def as_json(self, n: int) -> dict:
        label = "contradiction" if self.kind == "soswap" else "neutral"
        return {"pairID": f"{self.source.pair_id}-{self.kind}",
                "sentence1": detokenize(self.premise.leaves()),
                "sentence2": detokenize(self.hypothesis.leaves()),
                "sentence1_parse": str(self.premise), "sentence2_parse": str(self.hypothesis),
                "gold_label": label, "annotator_labels": [], "type": self.kind,
                "rule": self.rule, "detail": self.detail,
                "source_pairID": self.source.pair_id, "source_line": self.source.line}


def _sentence(root: Tree, rules: str) -> tuple[Tree, int]:
    """The S under ROOT and the index of its subject NP."""
    s = root.kids[0] if root.label in {"ROOT", ""} and len(root.kids) == 1 else root
    if s.label != "S":
        raise Dropped(f"not a sentence (ROOT -> {s.label})")
    labels = [k.label for k in s.kids]
    i = 0
    if rules == "lenient":
        while i < len(labels) and labels[i] in {"PP", "ADVP", "SBAR", "S", ","}:
            i += 1
        if i and labels[i - 1] != ",":
            raise Dropped("fronted phrase without a comma")
    elif labels and labels[0] != "NP":
        raise Dropped("fronted phrase (strict)")
    rest = labels[i:]
    if rest[:2] != ["NP", "VP"] or any(x not in {".", "!", "?"} for x in rest[2:]):
        raise Dropped("not NP VP")
    return s, i


def _verb_chain(vp: Tree) -> tuple[Tree, Tree, Tree]:
    """(finite verb, main verb, lexical VP) of a VP."""
    finite = None
    node = vp
    while True:
        kids = node.kids
        if not kids or not kids[0].is_preterminal or not (kids[0].label.startswith("VB")
                                                          or kids[0].label == "MD"):
            raise Dropped("VP without a leading verb")
        if any(k.label == "CC" for k in kids):
            raise Dropped("coordinated verbs")
        finite = finite or kids[0]
        vps = [k for k in kids[1:] if k.label == "VP"]
        if len(kids) >= 2 and kids[1].label == "VP" and len(vps) == 1:
            if kids[0].word.lower() in COPULAS - {"is", "are", "was", "were", "am", "be",
                                                  "been", "being", "'s", "'re", "'m"}:
                raise Dropped("copular verb")
            node = kids[1]       # an auxiliary: walk down
            continue
        if len(vps) > 1:
            raise Dropped("coordinated verbs")
        return finite, kids[0], node


def inflect_present(verb: str, plural: bool) -> str:
    """A present-tense verb agreeing with a plural or singular subject (lenient
    SOSWAP): *eats* <-> *eat*, *watches* <-> *watch*, *carries* <-> *carry*."""
    w = verb
    if plural:
        if w == "has":
            return "have"
        if w.endswith("ies") and len(w) > 4:
            return w[:-3] + "y"
        if w.endswith(("sses", "shes", "ches", "xes", "zzes", "oes")):
            return w[:-2]
        return w[:-1] if w.endswith("s") else w
    if w == "have":
        return "has"
    if w.endswith("y") and w[-2:-1] not in set("aeiou"):
        return w[:-1] + "ies"
    if w.endswith(("s", "sh", "ch", "x", "z", "o")):
        return w + "es"
    return w + "s"


def soswap(pair: Pair, rules: str = "strict") -> Example:
    """The SOSWAP adversary of a pair's premise, or :class:`Dropped` saying why not."""
    root = pair.premise_tree.copy()
    s, i = _sentence(root, rules)
    subj, vp = s.kids[i], s.kids[i + 1]
    finite, main, lex = _verb_chain(vp)
    if main.word.lower() in COPULAS:
        raise Dropped("copular verb")
    j = lex.children.index(main)
    if j + 1 >= len(lex.children) or lex.children[j + 1].label != "NP":
        raise Dropped("no object NP directly after the verb")
    obj = lex.children[j + 1]
    _check_np(subj, "subject", rules)
    _check_np(obj, "object", rules)
    head, subj_head = np_head(obj), np_head(subj)
    if head is not None and head.word.lower() in ADVERBIAL_NOUNS:
        raise Dropped("object is an adverbial NP")
    if head is not None and subj_head is not None and \
            subj_head.word.lower() == head.word.lower():
        raise Dropped("subject and object have the same head")
    rule = ["svo"]
    new_plural = np_plural(obj)
    if new_plural != np_plural(subj):
        w = finite.word.lower()
        if (w, new_plural) in AGREE:
            finite.children[0] = _case_like(AGREE[(w, new_plural)], finite.word)
            rule.append("aux-agreement")
        elif finite.label in {"VBZ", "VBP"}:
            if rules == "strict":
                raise Dropped("main verb would change number (strict)")
            finite.children[0] = _case_like(inflect_present(w, new_plural), finite.word)
            finite.label = "VBP" if new_plural else "VBZ"
            rule.append("verb-agreement")
    if i > 0:
        rule.append("fronted-phrase")
    if rules == "lenient" and not (is_base_np(subj) and is_base_np(obj)):
        rule.append("complex-np")
    # swap, then repair capitalisation
    s.children[i], lex.children[j + 1] = obj, subj
    first_old = subj.preterminals()[0]
    if _lowercasable(first_old):
        first_old.children[0] = first_old.word[:1].lower() + first_old.word[1:]
    first = root.preterminals()[0]
    first.children[0] = _capitalise(first.word)
    return Example("soswap", "+".join(rule), pair, pair.premise_tree, root,
                   {"subject": " ".join(subj.leaves()), "object": " ".join(obj.leaves()),
                    "verb": main.word})


def _lowercasable(t: Tree) -> bool:
    """Whether a sentence-initial word may lose its capital when it moves inside."""
    return (t.label not in {"NNP", "NNPS"} and t.word != "I"
            and t.word.lower() not in PROPER_ADJECTIVES)


def _case_like(word: str, model: str) -> str:
    return _capitalise(word) if model[:1].isupper() else word


# ----------------------------------------------------------------------------- ADDAMOD
class AdjectiveLexicon:
    """(adjective, noun) counts from a corpus's parses: a ``JJ`` before the head noun
    of a base NP (lower-cased)."""

    def __init__(self):
        self.counts: Counter = Counter()
        self.trees = 0
        self._by_noun: dict[str, list[tuple[str, int]]] | None = None

    def add(self, tree: Tree) -> None:
        self.trees += 1
        self._by_noun = None
        for np in tree.subtrees():
            if not is_base_np(np):
                continue
            head = np.children[-1]
            if head.label not in NOUN_TAGS:
                continue
            for c in np.children[:-1]:
                if c.label == "JJ":
                    self.counts[(c.word.lower(), head.word.lower())] += 1

    def adjectives(self, noun_a: str, noun_b: str, min_count: int) -> list[str]:
        """The adjectives seen at least ``min_count`` times with each noun, sorted.
        Read through a noun -> (adjective, count) index built on the first call after
        an :meth:`add` (scanning every count for each noun pair made ADDAMOD's
        candidates quadratic in the lexicon's size); the counts are changed through
        :meth:`add` only."""
        if self._by_noun is None:
            self._by_noun = {}
            for (adj, n), c in self.counts.items():
                self._by_noun.setdefault(n, []).append((adj, c))
        a = {adj for adj, c in self._by_noun.get(noun_a, ()) if c >= min_count}
        return sorted(adj for adj in a if self.counts[(adj, noun_b)] >= min_count)

    @classmethod
    def from_pairs(cls, pairs: Iterable[Pair], hypotheses: bool = True) -> "AdjectiveLexicon":
        lex = cls()
        seen: set[str] = set()
        for p in pairs:
            if p.premise_parse not in seen:
                seen.add(p.premise_parse)
                lex.add(p.premise_tree)
            if hypotheses:
                lex.add(p.hypothesis_tree)
        return lex


def _entities(tree: Tree, rules: str) -> list[Tree]:
    tags = {"NN", "NNS"} | ({"NNP", "NNPS"} if rules == "lenient" else set())
    return [np for np in tree.subtrees()
            if is_base_np(np) and np.children[-1].label in tags
            and np.children[-1].word.isalpha()]


def _add_adjective(root: Tree, np_index: int, adjective: str, rules: str) -> Tree:
    """A copy of ``root`` with ``adjective`` before the noun compound of its
    ``np_index``-th base NP (in :func:`_entities` order)."""
    root = root.copy()
    np = _entities(root, rules)[np_index]
    kids = np.children
    k = len(kids) - 1
    while k > 0 and kids[k - 1].label in NOUN_TAGS:
        k -= 1
    adj = Tree("JJ", [adjective])
    kids.insert(k, adj)
    if k > 0 and kids[k - 1].word.lower() in {"a", "an"}:
        kids[k - 1].children[0] = _case_like(an(adjective), kids[k - 1].word)
    first = root.preterminals()[0]
    if first is adj:
        adj.children[0] = _capitalise(adjective)
        nxt = root.preterminals()[1]
        if _lowercasable(nxt):
            nxt.children[0] = nxt.word[:1].lower() + nxt.word[1:]
    return root


def addamod(pair: Pair, lexicon: AdjectiveLexicon, rules: str = "strict",
            seed: int = 1) -> Example:
    """The ADDAMOD adversary of a pair's premise, or :class:`Dropped` saying why not."""
    tree = pair.premise_tree
    nps = _entities(tree, rules)
    if len({np.children[-1].word.lower() for np in nps}) < 2:
        raise Dropped("fewer than two noun entities")
    min_count = 2 if rules == "strict" else 1
    candidates = []
    for a in range(len(nps)):
        for b in range(a + 1, len(nps)):
            na, nb = nps[a].children[-1].word.lower(), nps[b].children[-1].word.lower()
            if na == nb:
                continue
            has_adj = any(c.label.startswith("JJ") for c in nps[a].children + nps[b].children)
            if rules == "strict" and has_adj:
                continue
            present = {c.word.lower() for c in nps[a].children + nps[b].children}
            for adj in lexicon.adjectives(na, nb, min_count):
                if adj not in present:
                    candidates.append((a, b, adj))
    if not candidates:
        raise Dropped("no adjective seen with both nouns" + (
            " (or a noun already modified, strict)" if rules == "strict" else ""))
    rng = random.Random(f"{seed}\t{pair.premise}")
    a, b, adj = rng.choice(candidates)
    if rng.random() < 0.5:
        a, b = b, a
    premise = _add_adjective(tree, a, adj, rules)
    hypothesis = _add_adjective(tree, b, adj, rules)
    rule = "np+np" + ("+stacked" if any(
        c.label.startswith("JJ") for c in nps[a].children + nps[b].children) else "")
    return Example("addamod", rule, pair, premise, hypothesis,
                   {"adjective": adj, "premise_noun": nps[a].children[-1].word,
                    "hypothesis_noun": nps[b].children[-1].word,
                    "lexicon_counts": [lexicon.counts[(adj, nps[a].children[-1].word.lower())],
                                       lexicon.counts[(adj, nps[b].children[-1].word.lower())]]})


# ----------------------------------------------------------------------------- files
#: the last lexicon :func:`_lexicon` read, by its files' (path, inode, size, modification time)
_last_lexicon: tuple[tuple, AdjectiveLexicon] | None = None


def _lexicon(sources: list[str], show: bool) -> AdjectiveLexicon:
    """The adjective lexicon of the ``sources`` files' parses.  The last one read is
    kept while its files are unchanged: a dataset's build asks for the training files'
    lexicon twice (the evaluation set's adversaries and the training pool's), and
    reading it means parsing every training sentence."""
    global _last_lexicon
    key = tuple((src, st.st_ino, st.st_size, st.st_mtime_ns) for src in sources
                for st in [Path(src).stat()] if Path(src).is_file())
    if _last_lexicon is not None and _last_lexicon[0] == key and len(key) == len(sources):
        return _last_lexicon[1]
    from tqdm import tqdm

    lexicon = AdjectiveLexicon()
    lex_stats = ReadStats()
    for src in sources:
        for p in tqdm(read_jsonl(src, stats=lex_stats), desc=f"adjective lexicon {Path(src).name}",
                      unit="pair", disable=not show):
            lexicon.add(p.premise_tree)
            lexicon.add(p.hypothesis_tree)
    _last_lexicon = (key, lexicon)
    return lexicon


def build(input_path: str | Path, out: str | Path, *, rules: str = "strict", seed: int = 1,
          lexicon_from: list[str | Path] | None = None, show: bool = True) -> dict:
    """``out/soswap.jsonl``, ``out/addamod.jsonl`` (SNLI's format plus ``type``,
    ``rule``, ``detail`` and the source pair) and ``out/manifest.json`` (counts, yield,
    drop reasons); reused when the manifest matches."""
    from tqdm import tqdm

    if rules not in RULE_SETS:
        raise DataError(f"unknown rule set '{rules}' ({', '.join(RULE_SETS)})")
    out = Path(out)
    sources = [str(Path(p).resolve()) for p in (lexicon_from or [input_path])]
    args = {"input": str(Path(input_path).resolve()), "rules": rules, "seed": seed,
            "lexicon_from": sources}
    if is_complete(out, GENERATOR, args, version=VERSION):
        return json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    stats = ReadStats()
    pairs = list(read_jsonl(input_path, stats=stats))
    if not pairs:
        raise DataError(f"{input_path}: no labelled pairs (all {sum(stats.skipped.values())} "
                        "have the gold label '-')")
    lexicon = _lexicon(sources, show)
    premises: dict[str, Pair] = {}
    for p in pairs:
        premises.setdefault(p.premise, p)
    made = {"soswap": [], "addamod": []}
    dropped = {"soswap": Counter(), "addamod": Counter()}
    rules_used = {"soswap": Counter(), "addamod": Counter()}
    for p in tqdm(premises.values(), desc="adversaries", unit="premise", disable=not show):
        for kind, fn in (("soswap", lambda q: soswap(q, rules)),
                         ("addamod", lambda q: addamod(q, lexicon, rules, seed))):
            try:
                ex = fn(p)
            except Dropped as e:
                dropped[kind][str(e)] += 1
                continue
            made[kind].append(ex)
            rules_used[kind][ex.rule] += 1
    for kind, exs in made.items():
        with atomic_open(out / f"{kind}.jsonl") as fh:
            for n, ex in enumerate(exs):
                fh.write(json.dumps(ex.as_json(n), ensure_ascii=False) + "\n")
    n_prem = len(premises)
    counts = {"input_pairs": len(pairs), "unique_premises": n_prem,
              **{k: len(v) for k, v in made.items()}}
    return write_manifest(
        out, generator=GENERATOR, generator_version=VERSION, seed=seed, args=args,
        files=["soswap.jsonl", "addamod.jsonl"], counts=counts,
        dropped={k: dict(v.most_common()) for k, v in dropped.items()},
        statistics={"yield_per_premise": {k: round(len(v) / max(1, n_prem), 4)
                                          for k, v in made.items()},
                    "yield_per_pair": {k: round(len(v) / max(1, len(pairs)), 4)
                                       for k, v in made.items()},
                    "rules": {k: dict(v.most_common()) for k, v in rules_used.items()},
                    "input_skipped": stats.as_dict()["skipped"],
                    "lexicon_pairs": len(lexicon.counts), "lexicon_trees": lexicon.trees,
                    "paper_snli_dev": {"soswap": 971, "addamod": 1783}},
        packages=("compsuite", "sacremoses"))


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--input", required=True, help="an SNLI / MultiNLI jsonl file with parses")
    ap.add_argument("--out", required=True)
    ap.add_argument("--rules", choices=RULE_SETS, default="strict")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lexicon-from", nargs="+", metavar="JSONL",
                    help="files whose parses give the ADDAMOD adjective lexicon (the paper: "
                         "SNLI's training data; default: --input itself)")


def run(a: argparse.Namespace) -> int:
    m = build(a.input, a.out, rules=a.rules, seed=a.seed, lexicon_from=a.lexicon_from)
    c = m["counts"]
    print(f"{a.out}: {c['soswap']} SOSWAP, {c['addamod']} ADDAMOD from "
          f"{c['unique_premises']} premises ({c['input_pairs']} pairs); paper on SNLI dev: "
          "971 / 1,783", file=sys.stderr)
    return 0
