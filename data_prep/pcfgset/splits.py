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
from typing import Callable

from compsuite.foundation.errors import ConfigError
from compsuite.foundation.io import write_lines
from compsuite.foundation.manifest import write_manifest

from .generate import (FULL, GENERATOR_VERSION, PCFGSetConfig, StringPool, describe,
                       sample_pairs)
from .grammar import (BINARY, EXCEPTIONS, FUNCTIONS, SEPARATOR, TWIN_SUFFIX, UNARY, Node,
                      evaluate)

SPLIT_GENERATOR = "compsuite.data_prep.pcfgset.splits"

#: Systematicity (section 6.2.1): (outer, inner) = outer applied directly to the
#: output of inner, inner being any argument of outer.
SYSTEMATICITY_PAIRS = (("swap_first_last", "repeat"), ("append", "remove_second"),
                       ("repeat", "remove_second"), ("append", "swap_first_last"))
#: Substitutivity (section 6.2.4): the functions that get a synonym.
SUBSTITUTED = ("swap_first_last", "repeat", "append", "remove_second")


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


def _fill(stream, wants: dict[str, int], route: Callable[[str, str, Node], str | None],
          max_draws: int | None = None) -> dict[str, list]:
    """Route sampled pairs into buckets until every bucket has its count."""
    buckets: dict[str, list] = {k: [] for k in wants}
    budget = max_draws if max_draws is not None else 200 * sum(wants.values()) + 100_000
    for draws, (src, tgt, tree) in enumerate(stream, 1):
        if draws > budget:
            short = {b: f"{len(v)}/{wants[b]}" for b, v in buckets.items()
                     if len(v) < wants[b]}
            raise ConfigError(f"after {budget:,} draws the split still lacks samples "
                               f"({short}): this corpus config cannot produce them "
                               "(e.g. a productivity limit above what its depth allows)")
        k = route(src, tgt, tree)
        if k is not None and len(buckets[k]) < wants[k]:
            buckets[k].append((src, tgt, tree))
            if all(len(buckets[b]) >= wants[b] for b in wants):
                return buckets
    raise RuntimeError("sample stream ended")  # pragma: no cover - the stream is infinite


def _sizes(cfg: PCFGSetConfig, n_train: int | None, n_valid: int | None, n_test: int | None,
           train_share: float = 0.85) -> tuple[int, int, int]:
    """Split sizes: given ones, else the config's (valid and test as in the base corpus,
    train ``train_share`` of its pairs: 82k/81k of 100k for systematicity/productivity,
    as in the paper)."""
    base = cfg.split_counts()
    return (round(cfg.n_pairs * train_share) if n_train is None else n_train,
            base["valid"] if n_valid is None else n_valid,
            base["test"] if n_test is None else n_test)


def _routed_splits(cfg: PCFGSetConfig, seed: int, dropped: dict, route, n_train: int,
                   n_valid: int, n_test: int, pool: StringPool) -> dict[str, list]:
    """Train/valid from draws that ``route`` sends to "trainvalid", test from "test"."""
    b = _fill(sample_pairs(cfg, seed, dropped, pool),
              {"trainvalid": n_train + n_valid, "test": n_test}, route)
    return {"train": b["trainvalid"][:n_train], "valid": b["trainvalid"][n_train:],
            "test": b["test"]}


def _base_splits(out: Path, cfg: PCFGSetConfig, seed: int, dropped: dict, files: list[str],
                 n_train: int, n_valid: int, n_test: int, pool: StringPool) -> dict[str, list]:
    """Draw and write the base corpus (train/valid/test in draw order)."""
    rows = list(itertools.islice(sample_pairs(cfg, seed, dropped, pool),
                                 n_train + n_valid + n_test))
    splits = {"train": rows[:n_train], "valid": rows[n_train:n_train + n_valid],
              "test": rows[n_train + n_valid:]}
    for name, part in splits.items():
        _write_split(out, name, part, files)
    return splits


def _write_split(out: Path, name: str, rows: list, files: list[str]) -> None:
    write_lines(out / f"{name}.src", [r[0] for r in rows])
    write_lines(out / f"{name}.tgt", [r[1] for r in rows])
    files += [f"{name}.src", f"{name}.tgt"]


def _manifest(out: Path, test: str, cfg: PCFGSetConfig, seed: int, args: dict, files: list,
              splits: dict, dropped: dict, pool: StringPool, extra: dict | None = None) -> dict:
    stats = {k: describe([r[0] for r in v], [r[1] for r in v]) for k, v in splits.items()}
    extra = {"string_arguments": pool.summary(), **(extra or {})}
    return write_manifest(
        out, generator=SPLIT_GENERATOR, generator_version=GENERATOR_VERSION, seed=seed,
        args={"test": test, **args, "base": cfg.as_args()}, files=files,
        counts={k: len(v) for k, v in splits.items()}, statistics=stats, dropped=dropped,
        extra=extra)


# ----------------------------------------------------------------------------- tests
def systematicity(out: Path, cfg: PCFGSetConfig = FULL, seed: int = 1,
                  n_train: int | None = None, n_valid: int | None = None,
                  n_test: int | None = None, progress: bool = False) -> dict:
    n_train, n_valid, n_test = _sizes(cfg, n_train, n_valid, n_test, 0.82)
    held = set(SYSTEMATICITY_PAIRS)
    dropped: dict = {}

    def route(src, tgt, tree):
        return "test" if function_pairs(tree) & held else "trainvalid"

    pool = StringPool.for_corpus(cfg, seed)  # one per corpus, across its splits
    splits = _routed_splits(cfg, seed, dropped, route, n_train, n_valid, n_test, pool)
    files: list[str] = []
    for name, rows in splits.items():
        _write_split(out, name, rows, files)
    tags = [",".join(f"{o}>{i}" for o, i in SYSTEMATICITY_PAIRS if (o, i) in function_pairs(r[2]))
            for r in splits["test"]]
    write_lines(out / "test.category", tags)
    files.append("test.category")
    return _manifest(out, "systematicity", cfg, seed,
                     {"pairs": [list(p) for p in SYSTEMATICITY_PAIRS]}, files, splits, dropped,
                     pool)


def productivity(out: Path, cfg: PCFGSetConfig = FULL, seed: int = 1,
                 n_train: int | None = None, n_valid: int | None = None,
                 n_test: int | None = None, progress: bool = False) -> dict:
    n_train, n_valid, n_test = _sizes(cfg, n_train, n_valid, n_test, 0.81)
    limit = cfg.productivity_max_train_functions
    dropped: dict = {}

    def route(src, tgt, tree):
        return "trainvalid" if tree.n_functions <= limit else "test"

    pool = StringPool.for_corpus(cfg, seed)  # one per corpus, across its splits
    splits = _routed_splits(cfg, seed, dropped, route, n_train, n_valid, n_test, pool)
    files: list[str] = []
    for name, rows in splits.items():
        _write_split(out, name, rows, files)
    write_lines(out / "test.category", [str(r[2].n_functions) for r in splits["test"]])
    files.append("test.category")
    return _manifest(out, "productivity", cfg, seed, {"max_train_functions": limit}, files,
                     splits, dropped, pool)


def _rename(node: Node, choose: Callable[[str], str]) -> Node:
    if node.fn is None:
        return node
    return Node(choose(node.fn), tuple(_rename(a, choose) for a in node.args))


def substitutivity(out: Path, cfg: PCFGSetConfig = FULL, seed: int = 1,
                   condition: str = "equally_distributed", n_train: int | None = None,
                   n_valid: int | None = None, n_test: int | None = None,
                   primitive_rate: float = 0.001,
                   progress: bool = False) -> dict:
    n_train, n_valid, n_test = _sizes(cfg, n_train, n_valid, n_test)
    if condition not in ("equally_distributed", "primitive"):
        raise ConfigError(f"condition must be equally_distributed or primitive, not {condition!r}")
    rng = random.Random(f"substitutivity-{seed}")
    dropped: dict = {}
    subst = set(SUBSTITUTED)

    def route(src, tgt, tree):
        fns = {t for t in src.split() if t in subst}
        return "test" if fns and rng.random() < 0.12 else "trainvalid"

    pool = StringPool.for_corpus(cfg, seed)  # one per corpus, across its splits
    routed = _routed_splits(cfg, seed, dropped, route, n_train, n_valid, n_test, pool)
    train, valid, test = routed["train"], routed["valid"], routed["test"]

    def half(fn: str) -> str:
        return fn + TWIN_SUFFIX if fn in subst and rng.random() < 0.5 else fn

    if condition == "equally_distributed":
        train = [(" ".join(t.tokens()), tgt, t) for _, tgt, tr in train
                 for t in [_rename(tr, half)]]
        valid = [(" ".join(t.tokens()), tgt, t) for _, tgt, tr in valid
                 for t in [_rename(tr, half)]]
    else:  # primitive: synonyms only as the single function of an input
        n_prim = max(len(SUBSTITUTED), round(primitive_rate * n_train))
        prims = []  # their string arguments are new to the corpus too
        for k in range(n_prim):
            fn = SUBSTITUTED[k % len(SUBSTITUTED)]
            args = tuple(Node(None, symbols=pool.draw(rng)) for _ in range(1 if fn in UNARY else 2))
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
                      "primitive_rate": primitive_rate}, files, splits, dropped, pool)




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


def localism(out: Path, cfg: PCFGSetConfig = FULL, seed: int = 1,
             n_train: int | None = None, n_valid: int | None = None,
             n_test: int | None = None, n_samples: int = 5_000,
             progress: bool = False) -> dict:
    """The base corpus plus ``unrolled_test.tsv``: ``n_samples`` training inputs in the
    unrolled format (``label<TAB>source<TAB>target``; a run of ``unrolled`` lines,
    then the ``original`` line)."""
    n_train, n_valid, n_test = _sizes(cfg, n_train, n_valid, n_test)
    dropped: dict = {}
    files: list[str] = []
    pool = StringPool.for_corpus(cfg, seed)  # one per corpus, across its splits
    splits = _base_splits(out, cfg, seed, dropped, files, n_train, n_valid, n_test, pool)
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
                     dropped, pool, extra={"unrolled_samples": len(chosen)})


def exception_pairs(node: Node) -> set[tuple[str, str]]:
    """The Table 2 pairs in an input: outer whose *first* argument is directly inner."""
    out: set[tuple[str, str]] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.args and n.args[0].fn is not None and (n.fn, n.args[0].fn) in EXCEPTIONS:
            out.add((n.fn, n.args[0].fn))
        stack.extend(a for a in n.args if a.fn is not None)
    return out


OVERGENERALISATION_RATES = (0.0001, 0.0005, 0.001, 0.005)


def overgeneralisation(out: Path, cfg: PCFGSetConfig = FULL, seed: int = 1,
                       exception_rate: float = 0.001, n_train: int | None = None,
                       n_valid: int | None = None, n_test: int | None = None,
                       progress: bool = False) -> dict:
    """Training inputs containing a Table 2 pair carry the remapped (exception) target.
    Per pair, as section 6.2.5 says ("0.1% of the number of occurrences of the least
    occurring function of the function pair"): ``round(exception_rate x min(count of
    its outer, count of its inner function in training))`` inputs (at least one)
    contain that pair; an input holding two pairs counts for both.  No other input
    anywhere contains a pair.  ``test_pcfg_ratio=R_{exception,original}.{src,tgt}``
    hold those training inputs with both targets, for tracking memorisation against
    overgeneralisation."""
    n_train, n_valid, n_test = _sizes(cfg, n_train, n_valid, n_test)
    dropped: dict = {}
    pool = StringPool.for_corpus(cfg, seed)  # one per corpus, across its splits
    stream = sample_pairs(cfg, seed, dropped, pool)
    rows: list = []
    excs: list = []
    for row in stream:  # the corpus, without any exception pair
        (excs if exception_pairs(row[2]) else rows).append(row)
        if len(rows) == n_train + n_valid + n_test:
            break
    train = rows[:n_train]
    counts = {f: 0 for f in FUNCTIONS}
    for src, _, _ in train:
        for t in src.split():
            if t in counts:
                counts[t] += 1
    want = {pair: max(1, round(exception_rate * min(counts[pair[0]], counts[pair[1]])))
            for pair in EXCEPTIONS}
    have = {pair: 0 for pair in EXCEPTIONS}
    chosen: list = []

    def candidates():
        yield from excs
        yield from (r for r in stream if exception_pairs(r[2]))  # more, if too few were drawn

    for row in candidates():
        pairs = exception_pairs(row[2])
        if any(have[p] < want[p] for p in pairs):
            chosen.append(row)
            for p in pairs:
                have[p] += 1
        if all(have[p] >= want[p] for p in want):
            break
    n_exc = len(chosen)
    rng = random.Random(f"overgeneralisation-{seed}")
    exc_rows = [(src, " ".join(evaluate(tree, EXCEPTIONS)), tree) for src, _, tree in chosen]
    train = train[:n_train - n_exc] + exc_rows
    rng.shuffle(train)
    splits = {"train": train, "valid": rows[n_train:n_train + n_valid],
              "test": rows[n_train + n_valid:]}
    files: list[str] = []
    for name, part in splits.items():
        _write_split(out, name, part, files)
    stem = f"test_pcfg_ratio={exception_rate:g}"
    write_lines(out / f"{stem}_exception.src", [r[0] for r in exc_rows])
    write_lines(out / f"{stem}_exception.tgt", [r[1] for r in exc_rows])
    write_lines(out / f"{stem}_original.src", [r[0] for r in chosen])
    write_lines(out / f"{stem}_original.tgt", [r[1] for r in chosen])
    write_lines(out / f"{stem}.category",
                [",".join(f"{o}>{i}" for o, i in sorted(exception_pairs(r[2]))) for r in chosen])
    files += [f"{stem}_exception.src", f"{stem}_exception.tgt", f"{stem}_original.src",
              f"{stem}_original.tgt", f"{stem}.category"]
    return _manifest(out, "overgeneralisation", cfg, seed,
                     {"exception_rate": exception_rate,
                      "exceptions": [list(k) for k in EXCEPTIONS]}, files, splits, dropped, pool,
                     extra={"n_exceptions": n_exc,
                            "exceptions_per_pair": {f"{o} {i}": have[(o, i)] for o, i in want},
                            "wanted_per_pair": {f"{o} {i}": want[(o, i)] for o, i in want},
                            "function_counts_train": counts})


def increasing_string_length(out: Path, cfg: PCFGSetConfig = FULL, seed: int = 1,
                             lengths: range = range(2, 21), per_length: int = 53,
                             progress: bool = False) -> dict:
    """Figure 10's corpus: single-function inputs whose strings grow from 2 to 20
    symbols; ``per_length`` inputs per function and length L.  A unary function's
    string has length L; one argument of a binary function has length L, the other
    2..L.  ``increasing_length.category`` holds L."""
    rng = random.Random(f"increasing-length-{seed}")
    alphabet = cfg.alphabet()

    def string(n: int) -> Node:
        return Node(None, symbols=tuple(rng.choice(alphabet) for _ in range(n)))

    srcs, tgts, cats = [], [], []
    for fn in FUNCTIONS:
        for L in lengths:
            for _ in range(per_length):
                if fn in UNARY:
                    node = Node(fn, (string(L),))
                else:
                    other = string(rng.randint(lengths.start, L))
                    args = (string(L), other) if rng.random() < 0.5 else (other, string(L))
                    node = Node(fn, args)
                srcs.append(" ".join(node.tokens()))
                tgts.append(" ".join(evaluate(node)))
                cats.append(str(L))
    write_lines(out / "increasing_length.src", srcs)
    write_lines(out / "increasing_length.tgt", tgts)
    write_lines(out / "increasing_length.category", cats)
    files = ["increasing_length.src", "increasing_length.tgt", "increasing_length.category"]
    return write_manifest(out, generator=SPLIT_GENERATOR, generator_version=GENERATOR_VERSION,
                          seed=seed, args={"test": "increasing_string_length",
                                           "lengths": [lengths.start, lengths.stop - 1],
                                           "per_length": per_length, "base": cfg.as_args()},
                          files=files, counts={"increasing_length": len(srcs)})


def per_function(out: Path, cfg: PCFGSetConfig = FULL, seed: int = 1,
                 n_train: int | None = None, n_valid: int | None = None,
                 n_test: int | None = None, n_templates: int = 5_000,
                 progress: bool = False) -> dict:
    """Section 7.1.2's per-function corpora (Figure 8): the base corpus, plus
    ``test_<function>.{src,tgt}`` where every function of an arity is put at the root
    of the same arguments (``test_unary.txt`` / ``test_binary.txt`` hold the templates),
    so that accuracy differences come from the function alone."""
    n_train, n_valid, n_test = _sizes(cfg, n_train, n_valid, n_test)
    dropped: dict = {}
    files: list[str] = []
    pool = StringPool.for_corpus(cfg, seed)  # one per corpus, across its splits
    splits = _base_splits(out, cfg, seed, dropped, files, n_train, n_valid, n_test, pool)
    train = {r[0] for r in splits["train"]}
    test = [r[2] for r in splits["test"]]
    n = min(n_templates, len(test) // 2)
    unary_args = [(t,) for t in test[:n]]
    binary_args = [(test[2 * i], test[2 * i + 1]) for i in range(n)] if 2 * n <= len(test) else []
    write_lines(out / "test_unary.txt",
                ["UNARY_FUNCTION " + " ".join(a[0].tokens()) for a in unary_args])
    write_lines(out / "test_binary.txt",
                ["BINARY_FUNCTION " + f" {SEPARATOR} ".join(" ".join(x.tokens()) for x in a)
                 for a in binary_args])
    files += ["test_unary.txt", "test_binary.txt"]
    overlap = 0
    for fn in FUNCTIONS:
        nodes = [Node(fn, a) for a in (unary_args if fn in UNARY else binary_args)]
        srcs = [" ".join(x.tokens()) for x in nodes]
        overlap += sum(s in train for s in srcs)
        write_lines(out / f"test_{fn}.src", srcs)
        write_lines(out / f"test_{fn}.tgt", [" ".join(evaluate(x)) for x in nodes])
        files += [f"test_{fn}.src", f"test_{fn}.tgt"]
    return _manifest(out, "per_function", cfg, seed, {"n_templates": n_templates}, files,
                     splits, dropped, pool, extra={"per_function_inputs_also_in_train": overlap})


TESTS: dict[str, Callable[..., dict]] = {
    "systematicity": systematicity, "productivity": productivity,
    "substitutivity": substitutivity, "localism": localism,
    "overgeneralisation": overgeneralisation, "increasing_string_length": increasing_string_length,
    "per_function": per_function,
}

__all__ = ["TESTS", "unroll", "function_pairs", "SYSTEMATICITY_PAIRS", "SUBSTITUTED", "BINARY"]
