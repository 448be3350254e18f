"""Binary parse trees as shift-reduce transitions, and the other per-word inputs of the
tree and feature-based NLI models (S-TLSTM, G-TLSTM, DIIN; Nie, Wang and Bansal 2019).

A binary tree over n words is written as its post-order walk: ``S`` shifts the next
word, ``R`` reduces the top two stack items into one node; 2n-1 tokens (a one-word
sentence is just ``S``).  ``( ( Two women ) ( are . ) )`` is ``S S R S S R R``.

Where the trees come from:

* SNLI and MultiNLI ship ``sentence{1,2}_binary_parse``, unlabelled brackets over the
  same Penn Treebank tokens as ``sentence{1,2}_parse`` (:func:`read_binary_parse`);
* our adversary sets and the synthetic corpus carry the constituency parse only, so
  :func:`binarise` binarises it the way the shipped binary parses are: unary chains
  collapsed, and each node of three or more children binarised head-outward: the
  head child first takes its right sisters one at a time, nearest first, then its
  left sisters, nearest first (``S -> NP VP .`` gives ``(NP (VP .))``, ``VP -> VBG NP
  PP`` gives ``((VBG NP) PP)``).  The head child comes from :data:`HEAD_RULES`, Collins'
  (1999, appendix A) head table as the Stanford parser revised it, and the
  coordination rule (a head preceded by ``CC`` gives way to the child before the
  ``CC``: ``NP -> NP CC NP`` is headed by the first ``NP``; :func:`head_child`).

Agreement, measured by :func:`agreement` on the reference sample of SNLI dev
(``../shared/reference/nli/snli_1.0_dev_sample.jsonl``: 1,289 lines, 2,578 sentences,
1,713 distinct parses): our binarisation of ``sentence_parse`` equals the shipped
``sentence_binary_parse`` for 2,578 of 2,578 sentences (100.0%).  The table was chosen
on that sample: Collins' original table gave 98.6%, with his NP rule read
position-first 99.3% (the rest: ``ADJP -> JJ , JJ CC JJ``, ``PRN -> , IN S``, ``VP ->
JJ NP PP``, ``PP -> PP , PP , CC RB PP``), the Stanford revision 100%; no other file
with shipped binary parses was at hand to check it on unseen sentences.  Labels the
sample lacks (``SINV``, ``WHNP``, ...) follow the same table, untested.

Words are written as the raw streams write them (:data:`PTB_TOKENS`: ``-LRB-`` as
``(``, ...), for the leaves of a binary parse too, which must equal the words of the
constituency parse (an error naming the file and line otherwise).  :func:`pos_tags`
gives one Penn Treebank tag per word (a preterminal's label), :func:`chars_line` the
characters of each word, words separated by :data:`WORD_SEP`.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from compsuite.foundation.errors import DataError

from .snli import Tree

SHIFT, REDUCE = "S", "R"
#: the token between two words' characters in a ``chars`` line
WORD_SEP = "<w>"
#: the per-word streams beside the words (``{split}.premise_<name>``, ...)
FEATURES = ("pos", "tree", "chars")
#: Penn Treebank bracket and quote tokens, written as the characters they stand for
PTB_TOKENS = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{",
              "-RCB-": "}", "``": '"', "''": '"'}

#: Head rules: label -> steps ``(how, labels)``, tried in order.  ``left`` / ``right``:
#: for each label of the step in turn, the children are scanned from that end, the
#: first match is the head (label first); ``leftdis`` / ``rightdis``: the first child
#: from that end whose label is any of the step's (position first).  Nothing matching
#: after the last step: the first child from the last step's end that is not
#: punctuation.  This is Collins' table (1999, appendix A) as revised in the Stanford
#: parser's ModCollinsHeadFinder (JJ searched from the right in ADJP, PP after the
#: prepositions in PP, a PRN headed by its phrase, JJ before NP in VP, NP's own rule
#: as position-first steps), without the labels its PCFG never writes.  An unknown
#: label takes its leftmost child that is not punctuation.
HEAD_RULES: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    label: tuple((how, tuple(names.split())) for how, names in steps)
    for label, steps in {
        "ADJP": (("left", "$"), ("rightdis", "NNS NN JJ JJR JJS QP VBN VBG"),
                 ("left", "ADJP"), ("rightdis", "DT RB RBR CD IN VBD"),
                 ("left", "ADVP NP")),
        "ADVP": (("left", "ADVP IN"), ("rightdis", "RB RBR RBS JJ JJR JJS"),
                 ("rightdis", "RP DT NN CD NP VBN NNP CC FW NNS ADJP")),
        "CONJP": (("right", "CC RB IN"),),
        "FRAG": (("right", ""),),
        "INTJ": (("left", ""),),
        "LST": (("right", "LS :"),),
        "NAC": (("rightdis", "NN NNS NNP NNPS"),
                ("left", "NP NAC EX $ CD QP PRP VBG JJ JJS JJR ADJP FW")),
        "NP": (("rightdis", "NN NNP NNPS NNS NX POS JJR"), ("left", "NP PRP"),
               ("rightdis", "$ ADJP PRN FW"), ("right", "CD"),
               ("rightdis", "JJ JJS RB QP DT WDT RBR ADVP")),
        "PP": (("right", "IN TO VBG VBN RP FW JJ SYM"), ("left", "PP")),
        "PRN": (("left", "VP NP PP SQ S SINV SBAR ADJP ADVP INTJ WHNP NAC VBP JJ NN NNP"),),
        "PRT": (("right", "RP"),),
        "QP": (("left", "$ IN NNS NN JJ CD PDT DT RB NCD QP JJR JJS"),),
        "ROOT": (("left", "S SQ SINV SBAR FRAG"),),
        "RRC": (("left", "RRC"), ("right", "VP ADJP NP PP ADVP")),
        "S": (("left", "TO VP S FRAG SBAR ADJP UCP NP"),),
        "SBAR": (("left", "WHNP WHPP WHADVP WHADJP IN DT S SQ SINV SBAR FRAG"),),
        "SBARQ": (("left", "SQ S SINV SBARQ FRAG SBAR"),),
        "SINV": (("left", "VBZ VBD VBP VB MD VBN VP S SINV ADJP NP"),),
        "SQ": (("left", "VBZ VBD VBP VB MD VP SQ"),),
        "UCP": (("right", ""),),
        "VP": (("left", "TO VBD VBN MD VBZ VB VBG VBP VP ADJP NN NNS JJ NP NNP"),),
        "WHADJP": (("left", "WRB WHADVP RB JJ ADJP JJR"),),
        "WHADVP": (("right", "WRB WHADVP"),),
        "WHNP": (("left", "WDT WP WP$ WHADJP WHPP WHNP"),),
        "WHPP": (("right", "IN TO FW"),),
        "X": (("right", "S VP ADJP NP SBAR PP X"),),
    }.items()}
HEAD_RULES["NX"] = HEAD_RULES["NP"]
#: the Penn Treebank punctuation tags (never a head while another child can be)
PUNCTUATION = frozenset({"''", "``", "-LRB-", "-RRB-", ".", ":", ","})
#: labels of a coordinating conjunction
COORDINATORS = frozenset({"CC", "CONJP"})


@lru_cache(maxsize=4096)
def base_label(label: str) -> str:
    """A label without function tags or indices (``NP-SBJ-1`` -> ``NP``); ``-LRB-``
    and the like are kept whole.  Cached: a treebank has few distinct labels, and
    :func:`head_child` asks for each child of every node."""
    if label.startswith("-"):
        return label
    return re.split(r"[-=]", label, maxsplit=1)[0] or label


# ----------------------------------------------------------------------------- heads
def _order(n: int, how: str) -> range:
    return range(n) if how.startswith("left") else range(n - 1, -1, -1)


def _step(labels: list[str], how: str, wanted: tuple[str, ...]) -> int | None:
    order = _order(len(labels), how)
    if how.endswith("dis"):
        return next((i for i in order if labels[i] in wanted), None)
    return next((i for w in wanted for i in order if labels[i] == w), None)


def head_child(label: str, child_labels: list[str]) -> int:
    """The index of the head child of a ``label`` node with these children's labels:
    :data:`HEAD_RULES`, then the coordination rule: a head right after a ``CC`` or
    ``CONJP`` gives way to the child before that, unless that child is punctuation
    (``NP -> NP CC NP`` is headed by the first NP; ``ADJP -> JJ , JJ , CC JJ`` keeps
    the last JJ, as the shipped SNLI binary parses do)."""
    return _head_child(label, tuple(child_labels))


@lru_cache(maxsize=65536)
def _head_child(label: str, child_labels: tuple[str, ...]) -> int:
    """:func:`head_child`, cached: it depends on the labels only, and a corpus's
    sentences repeat few distinct (label, children) productions (bounded for
    SNLI-sized corpora)."""
    labels = [base_label(x) for x in child_labels]
    steps = HEAD_RULES.get(base_label(label), (("left", ()),))
    head = None
    for how, wanted in steps:
        head = _step(labels, how, wanted)
        if head is not None:
            break
    if head is None:
        order = _order(len(labels), steps[-1][0])
        head = next((i for i in order if labels[i] not in PUNCTUATION), order[0])
    if head >= 2 and labels[head - 1] in COORDINATORS and labels[head - 2] not in PUNCTUATION:
        head -= 2
    return head


# ----------------------------------------------------------------------------- binary trees
# A binary tree is a leaf index (int) or a pair (left, right).

def _post_order(node, out: list[str]) -> list[str]:
    stack = [(node, False)]
    while stack:
        n, done = stack.pop()
        if isinstance(n, int):
            out.append(SHIFT)
        elif done:
            out.append(REDUCE)
        else:
            stack += [(n, True), (n[1], False), (n[0], False)]
    return out


def _collapse(node: Tree) -> Tree:
    while not node.is_preterminal and len(node.kids) == 1:
        node = node.kids[0]
    return node


def _binarise(node: Tree, next_leaf: list[int]):
    node = _collapse(node)
    if node.is_preterminal:
        next_leaf[0] += 1
        return next_leaf[0] - 1
    kids = [_binarise(k, next_leaf) for k in node.kids]
    h = head_child(node.label, [k.label for k in node.kids])
    out = kids[h]
    for right in kids[h + 1:]:
        out = (out, right)
    for left in reversed(kids[:h]):
        out = (left, out)
    return out


def binarise(tree: Tree) -> list[str]:
    """The transitions of ``tree`` binarised head-outward (see the module docstring)."""
    return _post_order(_binarise(tree, [0]), [])


def words_of(tree: Tree) -> list[str]:
    """The words of a constituency parse as the raw streams write them."""
    return [PTB_TOKENS.get(w, w) for w in tree.leaves()]


def pos_tags(tree: Tree) -> list[str]:
    """One Penn Treebank tag per word (each preterminal's label)."""
    return [t for _, t in tree.pos()]


def chars_line(words: list[str]) -> str:
    """Each word's characters separated by spaces, the words by :data:`WORD_SEP`."""
    return f" {WORD_SEP} ".join(" ".join(w) for w in words)


_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def read_binary_parse(text: str, where: str = "binary parse") -> tuple[list[str], list[str]]:
    """(leaves, transitions) of an unlabelled bracketing such as SNLI's
    ``sentence1_binary_parse`` (``( ( Two women ) ( are . ) )``).  A bracket around a
    single item is dropped; one around three or more, unbalanced brackets or no
    words are a :class:`DataError` naming ``where``.  Leaves are returned as written
    (Penn Treebank tokens such as ``-LRB-``)."""
    leaves: list[str] = []
    out: list[str] = []
    open_counts: list[int] = []    # per open bracket: how many items it holds so far
    top = 0                        # items outside any bracket
    for tok in _TOKEN.findall(text):
        if tok == "(":
            open_counts.append(0)
            continue
        if tok == ")":
            if not open_counts:
                raise DataError(f"{where}: unbalanced brackets (a ')' too many)")
            k = open_counts.pop()
            if k == 0 or k > 2:
                raise DataError(f"{where}: a bracket with {k} items (a binary parse has "
                                f"one or two): {text[:80]!r}")
            if k == 2:
                out.append(REDUCE)
        else:
            leaves.append(tok)
            out.append(SHIFT)
        if open_counts:         # the word or closed bracket is one item of its parent
            open_counts[-1] += 1
        else:
            top += 1
    if open_counts:
        raise DataError(f"{where}: unbalanced brackets ({len(open_counts)} not closed)")
    if top != 1:
        raise DataError(f"{where}: {top} trees (expected one, bracketed): {text[:80]!r}")
    return leaves, out


def check_transitions(transitions: list[str], n: int, where: str = "transitions") -> None:
    """A :class:`DataError` naming ``where`` unless ``transitions`` build one binary
    tree over ``n`` words."""
    depth, shifts = 0, 0
    for i, t in enumerate(transitions):
        if t == SHIFT:
            depth, shifts = depth + 1, shifts + 1
        elif t == REDUCE:
            if depth < 2:
                raise DataError(f"{where}: transition {i + 1} reduces a stack of {depth}")
            depth -= 1
        else:
            raise DataError(f"{where}: transition {i + 1} is {t!r} (not {SHIFT} or {REDUCE})")
    if depth != 1 or shifts != n:
        raise DataError(f"{where}: {shifts} shifts leave {depth} stack items (expected "
                        f"{n} shifts and one tree)")


def to_brackets(words: list[str], transitions: list[str]) -> str:
    """The unlabelled bracketing of a transition sequence, in SNLI's
    ``sentence_binary_parse`` format (a one-word sentence is the word alone)."""
    check_transitions(transitions, len(words))
    stack, it = [], iter(words)
    for t in transitions:
        if t == SHIFT:
            stack.append(next(it))
        else:
            right, left = stack.pop(), stack.pop()
            stack.append(f"( {left} {right} )")
    return stack[0]


def sentence_streams(tree: Tree, binary_parse: str | None, where: str) -> dict[str, str]:
    """The lines of one sentence: ``words``, ``pos``, ``tree`` (from ``binary_parse``
    when given, else :func:`binarise`), ``chars``.  A binary parse whose leaves are not
    the parse's words is a :class:`DataError` naming ``where``."""
    words = words_of(tree)
    tags = pos_tags(tree)
    if binary_parse:
        leaves, transitions = read_binary_parse(binary_parse, where)
        leaves = [PTB_TOKENS.get(w, w) for w in leaves]
        if leaves != words:
            first = next((i for i, (a, b) in enumerate(zip(leaves, words)) if a != b),
                         min(len(leaves), len(words)))
            raise DataError(f"{where}: its {len(leaves)} leaves are not the parse's "
                            f"{len(words)} words (first difference at word {first + 1}: "
                            f"{leaves[first] if first < len(leaves) else 'none'!r} vs "
                            f"{words[first] if first < len(words) else 'none'!r})")
    else:
        transitions = binarise(tree)
    return {"words": " ".join(words), "pos": " ".join(tags), "tree": " ".join(transitions),
            "chars": chars_line(words)}


# ----------------------------------------------------------------------------- agreement
def agreement(path: str | os.PathLike) -> dict:
    """How often :func:`binarise` of ``sentence{1,2}_parse`` equals the shipped
    ``sentence{1,2}_binary_parse`` in an SNLI-format jsonl file (every sentence of
    every line, unlabelled pairs included): counts, share, and up to five
    disagreements (file:line, side, ours, shipped)."""
    from .snli import read_jsonl

    total = equal = 0
    unique: dict[str, bool] = {}
    differ = []
    for p in read_jsonl(Path(path), labelled=False):
        if not (p.premise_binary_parse and p.hypothesis_binary_parse):
            raise DataError(f"{p.source}:{p.line}: no sentence1_binary_parse / "
                            "sentence2_binary_parse to compare with")
        for side, tree, shipped in (("sentence1", p.premise_tree, p.premise_binary_parse),
                                    ("sentence2", p.hypothesis_tree, p.hypothesis_binary_parse)):
            ours = binarise(tree)
            theirs = read_binary_parse(shipped, f"{p.source}:{p.line}: {side}_binary_parse")[1]
            same = ours == theirs
            total += 1
            equal += same
            unique[str(tree)] = same
            if not same and len(differ) < 5:
                differ.append({"where": f"{p.source}:{p.line}", "side": side,
                               "ours": to_brackets(words_of(tree), ours), "shipped": shipped})
    return {"sentences": total, "equal": equal, "share": equal / total if total else 0.0,
            "distinct_parses": len(unique), "distinct_equal": sum(unique.values()),
            "differ": differ}
