"""The compositionality tests' data splits (Hupkes et al. 2020, sections 6.2 and 7).

Each test writes ``{train,valid,test}.{src,tgt}``, ``test.category`` (one tag per
test line: the held-out pair(s), the number of functions, the substituted function)
and its extra files under the names of the released data (``test_twin.src``,
``unrolled_test.tsv``), plus ``manifest.json``.  All draws come from the base
sampler (:func:`~.generate.sample_pairs`) with a local ``random.Random(seed)``, so a
seed gives the same bytes.

* systematicity: inputs containing a held-out function pair go to test only;
* productivity: at most 8 functions in training, at least 9 in test;
* substitutivity: ``<function>_twin`` synonyms, ``equally_distributed`` (half the
  occurrences in training) or ``primitive`` (only in single-function inputs, 0.1% of
  training); ``test_twin.src`` replaces every occurrence of one function per line;
* localism: training samples unrolled into their function applications.
"""
from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Callable, Iterator

from ..common.io import write_lines
from ..common.manifest import write_manifest
from .generate import FULL, GENERATOR_VERSION, PCFGSetConfig, describe, sample_pairs
from .grammar import BINARY, SEPARATOR, TWIN_SUFFIX, UNARY, Node, evaluate

SPLIT_GENERATOR = "compsuite.data_prep.pcfgset.splits"

#: Systematicity (section 6.2.1): (outer, inner) = outer applied directly to the
#: output of inner, inner being any argument of outer.
SYSTEMATICITY_PAIRS = (("swap_first_last", "repeat"), ("append", "remove_second"),
                       ("repeat", "remove_second"), ("append", "swap_first_last"))
#: Substitutivity (section 6.2.4): the functions that get a synonym.
SUBSTITUTED = ("swap_first_last", "repeat", "append", "remove_second")
PRODUCTIVITY_MAX_TRAIN_FUNCTIONS = 8


def function_pairs(node: Node) -> set[tuple[str, str]]:
    """Every (outer, inner) where inner is directly an argument of outer."""
    out: set[tuple[str, str]] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        for a in n.args:
            if a.fn is not None:
                out.add((n.fn, a.fn))
                stack.append(a)
    return out


def _fill(stream, wants: dict[str, int], route: Callable[[str, str, Node], str | None]
          ) -> dict[str, list]:
    """Route sampled pairs into buckets until every bucket has its count."""
    buckets: dict[str, list] = {k: [] for k in wants}
    for src, tgt, tree in stream:
        k = route(src, tgt, tree)
        if k is not None and len(buckets[k]) < wants[k]:
            buckets[k].append((src, tgt, tree))
            if all(len(buckets[b]) >= wants[b] for b in wants):
                return buckets
    raise RuntimeError("sample stream ended")  # pragma: no cover - the stream is infinite


def _write_split(out: Path, name: str, rows: list, files: list[str]) -> None:
    write_lines(out / f"{name}.src", [r[0] for r in rows])
    write_lines(out / f"{name}.tgt", [r[1] for r in rows])
    files += [f"{name}.src", f"{name}.tgt"]


def _manifest(out: Path, test: str, cfg: PCFGSetConfig, seed: int, args: dict, files: list,
              splits: dict, dropped: dict, extra: dict | None = None) -> dict:
    stats = {k: describe([r[0] for r in v], [r[1] for r in v]) for k, v in splits.items()}
    return write_manifest(
        out, generator=SPLIT_GENERATOR, generator_version=GENERATOR_VERSION, seed=seed,
        args={"test": test, **args, "base": cfg.as_args()}, files=files,
        counts={k: len(v) for k, v in splits.items()}, statistics=stats, dropped=dropped,
        extra=extra)


# ----------------------------------------------------------------------------- tests
def systematicity(out: Path, cfg: PCFGSetConfig = FULL, seed: int = 1, n_train: int = 82_000,
                  n_valid: int = 5_000, n_test: int = 10_000, progress: bool = False) -> dict:
    held = set(SYSTEMATICITY_PAIRS)
    dropped: dict = {}

    def route(src, tgt, tree):
        return "test" if function_pairs(tree) & held else "trainvalid"

    b = _fill(sample_pairs(cfg, seed, dropped), {"trainvalid": n_train + n_valid, "test": n_test}, route)
    splits = {"train": b["trainvalid"][:n_train], "valid": b["trainvalid"][n_train:],
              "test": b["test"]}
    files: list[str] = []
    for name, rows in splits.items():
        _write_split(out, name, rows, files)
    tags = [",".join(f"{o}>{i}" for o, i in SYSTEMATICITY_PAIRS if (o, i) in function_pairs(r[2]))
            for r in splits["test"]]
    write_lines(out / "test.category", tags)
    files.append("test.category")
    return _manifest(out, "systematicity", cfg, seed,
                     {"pairs": [list(p) for p in SYSTEMATICITY_PAIRS]}, files, splits, dropped)


def productivity(out: Path, cfg: PCFGSetConfig = FULL, seed: int = 1, n_train: int = 81_000,
                 n_valid: int = 5_000, n_test: int = 10_000, progress: bool = False) -> dict:
    limit = PRODUCTIVITY_MAX_TRAIN_FUNCTIONS
    dropped: dict = {}

    def route(src, tgt, tree):
        return "trainvalid" if tree.n_functions <= limit else "test"

    b = _fill(sample_pairs(cfg, seed, dropped), {"trainvalid": n_train + n_valid, "test": n_test}, route)
    splits = {"train": b["trainvalid"][:n_train], "valid": b["trainvalid"][n_train:],
              "test": b["test"]}
    files: list[str] = []
    for name, rows in splits.items():
        _write_split(out, name, rows, files)
    write_lines(out / "test.category", [str(r[2].n_functions) for r in splits["test"]])
    files.append("test.category")
    return _manifest(out, "productivity", cfg, seed, {"max_train_functions": limit}, files,
                     splits, dropped)


def _rename(node: Node, choose: Callable[[str], str]) -> Node:
    if node.fn is None:
        return node
    return Node(choose(node.fn), tuple(_rename(a, choose) for a in node.args))


def substitutivity(out: Path, cfg: PCFGSetConfig = FULL, seed: int = 1,
                   condition: str = "equally_distributed", n_train: int = 85_000,
                   n_valid: int = 5_000, n_test: int = 10_000, primitive_rate: float = 0.001,
                   progress: bool = False) -> dict:
    if condition not in ("equally_distributed", "primitive"):
        raise ValueError(f"condition must be equally_distributed or primitive, not {condition!r}")
    rng = random.Random(f"substitutivity-{seed}")
    dropped: dict = {}
    subst = set(SUBSTITUTED)

    def route(src, tgt, tree):
        fns = {t for t in src.split() if t in subst}
        return "test" if fns and rng.random() < 0.12 else "trainvalid"

    b = _fill(sample_pairs(cfg, seed, dropped), {"trainvalid": n_train + n_valid, "test": n_test}, route)
    train, valid, test = b["trainvalid"][:n_train], b["trainvalid"][n_train:], b["test"]

    def half(fn: str) -> str:
        return fn + TWIN_SUFFIX if fn in subst and rng.random() < 0.5 else fn

    if condition == "equally_distributed":
        train = [(" ".join(t.tokens()), tgt, t) for _, tgt, tr in train
                 for t in [_rename(tr, half)]]
        valid = [(" ".join(t.tokens()), tgt, t) for _, tgt, tr in valid
                 for t in [_rename(tr, half)]]
    else:  # primitive: synonyms only as the single function of an input
        n_prim = max(len(SUBSTITUTED), round(primitive_rate * n_train))
        strings = iter(_primitive_arguments(rng, cfg))
        prims = []
        for k in range(n_prim):
            fn = SUBSTITUTED[k % len(SUBSTITUTED)]
            args = tuple(Node(None, symbols=next(strings)) for _ in range(1 if fn in UNARY else 2))
            node = Node(fn + TWIN_SUFFIX, args)
            prims.append((" ".join(node.tokens()), " ".join(evaluate(node)), node))
        keep = n_train - n_prim
        train = train[:keep] + prims
        rng.shuffle(train)
    twins, tags = [], []
    for src, tgt, tree in test:
        present = sorted({t for t in src.split() if t in subst})
        fn = rng.choice(present)
        twins.append(" ".join(t + TWIN_SUFFIX if t == fn else t for t in src.split()))
        tags.append(fn)
    splits = {"train": train, "valid": valid, "test": test}
    files: list[str] = []
    for name, rows in splits.items():
        _write_split(out, name, rows, files)
    write_lines(out / "test_twin.src", twins)
    write_lines(out / "test_twin.tgt", [r[1] for r in test])  # a synonym means the same
    write_lines(out / "test.category", tags)
    files += ["test_twin.src", "test_twin.tgt", "test.category"]
    return _manifest(out, "substitutivity", cfg, seed,
                     {"condition": condition, "substituted": list(SUBSTITUTED),
                      "primitive_rate": primitive_rate}, files, splits, dropped)


def _primitive_arguments(rng: random.Random, cfg: PCFGSetConfig) -> Iterator[tuple[str, ...]]:
    alphabet = cfg.alphabet()
    lengths = list(range(cfg.min_string_length, cfg.max_string_length + 1))
    while True:
        n = rng.choices(lengths, cfg.string_length_weights)[0]
        yield tuple(rng.choice(alphabet) for _ in range(n))


def unroll(tree: Node) -> list[tuple[str, str]]:
    """The unrolled form of one input: one (source, target) line per function
    application, post-order and left to right; an argument computed by an earlier
    line is written ``*k`` and that line's target is ``*k``; the last line's target
    is the meaning of the whole input.  As in the released data, a line whose
    arguments are all strings ends with a space."""
    lines: list[tuple[str, str]] = []

    def visit(node: Node) -> str:
        if node.fn is None:
            return " ".join(node.symbols)
        args = [visit(a) for a in node.args]
        text = node.fn + " " + f" {SEPARATOR} ".join(args)
        if all(a.fn is None for a in node.args):
            text += " "
        lines.append((text, f"*{len(lines) + 1}"))
        return lines[-1][1]

    visit(tree)
    lines[-1] = (lines[-1][0], " ".join(evaluate(tree)))
    return lines


def localism(out: Path, cfg: PCFGSetConfig = FULL, seed: int = 1, n_train: int = 85_000,
             n_valid: int = 5_000, n_test: int = 10_000, n_samples: int = 5_000,
             progress: bool = False) -> dict:
    """The base corpus plus ``unrolled_test.tsv``: ``n_samples`` training inputs in the
    unrolled format (``label<TAB>source<TAB>target``; a run of ``unrolled`` lines,
    then the ``original`` line)."""
    dropped: dict = {}
    rows = list(itertools.islice(sample_pairs(cfg, seed, dropped), n_train + n_valid + n_test))
    splits = {"train": rows[:n_train], "valid": rows[n_train:n_train + n_valid],
              "test": rows[n_train + n_valid:]}
    files: list[str] = []
    for name, part in splits.items():
        _write_split(out, name, part, files)
    rng = random.Random(f"localism-{seed}")
    chosen = rng.sample(range(n_train), min(n_samples, n_train))
    tsv, depths = [], []
    for i in chosen:
        src, tgt, tree = splits["train"][i]
        tsv += [f"unrolled\t{s}\t{t}" for s, t in unroll(tree)]
        tsv.append(f"original\t{src}\t{tgt}")
        depths.append(str(tree.depth))
    write_lines(out / "unrolled_test.tsv", tsv)
    write_lines(out / "unrolled_test.category", depths)
    files += ["unrolled_test.tsv", "unrolled_test.category"]
    return _manifest(out, "localism", cfg, seed, {"n_samples": n_samples}, files, splits,
                     dropped, extra={"unrolled_samples": len(chosen)})


TESTS: dict[str, Callable[..., dict]] = {
    "systematicity": systematicity, "productivity": productivity,
    "substitutivity": substitutivity, "localism": localism,
}

__all__ = ["TESTS", "unroll", "function_pairs", "SYSTEMATICITY_PAIRS", "SUBSTITUTED", "BINARY"]
