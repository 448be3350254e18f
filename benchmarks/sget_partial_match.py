"""SGET partial match: the fast path against ``nlp.pipe`` over every line, and the
throughput of data generation + translation.

    .venv/bin/python benchmarks/sget_partial_match.py [--n 2000] [--seed 1] \\
        [--data DIR] [--n-process 1] [--skip-naive]

1. Generation + translation: unless ``--data`` names a folder holding ``gen.txt`` and
   ``gen_info.tsv``, the SGET generator writes a scaled-down dataset (``--n`` gen lines,
   scale n/76,000, with the in-distribution splits at the same scale) and its
   throughput is printed in sentences/s (all four splits; every sentence is generated
   and translated), then the rule-based translator alone on the gen English.
2. Hypotheses: ``--n`` lines built from the gen references (cycled if needed) by
   perturbing them as a model would (``--copy-share``, default 0.55): 44% copied, 11%
   copied as space-separated pieces (equal after normalisation), 15% with the target's
   particle swapped (が<->を, に->が), 10% with the target replaced by another noun,
   10% with another noun replaced (for phrase patterns it may lie inside the target
   phrase), 10% with one word dropped.
3. Partial match, timed: the naive implementation (``nlp.pipe`` with the full GiNZA
   pipeline over every hypothesis and every reference), the fast one with an empty
   reference cache (cold) and again with the cache written by the first (warm).  Prints
   the times, the ratios, whether all three give identical decisions, and the partial
   match per kind of perturbation (copies must score 100%; an unrelated noun replaced
   should stay correct: the rate shows how much GiNZA's parse moves under edits
   elsewhere in the sentence).

A benchmark, not a test: timings depend on the machine and its load.  Run with
``--n 76000`` for the paper's gen size (the naive run then takes a long time).
"""
from __future__ import annotations

import argparse
import collections
import random
import tempfile
import time
from pathlib import Path

from compsuite.data_prep.sget.preprocess import read_released, segment_ja
from compsuite.eval.sget import metrics, partial
from compsuite.foundation.io import read_lines

GEN_TOTAL = 76_000
PARTICLE_SWAP = {"が": "を", "を": "が", "に": "が", "は": "を"}


def generate_data(n: int, seed: int, out: Path) -> tuple[Path, float, int]:
    from compsuite.data_prep.sget.generate import generate

    scale = min(1.0, n / GEN_TOTAL)
    t = time.perf_counter()
    generate(out, seed=seed, scale=scale, show=False)
    dt = time.perf_counter() - t
    total = sum(len(read_lines(out / f"{s}.txt")) for s in ("train", "dev", "test", "gen"))
    return out, dt, total


def perturb(ref: str, target: str | None, nouns: list[str], rng: random.Random,
            copy_share: float = 0.55) -> tuple[str, str]:
    """One hypothesis and the kind of perturbation applied (``copy_share`` of the lines
    are copies, a fifth of them as space-separated pieces; the rest are split 3:2:2:2
    between particle swap, target replaced, other noun replaced, word dropped)."""
    words = segment_ja([ref])[0].split()
    r = rng.random()
    if r < 0.8 * copy_share:
        return ref, "copy"
    if r < copy_share:
        return " ".join(words), "copy as pieces"
    r = 0.55 + 0.45 * (r - copy_share) / (1 - copy_share)  # the old scale: 0.55 .. 1
    present = [w for w in words if w in nouns]
    if r < 0.70:
        # the particle after the target (or after the first noun when there is none)
        idx = None
        for i, w in enumerate(words[:-1]):
            if (target and w == target) or (not target and w in present):
                idx = i
                break
        if idx is not None and words[idx + 1] in PARTICLE_SWAP:
            words[idx + 1] = PARTICLE_SWAP[words[idx + 1]]
            return "".join(words), "target particle swapped"
        return ref, "copy"
    if r < 0.80:
        if target and target in words:
            other = rng.choice([x for x in nouns if x != target and x not in words])
            return "".join(other if w == target else w for w in words), "target replaced"
        return ref, "copy"
    if r < 0.90:
        others = [w for w in present if w != target]
        if others:
            victim = rng.choice(others)
            other = rng.choice([x for x in nouns if x not in words])
            return "".join(other if w == victim else w for w in words), "other noun replaced"
        return ref, "copy"
    if len(words) > 2:
        del words[rng.randrange(len(words) - 1)]
        return "".join(words), "word dropped"
    return ref, "copy"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000, help="hypothesis lines")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", type=Path, help="folder with gen.txt and gen_info.tsv")
    ap.add_argument("--n-process", type=int, default=1)
    ap.add_argument("--copy-share", type=float, default=0.55,
                    help="share of hypotheses copied from the reference (Transformer's "
                         "gen exact match is 48.7%%, Llama 2's 80.6%%)")
    ap.add_argument("--skip-naive", action="store_true", help="time the fast path only")
    a = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        data = a.data
        if data is None:
            data, dt, total = generate_data(a.n, a.seed, tmp / "data")
            print(f"generation + translation: {total / dt:,.0f} sentences/s "
                  f"({total} sentences, all splits, in {dt:.1f} s)")
        rows = read_released(data / "gen.txt")
        info = metrics.parse_gen_info(read_lines(data / "gen_info.tsv"))
        if len(info) != len(rows):
            raise SystemExit(f"{data}: gen.txt and gen_info.tsv differ in length")
        from compsuite.data_prep.sget.lexicon import load
        from compsuite.data_prep.sget.translate import translate

        lx = load()
        english = [r.english for r in rows][: a.n]
        t = time.perf_counter()
        for e in english:
            translate(e, lx)
        dt = time.perf_counter() - t
        print(f"translation alone: {len(english) / dt:,.0f} sentences/s ({len(english)} gen "
              f"sentences)")

        idx = [i % len(rows) for i in range(a.n)]
        refs = [rows[i].japanese for i in idx]
        patterns = [rows[i].pattern for i in idx]
        targets = partial.japanese_targets([info[i].target for i in idx], refs, lx)
        nouns = sorted({x.japanese for x in lx.nouns.values()}
                       | {x.japanese for x in lx.proper_nouns.values()})
        rng = random.Random(a.seed)
        hyps, kinds = zip(*(perturb(r, tg, nouns, rng, a.copy_share)
                             for r, tg in zip(refs, targets)))
        exact = metrics.exact_match(hyps, refs)
        print(f"{a.n} hypothesis lines over {len(set(refs))} distinct references; "
              f"exact match {exact.score:.1f}%")

        results = {}
        partial.load_nlp()  # loading GiNZA is not what is compared
        partial.load_nlp(parser_only=True)
        if not a.skip_naive:
            t = time.perf_counter()
            results["naive"] = (partial.partial_match_naive(hyps, refs, patterns, targets),
                                time.perf_counter() - t)
        for name in ("fast (cold cache)", "fast (warm cache)"):
            t = time.perf_counter()
            res = partial.partial_match(hyps, refs, patterns, targets,
                                             cache_dir=tmp / "cache", n_process=a.n_process)
            results[name] = (res, time.perf_counter() - t)

    for name, (res, dt) in results.items():
        print(f"{name:>18}: {dt:8.2f} s  partial match {res.score:.2f}% over {res.n} lines")
    fast = results["fast (cold cache)"][0]
    print(f"fast path: {fast.stats}")
    print(f"not scored: {fast.reasons}")
    if "naive" in results:
        naive, tn = results["naive"]
        for name in ("fast (cold cache)", "fast (warm cache)"):
            res, dt = results[name]
            print(f"speed-up, {name}: {tn / dt:.1f}x")
        same = all(r.matches == naive.matches for r, _ in results.values())
        print(f"identical decisions: {same}")
    by_kind = collections.defaultdict(list)
    for k, m in zip(kinds, fast.matches):
        if m is not None:
            by_kind[k].append(m)
    for k, ms in sorted(by_kind.items()):
        print(f"  {k:>24}: {100 * sum(ms) / len(ms):5.1f}% correct ({len(ms)} lines)")


if __name__ == "__main__":
    main()
