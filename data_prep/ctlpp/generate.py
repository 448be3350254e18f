"""CTL++ data: compositions of random bijective functions over a few symbols, sampled
as the authors' released code samples them (RobertCsordas/ctlpp, ``dataset/
function_interface_test_*.py``).

An input lists functions and then a symbol, written right to left: ``c b a 3`` means
c(b(a(3))); its target is the resulting symbol (a classification over the symbols).
Functions are random permutations of the symbols, drawn from the seed.

Which compositions are seen is set by a *sampling graph* over groups of functions:
edges ``(group, next group)``, with ``IN`` before the first function and ``OUT`` after
the last (:data:`GRAPHS`):

* ``A`` (alternating, the authors' ``alternate``): groups ``a`` and ``b`` of 16
  functions.  Training alternates (a b a ..., b a b ...); the OOD test stays within
  one group (the authors' ``test_self_loop``).
* ``R`` (repeating, ``parallel_branch``): the reverse.  Training stays within a group;
  the OOD test alternates (``test_group_alternate``).
* ``S`` (shared functions, ``parallel_branch_2stage``): groups ``a1 a2 b1 b2`` and the
  ``shared_functions`` (K) functions of ``o``.  Training goes ``a1 -> a2``, ``b1 ->
  b2``, from ``a2``, ``b2`` or ``o`` back to ``a1``, ``b1`` or the end, and from ``a1``
  (``b1``) to a function f of ``o`` only with a symbol of f's set for that path
  (*restricted edges*).  The two sets of f share ``shared_symbols`` (M) symbols and
  together hold all of them.  The OOD test crosses the paths: ``a1 -> b2``, ``b1 ->
  a2`` (``test_group_alternate``, the split of the paper's S figures).

Sampling, as the released code does it (``FunctionInterfaceTestBase.sample``):

* compositions of 2 to ``max_length`` functions (no single applications: the code
  draws depth 2 to ``max_depth``, although the paper's appendix A.2 says singles are in
  training);
* the count per length is at most ``FILL_FACTOR`` (0.5) of that length's space (the
  number of compositions the graph allows, counted as the authors count it,
  :func:`length_counts`), and otherwise the rest spread evenly over the longer lengths;
* within a length: a uniform symbol, then at each step a uniform choice among the
  functions the graph allows next, the whole draw rejected if it cannot end; drawn
  **without replacement** (a repeated input is drawn again);
* ``n_train`` + ``n_test`` compositions are drawn from the training graph and split at
  random: ``n_test`` of them are the IID test (the authors' ``iid``), the rest are
  training.  ``valid`` (a second IID set, the suite's, for monitoring) is ``n_test``
  more, drawn with them;
* every length-2 composition of the training graph is added to training once more
  (the authors' ``pairs``, ``fit.train_on_pairs: 1`` in every sweep of the paper);
* with ``single_applications`` (A and R; off by default, as in the released code),
  every function applied once to every symbol is added to training once: the paper's
  reading (section 3: single applications "are part of the training set"; A.2: "always
  part of the training set with all possible symbols");
* the test sets: ``n_test`` from their graph, lengths 2 to ``max_length``, fill factor
  1, without replacement within the set.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from compsuite.foundation.io import write_lines
from compsuite.foundation.errors import ConfigError
from compsuite.foundation.manifest import write_manifest

GENERATOR = "compsuite.data_prep.ctlpp"
GENERATOR_VERSION = "2"
VARIANTS = ("A", "R", "S")
SPLITS = ("train", "valid", "test_iid", "test_ood")
FUNCTION_NAMES = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [
    chr(c) for c in range(ord("A"), ord("Z") + 1)]
#: the authors' ``fill_factor``: at most this share of a length's space is sampled
FILL_FACTOR = 0.5
#: shortest composition (the authors' depth range starts at 2)
MIN_LENGTH = 2

#: the sampling graphs (the authors' ``edges``), per variant and split kind
GRAPHS = {
    "A": {"train": [("IN", "a"), ("IN", "b"), ("a", "b"), ("b", "a"),
                    ("a", "OUT"), ("b", "OUT")],
          "test_ood": [("IN", "a"), ("IN", "b"), ("a", "a"), ("b", "b"),
                       ("a", "OUT"), ("b", "OUT")]},
    "R": {"train": [("IN", "a"), ("IN", "b"), ("a", "a"), ("b", "b"),
                    ("a", "OUT"), ("b", "OUT")],
          "test_ood": [("IN", "a"), ("IN", "b"), ("a", "b"), ("b", "a"),
                       ("a", "OUT"), ("b", "OUT")]},
    "S": {"train": [("IN", "a1"), ("IN", "b1"), ("a1", "a2"), ("b1", "b2")]
                   + [(g, h) for g in ("a2", "b2", "o") for h in ("a1", "b1", "OUT")],
          "test_ood": [("IN", "a1"), ("IN", "b1"), ("a1", "b2"), ("b1", "a2")]
                      + [(g, h) for g in ("a2", "b2") for h in ("a1", "b1", "OUT")]},
}


@dataclass(frozen=True)
class CTLConfig:
    variant: str = "A"
    n_symbols: int = 8
    n_functions: int = 32
    max_length: int = 6
    n_train: int = 300_000
    n_test: int = 1_000
    shared_functions: int = 8   # S only: K = |G_o| (the authors' fit.overlap)
    shared_symbols: int = 2     # S only: M (the authors' fit.symbol_overlap)
    #: every single application in training (the paper's text; not the released code)
    single_applications: bool = False

    def __post_init__(self):
        if self.variant not in VARIANTS:
            raise ConfigError(f"variant must be one of {', '.join(VARIANTS)}, not {self.variant!r}")
        for key in ("n_train", "n_test", "max_length"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{key} must be a positive integer, not {value!r}")
        if self.max_length < MIN_LENGTH:
            raise ConfigError(f"max_length must be at least {MIN_LENGTH} (the authors' "
                              "compositions have 2 or more functions)")
        if not isinstance(self.single_applications, bool):
            raise ConfigError("single_applications must be true or false, not "
                              f"{self.single_applications!r}")
        if self.single_applications and self.variant == "S":
            raise ConfigError("single_applications: A and R only (S's functions take "
                              "restricted symbols on its paths)")
        if not 2 <= self.n_symbols <= 10:
            raise ConfigError("n_symbols must be between 2 and 10 (symbols are the digits)")
        if not 2 <= self.n_functions <= len(FUNCTION_NAMES) or self.n_functions % 2:
            raise ConfigError(f"n_functions must be even and at most {len(FUNCTION_NAMES)}")
        if self.variant == "S":
            rest = self.n_functions - self.shared_functions
            if self.shared_functions < 0 or rest < 4:
                raise ConfigError(f"S: n_functions - shared_functions ({rest}) must leave at "
                                  "least one function for each of G_a1, G_a2, G_b1, G_b2")
            if not 1 <= self.shared_symbols <= self.n_symbols:
                raise ConfigError(f"S: shared_symbols must be between 1 and n_symbols "
                                  f"({self.n_symbols}), not {self.shared_symbols!r}")

    def as_args(self) -> dict:
        args = asdict(self)
        if self.variant != "S":
            args.pop("shared_functions")
            args.pop("shared_symbols")
        if not self.single_applications:   # the released code's data, as before the option
            args.pop("single_applications")
        return args


def equal_split(items: list, parts: int) -> list[list]:
    """Consecutive blocks of ``ceil(len / parts)`` (the last ones shorter), as the
    authors' ``equal_split`` cuts them."""
    size = -(-len(items) // parts)
    blocks = [items[i:i + size] for i in range(0, len(items), size)]
    return blocks + [[] for _ in range(parts - len(blocks))]


class World:
    """The symbols, the functions' tables, the groups, the sampling graphs and (S) the
    restricted edges into the shared functions."""

    def __init__(self, cfg: CTLConfig, seed: int):
        rng = random.Random(f"ctlpp-world-{seed}")
        self.cfg = cfg
        self.symbols = [str(i) for i in range(cfg.n_symbols)]
        self.functions = FUNCTION_NAMES[:cfg.n_functions]
        self.table = {}
        drawn: set[tuple[str, ...]] = set()
        for f in self.functions:   # distinct permutations, as the authors draw them
            perm = self.symbols[:]
            while True:
                rng.shuffle(perm)
                if tuple(perm) not in drawn:
                    break
            drawn.add(tuple(perm))
            self.table[f] = dict(zip(self.symbols, perm))
        self.groups = self._groups()
        self.group_of = {f: g for g, fs in self.groups.items() for f in fs}
        self._options: dict = {}
        #: S: function of G_o -> {"a": symbols it takes after a1, "b": after b1}
        self.symbol_sets: dict[str, dict[str, list[str]]] = (
            self._symbol_sets(rng) if cfg.variant == "S" else {})

    def _groups(self) -> dict[str, list[str]]:
        """The authors' ``generate_groups``: G_o takes the first K functions, the others
        are cut into equal consecutive blocks, one per group in name order."""
        fns, cfg = self.functions, self.cfg
        if cfg.variant in ("A", "R"):
            return dict(zip(("a", "b"), equal_split(fns, 2)))
        k = cfg.shared_functions
        return {"o": fns[:k], **dict(zip(("a1", "a2", "b1", "b2"), equal_split(fns[k:], 4)))}

    def _symbol_sets(self, rng: random.Random) -> dict[str, dict[str, list[str]]]:
        """The authors' ``generate_restricted_overlaps``: the M shared symbols of the
        shared functions slide along an order of the symbols (a fresh random order once
        a pass has covered them all), and the other symbols are cut into two
        consecutive halves, the first for path a, the second for path b (with fewer
        than two left, each goes to a random path)."""
        n, m = self.cfg.n_symbols, self.cfg.shared_symbols
        every = -(-n // m)
        order = list(range(n))
        out = {}
        for i, f in enumerate(self.groups["o"]):
            shared = {order[j % n] for j in range(i * m, (i + 1) * m)}
            others = [s for s in range(n) if s not in shared]
            if len(others) < 2:
                halves = [[], []]
                for s, where in zip(others, rng.sample(range(2), len(others))):
                    halves[where] = [s]
            else:
                halves = equal_split(others, 2)
            if i % every == every - 1:
                order = list(range(n))
                rng.shuffle(order)
            out[f] = {path: [self.symbols[s] for s in sorted(shared | set(half))]
                      for path, half in zip("ab", halves)}
        return out

    def apply(self, functions: list[str], symbol: str) -> str:
        """``functions`` in application order (innermost first)."""
        for f in functions:
            symbol = self.table[f][symbol]
        return symbol

    # ----------------------------------------------------------------- sampling graphs
    def edges(self, split: str) -> list[tuple[str, str]]:
        """The (group, next group) edges of a split's graph."""
        kind = "test_ood" if split == "test_ood" else "train"
        return [(g, h) for g, h in GRAPHS[self.cfg.variant][kind]
                if (g in ("IN",) or self.groups.get(g)) and (h == "OUT" or self.groups.get(h))]

    def restricted(self, split: str) -> list[tuple[str, frozenset, str]]:
        """S's training graph: (a1 or b1, the symbols f takes on that path, f)."""
        if self.cfg.variant != "S" or split == "test_ood":
            return []
        return [(f"{p}1", frozenset(sets[p]), f)
                for f, sets in self.symbol_sets.items() for p in "ab"]

    def options(self, split: str):
        """``following(group, symbol)``: the functions the graph allows after ``group``
        (or ``IN``) with ``symbol``, and the groups it may stop after."""
        if split not in self._options:
            self._options[split] = self._make_options(split)
        return self._options[split]

    def _make_options(self, split: str):
        nxt: dict[str, list[str]] = {}
        for g, h in self.edges(split):
            if h != "OUT":
                nxt.setdefault(g, []).extend(self.groups[h])
        res: dict[str, list[tuple[frozenset, str]]] = {}
        for g, allowed, f in self.restricted(split):
            res.setdefault(g, []).append((allowed, f))
        enders = {g for g, h in self.edges(split) if h == "OUT"}

        def following(group: str, symbol: str) -> list[str]:
            return nxt.get(group, []) + [f for allowed, f in res.get(group, ())
                                         if symbol in allowed]
        return following, enders

    def line(self, fns: list[str], symbol: str) -> str:
        return " ".join(reversed(fns)) + f" {symbol}\t{self.apply(fns, symbol)}"


# ----------------------------------------------------------------------------- counting
def length_counts(world: World, split: str) -> dict[int, int]:
    """Each length's space as the authors count it (``length_count``): per path of
    groups (a restricted edge is one function), the ways to pick its functions times
    the number of symbols that can be current at its end, where that set of symbols
    is followed through the path as a set.  That is exact for A and R; for S it can
    count more than there are (a set forgets which symbol came from which input);
    :func:`exact_counts` has the exact numbers."""
    following_groups: dict[str, list] = {}
    for g, h in world.edges(split):
        following_groups.setdefault(g, []).append(h)
    for g, allowed, f in world.restricted(split):
        following_groups.setdefault(g, []).append((allowed, f))
    all_symbols = frozenset(world.symbols)
    out: Counter = Counter()

    def walk(group: str, symbols: frozenset, length: int, ways: int) -> None:
        for nxt in following_groups.get(group, ()):
            if nxt == "OUT":
                if length >= MIN_LENGTH and symbols:
                    out[length] += len(symbols) * ways
            elif length < world.cfg.max_length:
                if isinstance(nxt, tuple):   # a restricted edge: one function
                    allowed, f = nxt
                    walk("o", frozenset(world.table[f][s] for s in symbols & allowed),
                         length + 1, ways)
                else:
                    fns = world.groups[nxt]
                    after = symbols if symbols == all_symbols else frozenset(
                        world.table[f][s] for f in fns for s in symbols)
                    walk(nxt, after, length + 1, ways * len(fns))

    walk("IN", all_symbols, 0, 1)
    return dict(sorted(out.items()))


def exact_counts(world: World, split: str) -> dict[int, int]:
    """The number of distinct inputs of each length the graph allows."""
    following, enders = world.options(split)
    state = Counter({("IN", s): 1 for s in world.symbols})
    out = {}
    for length in range(1, world.cfg.max_length + 1):
        step: Counter = Counter()
        for (group, s), n in state.items():
            for f in following(group, s):
                step[(world.group_of[f], world.table[f][s])] += n
        state = step
        total = sum(n for (g, _), n in state.items() if g in enders)
        if length >= MIN_LENGTH and total:
            out[length] = total
    return out


def quotas(space: dict[int, int], n: int | None, fill: float) -> dict[int, int]:
    """The authors' per-length counts: at most ``fill`` of each length's space, the
    rest of ``n`` spread over the longer lengths (shorter lengths first)."""
    out, done = {}, 0
    lengths = sorted(space)
    for i, length in enumerate(lengths):
        c = int(space[length] * fill)
        if n is not None:
            left = len(lengths) - i
            c = min(c, (n - done + left - 1) // left)
        out[length] = c
        done += c
    return out


# ----------------------------------------------------------------------------- sampling
def draw(world: World, split: str, length: int, rng: random.Random) -> tuple | None:
    """One composition of ``length`` functions (application order) and its input
    symbol: a uniform symbol, then a uniform choice among the functions allowed next;
    None when the draw cannot go on or cannot end (the authors' ``sample_one``)."""
    following, enders = world.options(split)
    symbol = rng.choice(world.symbols)
    x, group, fns = symbol, "IN", []
    for _ in range(length):
        allowed = following(group, x)
        if not allowed:
            return None
        f = rng.choice(allowed)
        fns.append(f)
        group, x = world.group_of[f], world.table[f][x]
    return (tuple(fns), symbol) if group in enders else None


def every_input(world: World, split: str, length: int) -> list[tuple]:
    """All compositions of ``length`` functions, in a fixed order."""
    following, enders = world.options(split)
    paths = [((), s, "IN", s) for s in world.symbols]
    for _ in range(length):
        paths = [(fns + (f,), s0, world.group_of[f], world.table[f][x])
                 for fns, s0, g, x in paths for f in following(g, x)]
    return [(fns, s0) for fns, s0, g, _ in paths if g in enders]


def sample(world: World, split: str, n: int | None, fill: float, rng: random.Random,
           bar=None, max_length: int | None = None) -> list[tuple]:
    """``n`` distinct compositions (all of the quotas when ``n`` is None) of lengths 2
    to ``max_length`` (the config's by default), shortest lengths first; a length whose
    quota is its whole space is listed, not drawn."""
    top = max_length or world.cfg.max_length
    space = {k: v for k, v in length_counts(world, split).items() if k <= top}
    exact = exact_counts(world, split)
    q = quotas(space, n, fill)
    if n is not None and sum(q.values()) != n:
        raise ConfigError(
            f"CTL++ {world.cfg.variant} {split}: the graph holds at most "
            f"{sum(q.values())} compositions at fill factor {fill} of lengths "
            f"{MIN_LENGTH}-{world.cfg.max_length} ({n} asked): ask for fewer examples, or "
            "more functions or a longer max_length")
    out: list[tuple] = []
    for length, want in q.items():
        if want > exact.get(length, 0):
            raise ConfigError(f"CTL++ {world.cfg.variant} {split}: length {length} has "
                              f"{exact.get(length, 0)} distinct inputs, {want} asked")
        if want == exact[length]:
            got = every_input(world, split, length)
            rng.shuffle(got)
        else:
            seen: set = set()
            got = []
            while len(got) < want:
                d = draw(world, split, length, rng)
                if d is not None and d not in seen:
                    seen.add(d)
                    got.append(d)
        out += got
        if bar is not None:
            bar.update(len(got))
    return out


def generate(out_dir: str | Path, cfg: CTLConfig = CTLConfig(), seed: int = 1,
             progress: bool = False) -> dict:
    """Write ``{train,valid,test_iid,test_ood}.tsv`` (``INPUT<TAB>TARGET``), the same
    as ``.src``/``.tgt`` pairs, and ``manifest.json``."""
    from tqdm import tqdm

    out_dir = Path(out_dir)
    world = World(cfg, seed)
    rng = random.Random(f"ctlpp-sample-{seed}")
    total = cfg.n_train + 3 * cfg.n_test
    with tqdm(total=total, desc=f"CTL++ {cfg.variant}", disable=not progress,
              unit="ex") as bar:
        pool = sample(world, "train", cfg.n_train + 2 * cfg.n_test, FILL_FACTOR, rng, bar)
        rng.shuffle(pool)
        pairs = sample(world, "train", None, 1.0, random.Random(f"ctlpp-pairs-{seed}"),
                       max_length=MIN_LENGTH)
        ood = sample(world, "test_ood", cfg.n_test, 1.0, rng, bar)
    drawn = {"test_iid": pool[:cfg.n_test], "valid": pool[cfg.n_test:2 * cfg.n_test],
             "train": pool[2 * cfg.n_test:] + pairs, "test_ood": ood}
    rng.shuffle(drawn["train"])
    rng.shuffle(drawn["test_ood"])
    singles = every_input(world, "train", 1) if cfg.single_applications else []
    spots = random.Random(f"ctlpp-singles-{seed}")   # the rest as without them
    for single in singles:
        drawn["train"].insert(spots.randrange(len(drawn["train"]) + 1), single)
    lines = {s: [world.line(list(fns), x) for fns, x in drawn[s]] for s in SPLITS}
    return _write(out_dir, cfg, world, seed, lines, n_pairs=len(pairs), n_singles=len(singles))


def _write(out_dir: Path, cfg: CTLConfig, world: World, seed: int,
           lines: dict[str, list[str]], n_pairs: int, n_singles: int = 0) -> dict:
    files = []
    for split in SPLITS:   # the TSV, and the same as source/target files for the toolkits
        write_lines(out_dir / f"{split}.tsv", lines[split])
        write_lines(out_dir / f"{split}.src", (r.split("\t")[0] for r in lines[split]))
        write_lines(out_dir / f"{split}.tgt", (r.split("\t")[1] for r in lines[split]))
        files += [f"{split}.tsv", f"{split}.src", f"{split}.tgt"]
    inputs = {s: [r.split("\t")[0] for r in lines[s]] for s in SPLITS}
    train_inputs = set(inputs["train"])
    stats = {s: {"per_length": {str(n): c for n, c in sorted(
                     Counter(len(x.split()) - 1 for x in inputs[s]).items())},
                 "distinct_inputs": len(set(inputs[s]))} for s in SPLITS}
    for split in ("valid", "test_iid", "test_ood"):
        stats[split]["share_of_inputs_also_in_train"] = (
            sum(x in train_inputs for x in inputs[split]) / max(len(inputs[split]), 1))
    stats["train"]["length2_pairs_added"] = n_pairs
    if cfg.single_applications:
        stats["train"]["single_applications_added"] = n_singles
    extra = {"symbols": world.symbols,
             "functions": {f: [world.table[f][x] for x in world.symbols]
                           for f in world.functions},
             "groups": world.groups,
             "edges": {s: [list(e) for e in world.edges(s)]
                          + sorted({(g, "o") for g, _, _ in world.restricted(s)})
                       for s in ("train", "test_ood")},
             "restricted_edges": "S: a1 (b1) -> a function f of o only with a symbol of "
                                 "f's a (b) set (S.symbol_sets)",
             "space": {s: {"authors_count": {str(k): v for k, v in
                                             length_counts(world, s).items()},
                           "distinct": {str(k): v for k, v in exact_counts(world, s).items()}}
                       for s in ("train", "test_ood")},
             "sampling": {"fill_factor": FILL_FACTOR, "min_length": MIN_LENGTH,
                          "replacement": False, "length2_pairs_in_train": True,
                          "reference": "RobertCsordas/ctlpp@1b5ab28 dataset/"},
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
    from compsuite.foundation.errors import DataError
    from compsuite.foundation.io import iter_lines

    rows = []
    for i, line in enumerate(iter_lines(path), 1):
        parts = line.split("\t")
        if len(parts) != 2 or len(parts[0].split()) < 2 or not parts[1].strip():
            raise DataError(f"{path}:{i}: expected 'FUNCTIONS SYMBOL<TAB>TARGET', "
                            f"found {line[:80]!r}")
        rows.append((parts[0].split(), parts[1].strip()))
    return rows


__all__ = ["CTLConfig", "World", "generate", "read_tsv", "VARIANTS", "SPLITS", "GENERATOR",
           "length_counts", "exact_counts", "quotas"]
