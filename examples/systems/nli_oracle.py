#!/usr/bin/env python3
"""NLI as a toy system of the command protocol.  There is no interpreter of natural
language inference, so this program is an ORACLE: it looks every pair's gold label up
in the raw splits of the dataset being evaluated (``$COMPSUITE_DATA/{split}.premise``,
``.hypothesis``, ``.label``, read with compsuite.data_prep.nli.corpus.read_split): every
split there, so the evaluation sets, the SOSWAP / ADDAMOD adversaries and the training
pools alike.  It is perfect on the pairs of the dataset and knows nothing else.

* ``classify``: ``[premise, hypothesis]`` (a JSON array; a string ``premise<TAB>
  hypothesis`` is read the same way) -> the gold label.  A pair is matched as written,
  else with its whitespace collapsed and lower-cased; a pair in none of the splits gets
  the most frequent label of the data (noted on stderr).  A pair with two different gold
  labels in different splits keeps the first one found, the evaluation sets' (manifest
  ``statistics.eval_sets``) and the adversaries' first; such conflicts are counted on
  stderr at start-up (the generated data has none).
* ``features``: the one-hot vector of the answer over the sorted label set.

``--corrupt PERCENT``: a corrupted answer is the next label in the sorted label set
(contradiction -> entailment -> neutral -> contradiction), its features that label's.
"""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import toy  # noqa: E402

from compsuite.data_prep.nli.corpus import read_split  # noqa: E402


def split_order(raw: Path) -> list[str]:
    """Every split of the raw folder, the evaluation sets and the adversaries first."""
    splits = sorted(p.name[:-len(".label")] for p in raw.glob("*.label"))
    first: list[str] = []
    manifest = raw / "manifest.json"
    if manifest.is_file():
        m = json.loads(manifest.read_text(encoding="utf-8"))
        first = list(((m.get("statistics") or {}).get("eval_sets") or {}).values())
    first += [s for s in splits if s.startswith("adv_")]
    return list(dict.fromkeys([s for s in first if s in splits] + splits))


def key(premise: str, hypothesis: str) -> tuple[str, str]:
    return (" ".join(premise.split()).lower(), " ".join(hypothesis.split()).lower())


class Oracle:
    def __init__(self, raw: Path):
        self.exact: dict[tuple[str, str], str] = {}
        self.loose: dict[tuple[str, str], str] = {}
        counts: Counter = Counter()
        self.conflicts = 0
        self.splits = split_order(raw)
        if not self.splits:
            raise SystemExit(f"{raw}: no {{split}}.label files (not an NLI raw folder)")
        for split in self.splits:
            cols = read_split(raw, split)
            for p, h, label in zip(cols["premise"], cols["hypothesis"], cols["label"]):
                counts[label] += 1
                if self.exact.setdefault((p, h), label) != label:
                    self.conflicts += 1
                self.loose.setdefault(key(p, h), label)
        self.labels = sorted(counts)
        self.majority = counts.most_common(1)[0][0]
        self.unknown = 0

    def label(self, pair) -> str:
        if isinstance(pair, str) and "\t" in pair:
            pair = pair.split("\t", 1)
        if not (isinstance(pair, list) and len(pair) >= 2
                and all(isinstance(x, str) for x in pair[:2])):
            raise toy.RequestError(f"a pair is [premise, hypothesis], not {pair!r}"[:200])
        p, h = pair[0], pair[1]
        hit = self.exact.get((p, h)) or self.loose.get(key(p, h))
        if hit is None:
            self.unknown += 1
            toy.note(f"pair not in the data ({self.unknown} so far), answering the most "
                     f"frequent label: {[p, h]!r}"[:300])
            return self.majority
        return hit


def main(argv=None) -> int:
    a = toy.arguments(__doc__).parse_args(argv)
    oracle = Oracle(toy.data_folder())
    toy.note(f"NLI oracle: {len(oracle.exact)} pairs from {', '.join(oracle.splits)}; "
             f"labels {', '.join(oracle.labels)}; {oracle.conflicts} conflicting; "
             f"corrupting {a.corrupt:g}%")

    def classify(inputs: list) -> list[str]:
        out = []
        for pair in inputs:
            label = oracle.label(pair)
            out.append(toy.next_class(label, oracle.labels) if toy.corrupted(pair, a.corrupt)
                       else label)
        return out

    def features(inputs: list) -> list[list[float]]:
        return [toy.one_hot(c, oracle.labels) for c in classify(inputs)]

    return toy.serve({"classify": classify, "features": features})


if __name__ == "__main__":
    sys.exit(main())
