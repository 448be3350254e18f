"""SGET metrics (Kumon et al. 2024, section 4.1.3 and appendix E): exact match, BLEU and
the breakdowns of Tables 2, 3, 6, 7, 10 and 11.  Pure functions over lists of strings;
the GiNZA partial match lives in :mod:`compsuite.eval.sget.partial`.

Hypotheses from any system are scored from plain text: OpenNMT-py outputs in the
released encoding (pieces separated by spaces) and a language model's plain Japanese
are treated alike, since every metric first *normalises* a sentence: Unicode NFKC (the
released encodings write ``?`` for ``？``) and removal of all whitespace (which also
joins BPE pieces back into the sentence).

* :func:`exact_match`: normalised hypothesis equals normalised reference.
* :func:`bleu`: sacreBLEU corpus BLEU.  The paper names neither tokenisation nor
  segmentation; sacreBLEU's default ``13a`` on unsegmented Japanese treats a whole
  sentence as one word (one wrong word scores 0), so the default here segments both
  sides with Sudachi (split mode C, core dictionary: the words of the study's
  preprocessing) and runs sacreBLEU with ``tokenize='none'``.  ``tokenize='ja-mecab'``
  uses sacreBLEU's own Japanese tokeniser when mecab-python3 and ipadic are installed;
  any other sacreBLEU tokeniser name is passed through (e.g. ``char``).  The result
  carries sacreBLEU's signature plus the segmentation settings.
* :func:`breakdown` (and :func:`per_pattern`, :func:`per_group`): any metric per key
  (pattern, group, in/not in a complement clause, length bucket ...), scored over each
  key's lines, as the paper does (a group's exact match is over its sentences, so
  patterns with 1,000 sentences weigh half as much as those with 2,000: this is what
  reproduces Table 3's structural figure from Table 10).
* :func:`parse_gen_info` reads the generator's ``gen_info.tsv`` (pattern, target inside
  a complement clause, target word).

The 42 generalisation patterns (Tables 8-10) with their category, their group in Table 3
and whether Table 10 reports a partial match for them, and :func:`normalise`, are in
:mod:`compsuite.eval.sget.patterns` (what these metrics and the partial match share).
"""
from __future__ import annotations

import functools
import re
from collections import OrderedDict, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Callable, Hashable, Iterable, Mapping, Sequence

from compsuite.data_prep.common.tokenisers import sudachi
from compsuite.eval.metrics.signature import Signature
from compsuite.foundation.manifest import package_versions

from .patterns import GROUPS, IN_DISTRIBUTION, PATTERNS, PatternInfo, group_of, normalise

VERSION = "1"


def _check(hyps: Sequence[str], refs: Sequence[str], *extra: tuple[str, Sequence]) -> int:
    n = len(hyps)
    if len(refs) != n:
        raise ValueError(f"{n} hypotheses but {len(refs)} references")
    for what, seq in extra:
        if len(seq) != n:
            raise ValueError(f"{len(seq)} {what} for {n} hypotheses")
    if n == 0:
        raise ValueError("no hypotheses to score")
    return n


# ----------------------------------------------------------------------------- exact match
@dataclass
class ScoreResult:
    """One metric over a set of lines.  ``score`` is on the paper's scale (exact match and
    partial match in %, BLEU in BLEU points)."""
    metric: str
    score: float
    n: int
    signature: str
    correct: int | None = None
    details: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def exact_signature() -> Signature:
    return Signature("exact", VERSION, {"norm": "nfkc", "ws": "removed", "case": "mixed"})


def exact_matches(hyps: Sequence[str], refs: Sequence[str]) -> list[bool]:
    """Per line: normalised hypothesis == normalised reference."""
    _check(hyps, refs)
    return [normalise(h) == normalise(r) for h, r in zip(hyps, refs)]


def exact_match(hyps: Sequence[str], refs: Sequence[str]) -> ScoreResult:
    """Exact match (%) after NFKC normalisation and whitespace removal."""
    ok = exact_matches(hyps, refs)
    return ScoreResult("exact", 100.0 * sum(ok) / len(ok), len(ok), exact_signature().format(),
                       correct=sum(ok))


# ----------------------------------------------------------------------------- BLEU
SEGMENTERS = ("sudachi",)


def mecab_available() -> bool:
    """Whether sacreBLEU's ``ja-mecab`` tokeniser can run (mecab-python3 and ipadic)."""
    from importlib.util import find_spec

    return find_spec("MeCab") is not None and find_spec("ipadic") is not None


def segment(texts: Iterable[str], mode: str = "C", dict_name: str = "core") -> list[str]:
    """Normalise (:func:`normalise`) and segment with Sudachi; words joined by spaces."""
    tok = sudachi(mode, dict_name)
    out = []
    for t in texts:
        t = normalise(t)
        out.append(" ".join(m.surface() for m in tok.tokenize(t)) if t else "")
    return out


def bleu(hyps: Sequence[str], refs: Sequence[str], tokenize: str = "sudachi", *,
         sudachi_mode: str = "C", sudachi_dict: str = "core") -> ScoreResult:
    """sacreBLEU corpus BLEU (one reference per line) on Japanese.

    ``tokenize``: ``"sudachi"`` (default: both sides normalised, Sudachi-segmented,
    sacreBLEU ``tokenize='none'``), ``"ja-mecab"`` (sacreBLEU's MeCab tokeniser on the
    normalised text; needs mecab-python3 and ipadic) or any other sacreBLEU tokeniser,
    run on the normalised text.  The result's ``signature`` is sacreBLEU's, followed by
    ``|seg:...`` and ``|norm:nfkc+nows``; ``details`` holds the n-gram precisions,
    brevity penalty and lengths.
    """
    _check(hyps, refs)
    return _bleu_on(*_bleu_inputs(hyps, refs, tokenize, sudachi_mode, sudachi_dict), tokenize)


def _bleu_inputs(hyps: Sequence[str], refs: Sequence[str], tokenize: str,
                 sudachi_mode: str = "C", sudachi_dict: str = "core"
                 ) -> tuple[list[str], list[str], str, dict]:
    """Both sides prepared for sacreBLEU: (hyps, refs, sacreBLEU tokeniser, what ends the
    signature), as :func:`bleu` describes."""
    extra: dict = {"norm": "nfkc+nows"}
    if tokenize == "sudachi":
        h, r = segment(hyps, sudachi_mode, sudachi_dict), segment(refs, sudachi_mode, sudachi_dict)
        sb_tok = "none"
        v = package_versions(("sudachipy", "sudachidict-core"))
        extra["seg"] = (f"sudachi-{sudachi_mode}-{sudachi_dict}-{v['sudachipy']}"
                        f"-dict{v['sudachidict-core']}")
    else:
        if tokenize == "ja-mecab" and not mecab_available():
            raise ValueError("tokenize='ja-mecab' needs mecab-python3 and ipadic "
                             "(pip install 'sacrebleu[ja]'); use tokenize='sudachi'")
        h, r = [normalise(x) for x in hyps], [normalise(x) for x in refs]
        sb_tok = tokenize
        extra["seg"] = "none"
    return h, r, sb_tok, extra


def _bleu_on(h: Sequence[str], r: Sequence[str], sb_tok: str, extra: Mapping[str, str],
             tokenize: str) -> ScoreResult:
    """sacreBLEU on already segmented/normalised lines (``extra`` ends the signature)."""
    from sacrebleu.metrics import BLEU

    metric = BLEU(tokenize=sb_tok)
    res = metric.corpus_score(list(h), [list(r)])
    sig = Signature.from_sacrebleu("bleu", metric.get_signature(), **extra).format()
    return ScoreResult("bleu", res.score, len(h), sig, details={
        "precisions": res.precisions, "bp": res.bp, "sys_len": res.sys_len,
        "ref_len": res.ref_len, "tokenize": tokenize})


# ----------------------------------------------------------------------------- breakdowns
Metric = Callable[[Sequence[str], Sequence[str]], ScoreResult]


def breakdown(hyps: Sequence[str], refs: Sequence[str], keys: Sequence[Hashable],
              metric: Metric = exact_match, order: Iterable[Hashable] | None = None
              ) -> "OrderedDict[Hashable, ScoreResult]":
    """``metric`` over the lines of each key (keys in ``order`` first, then the others
    sorted by name).  Any metric with the ``(hyps, refs) -> ScoreResult`` shape works,
    e.g. ``functools.partial(bleu, tokenize='char')``."""
    _check(hyps, refs, ("keys", keys))
    groups: dict = defaultdict(list)
    for i, k in enumerate(keys):
        groups[k].append(i)
    ordered = [k for k in (order or ()) if k in groups]
    ordered += sorted((k for k in groups if k not in set(ordered)), key=str)
    return OrderedDict((k, metric([hyps[i] for i in groups[k]], [refs[i] for i in groups[k]]))
                       for k in ordered)


def per_pattern(hyps: Sequence[str], refs: Sequence[str], patterns: Sequence[str],
                metric: Metric = exact_match, table: Mapping[str, PatternInfo] = PATTERNS
                ) -> "OrderedDict[str, ScoreResult]":
    """Table 10: ``metric`` per generalisation pattern, in the table's order."""
    return breakdown(hyps, refs, patterns, metric, order=[IN_DISTRIBUTION, *table])


def per_group(hyps: Sequence[str], refs: Sequence[str], patterns: Sequence[str],
              metric: Metric = exact_match, table: Mapping[str, PatternInfo] = PATTERNS
              ) -> "OrderedDict[str, ScoreResult]":
    """Table 3: ``metric`` per group (lexical, lexical+morphological, structural),
    over the sentences of each group's patterns."""
    return breakdown(hyps, refs, group_of(patterns, table), metric,
                     order=["in-distribution", *GROUPS])


def score_table(hyps: Sequence[str], refs: Sequence[str], keys: Sequence[Hashable],
                metrics: Mapping[str, Metric]) -> dict:
    """``{key: {metric name: score}}`` for several metrics (one row per key)."""
    out: dict = OrderedDict()
    for name, metric in metrics.items():
        for k, res in breakdown(hyps, refs, keys, metric).items():
            out.setdefault(k, OrderedDict())[name] = res.score
    return out


# ----------------------------------------------------------------------------- line features
_CP_VERBS_FALLBACK = frozenset("""
admire admired admires believe believed believes confess confessed confesses declare
declared declares dream dreamed dreams expect expected expects guess guessed guesses hope
hoped hopes imagine imagined imagines know knew knows learn learned learns mean meant means
notice noticed notices prove proved proves say said says support supported supports think
thought thinks understand understood understands value valued values wish wished wishes
appreciate appreciated appreciates realize realized realizes answer answered answers
repeat repeated repeats tolerate tolerated tolerates trust trusted trusts
""".split())


@functools.lru_cache(maxsize=1)
def _cp_verbs() -> frozenset:
    """English forms of the verbs that take a ``that``-clause: from the generator's lexicon
    when it is there, else a built-in list."""
    try:
        from compsuite.data_prep.sget.lexicon import load

        forms = {f.lower() for v in load().verbs.values() if "cp" in v.frames
                 for f in v.forms().values()}
        if forms:
            return frozenset(forms | _CP_VERBS_FALLBACK)
    except Exception:  # noqa: BLE001 - the lexicon is the generator's; fall back quietly
        pass
    return _CP_VERBS_FALLBACK


def in_cp(english: str, cp_verbs: Iterable[str] | None = None) -> bool:
    """Whether an English sentence has a complement clause (Table 11): a ``that`` right
    after a verb that takes one (a ``that`` after a noun is a relative pronoun)."""
    verbs = frozenset(v.lower() for v in cp_verbs) if cp_verbs is not None else _cp_verbs()
    words = re.findall(r"[A-Za-z]+", english.lower())
    return any(w == "that" and i > 0 and words[i - 1] in verbs for i, w in enumerate(words))


def cp_keys(sources: Sequence[str], patterns: Sequence[str] | None = None,
            cp_verbs: Iterable[str] | None = None) -> list:
    """Table 11's keys: ``(pattern, "in CP" | "not in CP")`` (or just the label)."""
    labels = ["in CP" if in_cp(s, cp_verbs) else "not in CP" for s in sources]
    return labels if patterns is None else list(zip(patterns, labels))


def length_keys(sources: Sequence[str], max_train_length: int) -> list[str]:
    """Table 7's keys: ``longer`` when a source has at least ``max_train_length`` words
    (the longest training source), else ``shorter``."""
    return ["longer" if len(s.split()) >= max_train_length else "shorter" for s in sources]


@dataclass(frozen=True)
class GenInfo:
    pattern: str
    in_cp: bool
    target: str | None   # the English target word (lexical patterns)
    depth: int | None    # the recursion depth (recursion patterns)


def parse_gen_info(lines: Iterable[str]) -> list[GenInfo]:
    """The generator's ``gen_info.tsv`` lines (``pattern<TAB>0|1<TAB>target=W|depth=D|-``)."""
    out = []
    for n, line in enumerate(lines, start=1):
        cols = line.rstrip("\n").split("\t")
        if len(cols) != 3 or cols[1] not in ("0", "1"):
            raise ValueError(f"gen_info line {n}: expected pattern<TAB>0|1<TAB>detail, "
                             f"found {line[:80]!r}")
        detail = cols[2]
        target = detail[len("target="):] if detail.startswith("target=") else None
        depth = int(detail[len("depth="):]) if detail.startswith("depth=") else None
        out.append(GenInfo(cols[0], cols[1] == "1", target, depth))
    return out


# ----------------------------------------------------------------------------- one scored set
def _longest_training_source(train_sources: Iterable[str], gen_sources: Sequence[str]) -> int:
    """Table 7's "maximum length of the training set": the longest training source that
    is not longer than every generalisation source.  With concatenation the training
    set holds sentences made longer than any generalisation sentence (section 3.2.5);
    they are left out, otherwise no generalisation sentence could be "Longer"."""
    longest_gen = max(len(s.split()) for s in gen_sources)
    lengths = [n for n in (len(s.split()) for s in train_sources) if n <= longest_gen]
    return max(lengths, default=0)


def score_set(hyps: Sequence[str], refs: Sequence[str], sources: Sequence[str],
              patterns: Sequence[str], *, gen_info: Sequence[GenInfo] | None = None,
              partial: bool = True, train_sources: Sequence[str] | None = None,
              bleu_tokenize: str = "sudachi", cache_dir=None, n_process: int = 1,
              show: bool = False) -> dict:
    """Everything the SGET tables need from one set of translations (a test or the
    generalisation set), as plain data: ``n``, ``exact_match`` (a fraction),
    ``bleu`` (``score`` and ``signature``) and, when the lines carry generalisation
    patterns, ``per_pattern`` and ``by_group`` (exact match, BLEU, partial match),
    ``by_cp`` (Table 11: each pattern whose lines fall both inside and outside a
    complement clause) and ``by_length`` (Table 7: each pattern with sources at least as
    long as the longest training source, from ``train_sources``).

    Partial match (``partial``, GiNZA; needs ``gen_info`` for the target words) is
    scored on the patterns Table 10 scores, once for all lines; ``partial_match`` is
    over every scored line, ``partial_signature`` names GiNZA, ja-ginza, spaCy and
    Sudachi.  Exact and partial match are fractions here (the report prints percent),
    BLEU is in BLEU points.  ``show``: partial match's progress bars (stderr)."""
    n = _check(hyps, refs, ("sources", sources), ("patterns", patterns))
    if gen_info is not None and len(gen_info) != n:
        raise ValueError(f"{len(gen_info)} gen_info lines for {n} hypotheses")
    lines = ScoredLines(exact_matches(hyps, refs), [None] * n,
                        *_bleu_inputs(hyps, refs, bleu_tokenize), bleu_tokenize)
    overall = lines.bleu(range(n))
    out: dict = {"n": n, "exact_match": sum(lines.ok) / n,
                 "exact_signature": exact_signature().format(),
                 "bleu": {"score": overall.score, "signature": overall.signature}}
    if all(p == IN_DISTRIBUTION for p in patterns):
        return out
    if partial:
        if gen_info is None:
            raise ValueError("partial match needs the generator's gen_info (target words)")
        lines.matches = _partial_into(out, hyps, refs, patterns, gen_info, cache_dir, n_process,
                                      show)
    by_pattern = _index_groups(patterns)
    order = [p for p in PATTERNS if p in by_pattern] + sorted(
        p for p in by_pattern if p not in PATTERNS)
    out["per_pattern"] = OrderedDict((p, lines.cell(by_pattern[p])) for p in order)
    out["by_group"] = OrderedDict((k, lines.cell(v))
                                  for k, v in _index_groups(group_of(patterns)).items())
    inside = ([g.in_cp for g in gen_info] if gen_info is not None
              else [in_cp(s) for s in sources])
    out["by_cp"] = _by_cp(lines, [(p, by_pattern[p]) for p in order], inside)
    if train_sources is not None:
        longest = _longest_training_source(train_sources, sources)
        out["max_train_length"] = longest
        out["by_length"] = _by_length(lines, [(p, by_pattern[p]) for p in order], sources,
                                      longest)
    return out


@dataclass
class ScoredLines:
    """One set's per-line results (exact match, partial match or None, the sides as
    sacreBLEU reads them), from which any subset of its lines is scored."""
    ok: list[bool]
    matches: list
    h_seg: list[str]
    r_seg: list[str]
    sb_tok: str
    extra: dict
    tokenize: str

    def bleu(self, idx: Iterable[int]) -> ScoreResult:
        idx = list(idx)
        return _bleu_on([self.h_seg[i] for i in idx], [self.r_seg[i] for i in idx],
                        self.sb_tok, self.extra, self.tokenize)

    def cell(self, idx: Sequence[int]) -> dict:
        """Exact match, corpus BLEU and partial match (over the lines it scored) of the
        lines ``idx``, and how many."""
        scored = [self.matches[i] for i in idx if self.matches[i] is not None]
        return {"exact_match": sum(self.ok[i] for i in idx) / len(idx),
                "bleu": self.bleu(idx).score,
                "partial_match": sum(scored) / len(scored) if scored else None,
                "n": len(idx)}


def _index_groups(keys: Sequence[Hashable]) -> "OrderedDict[Hashable, list[int]]":
    """Each key's line numbers, keys in the order they first occur."""
    g: OrderedDict = OrderedDict()
    for i, k in enumerate(keys):
        g.setdefault(k, []).append(i)
    return g


def _partial_into(out: dict, hyps: Sequence[str], refs: Sequence[str],
                  patterns: Sequence[str], gen_info: Sequence[GenInfo], cache_dir,
                  n_process: int, show: bool = False) -> list:
    """Partial match of every line (:mod:`compsuite.eval.sget.partial`): its summary
    into ``out``; returns the per-line decisions (None: not scored)."""
    from compsuite.eval.sget import partial

    targets = partial.japanese_targets([g.target for g in gen_info], refs)
    res = partial.partial_match(hyps, refs, patterns, targets, cache_dir=cache_dir,
                                n_process=n_process, show=show)
    out["partial_match"] = None if res.score is None else res.score / 100.0
    out["partial_n"] = res.n
    out["partial_signature"] = res.signature
    out["partial_not_scored"] = res.reasons
    return res.matches


def _by_cp(lines: ScoredLines, by_pattern: list[tuple[str, list[int]]],
           inside: Sequence[bool]) -> "OrderedDict[str, dict]":
    """Table 11: each pattern with lines both inside and outside a complement clause."""
    out: OrderedDict = OrderedDict()
    for p, idx in by_pattern:
        yes = [i for i in idx if inside[i]]
        no = [i for i in idx if not inside[i]]
        if yes and no:
            out[p] = {"in_cp": lines.cell(yes), "not_in_cp": lines.cell(no)}
    return out


def _by_length(lines: ScoredLines, by_pattern: list[tuple[str, list[int]]],
               sources: Sequence[str], longest: int) -> "OrderedDict[str, dict]":
    """Table 7: each pattern with sources at least ``longest`` words long (``longer``),
    and its other lines (``shorter``) when it has any."""
    out: OrderedDict = OrderedDict()
    for p, idx in by_pattern:
        keys = length_keys([sources[i] for i in idx], longest)
        longer = [i for i, k in zip(idx, keys) if k == "longer"]
        shorter = [i for i, k in zip(idx, keys) if k == "shorter"]
        if longer:
            out[p] = {"longer": lines.cell(longer)}
            if shorter:
                out[p]["shorter"] = lines.cell(shorter)
    return out
