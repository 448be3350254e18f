"""PCFG SET base-corpus generator (Hupkes et al. 2020, sections 4 and 6.1).

Sampling, per input:

* the root is a function; every other ``S`` becomes a function with probability
  ``p_function`` (the argument of a unary function, the first of a binary one) or
  ``p_function_second`` (a binary function's second argument), else a string, and
  always a string at the depth limit (this gives the released data's deep, narrow
  trees: average depth 4.4 for 5.1 functions);
* functions are drawn uniformly from the ten of Figure 2 (the released data has
  every function equally often);
* a string argument has 2..``max_string_length`` symbols drawn with replacement from
  the alphabet, lengths weighted by ``string_length_weights``;
* no string argument occurs twice in the whole corpus (section 6.1.2: "the same
  string arguments are never repeated"; true of the released data): a repeat is
  drawn again (:class:`StringPool`), and the manifest counts the redraws;
* inputs longer than ``max_input_length`` tokens or with more than
  ``max_functions`` functions are rejected, and duplicates are dropped, both
  counted in the manifest.

The defaults give statistics close to the released PCFG SET (Table 1; see
``eval/pcfgset/paper_numbers.yaml``).  The paper additionally
"naturalised" the distribution to follow English-German sentences (section 6.1.1);
this generator does not: see ``data_prep/pcfgset/doc.md``.
"""
from __future__ import annotations

import itertools
import random
import statistics as st
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from compsuite.foundation.errors import ConfigError
from compsuite.foundation.io import write_lines
from compsuite.foundation.manifest import write_manifest

from .grammar import (BINARY, FUNCTIONS, SEPARATOR, UNARY, Node, PCFGSyntaxError, evaluate,
                      parse, symbols)

GENERATOR = "compsuite.data_prep.pcfgset"
GENERATOR_VERSION = "2"  # 2: string arguments unique over the corpus
SPLITS = ("train", "valid", "test")


@dataclass(frozen=True)
class PCFGSetConfig:
    """Everything that decides the corpus.  Two configs are named in the registry:
    the paper's task (defaults) and the scaled-down task of the quick profile."""

    n_letters: int = 26
    n_numbers: int = 20  # 26 x 20 = 520 symbols, A1..Z20
    n_pairs: int = 100_000
    split_fractions: tuple[float, float, float] = (0.85, 0.05, 0.10)
    p_function: float = 0.75          # S -> function, for a unary's or a binary's first argument
    p_function_second: float = 0.25   # S -> function, for a binary's second argument
    max_depth: int = 17
    max_functions: int = 35
    max_input_length: int = 71
    min_string_length: int = 2
    max_string_length: int = 5
    # relative weight of each string length from min_string_length upwards
    string_length_weights: tuple[float, ...] = (0.16, 0.30, 0.27, 0.27)
    functions: tuple[str, ...] = field(default=FUNCTIONS)
    # productivity test: training inputs have at most this many functions, test inputs
    # more (the paper: 8 on the full task; a config must be able to exceed it)
    productivity_max_train_functions: int = 8

    def alphabet(self) -> list[str]:
        return symbols(self.n_letters, self.n_numbers)

    def split_counts(self) -> dict[str, int]:
        n_valid = round(self.n_pairs * self.split_fractions[1])
        n_test = round(self.n_pairs * self.split_fractions[2])
        return {"train": self.n_pairs - n_valid - n_test, "valid": n_valid, "test": n_test}

    def as_args(self) -> dict:
        d = asdict(self)
        d["split_fractions"] = list(self.split_fractions)
        d["string_length_weights"] = list(self.string_length_weights)
        d["functions"] = list(self.functions)
        return d


#: The paper's task and the scaled-down task used by the quick profile.
FULL = PCFGSetConfig()
SMALL = PCFGSetConfig(
    n_letters=26, n_numbers=1, n_pairs=23_529, max_depth=3, max_string_length=4,
    string_length_weights=(0.16, 0.30, 0.27), productivity_max_train_functions=3,
)  # 26 symbols, strings of 2-4, depth <= 3; 23,529 pairs = 20,000 train / 1,176 / 2,353;
#    depth <= 3 allows at most 7 functions: 87% of inputs have <= 3, so productivity
#    trains on <= 3 functions and tests on 4-7


class StringPool:
    """The string arguments of one corpus: never the same one twice (section 6.1.2, "we
    make sure that the same string arguments are never repeated").

    A draw picks a length (``string_length_weights``) and symbols with replacement; a
    string the corpus already holds is drawn again and counted in ``redrawn``.  A length
    whose every string is taken drops out of the choice, so a small alphabet shifts the
    length distribution rather than loop; when every length is taken, the config cannot
    produce the corpus and a :class:`ConfigError` says so.  Strings of a sample that is
    then rejected go back to the pool (:meth:`release`)."""

    def __init__(self, cfg: PCFGSetConfig, rng: random.Random):
        self.cfg = cfg
        self.rng = rng
        self.alphabet = cfg.alphabet()
        lengths = range(cfg.min_string_length, cfg.max_string_length + 1)
        if len(cfg.string_length_weights) != len(lengths):
            raise ConfigError(
                f"string_length_weights needs {len(lengths)} values "
                f"(lengths {list(lengths)}), got {len(cfg.string_length_weights)}"
            )
        self.weight = dict(zip(lengths, cfg.string_length_weights))
        self.capacity = {n: len(self.alphabet) ** n for n in lengths}
        self.taken = {n: 0 for n in lengths}
        self.used: set[tuple[str, ...]] = set()
        self.redrawn = 0

    @classmethod
    def for_corpus(cls, cfg: PCFGSetConfig, seed: int) -> "StringPool":
        """The pool of the corpus that ``sample_pairs(cfg, seed)`` draws: it shares that
        corpus's random stream, so passing it changes no draw."""
        return cls(cfg, random.Random(seed))

    def exhausted(self) -> list[int]:
        """The string lengths whose every string is taken."""
        return [n for n in self.taken if self.taken[n] == self.capacity[n]]

    def draw(self, rng: random.Random | None = None) -> tuple[str, ...]:
        rng = self.rng if rng is None else rng
        while True:
            lengths = [n for n in self.taken if self.taken[n] < self.capacity[n]]
            if not lengths:
                raise ConfigError(
                    f"every string argument of length {self.cfg.min_string_length}.."
                    f"{self.cfg.max_string_length} over {len(self.alphabet)} symbols is "
                    f"taken ({len(self.used):,}): this config cannot give that many pairs "
                    "without repeating a string argument")
            n = rng.choices(lengths, [self.weight[k] for k in lengths])[0]
            s = tuple(rng.choice(self.alphabet) for _ in range(n))
            if s in self.used:
                self.redrawn += 1
                continue
            self.used.add(s)
            self.taken[n] += 1
            return s

    def release(self, strings: Iterable[tuple[str, ...]]) -> None:
        for s in strings:
            if s in self.used:
                self.used.remove(s)
                self.taken[len(s)] -= 1

    def summary(self) -> dict:
        """For the manifest: how many string arguments the corpus drew, how many draws
        repeated one and were redrawn, and which lengths ran out."""
        return {"distinct": len(self.used), "redrawn": self.redrawn,
                "exhausted_lengths": self.exhausted()}


class _Sampler:
    def __init__(self, cfg: PCFGSetConfig, pool: StringPool):
        self.cfg = cfg
        self.rng = pool.rng
        self.pool = pool

    def tree(self) -> Node:
        def grow(depth: int, p: float | None) -> Node:
            if p is not None and (depth >= self.cfg.max_depth or self.rng.random() >= p):
                return Node(None, symbols=self.pool.draw())
            fn = self.rng.choice(self.cfg.functions)
            if fn in UNARY:
                return Node(fn, (grow(depth + 1, self.cfg.p_function),))
            return Node(fn, (grow(depth + 1, self.cfg.p_function),
                             grow(depth + 1, self.cfg.p_function_second)))

        return grow(0, None)  # the root is always a function


def sample_pairs(cfg: PCFGSetConfig, seed: int, dropped: dict[str, int] | None = None,
                 pool: StringPool | None = None) -> Iterator[tuple[str, str, Node]]:
    """Yield distinct (source, target, tree) triples forever, deterministically per seed.
    No string argument occurs twice in everything the stream yields; pass ``pool``
    (:meth:`StringPool.for_corpus`) to read its counts or draw more strings from the
    same corpus afterwards."""
    pool = StringPool.for_corpus(cfg, seed) if pool is None else pool
    sampler = _Sampler(cfg, pool)
    seen: set[str] = set()
    dropped = {} if dropped is None else dropped
    while True:
        tree = sampler.tree()
        tokens = tree.tokens()
        reason = None
        if len(tokens) > cfg.max_input_length:
            reason = "too_long"
        elif tree.n_functions > cfg.max_functions:
            reason = "too_many_functions"
        else:
            src = " ".join(tokens)
            if src in seen:  # cannot happen with unique strings; kept as a guard
                reason = "duplicate"
        if reason is not None:
            dropped[reason] = dropped.get(reason, 0) + 1
            pool.release(tree.strings())
            continue
        seen.add(src)
        yield src, " ".join(evaluate(tree)), tree


def _parsed(sources: Iterable[str]) -> Iterator[tuple[str, Node]]:
    """(source, tree) per line; a source that does not parse is an error naming its line."""
    for lineno, src in enumerate(sources, start=1):
        try:
            yield src, parse(src)
        except PCFGSyntaxError as e:
            raise PCFGSyntaxError(f"line {lineno}: {e}") from None


def repeated_strings(sources: Iterable[str]) -> dict:
    """Count string arguments over a corpus of sources (one per line) and how many of
    them occur more than once; a source that does not parse raises an error naming
    its line."""
    counts: dict[tuple[str, ...], int] = {}
    total = 0
    for _, tree in _parsed(sources):
        for s in tree.strings():
            counts[s] = counts.get(s, 0) + 1
            total += 1
    return {"string_arguments": total, "distinct": len(counts),
            "repeated": sum(1 for c in counts.values() if c > 1),
            "repeat_occurrences": sum(c - 1 for c in counts.values() if c > 1)}


def describe(sources: Iterable[str], targets: Iterable[str] | None = None) -> dict:
    """Table 1 statistics (min/max/avg of input length, #functions, depth), plus
    target length and function frequencies, over a list of sources."""
    lengths, n_functions, depths, counts = [], [], [], {f: 0 for f in FUNCTIONS}
    for src, tree in _parsed(sources):
        toks = src.split()
        lengths.append(len(toks))
        n_functions.append(tree.n_functions)
        depths.append(tree.depth)
        for t in toks:
            if t in counts:
                counts[t] += 1
    out = {name: _summary(vals) for name, vals in
           (("length", lengths), ("n_functions", n_functions), ("depth", depths))}
    if targets is not None:
        out["target_length"] = _summary([len(t.split()) for t in targets])
    out["function_counts"] = counts
    return out


def _summary(vals: list[int]) -> dict:
    if not vals:
        return {"min": None, "max": None, "avg": None}
    return {"min": min(vals), "max": max(vals), "avg": round(st.fmean(vals), 3)}


def generate(out_dir: str | Path, cfg: PCFGSetConfig = FULL, seed: int = 1,
             progress: bool = False) -> dict:
    """Write ``{train,valid,test}.{src,tgt}`` and ``manifest.json`` into ``out_dir``."""
    out_dir = Path(out_dir)
    counts = cfg.split_counts()
    dropped: dict[str, int] = {}
    pool = StringPool.for_corpus(cfg, seed)
    from tqdm import tqdm

    pairs = []  # draws are already in random order
    with tqdm(total=cfg.n_pairs, desc="PCFG SET pairs", unit="pair", disable=not progress) as bar:
        for pair in itertools.islice(sample_pairs(cfg, seed, dropped, pool), cfg.n_pairs):
            pairs.append(pair)
            bar.update()
    files, stats, start = [], {}, 0
    for split in SPLITS:
        part = pairs[start:start + counts[split]]
        start += counts[split]
        srcs = [p[0] for p in part]
        tgts = [p[1] for p in part]
        write_lines(out_dir / f"{split}.src", srcs)
        write_lines(out_dir / f"{split}.tgt", tgts)
        files += [f"{split}.src", f"{split}.tgt"]
        stats[split] = describe(srcs, tgts)
    stats["all"] = describe(p[0] for p in pairs)
    return write_manifest(
        out_dir, generator=GENERATOR, generator_version=GENERATOR_VERSION, seed=seed,
        args=cfg.as_args(), files=files, counts=counts, statistics=stats, dropped=dropped,
        extra={"alphabet_size": len(cfg.alphabet()), "string_arguments": pool.summary()},
    )


__all__ = ["PCFGSetConfig", "FULL", "SMALL", "generate", "sample_pairs", "describe",
           "StringPool", "repeated_strings",
           "SEPARATOR", "BINARY"]
