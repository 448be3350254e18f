"""PCFG SET grammar and interpretation functions (Hupkes et al. 2020, Figures 2 and 3).

Sources are prefix expressions::

    S   -> F_U S | F_B S , S | W
    F_U -> copy | reverse | shift | echo | swap_first_last | repeat
    F_B -> append | prepend | remove_first | remove_second
    W   -> W X | X            (X one of the string symbols, e.g. A1 .. Z20)

The meaning of a source is the string of symbols its functions compute.  This
module is pure Python with no toolkit dependency: the generator, the data
writers, the metrics (depth/length breakdowns) and the tests all parse through
:func:`parse` and interpret through :func:`interpret`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from compsuite.foundation.errors import DataError

UNARY: dict[str, Callable[[list[str]], list[str]]] = {
    "copy": lambda x: list(x),
    "reverse": lambda x: x[::-1],
    "shift": lambda x: x[1:] + x[:1],
    "echo": lambda x: x + x[-1:],
    "swap_first_last": lambda x: x if len(x) < 2 else [x[-1]] + x[1:-1] + [x[0]],
    "repeat": lambda x: x + x,
}
BINARY: dict[str, Callable[[list[str], list[str]], list[str]]] = {
    "append": lambda x, y: x + y,
    "prepend": lambda x, y: y + x,
    "remove_first": lambda x, y: list(y),
    "remove_second": lambda x, y: list(x),
}
FUNCTIONS: tuple[str, ...] = tuple(UNARY) + tuple(BINARY)
SEPARATOR = ","
TWIN_SUFFIX = "_twin"  # synonyms used by the substitutivity test
SYMBOL = re.compile(r"[A-Z][0-9]+")  # string symbols: a capital letter and a number (A1..Z20)


class PCFGSyntaxError(DataError):
    """A source that is not a well-formed PCFG SET expression."""


@dataclass(frozen=True)
class Node:
    """A parsed expression: a function applied to arguments, or a string (``fn`` None)."""

    fn: str | None
    args: tuple["Node", ...] = ()
    symbols: tuple[str, ...] = ()

    @property
    def depth(self) -> int:
        """Nesting depth of functions: a bare string has depth 0, ``copy A1`` depth 1."""
        return 0 if self.fn is None else 1 + max(a.depth for a in self.args)

    @property
    def n_functions(self) -> int:
        return 0 if self.fn is None else 1 + sum(a.n_functions for a in self.args)

    def strings(self) -> list[tuple[str, ...]]:
        """The string arguments, left to right."""
        if self.fn is None:
            return [self.symbols]
        return [s for a in self.args for s in a.strings()]

    def tokens(self) -> list[str]:
        if self.fn is None:
            return list(self.symbols)
        out = [self.fn] + self.args[0].tokens()
        if len(self.args) == 2:
            out += [SEPARATOR] + self.args[1].tokens()
        return out


def base_function(name: str) -> str:
    """``repeat_twin`` -> ``repeat`` (a synonym means what its base means)."""
    return name[: -len(TWIN_SUFFIX)] if name.endswith(TWIN_SUFFIX) else name


def is_function(token: str) -> bool:
    return base_function(token) in UNARY or base_function(token) in BINARY


def parse(source: str | Sequence[str]) -> Node:
    """Parse a space-separated source (or its token list) into a :class:`Node` tree.

    Raises :class:`PCFGSyntaxError` with the token position for malformed input.
    """
    tokens = source.split() if isinstance(source, str) else list(source)
    if not tokens:
        raise PCFGSyntaxError("empty input")
    pos = 0

    # Iterative descent would be faster to write with recursion; depth in PCFG SET
    # is <= 17 (35 in the productivity test), far below Python's recursion limit.
    def expr() -> Node:
        nonlocal pos
        if pos >= len(tokens):
            raise PCFGSyntaxError(f"unexpected end of input after token {pos}")
        tok = tokens[pos]
        name = base_function(tok)
        if name in UNARY:
            pos += 1
            return Node(tok, (expr(),))
        if name in BINARY:
            pos += 1
            left = expr()
            if pos >= len(tokens) or tokens[pos] != SEPARATOR:
                found = tokens[pos] if pos < len(tokens) else "end of input"
                raise PCFGSyntaxError(
                    f"binary function '{tok}' expects ',' at token {pos + 1}, found {found!r}"
                )
            pos += 1
            return Node(tok, (left, expr()))
        start = pos
        while pos < len(tokens) and tokens[pos] != SEPARATOR and not is_function(tokens[pos]):
            if not SYMBOL.fullmatch(tokens[pos]):
                raise PCFGSyntaxError(f"unknown token {tokens[pos]!r} at token {pos + 1} "
                                      "(neither a function nor a symbol such as A1)")
            pos += 1
        if pos == start:
            raise PCFGSyntaxError(f"expected a string symbol at token {pos + 1}, found {tok!r}")
        return Node(None, symbols=tuple(tokens[start:pos]))

    tree = expr()
    if pos != len(tokens):
        raise PCFGSyntaxError(f"unexpected token {tokens[pos]!r} at token {pos + 1}")
    return tree


def evaluate(
    node: Node, remap: Mapping[tuple[str, str], Callable[..., list[str]]] | None = None
) -> list[str]:
    """The meaning of a tree.

    ``remap`` optionally overrides the meaning of a function whose first argument is
    directly the output of another (the overgeneralisation exceptions of Table 2):
    keys are ``(outer, inner)`` function names, values take the meanings of the
    inner function's arguments and return the exceptional output.  The outer
    function's second argument, if any, is then ignored.  Exceptions resolve
    innermost first: an inner function already remapped no longer counts as itself
    for its parent (``prepend reverse echo x , y`` is ``y`` + ``echo x``), which is
    what the released overgeneralisation data does.
    """
    return _evaluate(node, remap)[0]


def _evaluate(node: Node, remap) -> tuple[list[str], bool]:
    """(meaning, whether an exception produced it)."""
    if node.fn is None:
        return list(node.symbols), False
    name = base_function(node.fn)
    first = node.args[0]
    if remap and first.fn is not None and (name, base_function(first.fn)) in remap:
        inner_remapped = remap and first.args[0].fn is not None and (
            base_function(first.fn), base_function(first.args[0].fn)) in remap
        if not inner_remapped:
            inner_args = [_evaluate(a, remap)[0] for a in first.args]
            return remap[(name, base_function(first.fn))](*inner_args), True
    args = [_evaluate(a, remap)[0] for a in node.args]
    return (UNARY[name](*args) if name in UNARY else BINARY[name](*args)), False


#: Table 2 of Hupkes et al. (2020): the four function pairs whose meaning is
#: remapped in the overgeneralisation test.  ``(outer, inner)`` -> new meaning,
#: computed from the inner function's arguments.
EXCEPTIONS: dict[tuple[str, str], Callable[..., list[str]]] = {
    ("reverse", "echo"): lambda x: UNARY["echo"](x),
    ("prepend", "remove_first"): lambda x, y: BINARY["append"](x, y),
    ("echo", "remove_first"): lambda x, y: BINARY["append"](x, y),
    ("prepend", "reverse"): lambda x: UNARY["echo"](x),
}


def interpret(source: str | Sequence[str], exceptions: bool = False) -> str:
    """Map a source string to its meaning (space-separated symbols).

    With ``exceptions`` the Table 2 remapping (:data:`EXCEPTIONS`) applies.
    """
    return " ".join(evaluate(parse(source), EXCEPTIONS if exceptions else None))


def symbols(n_letters: int = 26, n_numbers: int = 20) -> list[str]:
    """The string alphabet: ``A1 .. Z20`` for the full task (26 x 20 = 520 symbols)."""
    letters = [chr(ord("A") + i) for i in range(26)][:n_letters] if n_letters <= 26 else None
    if letters is None:
        raise ValueError("at most 26 letters")
    return [f"{a}{i}" for a in letters for i in range(1, n_numbers + 1)]


def structure(source: str | Sequence[str]) -> dict[str, int]:
    """The input properties of the paper's Figure 7: length (tokens), number of
    functions and depth."""
    tree = parse(source)
    n = len(source.split()) if isinstance(source, str) else len(source)
    return {"length": n, "n_functions": tree.n_functions, "depth": tree.depth}
