"""Trees of the SGET grammar (:mod:`.grammar`) built by hand, and what can be read off
a tree, built or parsed.

The sentence generator builds every sentence as a tree of :data:`.grammar.GRAMMAR`
(each node checked against the grammar's rules by :func:`node`), renders the English
from its leaves (:func:`english`) and the Japanese from the tree itself
(:func:`.translate.translate_tree`).  The readers (:func:`depths`,
:func:`argument_pairs`, :func:`content_words`, :func:`construction`) work on parsed
trees too, so the tests and the reference comparison use them on the written files.
"""
from __future__ import annotations


from .grammar import GRAMMAR, Gap, Leaf, Node, Rule, Tree
from .lexicon import Adjective, Noun, Preposition, ProperNoun, Verb

_RULES = {(r.lhs, r.name, r.rhs): r for rules in GRAMMAR.values() for r in rules}


class GrammarMismatch(ValueError):
    """A node the grammar has no rule for: a bug of the generator."""


def rule(lhs: str, name: str, *rhs: str) -> Rule:
    try:
        return _RULES[(lhs, name, tuple(rhs))]
    except KeyError:
        raise GrammarMismatch(f"no rule {lhs} -> {' '.join(rhs)} [{name}]") from None


def node(lhs: str, name: str, *children: tuple[str, Tree]) -> Node:
    """A node from (symbol, subtree) pairs: the rule is looked up by its left-hand
    side, name and the symbols, so a tree can only be built from the grammar's rules."""
    r = rule(lhs, name, *(s for s, _ in children))
    return Node(r, tuple(c for _, c in children))


def word(w: str) -> tuple[str, Leaf]:
    """A word of the grammar itself (that, to, was, by, did, who, what, punctuation)."""
    return w, Leaf(w, w)


def det(d: str) -> tuple[str, Leaf]:
    return "@DET", Leaf(d, "DET", d)


def noun_leaf(n: Noun) -> tuple[str, Leaf]:
    return "@N", Leaf(n.english, "N", n)


def proper_leaf(p: ProperNoun) -> tuple[str, Leaf]:
    return "@PN", Leaf(p.english, "PN", p)


def adj_leaf(a: Adjective) -> tuple[str, Leaf]:
    return "@ADJ", Leaf(a.english, "ADJ", a)


def prep_leaf(p: Preposition) -> tuple[str, Leaf]:
    return "@P", Leaf(p.english, "P", p)


def verb_leaf(v: Verb, frame: str, form: str) -> tuple[str, Leaf]:
    return f"@V.{frame}.{form}", Leaf(v.forms()[form], f"V.{frame}.{form}", v)


GAP = ("_", Gap())


# ----------------------------------------------------------------------------- reading
def leaves(tree: Tree) -> list[Leaf]:
    """The words of a tree, in order."""
    out: list[Leaf] = []
    stack = [tree]
    while stack:
        n = stack.pop()
        if type(n) is Node:
            stack.extend(reversed(n.children))
        elif type(n) is Leaf:
            out.append(n)
    return out


def english(tree: Tree, words: list[Leaf] | None = None) -> str:
    """The sentence: words separated by spaces, ``.`` and ``?`` attached to the word
    before, ``,`` standing alone (as in the released data), first letter capitalised."""
    toks = [leaf.token for leaf in (words if words is not None else leaves(tree))]
    out = " ".join(toks)
    if toks and toks[-1] in (".", "?"):
        out = out[:-2] + toks[-1]
    if tree.rule.name == "primitive":  # a word alone keeps its case ("thief", "Coco")
        return out
    return out[:1].upper() + out[1:]


_CONTENT = (Noun, ProperNoun, Adjective)


def content_words(tree: Tree, words: list[Leaf] | None = None) -> list[str]:
    """Nouns, proper nouns, adjectives and verbs (as lemmas), in order."""
    out = []
    for leaf in (words if words is not None else leaves(tree)):
        e = leaf.entry
        if e is None or type(e) is str:
            continue
        if type(e) is Verb:
            out.append(e.base)
        elif isinstance(e, _CONTENT):
            out.append(e.english)
    return out


RECURSION_KINDS = ("cp", "pp", "rc", "adj")


def _is(kind: str, n: Node) -> bool:
    if kind == "cp":
        return n.rule.name == "cp"
    if kind == "pp":
        return n.rule.lhs == "PP"
    if kind == "rc":
        return n.rule.lhs == "RC"
    return n.rule.lhs == "NBAR" and n.rule.name == "adj"


def depth(tree: Tree, kind: str) -> int:
    """Recursion depth of one kind: the most nodes of that kind on one path from the
    root (``cp``: that-clauses, ``pp``: prepositional phrases, ``rc``: relative
    clauses (centre embedding nests them), ``adj``: adjectives before one noun)."""
    if not isinstance(tree, Node):
        return 0
    below = max((depth(c, kind) for c in tree.children), default=0)
    return below + (1 if _is(kind, tree) else 0)


def depths(tree: Tree) -> dict[str, int]:
    """:func:`depth` of every kind, in one pass."""
    out = dict.fromkeys(RECURSION_KINDS, 0)
    stack = [(tree, 0, 0, 0, 0)]
    while stack:
        n, cp, pp, rc, adj = stack.pop()
        if not isinstance(n, Node):
            continue
        r = n.rule
        if r.name == "cp":
            cp += 1
        elif r.lhs == "PP":
            pp += 1
        elif r.lhs == "RC":
            rc += 1
        elif r.lhs == "NBAR" and r.name == "adj":
            adj += 1
        if cp > out["cp"]:
            out["cp"] = cp
        if pp > out["pp"]:
            out["pp"] = pp
        if rc > out["rc"]:
            out["rc"] = rc
        if adj > out["adj"]:
            out["adj"] = adj
        stack.extend((c, cp, pp, rc, adj) for c in n.children)
    return out


def head(np: Node):
    """The lexical entry at the head of an NP (a noun or a proper noun)."""
    if np.rule.name == "proper":
        return np.children[0].entry
    nbar = np.children[1]
    while nbar.rule.name == "adj":
        nbar = nbar.children[1]
    return nbar.children[0].entry


def _np_or_gap(t: Tree, filler):
    if isinstance(t, Gap):
        return filler
    return head(t)


def argument_pairs(tree: Tree) -> list[tuple[Verb, str, object, str, str]]:
    """Every (verb, role, noun, frame, surface) of a tree: ``role`` is ``theme``,
    ``recipient`` or ``agent``; ``surface`` is ``subject`` for the subject of an active
    or unaccusative verb and for a passive double object's recipient, ``object``
    otherwise (a passive's theme subject is the verb's direct object, as
    :func:`.selection.compatible` sees it); an extracted argument is the head of its
    relative clause or of the topicalised phrase (a wh-word is no noun and is left
    out)."""
    pairs = _ArgumentPairs()
    pairs.walk(tree)
    return pairs.out


class _ArgumentPairs:
    """The walk behind :func:`argument_pairs`: ``out`` collects the pairs in the order
    met; ``fillers[-1]`` is what a gap of the clause being walked stands for (the head
    of a relative clause or of a topicalised phrase; None for a wh-word)."""

    def __init__(self):
        self.out: list = []
        self.fillers: list = [None]

    def add(self, verb, role, noun, frame, surface) -> None:
        if noun is not None:
            self.out.append((verb, role, noun, frame, surface))

    def argument(self, t: Tree):
        return _np_or_gap(t, self.fillers[-1])

    def with_filler(self, filler, n: Tree) -> None:
        self.fillers.append(filler)
        self.walk(n)
        self.fillers.pop()

    # ------------------------------------------------------------------ verb phrases
    def vp(self, n: Node, subject) -> None:
        if n.rule.name.startswith("passive"):
            self.passive(n, subject)
        else:
            self.active(n, subject)

    def passive(self, n: Node, subject) -> None:
        name, kids = n.rule.name, n.children
        verb = kids[1].entry
        frame = kids[1].category.split(".")[1]
        rest = list(kids[2:])
        if name.endswith("_by"):
            self.add(verb, "agent", head(rest[-1]), frame, "object")
            rest = rest[:-2]
        if name.startswith("passive_do"):
            self.add(verb, "recipient", subject, frame, "subject")
            self.add(verb, "theme", head(rest[0]), frame, "object")
        else:  # a passive's subject is the verb's (logical) direct object
            self.add(verb, "theme", subject, frame, "object")
            if name.startswith("passive_to"):
                self.add(verb, "recipient", head(rest[1]), frame, "object")

    def active(self, n: Node, subject) -> None:
        name, kids = n.rule.name, n.children
        leaf = kids[0]
        verb, frame = leaf.entry, leaf.category.split(".")[1]
        if name == "unacc":
            self.add(verb, "theme", subject, frame, "subject")
            return
        self.add(verb, "agent", subject, frame, "subject")
        if name == "trans":
            self.add(verb, "theme", self.argument(kids[1]), frame, "object")
        elif name == "dat_to":
            self.add(verb, "theme", self.argument(kids[1]), frame, "object")
            self.add(verb, "recipient", self.argument(kids[3]), frame, "object")
        elif name == "dat_do":
            self.add(verb, "recipient", self.argument(kids[1]), frame, "object")
            self.add(verb, "theme", self.argument(kids[2]), frame, "object")

    def verb_phrase(self, n: Node, subject) -> None:
        """A verb phrase's pairs, then those of what it holds (the agent of an
        infinitive or a gerund phrase is the matrix subject)."""
        self.vp(n, subject)
        for c in n.children:
            if isinstance(c, Node) and (c.rule.lhs == "VPI" or c.rule.lhs.startswith("VPG")):
                self.verb_phrase(c, subject)
            else:
                self.walk(c)

    # ------------------------------------------------------------------ everything else
    def walk(self, n: Tree) -> None:
        if not isinstance(n, Node):
            return
        lhs, name, kids = n.rule.lhs, n.rule.name, n.children
        if lhs.startswith("CLAUSE"):
            subject = head(kids[0])
            self.walk(kids[0])
            self.verb_phrase(kids[1], subject)
        elif lhs == "STATEMENT" and name == "topic":
            self.walk(kids[0])
            self.with_filler(head(kids[0]), kids[2])
        elif lhs == "QUESTION":
            if name == "wh_subject":
                self.verb_phrase(kids[1], None)
            else:
                self.with_filler(None, kids[2])
        elif lhs == "NP" and name == "np_rc":
            self.relative_clause(n)
        else:
            for c in kids:
                self.walk(c)

    def relative_clause(self, n: Node) -> None:
        """An NP with a relative clause: its head is the clause's subject or what the
        clause's gap stands for."""
        kids = n.children
        self.walk(kids[1])
        rc = kids[2]
        h = head(n)
        if rc.rule.name == "rc_subject":
            self.verb_phrase(rc.children[1], h)
        else:
            self.with_filler(h, rc.children[1])


def construction(tree: Node) -> str:
    """A coarse label of a sentence's shape, for comparing distributions: the
    main clause's verb-phrase rule (``trans``, ``passive_by`` ...), ``topic``,
    ``concat``, ``wh_subject``/``wh_object`` or ``primitive``."""
    r = tree.rule.name
    if r == "primitive":
        return "primitive"
    if r == "question":
        return tree.children[0].rule.name
    statements = tree.children[0]
    if statements.rule.name == "concat":
        return "concat"
    st = statements.children[0]
    if st.rule.name == "topic":
        return "topic"
    return st.children[0].children[1].rule.name
