"""Readers for SNLI 1.0 and MultiNLI 1.0 jsonl files, with their constituency parses
read into trees.

Both corpora ship one JSON object per line with ``sentence1`` (premise),
``sentence2`` (hypothesis), ``sentence{1,2}_parse`` (Stanford PCFG parses in Penn
Treebank brackets), ``gold_label``, ``annotator_labels`` and ``pairID`` (MNLI adds
``genre``), and ``sentence{1,2}_binary_parse`` (the same parses binarised, unlabelled
brackets; kept when present, for the tree models: :mod:`.trees`).  A pair whose
annotators reached no majority has the gold label ``-``: it is skipped and counted, as
every NLI paper does.  A malformed line (not JSON, a key
missing, unbalanced brackets) is an error naming the file and line.

The parses are read lazily (:attr:`Pair.premise_tree`), so reading a 550k-pair
training file for its tokens does not build 1.1M trees.
"""
from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Iterator

from compsuite.foundation.errors import DataError
from compsuite.foundation.io import open_text

LABELS = ("entailment", "neutral", "contradiction")
NO_LABEL = "-"


# ----------------------------------------------------------------------------- trees
class Tree:
    """A constituency tree: ``label`` and ``children`` (trees, or one word string for
    a preterminal)."""

    __slots__ = ("label", "children")

    def __init__(self, label: str, children: list):
        self.label = label
        self.children = children

    @property
    def is_preterminal(self) -> bool:
        children = self.children
        return len(children) == 1 and isinstance(children[0], str)

    @property
    def word(self) -> str:
        return self.children[0] if self.is_preterminal else ""

    @property
    def kids(self) -> list["Tree"]:
        """The children that are trees (none for a preterminal)."""
        return [] if self.is_preterminal else self.children

    def leaves(self) -> list[str]:
        if self.is_preterminal:
            return [self.children[0]]
        return [w for c in self.children for w in c.leaves()]

    def pos(self) -> list[tuple[str, str]]:
        """(word, tag) for every word, left to right."""
        if self.is_preterminal:
            return [(self.children[0], self.label)]
        return [p for c in self.children for p in c.pos()]

    def preterminals(self) -> list["Tree"]:
        if self.is_preterminal:
            return [self]
        return [p for c in self.children for p in c.preterminals()]

    def subtrees(self) -> Iterator["Tree"]:
        """Every node, in pre-order (this one first).  A stack rather than nested
        generators: a node deep in the tree would otherwise pass through one generator
        per level, which made this the adversaries' and the parser's hottest loop."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            children = node.children
            if not (len(children) == 1 and isinstance(children[0], str)):
                stack.extend(reversed(children))

    def copy(self) -> "Tree":
        if self.is_preterminal:
            return Tree(self.label, [self.children[0]])
        return Tree(self.label, [c.copy() for c in self.children])

    def __str__(self) -> str:
        if self.is_preterminal:
            return f"({self.label} {self.children[0]})"
        return f"({self.label} {' '.join(str(c) for c in self.children)})"

    def __repr__(self) -> str:
        return f"Tree({str(self)!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Tree) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def parse_tree(text: str, where: str = "parse") -> Tree:
    """A Penn Treebank bracketing (``(ROOT (S (NP (DT A) (NN dog)) ...))``) as a
    :class:`Tree`; unbalanced or empty brackets are a :class:`DataError` naming
    ``where``."""
    tokens = _TOKEN.findall(text)
    if not tokens or tokens[0] != "(":
        raise DataError(f"{where}: not a bracketed parse: {text[:60]!r}")
    stack: list[Tree] = []
    root = None
    mixed = False   # a constituent with both words and phrases (reported below)
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == "(":
            if i + 1 >= len(tokens) or tokens[i + 1] in "()":
                # "( (S ...) )": an unlabelled outer bracket (some PTB files)
                label = ""
                i += 1
            else:
                label = tokens[i + 1]
                i += 2
            node = Tree(label, [])
            if stack:
                parent = stack[-1].children
                mixed = mixed or (bool(parent) and isinstance(parent[0], str))
                parent.append(node)
            elif root is not None:
                raise DataError(f"{where}: text after the parse's last bracket")
            else:
                root = node
            stack.append(node)
            continue
        if tok == ")":
            if not stack:
                raise DataError(f"{where}: unbalanced brackets (a ')' too many)")
            node = stack.pop()
            if not node.children:
                raise DataError(f"{where}: empty constituent ({node.label})")
            i += 1
            continue
        if not stack:
            raise DataError(f"{where}: a word outside any bracket: {tok!r}")
        parent = stack[-1].children
        mixed = mixed or bool(parent)
        parent.append(tok)
        i += 1
    if stack:
        raise DataError(f"{where}: unbalanced brackets ({len(stack)} not closed)")
    # the walk that finds (in pre-order) the constituent to name, only when there is one
    for node in root.subtrees() if root and mixed else []:
        words = [c for c in node.children if isinstance(c, str)]
        if words and len(node.children) > 1:
            raise DataError(f"{where}: constituent {node.label} mixes words and phrases")
    return root


# ----------------------------------------------------------------------------- pairs
@dataclass
class Pair:
    """One NLI pair; ``line``: its line in the file (for error messages)."""

    pair_id: str
    premise: str
    hypothesis: str
    label: str
    annotator_labels: list[str] = field(default_factory=list)
    premise_parse: str = ""
    hypothesis_parse: str = ""
    #: ``sentence{1,2}_binary_parse`` where the file has them (SNLI, MultiNLI), else ""
    premise_binary_parse: str = ""
    hypothesis_binary_parse: str = ""
    genre: str | None = None
    source: str = ""
    line: int = 0

    @cached_property
    def premise_tree(self) -> Tree:
        return parse_tree(self.premise_parse, f"{self.source}:{self.line}: sentence1_parse")

    @cached_property
    def hypothesis_tree(self) -> Tree:
        return parse_tree(self.hypothesis_parse, f"{self.source}:{self.line}: sentence2_parse")


@dataclass
class ReadStats:
    pairs: int = 0
    skipped: Counter = field(default_factory=Counter)   # reason -> count

    def as_dict(self) -> dict:
        return {"pairs": self.pairs, "skipped": dict(self.skipped)}


REQUIRED = ("sentence1", "sentence2", "gold_label", "pairID")
PARSES = ("sentence1_parse", "sentence2_parse")


def read_jsonl(path: str | os.PathLike, *, parses: bool = True, labelled: bool = True,
               stats: ReadStats | None = None) -> Iterator[Pair]:
    """The pairs of an SNLI / MNLI jsonl file, streamed.  ``parses``: the parse keys
    must be present (they are checked when a tree is first asked for);
    ``labelled``: skip (and count in ``stats``) pairs whose gold label is ``-``."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    stats = stats if stats is not None else ReadStats()
    need = REQUIRED + (PARSES if parses else ())
    objects = 0
    with open_text(path) as fh:
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            objects += 1
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as e:
                raise DataError(f"{path}:{n}: not a JSON object ({e.msg})") from None
            if not isinstance(obj, dict):
                raise DataError(f"{path}:{n}: not a JSON object")
            missing = [k for k in need if k not in obj]
            if missing:
                raise DataError(f"{path}:{n}: missing key(s) {', '.join(missing)}")
            label = obj["gold_label"]
            if labelled and label == NO_LABEL:
                stats.skipped["no gold label ('-')"] += 1
                continue
            if label not in LABELS and label != NO_LABEL:
                raise DataError(f"{path}:{n}: unknown gold_label {label!r} "
                                f"({', '.join(LABELS)} or '-')")
            stats.pairs += 1
            yield Pair(pair_id=str(obj["pairID"]), premise=obj["sentence1"],
                       hypothesis=obj["sentence2"], label=label,
                       annotator_labels=list(obj.get("annotator_labels") or []),
                       premise_parse=obj.get("sentence1_parse", ""),
                       hypothesis_parse=obj.get("sentence2_parse", ""),
                       premise_binary_parse=obj.get("sentence1_binary_parse") or "",
                       hypothesis_binary_parse=obj.get("sentence2_binary_parse") or "",
                       genre=obj.get("genre"), source=str(path), line=n)
    if not objects:
        raise DataError(f"{path}: file is empty (expected SNLI / MultiNLI pairs, one JSON "
                        "object a line)")


def read_all(path: str | os.PathLike, **kw) -> tuple[list[Pair], ReadStats]:
    stats = ReadStats()
    return list(read_jsonl(path, stats=stats, **kw)), stats
