"""CTL++ data: compositions of random bijective functions over a few symbols.

An input lists functions and then a symbol, written right to left: ``c b a 3`` means
c(b(a(3))); its target is the resulting symbol (a classification over the symbols).
Functions are random permutations of the symbols, drawn from the seed.

Which compositions are seen in training is set by a *sampling graph* over groups of
functions (section 3 of the paper):

* ``A`` (alternating): the functions form two groups G_a and G_b. Training
  compositions alternate between them (a b a ..., b a b ...). The OOD test composes
  functions within one group (a a a ..., b b b ...).
* ``R`` (repeating): the reverse. Training stays within one group, the OOD test
  alternates.
* ``S`` (shared): two paths, a and b, each with a stage-1 group (G_a1, G_b1) and a
  stage-2 group (G_a2, G_b2), plus ``shared_functions`` functions G_o that stage 1 of
  either path may feed. A shared function f sees only the symbols S_a^f after path a's
  stage 1 and S_b^f after path b's. The two sets share ``shared_symbols`` symbols and
  together cover all symbols. Training pairs are stage-1 -> (stage-2 of the same path
  or G_o). The OOD test feeds stage 1 of one path into stage 2 of the other.

For A and R, every function applied to every symbol is in training (length 1). For S,
the graph only has compositions of one and two functions. The manifest records
which lengths a split could not fill.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from compsuite.data_prep.common.io import write_lines
from compsuite.errors import ConfigError
from compsuite.data_prep.common.manifest import write_manifest

GENERATOR = "compsuite.data_prep.ctlpp"
GENERATOR_VERSION = "1"
VARIANTS = ("A", "R", "S")
SPLITS = ("train", "valid", "test_iid", "test_ood")
FUNCTION_NAMES = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [
    chr(c) for c in range(ord("A"), ord("Z") + 1)]


@dataclass(frozen=True)
class CTLConfig:
    variant: str = "A"
    n_symbols: int = 8
    n_functions: int = 32
    max_length: int = 6
    n_train: int = 300_000
    n_test: int = 1_000
    shared_functions: int = 8   # S only: |G_o|
    shared_symbols: int = 2     # S only: |S_a^f ∩ S_b^f|

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise ConfigError(f"variant must be one of {', '.join(VARIANTS)}, not {self.variant!r}")
        for key in ("n_train", "n_test", "max_length"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{key} must be a positive integer, not {value!r}")
        if not 2 <= self.n_symbols <= 10:
            raise ConfigError("n_symbols must be between 2 and 10 (symbols are the digits)")
        if not 2 <= self.n_functions <= len(FUNCTION_NAMES) or self.n_functions % 2:
            raise ConfigError(f"n_functions must be even and at most {len(FUNCTION_NAMES)}")
        if self.variant == "S":
            rest = self.n_functions - self.shared_functions
            if self.shared_functions < 0 or rest < 4 or rest % 4:
                raise ConfigError(f"S: n_functions - shared_functions ({rest}) must be a "
                                 "positive multiple of 4 (G_a1, G_a2, G_b1, G_b2)")
            if not 0 <= self.shared_symbols <= self.n_symbols or (
                    self.n_symbols - self.shared_symbols) % 2:
                raise ConfigError(f"S: n_symbols - shared_symbols "
                                 f"({self.n_symbols - self.shared_symbols}) must be even and "
                                 "non-negative (the rest splits evenly between the paths)")

    def as_args(self) -> dict:
        args = asdict(self)
        if self.variant != "S":
            args.pop("shared_functions")
            args.pop("shared_symbols")
        return args


class World:
    """The symbols, the functions' tables, the groups and (S) the symbol sets."""

    def __init__(self, cfg: CTLConfig, seed: int):
        rng = random.Random(f"ctlpp-world-{seed}")
        self.cfg = cfg
        self.symbols = [str(i) for i in range(cfg.n_symbols)]
        self.functions = FUNCTION_NAMES[:cfg.n_functions]
        self.table = {}
        for f in self.functions:
            perm = self.symbols[:]
            rng.shuffle(perm)
            self.table[f] = dict(zip(self.symbols, perm))
        order = self.functions[:]
        rng.shuffle(order)
        self.symbol_sets: dict[str, dict[str, list[str]]] = {}
        if cfg.variant in ("A", "R"):
            half = len(order) // 2
            self.groups = {"a": sorted(order[:half]), "b": sorted(order[half:])}
        else:
            k = cfg.shared_functions
            rest = order[k:]
            q = len(rest) // 4
            self.groups = {"a1": sorted(rest[:q]), "a2": sorted(rest[q:2 * q]),
                           "b1": sorted(rest[2 * q:3 * q]), "b2": sorted(rest[3 * q:]),
                           "o": sorted(order[:k])}
            for f in self.groups["o"]:
                syms = self.symbols[:]
                rng.shuffle(syms)
                m = cfg.shared_symbols
                own = (cfg.n_symbols - m) // 2
                shared, a_only, b_only = syms[:m], syms[m:m + own], syms[m + own:]
                self.symbol_sets[f] = {"a": sorted(shared + a_only), "b": sorted(shared + b_only)}
        self.group_of = {f: g for g, fs in self.groups.items() for f in fs}

    def apply(self, functions: list[str], symbol: str) -> str:
        """``functions`` in application order (innermost first)."""
        for f in functions:
            symbol = self.table[f][symbol]
        return symbol

    # ----------------------------------------------------------------- sampling graphs
    def transitions(self, split: str) -> set[tuple[str, str]]:
        """Allowed (group of a function, group of the next function) pairs."""
        v = self.cfg.variant
        if v in ("A", "R"):
            alternate = {("a", "b"), ("b", "a")}
            same = {("a", "a"), ("b", "b")}
            train = alternate if v == "A" else same
            return train if split != "test_ood" else (same if v == "A" else alternate)
        if split == "test_ood":
            return {("a1", "b2"), ("b1", "a2")}
        train = {("a1", "a2"), ("b1", "b2")}
        if self.groups["o"]:   # no shared functions: the paths never meet
            train |= {("a1", "o"), ("b1", "o")}
        return train

    def lengths(self, split: str) -> list[int]:
        if self.cfg.variant == "S":
            return [1, 2] if split == "train" else [2]
        return list(range(1 if split == "train" else 2, self.cfg.max_length + 1))

    def sample(self, rng: random.Random, split: str, length: int) -> tuple[list[str], str]:
        """One composition (application order) and input symbol from a split's graph."""
        if length == 1:
            return [rng.choice(self.functions)], rng.choice(self.symbols)
        edges = sorted(self.transitions(split))
        if self.cfg.variant == "S":
            first, second = rng.choice(edges)
            f = rng.choice(self.groups[first])
            g = rng.choice(self.groups[second])
            if second == "o":   # the shared function only sees its path's symbols
                path = first[0]
                allowed = [x for x in self.symbols
                           if self.table[f][x] in self.symbol_sets[g][path]]
                return [f, g], rng.choice(allowed)
            return [f, g], rng.choice(self.symbols)
        nxt: dict[str, list[str]] = {}
        for a, b in edges:
            nxt.setdefault(a, []).append(b)
        group = rng.choice(sorted(nxt))
        fns = [rng.choice(self.groups[group])]
        for _ in range(length - 1):
            group = rng.choice(nxt[group])
            fns.append(rng.choice(self.groups[group]))
        return fns, rng.choice(self.symbols)

    def line(self, fns: list[str], symbol: str) -> str:
        return " ".join(reversed(fns)) + f" {symbol}\t{self.apply(fns, symbol)}"


def _quotas(total: int, lengths: list[int], fixed: dict[int, int]) -> dict[int, int]:
    """Equal counts per length; lengths in ``fixed`` take exactly that many."""
    free = [n for n in lengths if n not in fixed]
    left = total - sum(fixed.values())
    q = {n: left // len(free) for n in free} if free else {}
    for n in free[:left - sum(q.values())] if free else []:
        q[n] += 1
    return {**fixed, **q}


def generate(out_dir: str | Path, cfg: CTLConfig = CTLConfig(), seed: int = 1,
             progress: bool = False) -> dict:
    """Write ``{train,valid,test_iid,test_ood}.tsv`` (``INPUT<TAB>TARGET``), the same
    as ``.src``/``.tgt`` pairs, and ``manifest.json``.  ``valid`` is a second IID set
    (for checkpoint selection), so the two test sets stay unseen."""
    from tqdm import tqdm

    out_dir = Path(out_dir)
    world = World(cfg, seed)
    rng = random.Random(f"ctlpp-sample-{seed}")
    lines: dict[str, list[str]] = {}
    per_length: dict[str, dict[str, int]] = {}
    unavailable: dict[str, list[int]] = {}
    for split in SPLITS:
        lengths = world.lengths(split)
        unavailable[split] = [n for n in range(1 if split == "train" else 2, cfg.max_length + 1)
                              if n not in lengths]
        fixed = {}
        rows: list[str] = []
        if split == "train":   # every function on every symbol, once
            singles = [world.line([f], x) for f in world.functions for x in world.symbols]
            fixed[1] = len(singles)
            rows += singles
        total = cfg.n_train if split == "train" else cfg.n_test
        quotas = _quotas(total, lengths, fixed)
        with tqdm(total=total, desc=f"CTL++ {cfg.variant} {split}", disable=not progress,
                  unit="ex") as bar:
            bar.update(len(rows))
            for n in lengths:
                for _ in range(quotas[n] - (len(rows) if n == 1 and fixed else 0)):
                    rows.append(world.line(*world.sample(rng, split, n)))
                    bar.update()
        rng.shuffle(rows)
        lines[split] = rows
        per_length[split] = {str(n): c for n, c in sorted(
            Counter(len(r.split("\t")[0].split()) - 1 for r in rows).items())}
    files = []
    for split in SPLITS:   # the TSV, and the same as source/target files for the toolkits
        write_lines(out_dir / f"{split}.tsv", lines[split])
        write_lines(out_dir / f"{split}.src", (r.split("\t")[0] for r in lines[split]))
        write_lines(out_dir / f"{split}.tgt", (r.split("\t")[1] for r in lines[split]))
        files += [f"{split}.tsv", f"{split}.src", f"{split}.tgt"]
    train_inputs = {r.split("\t")[0] for r in lines["train"]}
    stats = {split: {"per_length": per_length[split],
                     "distinct_inputs": len({r.split("\t")[0] for r in lines[split]})}
             for split in SPLITS}
    for split in ("valid", "test_iid", "test_ood"):
        stats[split]["share_of_inputs_also_in_train"] = (
            sum(r.split("\t")[0] in train_inputs for r in lines[split]) / len(lines[split]))
    extra = {"symbols": world.symbols,
             "functions": {f: [world.table[f][x] for x in world.symbols]
                           for f in world.functions},
             "groups": world.groups,
             "transitions": {s: sorted(map(list, world.transitions(s))) for s in SPLITS},
             "unavailable_lengths": unavailable,
             "input_order": "right-to-left: 'c b a 3' = c(b(a(3)))"}
    if cfg.variant == "S":
        extra["S"] = {"shared_functions": cfg.shared_functions,
                      "shared_symbols": cfg.shared_symbols, "symbol_sets": world.symbol_sets}
    return write_manifest(out_dir, generator=GENERATOR, generator_version=GENERATOR_VERSION,
                          seed=seed, args=cfg.as_args(), files=files,
                          counts={s: len(lines[s]) for s in SPLITS}, statistics=stats,
                          extra=extra)


def read_tsv(path: str | Path) -> list[tuple[list[str], str]]:
    """``(input tokens, target)`` per line; a malformed line is an error naming it."""
    from compsuite.data_prep.common.io import DataError, iter_lines

    rows = []
    for i, line in enumerate(iter_lines(path), 1):
        parts = line.split("\t")
        if len(parts) != 2 or len(parts[0].split()) < 2 or not parts[1].strip():
            raise DataError(f"{path}:{i}: expected 'FUNCTIONS SYMBOL<TAB>TARGET', "
                            f"found {line[:80]!r}")
        rows.append((parts[0].split(), parts[1].strip()))
    return rows


__all__ = ["CTLConfig", "World", "generate", "read_tsv", "VARIANTS", "SPLITS", "GENERATOR"]
