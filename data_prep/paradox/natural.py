"""``compsuite data paradox natural``: natural test data from a user's parallel corpus
(English and Dutch, one sentence per line, aligned; OPUS in the paper), in the released
formats that :mod:`.testsets` reads:

* ``substitutivity/{i}-1.en``, ``{i}-2.en``, ``{i}.nl``: every corpus sentence holding
  either term of synonym pair ``i`` (Table 5's order, whole words or with a plural *s*,
  case-insensitive),
  once with the British and once with the American term, and its Dutch;
* ``overgeneralisation/{i}.en``, ``{i}.nl``: every corpus sentence holding idiom ``i``
  (an exact, case-insensitive match, as section 4.3's "exact matches"), and its Dutch;
* ``systematicity/<T>.en``: second conjuncts for S -> S CONJ S "with similar lengths and
  word-frequencies as the semi-natural inputs" (section 4.1): for each of up to
  ``--per-template`` semi-natural sentences of template T, the unused corpus sentence of
  the same length (in words) whose mean log word frequency (counted over the corpus's
  English side) is closest, ending in ``.`` like a declarative conjunct.

The corpus is read as a stream, twice (counts, then selection); ``--max-lines`` caps it.
The paper does not give the matching procedure beyond that sentence; this one is ours
(doc.md).  Sentences are capped at ``--per-item`` per synonym / idiom (all by default).
"""
from __future__ import annotations

import argparse
import bisect
import math
import random
import re
import sys
from collections import Counter
from pathlib import Path

from compsuite.foundation.io import aligned_pairs, write_lines
from compsuite.foundation.manifest import write_manifest

from .items import idioms, synonyms
from .testsets import SEMI_NATURAL, read_semi_natural

GENERATOR = "paradox.natural"
VERSION = "1"


def _mean_log_freq(words: list[str], counts: Counter, total: int) -> float:
    return sum(math.log((counts[w.lower()] + 1) / total) for w in words) / max(1, len(words))


class _Corpus:
    """What one pass over the corpus gathers: the synonym sentences (both ways, with the
    Dutch), the idiom sentences, the word counts of the English side and the sentences
    that can serve as second conjuncts, by length."""

    def __init__(self, per_item: int | None):
        self.per_item = per_item
        self.syns, self.ids = synonyms(), idioms()
        # a term with an optional plural s (aeroplanes / airplanes, as in the released files)
        self.syn_res = [(re.compile(rf"\b({re.escape(s.british)})(s?)\b", re.IGNORECASE),
                         re.compile(rf"\b({re.escape(s.american)})(s?)\b", re.IGNORECASE))
                        for s in self.syns]
        self.idiom_res = [re.compile(rf"\b{re.escape(i.idiom)}\b", re.IGNORECASE)
                          for i in self.ids]
        self.sub = {k: ([], [], []) for k in range(len(self.syns))}
        self.og = {k: ([], []) for k in range(len(self.ids))}
        self.counts: Counter = Counter()
        self.by_length: dict[int, list[tuple[int, str]]] = {}

    def room(self, found: list) -> bool:
        return self.per_item is None or len(found) < self.per_item

    def read(self, n: int, e: str, d: str) -> None:
        words = e.split()
        self.counts.update(w.lower() for w in words)
        for k, (brit, amer) in enumerate(self.syn_res):
            if self.room(self.sub[k][0]) and (brit.search(e) or amer.search(e)):
                self.sub[k][0].append(_replaced(amer, self.syns[k].british, e))
                self.sub[k][1].append(_replaced(brit, self.syns[k].american, e))
                self.sub[k][2].append(d)
        for k, rx in enumerate(self.idiom_res):
            if self.room(self.og[k][0]) and rx.search(e):
                self.og[k][0].append(e)
                self.og[k][1].append(d)
        if words and words[-1] == "." and 3 <= len(words) <= 80:
            self.by_length.setdefault(len(words), []).append((n, e))

    def write_items(self, out: Path, files: list[str], counts_out: dict) -> None:
        """``substitutivity/`` and ``overgeneralisation/``."""
        for k in self.sub:
            if self.sub[k][0]:
                for suffix, lines in (("-1.en", self.sub[k][0]), ("-2.en", self.sub[k][1]),
                                      (".nl", self.sub[k][2])):
                    write_lines(out / "substitutivity" / f"{k}{suffix}", lines)
                    files.append(f"substitutivity/{k}{suffix}")
            counts_out[f"substitutivity/{self.syns[k].name}"] = len(self.sub[k][0])
        for k in self.og:
            if self.og[k][0]:
                write_lines(out / "overgeneralisation" / f"{k}.en", self.og[k][0])
                write_lines(out / "overgeneralisation" / f"{k}.nl", self.og[k][1])
                files += [f"overgeneralisation/{k}.en", f"overgeneralisation/{k}.nl"]
            counts_out[f"overgeneralisation/{self.ids[k].name}"] = len(self.og[k][0])


def _closest(pool: list[tuple[float, int, str]], f: float, used: set[int]):
    """The unused pool entry (mean log frequency, line number, sentence) nearest ``f``
    among the 100 around it (None: all used)."""
    i = bisect.bisect_left(pool, (f,))
    for j in sorted(range(max(0, i - 50), min(len(pool), i + 50)),
                    key=lambda j: abs(pool[j][0] - f)):
        if pool[j][1] not in used:
            return pool[j]
    return None


def _second_conjuncts(corpus: _Corpus, out: Path, semi_natural, per_template: int, seed: int,
                      files: list[str], counts_out: dict, dropped: dict) -> None:
    """``systematicity/<T>.en``: for each sampled semi-natural sentence of template T,
    the unused corpus sentence of its length whose mean log word frequency is closest."""
    total = sum(corpus.counts.values()) or 1
    pools = {length: sorted((_mean_log_freq(e.split(), corpus.counts, total), n, e)
                            for n, e in items)
             for length, items in corpus.by_length.items()}
    used: set[int] = set()
    rng = random.Random(f"paradox-natural:{seed}")
    semi = read_semi_natural(semi_natural)
    for t in SEMI_NATURAL:
        targets = rng.sample(semi[t], min(per_template, len(semi[t])))
        chosen = []
        for line in targets:
            words = line.split()
            pool = pools.get(len(words))
            if not pool:
                key = f"systematicity/{t}: no corpus sentence of {len(words)} words"
                dropped[key] = dropped.get(key, 0) + 1
                continue
            best = _closest(pool, _mean_log_freq(words, corpus.counts, total), used)
            if best is None:
                key = f"systematicity/{t}: every close corpus sentence already used"
                dropped[key] = dropped.get(key, 0) + 1
                continue
            used.add(best[1])
            chosen.append(best[2])
        write_lines(out / "systematicity" / f"{t}.en", chosen)
        files.append(f"systematicity/{t}.en")
        counts_out[f"systematicity/{t}"] = len(chosen)


def extract(en: str | Path, nl: str | Path, out: str | Path, *, semi_natural=None,
            per_template: int = 500, per_item: int | None = None, seed: int = 1,
            max_lines: int | None = None) -> dict:
    en, nl, out = Path(en), Path(nl), Path(out)
    corpus = _Corpus(per_item)
    for n, e, d in aligned_pairs(en, nl, max_lines):
        corpus.read(n, e, d)
    files: list[str] = []
    counts_out: dict = {}
    dropped: dict = {}
    corpus.write_items(out, files, counts_out)
    if semi_natural:
        _second_conjuncts(corpus, out, semi_natural, per_template, seed, files, counts_out,
                          dropped)
    return write_manifest(out, generator=GENERATOR, generator_version=VERSION, seed=seed,
                          args={"en": str(en.resolve()), "nl": str(nl.resolve()),
                                "semi_natural": str(semi_natural) if semi_natural else None,
                                "per_template": per_template, "per_item": per_item,
                                "max_lines": max_lines},
                          files=files, counts=counts_out, dropped=dropped)


def _replaced(term: re.Pattern, replacement: str, text: str) -> str:
    """``text`` with every match of ``term`` replaced, its initial capital and plural *s*
    kept."""
    return term.sub(lambda m: _case(m.group(1), replacement) + m.group(2), text)


def _case(found: str, replacement: str) -> str:
    """The replacement with the found term's initial capital."""
    return replacement[:1].upper() + replacement[1:] if found[:1].isupper() else replacement


def add_arguments(ap: argparse.ArgumentParser) -> None:
    from compsuite.foundation.arguments import positive_int

    ap.add_argument("--en", required=True, help="the corpus's English side, one sentence per line")
    ap.add_argument("--nl", required=True, help="its Dutch side, aligned line by line")
    ap.add_argument("--out", required=True)
    ap.add_argument("--semi-natural", metavar="DIR",
                    help="the semi-natural files whose lengths and word frequencies the "
                         "natural second conjuncts match (without it: no systematicity/)")
    ap.add_argument("--per-template", type=positive_int, default=500)
    ap.add_argument("--per-item", type=positive_int,
                    help="at most this many sentences per synonym / idiom")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-lines", type=positive_int, help="read only the first N corpus lines")


def run(args: argparse.Namespace) -> int:
    m = extract(args.en, args.nl, args.out, semi_natural=args.semi_natural,
                per_template=args.per_template, per_item=args.per_item, seed=args.seed,
                max_lines=args.max_lines)
    for k, v in m["counts"].items():
        print(f"{k}: {v}", file=sys.stderr)
    return 0

