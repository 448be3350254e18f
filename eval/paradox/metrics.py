"""Paradox of compositionality (Dankers, Bruni and Hupkes 2022): the consistency and
overgeneralisation metrics, pure functions over lists of strings.

Every metric returns a :class:`Result` (score in [0, 1] as the paper's tables print it,
the number of samples scored, per-sample outcomes, samples left out and why) with a
signature naming its settings, like sacreBLEU's.  Translations are compared as words:
whitespace-separated tokens (fairseq-generate's detokenised output and the rule-based
Dutch already separate punctuation; :func:`~compsuite.data_prep.paradox.literal.words`
splits punctuation off for other systems' outputs, so ``koning.`` and ``koning .`` are
the same words).

* **S -> NP VP** (section 4.1): the translations of a sentence and of the sentence with
  one noun changed are consistent when they differ in exactly one word: word-level edit
  distance 1 after mapping *het* to *de* and *dat* to *die* (the determiner and relative
  pronoun a changed noun may legitimately change).  Identical translations are
  inconsistent: the changed noun must show.
* **S -> S CONJ S**: the second conjunct's translation, cut after the Dutch conjunction
  ``en`` that joins the conjuncts (S1's own ``en``s skipped: template 4's coordinated
  subject has one), must be identical in both translations.  A sample where either
  translation lacks that conjunction is left out and counted (``missing_conjunction``).
* **Substitutivity** (section 4.2): full-sentence consistency = the two translations are
  identical after every Dutch translation of the synonym pair (Table 5's and any the
  caller lists) is mapped to one form; ``consistency_exact`` = identical as they are (the
  authors' released script, which does not map forms); synonym consistency = the word
  holding the synonym's translation is the same word in both (the authors' rule, see
  :func:`synonym_consistent`).
* **Overgeneralisation** (section 4.3): a translation overgeneralises when it contains
  one of the idiom's literal keywords (Table 7's Dutch keyword sets, which hold the
  copied English forms the authors saw).  We match whole words (case-insensitive); the
  authors' released evaluation matches substrings of the lowercased translation, so
  ``even`` fires inside ``geven``: ``match="substring"`` is their reading, and reports
  give both.  The keyword match itself is shared with the test-set build
  (``data_prep/paradox/literal.py``).
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Iterable, Sequence

from compsuite.data_prep.paradox.literal import MATCHES, overgeneralised, words
from compsuite.eval.metrics.signature import Signature

VERSION = "1"

#: what a changed noun may change besides itself (section 4.1: "accounting for determiner
#: changes"): het -> de, and the relative pronoun dat -> die
NP_VP_NORMALISE = {"het": "de", "Het": "De", "dat": "die", "Dat": "Die"}
CONJUNCTION = "en"


class LengthError(ValueError):
    """Aligned inputs of different lengths."""


@dataclass
class Result:
    metric: str
    score: float | None          # share of scored samples that pass, in [0, 1]
    n: int                       # samples scored
    passed: int
    signature: str
    outcomes: list = field(default_factory=list)   # per sample: True / False / None (left out)
    left_out: dict = field(default_factory=dict)   # reason -> count

    def as_dict(self, with_outcomes: bool = False) -> dict:
        d = asdict(self)
        if not with_outcomes:
            d.pop("outcomes")
        return d


def _result(metric: str, outcomes: list, signature: Signature,
            left_out: dict | None = None) -> Result:
    scored = [o for o in outcomes if o is not None]
    passed = sum(scored)
    return Result(metric, passed / len(scored) if scored else None, len(scored), passed,
                  signature.format(), outcomes, dict(left_out or {}))


def _check(*columns: Sequence, names: Sequence[str]) -> None:
    lengths = [len(c) for c in columns]
    if len(set(lengths)) > 1:
        raise LengthError("different numbers of lines: " +
                          ", ".join(f"{k} {n}" for n, k in zip(names, lengths)))


def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance over words (insertions, deletions, substitutions cost 1)."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


# ----------------------------------------------------------------------------- S -> NP VP
def np_vp_signature() -> Signature:
    return Signature("np_vp", VERSION, {"consistent": "word_edit_distance==1",
                                        "norm": "het>de,dat>die", "tok": "words+punct"})


def np_vp_consistent(a: str, b: str) -> bool:
    """The two translations differ in exactly one word, after het->de and dat->die."""
    norm = [[NP_VP_NORMALISE.get(w, w) for w in words(t)] for t in (a, b)]
    return edit_distance(*norm) == 1


def np_vp_consistency(base: Sequence[str], changed: Sequence[str]) -> Result:
    """S -> NP VP consistency over aligned translations of the original sentences and of
    the sentences with one noun changed."""
    _check(base, changed, names=("base", "changed"))
    return _result("np_vp", [np_vp_consistent(a, b) for a, b in zip(base, changed)],
                   np_vp_signature())


# ----------------------------------------------------------------------------- S -> S CONJ S
CUTS = ("source", "authors")


def conj_signature(cut: str = "source") -> Signature:
    how = {"source": "after_en(skip_s1_en_by_source)",
           "authors": "after_en(second_en_if_first_part<5_words)"}[cut]
    return Signature("s_conj_s", VERSION, {"consistent": "second_conjunct_identical",
                                           "cut": how, "missing": "left_out",
                                           "tok": "words+punct"})


def second_conjunct_authors(translation: str) -> str | None:
    """The authors' cut (``systematicity/evaluate.py``): after the first `` en ``, or
    after the second when fewer than five words precede the first (a coordinated
    subject); ``None`` without `` en ``."""
    ws = words(translation)
    idx = [i for i, w in enumerate(ws) if w == CONJUNCTION]
    if not idx:
        return None
    k = 1 if idx[0] < 5 and len(idx) > 1 else 0
    return " ".join(ws[idx[k] + 1:]) if not (idx[0] < 5 and len(idx) == 1) else ""


def conjuncts_to_skip(english: str) -> int:
    """How many Dutch ``en`` belong to the first conjunct: the ``and``s of S1, the part of
    ``S1 , and S2 .`` (or ``Did S1 , and did S2 ?``) before ``, and``."""
    first = re.split(r"\s*,\s+and\s+", english, maxsplit=1)[0]
    return words(first).count("and")


def second_conjunct(translation: str, skip: int = 0) -> str | None:
    """The words after the ``skip + 1``-th ``en`` (case-insensitive), or ``None`` when
    there are not that many."""
    ws = words(translation)
    seen = 0
    for i, w in enumerate(ws):
        if w.lower() == CONJUNCTION:
            if seen == skip:
                return " ".join(ws[i + 1:])
            seen += 1
    return None


def conj_consistency(base: Sequence[str], changed: Sequence[str],
                     base_sources: Sequence[str] | None = None,
                     changed_sources: Sequence[str] | None = None,
                     cut: str = "source") -> Result:
    """S -> S CONJ S consistency: the second conjunct's translation is identical in the
    translations of ``S1 , and S2`` and of ``S1' , and S2`` (or ``S3 , and S2``).  Each
    translation's first-conjunct ``en``s to skip are counted from its English source
    (:func:`conjuncts_to_skip`); without sources none are skipped.  ``cut="authors"``
    uses the authors' word-count heuristic instead (:func:`second_conjunct_authors`)."""
    if cut not in CUTS:
        raise ValueError(f"cut: one of {', '.join(CUTS)}, not {cut!r}")
    _check(base, changed, names=("base", "changed"))
    skips = []
    for srcs, name in ((base_sources, "base sources"), (changed_sources, "changed sources")):
        if srcs is None:
            skips.append([0] * len(base))
        else:
            _check(base, srcs, names=("translations", name))
            skips.append([conjuncts_to_skip(x) for x in srcs])
    outcomes, missing = [], 0
    for a, b, ka, kb in zip(base, changed, *skips):
        if cut == "authors":
            ca, cb = second_conjunct_authors(a), second_conjunct_authors(b)
        else:
            ca, cb = second_conjunct(a, ka), second_conjunct(b, kb)
        if ca is None or cb is None:
            outcomes.append(None)
            missing += 1
        else:
            outcomes.append(ca == cb)
    return _result("s_conj_s" if cut == "source" else f"s_conj_s_{cut}", outcomes,
                   conj_signature(cut), {"missing_conjunction": missing} if missing else {})


# ----------------------------------------------------------------------------- substitutivity
def substitutivity_signature(kind: str) -> Signature:
    how = {"full": {"consistent": "full_sentence_identical",
                    "norm": "synonym_translations>one_form"},
           "exact": {"consistent": "full_sentence_identical", "norm": "none"},
           "synonym": {"consistent": "token_holding_synonym_identical",
                       "absent": "rest_identical"}}[kind]
    return Signature(f"substitutivity_{kind}", VERSION, {**how, "tok": "words+punct"})


def _mark(translation: str, forms: Iterable[str], mark: str = "<SYN>") -> list[str]:
    """Words with every occurrence of one of the synonym's Dutch ``forms`` (one or more
    words, case-insensitive) replaced by ``mark``."""
    ws = words(translation)
    phrases = sorted({tuple(f.lower().split()) for f in forms if f.strip()}, key=len, reverse=True)
    out, i = [], 0
    while i < len(ws):
        for p in phrases:
            if tuple(w.lower() for w in ws[i:i + len(p)]) == p:
                out.append(mark)
                i += len(p)
                break
        else:
            out.append(ws[i])
            i += 1
    return out


def substitutivity_consistent(a: str, b: str, forms: Iterable[str]) -> bool:
    """Full-sentence consistency: identical once the synonym's translations are one form."""
    forms = list(forms)
    return _mark(a, forms) == _mark(b, forms)


def synonym_token(words_: Sequence[str], forms: Iterable[str]) -> str | None:
    """The first word that holds one of the synonym's translations (a case-insensitive
    substring: ``vliegtuigje`` holds ``vliegtuig``), or ``None``."""
    keys = [f.lower() for f in forms if f.strip()]
    for w in words_:
        if any(k in w.lower() for k in keys):
            return w
    return None


def synonym_consistent(a: str, b: str, forms: Iterable[str]) -> bool:
    """Synonym consistency, as the authors' released ``substitutivity/evaluate.py``
    computes it: the word holding the synonym's translation (:func:`synonym_token`) is
    the same word in both translations; a translation without one is compared whole, so
    two translations that omit the synonym are consistent only if identical, and one that
    omits it while the other has it is inconsistent (section 4.2).  (A known translation
    of several words, ``shopping cart`` copied, is joined before the search.)"""
    forms = [f for f in forms if f.strip()]
    multi = [f for f in forms if " " in f.strip()]

    def prepared(text):
        low = " ".join(words(text))
        for f in multi:
            low = re.sub(re.escape(f), f.replace(" ", "_"), low, flags=re.IGNORECASE)
        return low.split()

    keys = [f.replace(" ", "_") for f in forms]
    wa, wb = prepared(a), prepared(b)
    ta, tb = synonym_token(wa, keys), synonym_token(wb, keys)
    if ta is None and tb is None:
        return wa == wb
    return ta == tb


def exact_consistent(a: str, b: str) -> bool:
    """The authors' full-sentence consistency: the two translations are the same words
    (no normalisation of the synonym's translations)."""
    return words(a) == words(b)


def substitutivity(first: Sequence[str], second: Sequence[str],
                   forms: Sequence[Iterable[str]] | Iterable[str]) -> dict[str, Result]:
    """Both substitutivity scores over aligned translations of the sentences with the
    first and with the second synonym.  ``forms``: the synonym pair's Dutch translations,
    one collection for all samples or one per sample."""
    _check(first, second, names=("first", "second"))
    forms = list(forms)
    per = forms if forms and not isinstance(forms[0], str) else [forms] * len(first)
    _check(first, per, names=("translations", "forms"))
    full = [substitutivity_consistent(a, b, f) for a, b, f in zip(first, second, per)]
    exact = [exact_consistent(a, b) for a, b in zip(first, second)]
    syn = [synonym_consistent(a, b, f) for a, b, f in zip(first, second, per)]
    return {"consistency": _result("substitutivity_full", full, substitutivity_signature("full")),
            "consistency_exact": _result("substitutivity_exact", exact,
                                         substitutivity_signature("exact")),
            "synonym_consistency": _result("substitutivity_synonym", syn,
                                           substitutivity_signature("synonym"))}


# ----------------------------------------------------------------------------- overgeneralisation
def overgeneralisation_signature(match: str) -> Signature:
    return Signature("overgeneralisation", VERSION, {"literal": "any_keyword", "match": match,
                                                     "case": "insensitive",
                                                     "tok": "words+punct"})


def overgeneralisation(translations: Sequence[str],
                       keywords: Sequence[Iterable[str]] | Iterable[str],
                       match: str = "word") -> Result:
    """Share of translations with a literal keyword (Table 8's cells are the maximum of
    this over training checkpoints)."""
    keywords = list(keywords)
    per = keywords if keywords and not isinstance(keywords[0], str) else [keywords] * len(translations)
    _check(translations, per, names=("translations", "keywords"))
    return _result(f"overgeneralisation_{match}",
                   [overgeneralised(t, k, match) for t, k in zip(translations, per)],
                   overgeneralisation_signature(match))


# ----------------------------------------------------------------------------- test folders
def _mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def _group(samples, keys):
    out = {}
    for s in samples:
        out.setdefault(tuple(s[k] for k in keys), []).append(s)
    return out


def score_test(test: str, inputs: Sequence[str], samples: Sequence[dict],
               hyps: Sequence[str], *, synonym_forms: dict | None = None,
               idiom_keywords: dict | None = None) -> dict:
    """Score one built test (``compsuite data paradox tests``) from the translations of
    its inputs (``hyps[i]`` translates ``inputs[i]``).

    Returns ``cells``: one entry per data type, condition or item, and template, with the
    score and counts; ``summary``: per data type and condition (or item) the mean over
    templates (the paper's Figure 1 / Table 4 points) and the pooled score; and every
    metric's signature."""
    if len(hyps) != len(inputs):
        raise LengthError(f"{len(inputs)} inputs but {len(hyps)} translations")
    cells, signatures = [], {}

    def cell(data, template, key, res: Result, extra=None):
        signatures[res.metric] = res.signature
        cells.append({"data": data, "template": template, "key": key, "metric": res.metric,
                      "score": res.score, "n": res.n, "passed": res.passed,
                      **({"left_out": res.left_out} if res.left_out else {}), **(extra or {})})

    if test == "np_vp":
        for (data, cond, t), ss in _group(samples, ("data", "condition", "template")).items():
            cell(data, t, cond, np_vp_consistency([hyps[s["inputs"][0]] for s in ss],
                                                  [hyps[s["inputs"][1]] for s in ss]))
    elif test == "s_conj_s":
        for (data, cond, t), ss in _group(samples, ("data", "condition", "template")).items():
            for cut in CUTS:
                cell(data, t, cond, conj_consistency(
                    [hyps[s["inputs"][0]] for s in ss], [hyps[s["inputs"][1]] for s in ss],
                    [inputs[s["inputs"][0]] for s in ss], [inputs[s["inputs"][1]] for s in ss],
                    cut=cut))
    elif test == "substitutivity":
        for (data, item, t), ss in _group(samples, ("data", "item", "template")).items():
            forms = (synonym_forms or {}).get(item)
            if forms is None:
                raise KeyError(f"no Dutch forms for the synonym {item!r}")
            res = substitutivity([hyps[s["inputs"][0]] for s in ss],
                                 [hyps[s["inputs"][1]] for s in ss], forms)
            for key in ("consistency", "consistency_exact", "synonym_consistency"):
                cell(data, t, item, res[key])
    elif test == "overgeneralisation":
        for (data, item, t), ss in _group(samples, ("data", "item", "template")).items():
            kws = (idiom_keywords or {}).get(item)
            if kws is None:
                raise KeyError(f"no keywords for the idiom {item!r}")
            for match in MATCHES:
                cell(data, t, item, overgeneralisation([hyps[s["inputs"][0]] for s in ss],
                                                       kws, match))
    else:
        raise ValueError(f"unknown test {test!r}")
    summary = []
    for (data, key, metric), cs in _group(cells, ("data", "key", "metric")).items():
        scored = [c for c in cs if c["score"] is not None]
        n = sum(c["n"] for c in cs)
        summary.append({"data": data, "key": key, "metric": metric,
                        "mean_over_templates": _mean(c["score"] for c in scored),
                        "pooled": sum(c["passed"] for c in cs) / n if n else None,
                        "n": n, "templates": len(scored)})
    return {"test": test, "cells": cells, "summary": summary, "signatures": signatures}
