"""The English grammar of SGET (Kumon et al. 2024, section 3.2.2 and appendix B: the
COGS/SLOG phrase-structure rules extended with adjectives, tense, topicalisation and
concatenation), written once as data for both the rule-based translator (which parses
with it) and the sentence generator (which samples from it).

:data:`GRAMMAR` maps a nonterminal to its alternatives, each a :class:`Rule` with a
name (the transduction rules of :mod:`.translate` are keyed by it) and a right-hand
side of symbols:

* ``NP``, ``VP[past]`` ... nonterminals (upper case, an optional ``[feature]``);
* ``@N``, ``@PN``, ``@ADJ``, ``@DET``, ``@P``, ``@V.<frame>.<form>``: a word of that
  lexicon category (:meth:`.lexicon.Lexicon.lookup`), e.g. ``@V.trans.past`` a
  simple-past form of a verb with the transitive frame;
* ``_``: the gap of an extracted argument (relative clauses, topicalisation,
  wh-questions); it spans no word;
* anything else: that word itself (matched case-insensitively).

Rules with a tense feature ``{t}`` are written once and expanded over the tenses they
take (:data:`TENSES`: the simple ``past`` and ``pres`` forms; ``base`` for the bare verb
after *did*).  The order of the alternatives is the order of preference when a sentence
has more than one parse.

Structures (with the paper's examples): intransitive (unergative and unaccusative),
transitive, ditransitive with a ``to``-dative or a double object, passives with and
without a ``by``-phrase (theme or recipient subject), ``that``-complements (CP
recursion), ``to``-infinitives, prepositional phrases modifying nouns (recursive, each
attached to the nearest noun: "the yogurt in a coffin on a keyboard"), adjective
sequences, subject- and object-extracted relative clauses (centre embedding: "a book
that the child that a mother knew found"; indirect-object extraction: "the guy that Ben
gave a book to"), subject and object wh-questions (including a gap in a
``that``-clause, "What did Liam think that the girl break?"), topicalisation of an
object ("The book that a turtle knew , the child changed."), concatenated
sentences (clauses run together before one full stop, "A cat ran the dog slept .", as
Wu et al. 2023 build them) and primitive exposures (a noun, name or verb on its own).  Prepositional phrases only modify nouns: a PP after an object belongs to
the object (section 3.2.3), so the grammar has no verb-phrase attachment.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence, Union

from .lexicon import Lexicon

START = "ROOT"
TENSES = ("past", "pres")
GAP = "_"


@dataclass(frozen=True)
class Rule:
    lhs: str
    name: str
    rhs: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.lhs} -> {' '.join(self.rhs)}  [{self.name}]"


def _rules() -> list[Rule]:
    out: list[Rule] = []

    def add(lhs: str, name: str, *rhs: str, tenses: Sequence[str] = ()) -> None:
        for t in tenses or (None,):
            fill = (lambda s: s.replace("{t}", t)) if t else (lambda s: s)
            out.append(Rule(fill(lhs), name, tuple(fill(s) for s in rhs)))

    every = TENSES
    add("ROOT", "question", "QUESTION", "?")
    add("ROOT", "statements", "STATEMENTS")
    add("ROOT", "primitive", "PRIMITIVE")
    # concatenation (the training set's long sentences, after Wu et al. 2023): clauses
    # one after another with a single full stop, "A cat ran the dog slept ."
    add("STATEMENTS", "single", "STATEMENT", ".")
    add("STATEMENTS", "concat", "STATEMENT", "STATEMENTS")
    add("STATEMENT", "declarative", "CLAUSE")
    add("STATEMENT", "topic", "NP", ",", "CLAUSE_GAP[{t}]", tenses=every)

    add("CLAUSE", "clause", "NP", "VP[{t}]", tenses=every)
    add("CLAUSE_GAP[{t}]", "clause", "NP", "VPG[{t}]", tenses=every + ("base",))

    add("QUESTION", "wh_subject", "WH", "VP[{t}]", tenses=every)
    add("QUESTION", "wh_object", "WH", "did", "CLAUSE_GAP[base]")
    add("WH", "who", "who")
    add("WH", "what", "what")

    # verb phrases with every argument present
    for lhs, t in [("VP[{t}]", "{t}"), ("VPI", "base")]:
        tenses = every if lhs == "VP[{t}]" else ()
        add(lhs, "intr", f"@V.intr.{t}", tenses=tenses)
        add(lhs, "unacc", f"@V.unacc.{t}", tenses=tenses)
        add(lhs, "trans", f"@V.trans.{t}", "NP", tenses=tenses)
        add(lhs, "dat_to", f"@V.dat_to.{t}", "NP", "to", "NP", tenses=tenses)
        add(lhs, "dat_do", f"@V.dat_do.{t}", "NP", "NP", tenses=tenses)
        add(lhs, "cp", f"@V.cp.{t}", "that", "CLAUSE", tenses=tenses)
    add("VP[{t}]", "inf", "@V.inf.{t}", "to", "VPI", tenses=every)
    # passives: theme subject (by-phrase optional), recipient subject of a double object
    for frame in ("trans", "dat_to", "dat_do"):
        add("VP[past]", "passive", "was", f"@V.{frame}.pp")
        add("VP[past]", "passive_by", "was", f"@V.{frame}.pp", "by", "NP")
    add("VP[past]", "passive_to", "was", "@V.dat_to.pp", "to", "NP")
    add("VP[past]", "passive_to_by", "was", "@V.dat_to.pp", "to", "NP", "by", "NP")
    add("VP[past]", "passive_do", "was", "@V.dat_do.pp", "NP")
    add("VP[past]", "passive_do_by", "was", "@V.dat_do.pp", "NP", "by", "NP")

    # verb phrases with one argument extracted (the gap "_")
    tg = every + ("base",)
    add("VPG[{t}]", "trans", "@V.trans.{t}", GAP, tenses=tg)
    add("VPG[{t}]", "dat_to", "@V.dat_to.{t}", GAP, "to", "NP", tenses=tg)
    add("VPG[{t}]", "dat_do", "@V.dat_do.{t}", "NP", GAP, tenses=tg)
    add("VPG[{t}]", "dat_to", "@V.dat_to.{t}", "NP", "to", GAP, tenses=tg)
    add("VPG[base]", "cp", "@V.cp.base", "that", "CLAUSE_GAP[base]")

    # primitive exposures: a word on its own
    add("PRIMITIVE", "word", "@N")
    add("PRIMITIVE", "word", "@PN")
    for frame in ("intr", "unacc", "trans", "dat_to", "dat_do", "cp"):
        add("PRIMITIVE", "word", f"@V.{frame}.base")

    # noun phrases
    add("NP", "np", "@DET", "NBAR")
    add("NP", "np_pp", "@DET", "NBAR", "PP")
    add("NP", "np_rc", "@DET", "NBAR", "RC")
    add("NP", "proper", "@PN")
    add("NBAR", "noun", "@N")
    add("NBAR", "adj", "@ADJ", "NBAR")
    add("PP", "pp", "@P", "NP")
    add("RC", "rc_subject", "that", "VP[{t}]", tenses=every)
    add("RC", "rc_object", "that", "CLAUSE_GAP[{t}]", tenses=every)
    return out


def _index(rules: Iterable[Rule]) -> dict[str, tuple[Rule, ...]]:
    g: dict[str, list[Rule]] = {}
    for r in rules:
        g.setdefault(r.lhs, []).append(r)
    return {k: tuple(v) for k, v in g.items()}


#: nonterminal -> its alternatives, in order of preference
GRAMMAR: Mapping[str, tuple[Rule, ...]] = _index(_rules())


def is_nonterminal(symbol: str) -> bool:
    return symbol[:1].isupper()


def is_preterminal(symbol: str) -> bool:
    return symbol.startswith("@")


def check(grammar: Mapping[str, tuple[Rule, ...]] = GRAMMAR) -> None:
    """Every nonterminal used is defined and reachable from :data:`START`."""
    used = {s for rules in grammar.values() for r in rules for s in r.rhs if is_nonterminal(s)}
    missing = used - set(grammar)
    if missing:
        raise ValueError(f"undefined nonterminal(s): {sorted(missing)}")
    seen, todo = set(), [START]
    while todo:
        sym = todo.pop()
        if sym in seen:
            continue
        seen.add(sym)
        todo += [s for r in grammar[sym] for s in r.rhs if is_nonterminal(s)]
    if set(grammar) - seen:
        raise ValueError(f"unreachable nonterminal(s): {sorted(set(grammar) - seen)}")


# ----------------------------------------------------------------------------- trees
@dataclass(frozen=True)
class Leaf:
    """A word: its token, the category it was parsed as and its lexicon entry (None for
    the grammar's own words such as *that*)."""

    token: str
    category: str
    entry: object = None


@dataclass(frozen=True)
class Gap:
    """The position of an extracted argument."""


@dataclass(frozen=True)
class Node:
    rule: Rule
    children: tuple[Union["Node", Leaf, Gap], ...]


Tree = Union[Node, Leaf, Gap]


class ParseFailure(ValueError):
    """No parse: ``position`` is the first token no rule could consume, ``expected``
    the symbols tried there."""

    def __init__(self, message: str, position: int, expected: tuple[str, ...]):
        super().__init__(message)
        self.position = position
        self.expected = expected


class _Parser:
    """Top-down parsing with memoisation over (symbol, start): every symbol yields, per
    end position, its first tree in the order of the rules (the grammar has no left
    recursion), so a sentence is parsed in polynomial time and ambiguity is resolved
    by rule order."""

    def __init__(self, tokens: Sequence[str], lexicon: Lexicon,
                 grammar: Mapping[str, tuple[Rule, ...]]):
        self.tokens = tokens
        self.lower = [t.lower() for t in tokens]
        self.grammar = grammar
        self.cats: list[dict[str, object]] = []
        for i, tok in enumerate(tokens):
            found: dict[str, object] = {}
            for cand in ((tok, tok.lower()) if i == 0 else (tok,)):
                for cat, entry in lexicon.lookup(cand):
                    found.setdefault(cat, entry)
            self.cats.append(found)
        self.memo: dict[tuple[str, int], dict[int, Tree]] = {}
        self.furthest = 0
        self.expected: set[str] = set()

    def _fail(self, i: int, symbol: str) -> None:
        if i > self.furthest:
            self.furthest, self.expected = i, set()
        if i == self.furthest:
            self.expected.add(symbol)

    def symbol(self, sym: str, i: int) -> dict[int, Tree]:
        if sym == GAP:
            return {i: Gap()}
        if is_preterminal(sym):
            entry = self.cats[i].get(sym[1:]) if i < len(self.tokens) else None
            if entry is None:
                self._fail(i, sym)
                return {}
            return {i + 1: Leaf(self.tokens[i], sym[1:], entry)}
        if not is_nonterminal(sym):
            if i < len(self.tokens) and self.lower[i] == sym:
                return {i + 1: Leaf(self.tokens[i], sym)}
            self._fail(i, repr(sym))
            return {}
        key = (sym, i)
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = {}  # guards against (absent) left recursion
        out: dict[int, Tree] = {}
        for rule in self.grammar[sym]:
            for j, kids in self.sequence(rule.rhs, 0, i):
                out.setdefault(j, Node(rule, kids))
        self.memo[key] = out
        return out

    def sequence(self, rhs: tuple[str, ...], k: int, i: int):
        if k == len(rhs):
            yield i, ()
            return
        for j, tree in self.symbol(rhs[k], i).items():
            for end, rest in self.sequence(rhs, k + 1, j):
                yield end, (tree,) + rest


def parse(tokens: Sequence[str], lexicon: Lexicon,
          grammar: Mapping[str, tuple[Rule, ...]] = GRAMMAR, start: str = START) -> Node:
    """The preferred parse of ``tokens`` as ``start``; :class:`ParseFailure` names the
    first token no rule could take and the symbols expected there."""
    p = _Parser(tokens, lexicon, grammar)
    tree = p.symbol(start, 0).get(len(tokens))
    if isinstance(tree, Node):
        return tree
    pos = p.furthest
    where = (f"at token {pos + 1} {tokens[pos]!r}" if pos < len(tokens)
             else "at the end of the sentence")
    expected = tuple(sorted(p.expected))
    raise ParseFailure(f"no rule of the grammar continues {where} (expected "
                       f"{describe(expected)})", pos, expected)


_CATEGORY_NAMES = {"DET": "a determiner", "N": "a noun", "PN": "a proper noun",
                   "ADJ": "an adjective", "P": "a preposition"}


def describe(symbols: Iterable[str]) -> str:
    """Readable list of terminal symbols: ``'that' or a noun or a verb in the past form
    with frame intr/trans``."""
    words, cats = [], []
    verbs: dict[str, list[str]] = {}
    for sym in sorted(set(symbols)):
        if sym.startswith("@V."):
            _, frame, form = sym.split(".")
            verbs.setdefault(form, []).append(frame)
        elif is_preterminal(sym):
            cats.append(_CATEGORY_NAMES.get(sym[1:], sym[1:]))
        else:
            words.append(sym)
    cats += [f"a verb in the {form} form with frame {'/'.join(frames)}"
             for form, frames in sorted(verbs.items())]
    return " or ".join(words + cats) or "nothing"
