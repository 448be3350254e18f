"""SGET data generator (Kumon et al. 2024, section 3 and appendix B): English sentences
from the probabilistic grammar (:mod:`.sampler`, :mod:`.builders`), Japanese from the
rule-based translator (:mod:`.translate`), split into train / dev / test / gen.

``compsuite data sget generate --seed S --out DIR [--no-restrictions]
[--no-concatenation] [--scale F]`` writes ``train.txt``, ``dev.txt``, ``test.txt`` and
``gen.txt`` (``english<TAB>japanese<TAB>pattern``; the pattern is ``in_distribution``
outside gen, as in the released files), ``gen_info.tsv`` (line by line with gen.txt:
pattern, whether the target is inside a complement clause, the target word or the
recursion depth) and ``manifest.json``.

What goes where (section 4.1.2 sizes, all multiplied by ``scale``):

* **in-distribution** sentences of the grammar: 50,000 = 40,000 train + 5,000 dev +
  5,000 test.  A sentence drawn again stays in the split it was first given to (the
  released files repeat frequent short sentences inside a split), so no sentence is in
  two splits;
* **exposures** (train): 100 per lexical pattern (21 x 100), the five target words in
  turn, each in the pattern's training context (:mod:`.patterns`: ``train_context``);
  a primitive exposure is the word alone, so a primitive pattern's word recurs 20
  times;
* **topicalisation** (train, section 3.2.1 after Wu et al. 2023): 10% of the training
  sentences whose main-clause object carries a modifier (PP, relative clause,
  adjective) are replaced by their topicalised form (``A book in the house , Olivia
  found.``);
* **concatenations** (train, section 3.2.1; Table 6's ablation leaves them out with
  ``concatenation=False``): 1,700 sentences, statements of the in-distribution grammar
  run together until each is longer (in words) than every gen sentence; every
  statement but the last ends in a noun, so that the seams are unambiguous (a clause
  ending in a verb could take the next clause's subject as its object).  1,700 is what brings the training set to
  the paper's 43,800 (40,000 + 2,100 + 1,700);
* **gen**: 2,000 per pattern (1,000 for the two CP-recursion and the six wh patterns),
  76,000 in all; half of each 2,000 with the target inside a complement clause.

Hold-outs: target words are never drawn at random (they occur in training only in their
exposures; dev and test never have them); modifiers occur in training only on direct
objects; recursion depths in training are 1, 2 and 4; training wh-questions are about
the subject or object of a transitive verb; the gen structures never occur in training.
No content word occurs twice in a sentence.  Every sentence is built as a tree of the
grammar and translated from that tree; a deterministic sample of every split is parsed
again from its English and translated with :func:`.translate.translate`, and any
disagreement is reported in the manifest (``verification``).  The output is byte for
byte the same for a seed (one ``random.Random`` stream per component, seeded by name).
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import random
import statistics as st
import sys
import time
from pathlib import Path
from typing import Sequence

from compsuite.foundation.errors import DataError, UserError
from compsuite.foundation.io import write_lines
from compsuite.foundation.manifest import write_manifest

from . import patterns as P
from . import selection
from .builders import BUILDERS, EXPOSURES, lexical_entry
from .lexicon import counts as lexicon_counts, load as load_lexicon
from .sampler import Exhausted, Sampler, Vocabulary, concatenate, topicalise
from .translate import TranslationError, tokenize, translate, translate_tree
from .trees import GrammarMismatch, construction, content_words, depths, english, leaves

GENERATOR = "compsuite.data_prep.sget"
GENERATOR_VERSION = "1"
SPLITS = ("train", "dev", "test", "gen")
IN_DISTRIBUTION = "in_distribution"
#: section 4.1.2
POOL = {"train": 40_000, "dev": 5_000, "test": 5_000}
CONCATENATED = 1_700
TOPICALISED_SHARE = 0.10
#: lines of each split (evenly spaced) parsed again and translated from their English
VERIFY_PER_SPLIT = 100
MAX_ATTEMPTS = 200


def n_words(english_sentence: str) -> int:
    """Words of a sentence (punctuation not counted)."""
    return sum(1 for t in tokenize(english_sentence) if t not in ".,?")


class _Line:
    __slots__ = ("en", "ja", "tree", "pattern", "info", "words")

    def __init__(self, en, ja, tree, pattern, info="", words=()):
        self.en, self.ja, self.tree, self.pattern, self.info = en, ja, tree, pattern, info
        self.words = words


class _Generator:
    def __init__(self, seed: int, restrictions: bool, scale: float, show: bool):
        self.seed, self.scale, self.show = seed, scale, show
        self.lx = load_lexicon()
        self.vocab = Vocabulary(self.lx, P.target_words(), restrictions)
        self.dropped: collections.Counter = collections.Counter()
        self.fallbacks = 0

    def rng(self, *name: object) -> random.Random:
        return random.Random(":".join(["sget", str(self.seed), *map(str, name)]))

    def log(self, msg: str) -> None:
        if self.show:
            print(msg, file=sys.stderr, flush=True)

    def build(self, s: Sampler, make, what: str, seen: set | None = None) -> _Line:
        """One sentence from ``make()`` (called again when it runs out of words, repeats a
        sentence of ``seen`` or cannot be translated)."""
        for _ in range(MAX_ATTEMPTS):
            s.start()
            try:
                tree = make()
            except Exhausted:
                self.dropped[f"{what}: no word left satisfying the constraints (redrawn)"] += 1
                continue
            lv = leaves(tree)
            en = english(tree, lv)
            if seen is not None and en in seen:
                self.dropped[f"{what}: duplicate (redrawn)"] += 1
                continue
            words = content_words(tree, lv)
            if len(words) != len(set(words)):  # cannot happen: Sampler.take refuses it
                self.dropped[f"{what}: repeated content word (bug; redrawn)"] += 1
                continue
            try:
                ja = translate_tree(tree)
            except (TranslationError, GrammarMismatch) as e:
                self.dropped[f"{what}: translation failed (bug): {e}"] += 1
                continue
            return _Line(en, ja, tree, IN_DISTRIBUTION, words=words)
        raise DataError(f"could not build a sentence for {what} in {MAX_ATTEMPTS} attempts "
                        "(the lexicon has too few words for its constraints)")

    # ------------------------------------------------------------------ gen
    def gen(self) -> list[_Line]:
        out: list[_Line] = []
        seen: set[str] = set()
        for p in P.PATTERNS:
            rng = self.rng("gen", p.name)
            s = Sampler(rng, self.vocab)
            builder = BUILDERS[p.builder]
            n = P.scaled_size(p, self.scale)
            targets = [lexical_entry(self.lx, w) for w in p.targets]
            lines = []
            for i in range(n):
                in_cp = p.complement_clause and i >= n // 2
                if targets:
                    arg, detail = targets[i % len(targets)], f"target={p.targets[i % len(targets)]}"
                elif p.recursion:
                    d = p.depths[i % len(p.depths)]
                    arg, detail = d, f"depth={d}"
                else:
                    arg, detail = None, "-"
                line = self.build(s, lambda: builder(s, p, arg, in_cp), f"gen {p.name}", seen)
                seen.add(line.en)
                line.pattern = p.name
                line.info = f"{p.name}\t{int(in_cp)}\t{detail}"
                lines.append(line)
            rng.shuffle(lines)
            self.fallbacks += s.fallbacks
            out += lines
            self.log(f"gen {p.name}: {n}")
        return out

    # ------------------------------------------------------------------ in-distribution
    def pool(self, forbidden: set[str]) -> dict[str, list[_Line]]:
        """Draw in-distribution sentences until every split is full; a sentence drawn
        again goes to the split it was first given to (skipped when that one is full)."""
        rng = self.rng("in_distribution")
        s = Sampler(rng, self.vocab)
        want = {k: max(1, round(v * self.scale)) for k, v in POOL.items()}
        splits: dict[str, list[_Line]] = {k: [] for k in want}
        home: dict[str, str] = {}
        while any(len(splits[k]) < want[k] for k in want):
            line = self.build(s, s.in_distribution, "in-distribution", forbidden)
            split = home.get(line.en)
            if split is None:
                free = [k for k in want if len(splits[k]) < want[k]]
                split = rng.choices(free, [want[k] - len(splits[k]) for k in free])[0]
                home[line.en] = split
            if len(splits[split]) >= want[split]:
                self.dropped["in-distribution: repeat of a sentence of a full split"] += 1
                continue
            splits[split].append(line)
        self.fallbacks += s.fallbacks
        return splits

    def exposures(self, forbidden: set[str]) -> list[_Line]:
        out: list[_Line] = []
        for p in P.lexical():
            rng = self.rng("exposure", p.name)
            s = Sampler(rng, self.vocab)
            make = EXPOSURES[p.exposure]
            targets = [lexical_entry(self.lx, w) for w in p.targets]
            seen = set(forbidden)
            for i in range(P.scaled_exposures(p, self.scale)):
                target = targets[i % len(targets)]
                primitive = p.exposure == "primitive"
                line = self.build(s, lambda: make(s, p, target), f"exposure {p.name}",
                                  None if primitive else seen)
                seen.add(line.en)
                out.append(line)
            self.fallbacks += s.fallbacks
        return out

    def topicalise(self, train: list[_Line]) -> int:
        rng = self.rng("topicalise")
        eligible = [i for i, line in enumerate(train) if topicalise(line.tree) is not None]
        chosen = sorted(rng.sample(eligible, round(TOPICALISED_SHARE * len(eligible))))
        for i in chosen:
            tree = topicalise(train[i].tree)
            train[i] = _Line(english(tree), translate_tree(tree), tree, IN_DISTRIBUTION,
                             words=train[i].words)
        self.topic_stats = {"eligible": len(eligible), "topicalised": len(chosen)}
        return len(chosen)

    def concatenations(self, longest: int, forbidden: set[str]) -> list[_Line]:
        rng = self.rng("concatenation")
        s = Sampler(rng, self.vocab)
        n = round(CONCATENATED * self.scale)

        def make():
            parts, words = [], 0
            while words <= longest:
                saved = set(s.used)
                t = s.statement(s.clause("main"))
                n = n_words(english(t))
                if words + n <= longest and not _ends_in_noun(t):
                    # a clause followed by another must end in a noun: a verb or a
                    # relative clause at the seam could take the next subject as its
                    # object, and the parser would split the clauses elsewhere
                    s.used = saved
                    self.dropped["concatenation: clause not ending in a noun (redrawn)"] += 1
                    continue
                parts.append(t)
                words += n
            return concatenate(parts)

        out = []
        for _ in range(n):
            line = self.build(s, make, "concatenation", forbidden)
            forbidden.add(line.en)
            out.append(line)
        self.fallbacks += s.fallbacks
        return out


def _ends_in_noun(tree) -> bool:
    last = [leaf for leaf in leaves(tree) if leaf.token not in ".?,"][-1]
    return last.category in ("N", "PN")


def _summary(values: list[int]) -> dict:
    if not values:
        return {"n": 0}
    hist = collections.Counter(values)
    return {"n": len(values), "min": min(values), "max": max(values),
            "mean": round(st.fmean(values), 3),
            "histogram": {str(k): hist[k] for k in sorted(hist)}}


def describe(lines: Sequence[_Line]) -> dict:
    """Length (words), constructions and recursion depths of a split."""
    lengths = [n_words(x.en) for x in lines]
    cons = collections.Counter(construction(x.tree) for x in lines)
    deps = {k: collections.Counter() for k in ("cp", "pp", "rc", "adj")}
    for x in lines:
        for k, d in depths(x.tree).items():
            deps[k][d] += 1
    distinct = len({x.en for x in lines})
    return {"length_words": _summary(lengths),
            "constructions": {k: cons[k] for k in sorted(cons)},
            "depths": {k: {str(d): c[d] for d in sorted(c)} for k, c in deps.items()},
            "distinct_sentences": distinct, "repeated_lines": len(lines) - distinct}


def _verify(split: str, lines: Sequence[_Line], n: int, report: dict) -> None:
    """Parse ``n`` evenly spaced lines' English again and compare the translation."""
    checked = mismatches = 0
    examples = []
    for i in sorted({k * len(lines) // n for k in range(min(n, len(lines)))}):
        x = lines[i]
        checked += 1
        try:
            ja = translate(x.en)
        except TranslationError as e:
            ja = f"<error: {e}>"
        if ja != x.ja:
            mismatches += 1
            if len(examples) < 5:
                examples.append([x.en, x.ja, ja])
    report[split] = {"checked": checked, "mismatches": mismatches, "examples": examples}


def _checked_out_dir(out_dir: str | Path, seed: int, scale: float) -> Path:
    """``out_dir`` as a path, once the arguments, the patterns and the selectional
    restrictions are found sound."""
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise DataError(f"seed must be an integer, not {seed!r}")
    if not (isinstance(scale, (int, float)) and 0 < scale <= 1):
        raise DataError(f"scale must be in (0, 1], not {scale!r}")
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise DataError(f"{out_dir}: exists and is not a directory")
    P.check()
    problems = selection.check()
    if problems:
        raise DataError(f"selectional.tsv disagrees with the lexicon: {problems[:5]}")
    return out_dir


class _Phases:
    """CPU seconds per phase of the generation (the manifest's ``cpu_seconds``)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self._last = time.process_time()

    def lap(self, name: str) -> None:
        now = time.process_time()
        self.seconds[name] = round(now - self._last, 2)
        self._last = now


@dataclasses.dataclass
class _Drawn:
    """Every sentence of the dataset, by where it came from."""
    gen: list[_Line]
    dev: list[_Line]
    test: list[_Line]
    train_base: list[_Line]     # the in-distribution training sentences (some topicalised)
    n_topic: int
    exposures: list[_Line]
    concat: list[_Line]
    longest_gen: int            # words of the longest gen sentence
    train: list[_Line]          # train_base, exposures and concat, shuffled

    def splits(self) -> dict[str, list[_Line]]:
        return {"train": self.train, "dev": self.dev, "test": self.test, "gen": self.gen}


def _draw(g: _Generator, concatenation: bool, phases: _Phases) -> _Drawn:
    """The sentences of every split, each phase drawing from its own random stream and
    avoiding the sentences that an earlier phase gave to another split."""
    gen = g.gen()
    phases.lap("gen")
    gen_set = {x.en for x in gen}
    splits = g.pool(gen_set)
    train_base = splits["train"]
    phases.lap("in_distribution")
    n_topic = g.topicalise(train_base)
    forbidden = gen_set | {x.en for k in ("dev", "test") for x in splits[k]}
    exposures = g.exposures(forbidden | {x.en for x in train_base})
    phases.lap("topicalisation_and_exposures")
    longest_gen = max(n_words(x.en) for x in gen)
    concat: list[_Line] = []
    if concatenation:
        concat = g.concatenations(longest_gen, forbidden | {x.en for x in train_base}
                                  | {x.en for x in exposures})
    phases.lap("concatenation")
    train = train_base + exposures + concat
    g.rng("train_order").shuffle(train)
    return _Drawn(gen=gen, dev=splits["dev"], test=splits["test"], train_base=train_base,
                  n_topic=n_topic, exposures=exposures, concat=concat,
                  longest_gen=longest_gen, train=train)


def _check_disjoint(data: dict[str, list[_Line]]) -> None:
    """No sentence in two splits (so by construction; checked)."""
    owner: dict[str, str] = {}
    for split, lines in data.items():
        for x in lines:
            if owner.setdefault(x.en, split) != split:
                raise DataError(f"bug: {x.en!r} is in {owner[x.en]} and {split}")


def _write_splits(out_dir: Path, data: dict[str, list[_Line]]) -> list[str]:
    """``<split>.txt`` and ``gen_info.tsv``; the names of the files written."""
    files = []
    for split, lines in data.items():
        write_lines(out_dir / f"{split}.txt", (f"{x.en}\t{x.ja}\t{x.pattern}" for x in lines))
        files.append(f"{split}.txt")
    write_lines(out_dir / "gen_info.tsv", (x.info for x in data["gen"]))
    files.append("gen_info.tsv")
    return files


def _statistics(g: _Generator, d: _Drawn, *, restrictions: bool, concatenation: bool,
                phases: _Phases) -> dict:
    """The manifest's ``statistics``: each split described, the training set's
    composition, topicalisation, concatenation, the lexicon reached and the selectional
    restrictions."""
    data = d.splits()
    stats = {k: describe(v) for k, v in data.items()}
    concat_lengths = [n_words(x.en) for x in d.concat]
    train_topic = sum(1 for x in d.train if construction(x.tree) == "topic")
    stats["train_composition"] = {
        "in_distribution": len(d.train_base) - d.n_topic, "topicalised": d.n_topic,
        "exposures": len(d.exposures), "concatenated": len(d.concat)}
    stats["topicalisation"] = {
        "rule": f"{TOPICALISED_SHARE:.0%} of the in-distribution training sentences whose "
                "main-clause object (direct object or ditransitive theme) carries a PP, a "
                "relative clause or an adjective are topicalised",
        **g.topic_stats, "share_of_train": round(train_topic / len(d.train), 4),
        "share_of_eligible": round(d.n_topic / max(1, g.topic_stats["eligible"]), 4)}
    stats["concatenation"] = {
        "enabled": concatenation, "count": len(d.concat),
        "share_of_train": round(len(d.concat) / len(d.train), 4),
        "longest_gen_sentence_words": d.longest_gen,
        "min_words": min(concat_lengths, default=None),
        "max_words": max(concat_lengths, default=None)}
    stats["lexicon"] = _lexicon_reached(data)
    phases.lap("statistics")
    stats["selectional_restrictions"] = {
        "enabled": restrictions, "compatibility_pairs": len(selection.pairs()),
        "relative_clause_heads_with_one_pair_only": g.fallbacks}
    return stats


def _extra(gen: list[_Line], counts: dict[str, int], verification: dict, start: float,
           phases: _Phases) -> dict:
    """The manifest's sizes (paper and scaled), patterns, verification and timings."""
    per_pattern = collections.Counter(x.pattern for x in gen)
    return {
        "sizes": {"paper": {"train": 43_800, "dev": 5_000, "test": 5_000, "gen": P.GEN_TOTAL},
                  "scaled": counts},
        "per_pattern": {p.name: per_pattern[p.name] for p in P.PATTERNS},
        "patterns": {p.name: {"table10": p.label, "group": p.group, "size": per_pattern[p.name],
                              "partial_match": p.partial_match,
                              "complement_clause": p.complement_clause,
                              "targets": list(p.targets), "depths": list(p.depths)}
                     for p in P.PATTERNS},
        "verification": verification,
        "seconds": round(time.perf_counter() - start, 1),
        "cpu_seconds": phases.seconds,
    }


def generate(out_dir: str | Path, seed: int = 1, *, restrictions: bool = True,
             concatenation: bool = True, scale: float = 1.0, show: bool = True) -> dict:
    """Write the four splits, ``gen_info.tsv`` and ``manifest.json`` into ``out_dir``;
    return the manifest."""
    out_dir = _checked_out_dir(out_dir, seed, scale)
    start = time.perf_counter()
    g = _Generator(seed, restrictions, scale, show)
    phases = _Phases()
    drawn = _draw(g, concatenation, phases)
    data = drawn.splits()
    _check_disjoint(data)
    verification: dict = {}
    for split, lines in data.items():
        _verify(split, lines, VERIFY_PER_SPLIT, verification)
    phases.lap("verification")
    files = _write_splits(out_dir, data)
    counts = {k: len(v) for k, v in data.items()}
    stats = _statistics(g, drawn, restrictions=restrictions, concatenation=concatenation,
                        phases=phases)
    extra = _extra(drawn.gen, counts, verification, start, phases)
    args = {"seed": seed, "restrictions": restrictions, "concatenation": concatenation,
            "scale": scale}
    manifest = write_manifest(out_dir, generator=GENERATOR, generator_version=GENERATOR_VERSION,
                              seed=seed, args=args, files=files, counts=counts,
                              statistics=stats, dropped=dict(sorted(g.dropped.items())),
                              extra=extra)
    g.log(f"SGET: train {counts['train']:,}, dev {counts['dev']:,}, test {counts['test']:,}, "
          f"gen {counts['gen']:,} in {extra['seconds']} s -> {out_dir}")
    return manifest


def _lexicon_reached(data: dict) -> dict:
    """How much of the lexicon the data use: distinct words per class, in train and
    anywhere."""
    lx = load_lexicon()
    classes = {"proper_nouns": set(lx.proper_nouns), "common_nouns": set(lx.nouns),
               "verbs": set(lx.verbs), "adjectives": set(lx.adjectives)}
    seen: set[str] = set()
    train_seen = None
    for split in ("train", "dev", "test", "gen"):
        for x in data[split]:
            seen.update(x.words)
        if split == "train":
            train_seen = {k: len(v & seen) for k, v in classes.items()}
    return {"lexicon": lexicon_counts(), "paper": {"proper_nouns": 123, "common_nouns": 423,
                                                   "verbs": 178, "adjectives": 43},
            "used_in_train": train_seen,
            "used_anywhere": {k: len(v & seen) for k, v in classes.items()}}


# ----------------------------------------------------------------------------- command line
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--no-restrictions", action="store_true",
                        help="turn the selectional restrictions off (the paper's Table 5)")
    parser.add_argument("--no-concatenation", action="store_true",
                        help="leave the concatenated training sentences out (Table 6)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply every count by this (0 < F <= 1; default 1: the "
                             "paper's sizes)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def run(args: argparse.Namespace) -> int:
    m = generate(args.out, seed=args.seed, restrictions=not args.no_restrictions,
                 concatenation=not args.no_concatenation, scale=args.scale,
                 show=not args.quiet)
    c = m["counts"]
    print(f"train {c['train']}, dev {c['dev']}, test {c['test']}, gen {c['gen']} -> {args.out}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="compsuite data sget generate",
                                     description="Generate the SGET splits (English from the "
                                                 "grammar, Japanese from the translator).")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except UserError as e:
        print(f"compsuite: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
