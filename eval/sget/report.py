"""SGET report (Kumon, Matsuoka and Yanaka 2024): our results beside the paper's Tables 2,
3, 5, 6, 7, 10 and 11, and a plot of exact match per generalisation pattern.

:func:`build_report` (``build_report(study, profile, results, out_dir)``, as every
study's) takes one result dict per trained model (the runner's provenance keys ``run``,
``architecture``, ``toolkit``, ``seed``, ``part``, ``dataset``, ``dataset_label`` plus
the study's evaluation: ``checkpoint_selection`` and ``splits`` with ``test`` and
``gen``; exact and partial match as fractions, BLEU 0-100), writes ``report.md``,
``report.json`` and ``per_pattern.png`` and returns their paths; :func:`make_report`
does the same with a pattern mapping of its caller's and returns the report as well.
The report is built one table per function (``_table2``, ``_table3``, ``_table10``,
``_table11``, ``_table6``, ``_table7``, ``_table5``), each returning its entry of
``report.json`` and its Markdown.

Every cell is ours, mean ± sample std over seeds (one seed: the mean alone), beside the
paper's mean ± std as published (``eval/sget/paper_numbers.yaml``); exact and partial
match in percent, BLEU in BLEU points, one decimal as in the paper; ``–`` where there
is no number (a pattern without results, an architecture not trained, a metric not
scored).

Our pattern names never appear here: they are mapped to the paper's Table 10 labels
(and from there to the YAML's rows) and to Table 3's groups by ``labels`` and
``groups``, taken from the generator's pattern table (``data_prep/sget/patterns.py``)
when not given.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from compsuite.eval.reports.plots import pyplot, save
from compsuite.eval.reports.tables import (fmt, markdown_table, mean_std, paper_numbers,
                                           with_prompting, write_report)

MAIN, NO_RESTRICTIONS, NO_CONCATENATION = "main", "no_restrictions", "no_concatenation"
SPLITS = ("test", "gen")
METRICS = ("exact", "bleu", "partial")
METRIC_NAMES = {"exact": "Exact (%)", "bleu": "BLEU", "partial": "Partial (%)"}
CP_KEYS = (("not_in_cp", False, "not in CP"), ("in_cp", True, "in CP"))
LENGTH_KEYS = ("longer", "shorter")
DIGITS = 1          # the paper prints one decimal
PLOT = "per_pattern.png"
MISSING = fmt(None)  # "–"


# ----------------------------------------------------------------------------- cells
def _num(x: Any) -> str:
    return fmt(None if x is None else float(x), DIGITS)


def _cell(mean: Any, std: Any = None) -> str:
    """``48.7 ± 1.6``; the mean alone without a std; ``–`` without a mean."""
    if mean is None:
        return MISSING
    return _num(mean) + ("" if std is None else f" ± {_num(std)}")


def _paper(cell: Any) -> str:
    """A published cell: ``{mean, std}``, a bare mean, or None."""
    if isinstance(cell, Mapping):
        return _cell(cell.get("mean"), cell.get("std"))
    return _cell(cell)


def _ours(stats: Mapping | None) -> str:
    return MISSING if not stats else _cell(stats["mean"], stats["std"])


def _get(d: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(d, Mapping):
            return None
        d = d.get(k)
    return d


def _pct(x: Any) -> float | None:
    return None if x is None else 100.0 * float(x)


def _bleu(x: Any) -> float | None:
    """A BLEU score: sacreBLEU's ``{"score", "signature"}`` or a bare number."""
    if isinstance(x, Mapping):
        x = x.get("score")
    return None if x is None else float(x)


def _scores(d: Any) -> dict:
    """One scored set of sentences on the paper's scale (exact/partial in %)."""
    if not isinstance(d, Mapping):
        return {}
    return {"exact": _pct(d.get("exact_match")), "bleu": _bleu(d.get("bleu")),
            "partial": _pct(d.get("partial_match")), "n": d.get("n")}


def _stats(pairs: Iterable[tuple[Any, float | None]]) -> dict | None:
    """Mean ± sample std over seeds of the (seed, value) pairs that have a value."""
    pairs = [(s, float(v)) for s, v in pairs if v is not None and not math.isnan(float(v))]
    if not pairs:
        return None
    mean, std = mean_std([v for _, v in pairs])
    return {"mean": mean, "std": std, "seeds": [s for s, _ in pairs],
            "values": [v for _, v in pairs]}


def _over_seeds(runs: list[dict], get: Callable[[dict], Any]) -> dict:
    """Each metric of ``get(run)`` over the seeds, and the sentence counts."""
    per = [(r.get("seed"), _scores(get(r))) for r in runs]
    out: dict = {m: _stats((s, p.get(m)) for s, p in per) for m in METRICS}
    out["n"] = sorted({p["n"] for _, p in per if p.get("n") is not None})
    return out


def _n_cell(ns: list) -> str:
    if not ns:
        return MISSING
    return str(ns[0]) if len(ns) == 1 else f"{ns[0]}–{ns[-1]}"


def _norm_label(s: str) -> str:
    s = s.replace("\\rightarrow", "→").replace("->", "→").replace("\xa0", " ")
    return re.sub(r"\s+", " ", s).strip().casefold()


def _norm_group(s: str) -> str:
    return re.sub(r"[^a-z]", "", str(s).lower())


# ----------------------------------------------------------------------------- mapping
def default_mapping() -> tuple[dict[str, str], dict[str, str], str]:
    """Our pattern name -> Table 10 label and -> Table 3 group, from the generator's
    pattern table; empty (and the reason) when it cannot be imported."""
    try:
        from compsuite.data_prep.sget import patterns as P
    except ImportError as e:
        return {}, {}, f"no pattern table ({e}); pass labels= and groups="
    return (P.table10_labels(), {p.name: p.table3_group for p in P.PATTERNS},
            "data_prep/sget/patterns.py")


class _Patterns:
    """Table 10's rows (the YAML's order) with our pattern mapped to each, then any of
    our patterns whose label is not in Table 10."""

    def __init__(self, paper: dict, labels: Mapping[str, str], seen: Iterable[str]):
        rows10 = paper["table10"]["rows"]
        by_label = {_norm_label(r["label"]): k for k, r in rows10.items()}
        self.labels = dict(labels)
        names = list(dict.fromkeys([*labels, *seen]))
        self.key_of = {n: by_label.get(_norm_label(labels[n])) if n in labels else None
                       for n in names}
        ours_of: dict = defaultdict(list)
        for n, k in self.key_of.items():
            if k is not None:
                ours_of[k].append(n)
        # rows: (our name or None, YAML key or None, label)
        self.rows: list[tuple[str | None, str | None, str]] = []
        for k, r in rows10.items():
            for n in ours_of.get(k) or [None]:
                self.rows.append((n, k, r["label"]))
        self.rows += [(n, None, labels.get(n, n)) for n, k in self.key_of.items() if k is None]
        self.name_of = {k: ours_of[k][0] for k in ours_of}     # YAML key -> our name
        self.order = [n for n, _, _ in self.rows if n is not None]

    def label(self, name: str) -> str:
        k = self.key_of.get(name)
        return self.labels.get(name, name) if k is None else next(
            lab for n, kk, lab in self.rows if kk == k)


# ----------------------------------------------------------------------------- models
def _part(r: dict) -> str:
    return r.get("part") or MAIN


def _models(results: list[dict], model_labels: Mapping[str, str]) -> tuple[dict, Callable]:
    """Model key -> {architecture, toolkit, label}, in the paper's order; the key of a
    result (the architecture, with the toolkit when one architecture ran in two)."""
    toolkits: dict = defaultdict(set)
    stand_in = {r.get("architecture") or "?" for r in results if r.get("stand_in")}
    first: dict = {}   # an architecture's first result (a prompted model's: how it was asked)
    for r in results:
        toolkits[r.get("architecture") or "?"].add(r.get("toolkit"))
        first.setdefault(r.get("architecture") or "?", r)

    def key(r: dict) -> str:
        a = r.get("architecture") or "?"
        return a if len(toolkits[a]) <= 1 else f"{a}/{r.get('toolkit')}"

    order = list(model_labels) + sorted(a for a in toolkits if a not in model_labels)
    info = {}
    for a in order:
        for t in sorted(toolkits.get(a, ()), key=str):
            k = a if len(toolkits[a]) <= 1 else f"{a}/{t}"
            label = with_prompting(model_labels.get(a, a), first.get(a, {})) + (
                "" if len(toolkits[a]) <= 1 else f" ({t})")
            if a in stand_in:
                label += " stand-in"
            info[k] = {"architecture": a, "toolkit": t, "label": label,
                       "stand_in": a in stand_in}
    return info, key


def _by_model(results: list[dict], key: Callable, part: str) -> dict[str, list[dict]]:
    out: dict = defaultdict(list)
    for r in results:
        if _part(r) == part:
            out[key(r)].append(r)
    for rs in out.values():
        rs.sort(key=lambda r: (str(r.get("seed")), str(r.get("run"))))
    return out


def _gen(r: dict, *keys: str) -> Any:
    return _get(r, "splits", "gen", *keys)


# ----------------------------------------------------------------------------- the report
def build_report(study, profile: str, results: list[dict], out_dir: Path) -> list[Path]:
    """Write ``report.md``, ``report.json`` (atomically) and ``per_pattern.png`` into
    ``out_dir`` for the study's stored ``results`` of ``profile``; returns their paths.
    Our pattern names are mapped to the paper's by the generator's pattern table
    (:func:`make_report` takes other mappings)."""
    return make_report(study.title, profile, results, out_dir)[1]


def make_report(study_title: str, profile: str, results: list[dict], out_dir: str | Path,
                labels: Mapping[str, str] | None = None,
                groups: Mapping[str, str] | None = None) -> tuple[dict, list[Path]]:
    """:func:`build_report` with the pattern mapping given: ``labels``, our pattern
    name -> the paper's Table 10 label; ``groups``, our pattern name -> Table 3's group
    (``Lexical``, ``Lex. + Mor.``, ``Structural`` or the YAML's keys); both default to
    the generator's pattern table.  Returns the report (what ``report.json`` holds) and
    the paths written (``report.json``, ``report.md``, ``per_pattern.png``)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    c = _setup(study_title, profile, list(results or []), labels, groups)
    report, md = _header(c)
    for name, table in (("table2", _table2), ("table3", _table3), ("table10", _table10),
                        ("table11", _table11), ("table6", _table6), ("table7", _table7),
                        ("table5", _table5)):
        entry, lines = table(c)
        if entry is not None:
            report["tables"][name] = entry
        md += lines
    plot = _plot(c.pats, c.trained, c.per_pattern_means, c.paper, c.mlabel, out_dir / PLOT,
                 title=f"{study_title} ({profile}): gen exact match per pattern")
    report["plot"] = plot.name
    md += ["\n## Exact match per pattern\n",
           "Generalisation-set exact match per pattern (Table 10 order): our mean over seeds "
           f"(bars) and the paper's Transformer mean (markers). {c.ours_line(MAIN)}\n",
           f"![exact match per pattern]({plot.name})\n"]
    report["signatures"], lines = _signatures(c)
    md += lines
    report["runs"] = c.results
    report = json.loads(json.dumps(report))   # exactly what report.json holds
    return report, [*write_report(out_dir, report, md), plot]


@dataclass
class _Setup:
    """What every table of one report reads: the paper's numbers, the pattern mapping,
    the models and the results by part and model."""
    title: str
    profile: str
    results: list[dict]
    paper: dict
    labels: Mapping[str, str]
    groups: Mapping[str, str]
    mapping_source: str
    seen: list[str]
    pats: _Patterns
    models: dict
    key: Callable[[dict], str]
    parts: dict[str, dict[str, list[dict]]]
    datasets: dict[str, list[str]]
    #: the per-pattern exact-match means Table 10 computes, for the plot
    per_pattern_means: dict = field(default_factory=dict)

    @property
    def model_labels(self) -> dict:
        return self.paper.get("model_labels", {})

    @property
    def main(self) -> dict[str, list[dict]]:
        return self.parts[MAIN]

    @property
    def comparable(self) -> bool:
        return self.profile == "paper"

    @property
    def trained(self) -> list[str]:
        """The models of the per-pattern tables: those trained (main part), else
        Transformer."""
        return [k for k in self.models if k in self.main] or ["transformer"]

    def ours_line(self, *ps: str) -> str:
        got = [f"{p}: {'; '.join(self.datasets[p])}" for p in ps if self.datasets.get(p)]
        text = "Ours: " + (" | ".join(got) if got else "no results")
        if not self.comparable:
            text += (f" (the {self.profile} profile's scaled-down task: not comparable with "
                     "the paper's numbers)")
        return text + "."

    def paper_arch(self, mkey: str) -> str:
        return self.models[mkey]["architecture"] if mkey in self.models else mkey

    def mlabel(self, k: str) -> str:
        return self.models[k]["label"] if k in self.models else self.model_labels.get(k, k)

    @property
    def split_labels(self) -> dict:
        return self.paper["table2"].get("split_labels", {"test": "Test", "gen": "Gen."})


def _setup(title: str, profile: str, results: list[dict], labels: Mapping[str, str] | None,
           groups: Mapping[str, str] | None) -> _Setup:
    paper = paper_numbers("sget")
    d_labels, d_groups, mapping_source = default_mapping()
    if labels is None or groups is None:
        labels = d_labels if labels is None else labels
        groups = d_groups if groups is None else groups
    else:
        mapping_source = "passed to build_report"
    seen = [n for r in results for part in ("per_pattern", "by_cp", "by_length")
            for n in (_gen(r, part) or {})]
    pats = _Patterns(paper, labels, seen)
    models, key = _models(results, paper.get("model_labels", {}))
    parts = {p: _by_model(results, key, p) for p in (MAIN, NO_RESTRICTIONS, NO_CONCATENATION)}
    datasets = {p: sorted({str(r.get("dataset_label") or r.get("dataset") or "?")
                           for r in results if _part(r) == p})
                for p in dict.fromkeys(_part(r) for r in results)}   # results' order
    return _Setup(title, profile, results, paper, labels, groups, mapping_source, seen, pats,
                  models, key, parts, datasets)


def _header(c: _Setup) -> tuple[dict, list[str]]:
    """The report's head (what it is, its units, the mapping, the models) and the
    Markdown's opening paragraphs."""
    report: dict = {
        "study": "sget", "title": c.title, "profile": c.profile,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "comparable_with_paper": c.comparable, "datasets": c.datasets,
        "paper": "Kumon, Matsuoka and Yanaka (2024), Evaluating Structural Generalization "
                 "in Neural Machine Translation (SGET)",
        "units": {"exact": "percent", "partial": "percent", "bleu": "BLEU (0-100)",
                  "std": "sample standard deviation over seeds"},
        "patterns": {"source": c.mapping_source, "labels": dict(c.labels),
                     "groups": dict(c.groups)},
        "models": c.models, "tables": {}}
    md = [f"# {c.title}: {c.profile} profile\n",
          "Paper: Kumon, Matsuoka and Yanaka (2024), *Evaluating Structural Generalization in "
          "Neural Machine Translation* (SGET); its numbers are read from the paper "
          "(`paper_numbers/sget.yaml`).\n",
          "Each cell: ours, mean ± sample standard deviation over seeds (one seed: the mean "
          "alone), beside the paper's mean ± std over its five runs (Tables 10 and 11 print "
          "means only). Exact and partial match in %, BLEU is sacreBLEU's 0-100; one decimal "
          "as in the paper. \"–\": no number (no result, not trained, not reported, or not "
          "scored by partial match).\n",
          f"Our pattern names are mapped to the paper's labels and groups by: "
          f"{c.mapping_source}.\n"]
    if not c.comparable:
        md.append(f"**The {c.profile} profile trains on a scaled-down task: its numbers show "
                  "the pipeline working end to end and are not comparable with the paper's.**\n")
    return report, md


# ----------------------------------------------------------------------------- Table 2
def _table2(c: _Setup) -> tuple[dict, list[str]]:
    """Test and generalisation sets, every architecture (Llama 2 as published)."""
    t2 = c.paper["table2"]
    rows, entries = [], []
    for a in list(c.model_labels) + sorted({c.models[k]["architecture"] for k in c.models}
                                           - set(c.model_labels)):
        keys = [k for k in c.models if c.models[k]["architecture"] == a and k in c.main] or [a]
        for k in keys:
            runs = c.main.get(k, [])
            for split in SPLITS:
                s = _over_seeds(runs, lambda r, sp=split: _get(r, "splits", sp))
                pub = _get(t2, a, split) or {}
                rows.append([c.mlabel(k), c.split_labels.get(split, split),
                             len(runs) or MISSING, _ours(s["exact"]), _paper(pub.get("exact")),
                             _ours(s["bleu"]), _paper(pub.get("bleu"))])
                entries.append({"model": k, "architecture": a, "split": split,
                                "exact": s["exact"], "bleu": s["bleu"], "n": s["n"],
                                "paper": {"exact": pub.get("exact"), "bleu": pub.get("bleu")}})
    md = ["## Table 2: results on the test and generalisation sets\n",
          f"Paper: {t2['source']}. {c.ours_line(MAIN)}\n",
          "How ours is computed: per trained model, exact match and BLEU over all sentences "
          "of the test set and of the generalisation set as the evaluation scored them "
          "(exact match × 100), then mean ± std over seeds. A model we do not train "
          "has no numbers of ours; the paper's are printed beside.\n",
          *_stand_in_notes(c),
          markdown_table(["model", "set", "seeds", "Exact (%) ours", "Exact (%) paper",
                          "BLEU ours", "BLEU paper"], rows)]
    return {"source": t2["source"], "rows": entries}, md


def _stand_in_notes(c: _Setup) -> list[str]:
    """One line per model trained as a stand-in (its results' ``stand_in`` says what it
    is): a small model built from a config, not the paper's model."""
    notes = []
    for k, m in c.models.items():
        what = next((r["stand_in"] for rs in c.parts.values() for r in rs.get(k, [])
                     if r.get("stand_in")), None)
        if what:
            notes.append(f"**{m['label']}: a stand-in, not {c.model_labels.get(m['architecture'], m['architecture'])}**"
                         f" ({what}). Its row shows the pipeline at work, not the paper's model.\n")
    return notes


# ----------------------------------------------------------------------------- Table 3
def _group_members(c: _Setup, group_labels: Mapping[str, str]) -> tuple[dict, list[str]]:
    """Table 3's group -> our patterns in it (Table 10's order), and the patterns with
    results but no group."""
    aliases = {}
    for gk, gl in group_labels.items():
        aliases[_norm_group(gk)] = gk
        aliases[_norm_group(gl)] = gk
    group_of = {n: aliases.get(_norm_group(g)) for n, g in c.groups.items() if g is not None}
    members = {gk: [n for n in c.pats.order if group_of.get(n) == gk] for gk in group_labels}
    return members, sorted({n for n in c.seen if group_of.get(n) is None})


def _group_over_seeds(runs: list[dict], names: list[str]) -> tuple[dict, set, list]:
    """Per seed, the group's per-pattern exact match and BLEU weighted by sentences;
    then over seeds.  Also the patterns with results and each seed's sentence count."""
    per_seed: dict = {m: [] for m in ("exact", "bleu")}
    covered: set = set()
    sizes = []
    for r in runs:
        sc = {n: _scores(_gen(r, "per_pattern", n)) for n in names}
        for m in per_seed:
            pairs = [(s[m], s["n"]) for s in sc.values()
                     if s.get(m) is not None and s.get("n")]
            tot = sum(w for _, w in pairs)
            per_seed[m].append((r.get("seed"), sum(v * w for v, w in pairs) / tot
                                if tot else None))
        covered |= {n for n, s in sc.items() if s.get("exact") is not None}
        sizes.append(sum(s["n"] for s in sc.values() if s.get("n")))
    return {m: _stats(v) for m, v in per_seed.items()}, covered, sizes


def _table3(c: _Setup) -> tuple[dict, list[str]]:
    """Generalisation groups, sentence-weighted over Table 10's patterns."""
    t3 = c.paper["table3"]
    group_labels = t3.get("group_labels", {})
    members, ungrouped = _group_members(c, group_labels)
    rows, entries = [], []
    for k in c.trained:
        for gk, gl in group_labels.items():
            names = members[gk]
            st, covered, sizes = _group_over_seeds(c.main.get(k, []), names)
            ex, bl = st["exact"], st["bleu"]
            pub = _get(t3, c.paper_arch(k), gk) or {}
            rows.append([c.mlabel(k), gl, f"{len(covered)} of {len(names)}",
                         _n_cell(sorted(set(sizes) - {0})), _ours(ex), _paper(pub.get("exact")),
                         _ours(bl), _paper(pub.get("bleu"))])
            entries.append({"model": k, "group": gk, "label": gl, "patterns": names,
                            "patterns_with_results": sorted(covered), "n": sorted(set(sizes)),
                            "exact": ex, "bleu": bl,
                            "paper": {"exact": pub.get("exact"), "bleu": pub.get("bleu")}})
    check = _table3_check(c.paper)
    md = ["\n## Table 3: results by generalisation group\n",
          f"Paper: {t3['source']}. {c.ours_line(MAIN)}\n",
          "How ours is computed: per seed, the mean of the group's per-pattern scores "
          "(generalisation set) weighted by each pattern's number of sentences n, i.e. exact "
          "match over all the group's sentences; BLEU is the same sentence-weighted mean of "
          "the per-pattern corpus BLEU (not a corpus BLEU over the group); then mean ± std "
          "over seeds. \"patterns\": how many of the group's patterns had results. Why "
          "weighted by sentences: the paper's Structural figure and Table 2's Gen. exact "
          "match are recovered from Table 10 only when its patterns are weighted by their "
          f"sentences ({_check_text(check)}); the paper's two lexical groups cannot be "
          "derived from Table 10 under any split of the lexical patterns (the YAML's note), "
          "and the paper does not say which group the Primitive Substitution patterns are "
          "in, so our Lexical and Lex. + Mor. cells may group differently from the paper's. "
          f"Groups from {c.mapping_source}"
          + (f"; patterns with results but no group (left out): {', '.join(ungrouped)}"
             if ungrouped else "") + ".\n",
          markdown_table(["model", "group", "patterns", "n", "Exact (%) ours",
                          "Exact (%) paper", "BLEU ours", "BLEU paper"], rows)]
    return {"source": t3["source"], "weighting": "sentences (n)", "rows": entries,
            "ungrouped_patterns": ungrouped, "paper_table10_weighted": check}, md


# ----------------------------------------------------------------------------- Table 10
def _table10(c: _Setup) -> tuple[dict, list[str]]:
    """Every generalisation pattern, one table per trained model; keeps each model's
    per-pattern exact-match means for the plot (``c.per_pattern_means``)."""
    t10 = c.paper["table10"]
    sizes10 = {p["key"]: p.get("gen_size")
               for p in _get(c.paper, "table10_labels", "patterns") or []}
    table: dict = {"source": t10["source"], "models": {}}
    md = ["\n## Table 10: results by generalisation pattern\n",
          f"Paper: {t10['source']}. {c.ours_line(MAIN)}\n",
          "How ours is computed: per seed, the pattern's exact match, corpus BLEU and "
          "partial match over its sentences of the generalisation set, then mean ± std over "
          "seeds; the paper's cells are its means for the same architecture (no std "
          "printed). Rows in the paper's order. \"–\" under Partial: the pattern is not "
          "scored by partial match (or has no result).\n"]
    for k in c.trained:
        pa = c.paper_arch(k)
        rows, entries = [], []
        means = {}
        for name, yk, label in c.pats.rows:
            runs = c.main.get(k, []) if name is not None else []
            s = _over_seeds(runs, lambda r, n=name: _gen(r, "per_pattern", n))
            pub = _get(t10, "rows", yk, pa) if yk else None
            pub = pub or {}
            rows.append([label, _n_cell(s["n"]), str(sizes10[yk]) if sizes10.get(yk)
                         else MISSING]
                        + [x for m in METRICS for x in (_ours(s[m]), _paper(pub.get(m)))])
            entries.append({"pattern": name, "paper_key": yk, "label": label, "n": s["n"],
                            **{m: s[m] for m in METRICS},
                            "paper": {m: pub.get(m) for m in METRICS}})
            means[label] = s["exact"]["mean"] if s["exact"] else None
        c.per_pattern_means[k] = means
        table["models"][k] = {"paper_model": pa, "rows": entries}
        md += [f"\n### {c.mlabel(k)} (paper: {c.model_labels.get(pa, pa)})\n",
               _metrics_table(["pattern", "n ours", "n paper"], rows)]
    return table, md


def _metrics_table(first: list[str], rows: list[list]) -> str:
    """A table whose last columns are ours and the paper's for each metric."""
    return markdown_table(first + [f"{METRIC_NAMES[m]} {w}" for m in METRICS
                                   for w in ("ours", "paper")], rows)


# ----------------------------------------------------------------------------- Table 11
def _table11(c: _Setup) -> tuple[dict | None, list[str]]:
    """Patterns split by whether the target is inside a complement clause (only when
    the results have that split)."""
    with_cp = [n for n in c.pats.order
               if any(isinstance(_gen(r, "by_cp", n), Mapping) for rs in c.main.values()
                      for r in rs)]
    if not with_cp:
        return None, []
    t11 = c.paper["table11"]
    rows, entries = [], []
    for k in c.trained:
        pa = c.paper_arch(k)
        for name in with_cp:
            yk = c.pats.key_of.get(name)
            for ck, in_cp, suffix in CP_KEYS:
                s = _over_seeds(c.main.get(k, []), lambda r, n=name, x=ck:
                                _gen(r, "by_cp", n, x))
                prow = next((row for row in t11["rows"].values()
                             if yk and row.get("pattern") == yk
                             and bool(row.get("in_cp")) == in_cp), {})
                pub = prow.get(pa) or {}
                label = f"{c.pats.label(name)} {suffix}"
                rows.append([c.mlabel(k), label, _n_cell(s["n"])]
                            + [x for m in METRICS for x in (_ours(s[m]), _paper(pub.get(m)))])
                entries.append({"model": k, "pattern": name, "in_cp": in_cp, "label": label,
                                "n": s["n"], **{m: s[m] for m in METRICS},
                                "paper": {m: pub.get(m) for m in METRICS}})
    md = ["\n## Table 11: target phrase in / not in a complement clause (CP)\n",
          f"Paper: {t11['source']}. {c.ours_line(MAIN)}\n",
          "How ours is computed: the pattern's generalisation sentences split by whether "
          "the target phrase is inside a complement clause (the evaluation's by_cp), each "
          "half scored as in Table 10, then mean ± std over seeds; the paper prints means "
          "only.\n",
          _metrics_table(["model", "pattern", "n"], rows)]
    return {"source": t11["source"], "rows": entries}, md


# ----------------------------------------------------------------------------- Tables 6, 7
def _concat_labels(c: _Setup) -> dict:
    return c.paper["table6"].get("concat_labels",
                                 {"w_concat": "w.Concat", "wo_concat": "wo.Concat"})


def _with_and_without_concat(c: _Setup) -> list[str]:
    """The models trained with or without concatenated sentences."""
    no_concat = c.parts[NO_CONCATENATION]
    return [k for k in c.models if k in c.main or k in no_concat]


def _table6(c: _Setup) -> tuple[dict | None, list[str]]:
    """Recursion patterns with / without concatenated training sentences (only with
    the no_concatenation part)."""
    no_concat = c.parts[NO_CONCATENATION]
    if not no_concat:
        return None, []
    t6 = c.paper["table6"]
    concat = _concat_labels(c)
    rows, entries = [], []
    for k in _with_and_without_concat(c):
        pa = c.paper_arch(k)
        for yk, prow in t6["rows"].items():
            name = c.pats.name_of.get(yk)
            w = _over_seeds(c.main.get(k, []) if name else [],
                            lambda r, n=name: _gen(r, "per_pattern", n))
            wo = _over_seeds(no_concat.get(k, []) if name else [],
                             lambda r, n=name: _gen(r, "per_pattern", n))
            pub = prow.get(pa) or {}
            rows.append([c.mlabel(k), prow["label"], _ours(w["exact"]),
                         _paper(pub.get("w_concat")), _ours(wo["exact"]),
                         _paper(pub.get("wo_concat"))])
            entries.append({"model": k, "pattern": name, "paper_key": yk,
                            "label": prow["label"], "w_concat": w["exact"],
                            "wo_concat": wo["exact"],
                            "paper": {"w_concat": pub.get("w_concat"),
                                      "wo_concat": pub.get("wo_concat")}})
    md = ["\n## Table 6: recursion patterns trained with / without concatenated "
          "sentences\n",
          f"Paper: {t6['source']}. {c.ours_line(MAIN, NO_CONCATENATION)}\n",
          f"How ours is computed: the pattern's exact match on the generalisation set "
          f"(as in Table 10) of the models trained with concatenated sentences "
          f"(part {MAIN}: {concat['w_concat']}) and without them (part "
          f"{NO_CONCATENATION}: {concat['wo_concat']}), mean ± std over seeds.\n",
          markdown_table(["model", "pattern", f"{concat['w_concat']} ours",
                          f"{concat['w_concat']} paper", f"{concat['wo_concat']} ours",
                          f"{concat['wo_concat']} paper"], rows)]
    return {"source": t6["source"], "metric": "exact", "rows": entries}, md


def _table7_rows(c: _Setup, with_len: list[str]) -> tuple[list, list]:
    t7 = c.paper["table7"]
    lengths = t7.get("length_labels", {"longer": "Longer", "shorter": "Shorter"})
    t7_name = c.pats.name_of.get(t7.get("pattern"))
    no_concat = c.parts[NO_CONCATENATION]
    rows, entries = [], []
    for k in _with_and_without_concat(c):
        pa = c.paper_arch(k)
        for name in with_len:
            for lk in LENGTH_KEYS:
                get = (lambda r, n=name, lk_=lk: _gen(r, "by_length", n, lk_))
                w = _over_seeds(c.main.get(k, []), get)
                wo = _over_seeds(no_concat.get(k, []), get)
                pub = {x: _get(t7, lk, x, pa) if name == t7_name else None
                       for x in ("w_concat", "wo_concat")}
                rows.append([c.mlabel(k), c.pats.label(name), lengths.get(lk, lk),
                             _n_cell(w["n"] or wo["n"]), _ours(w["exact"]),
                             _paper(pub["w_concat"]), _ours(wo["exact"]),
                             _paper(pub["wo_concat"])])
                entries.append({"model": k, "pattern": name, "length": lk,
                                "w_concat": w["exact"], "wo_concat": wo["exact"],
                                "n": w["n"] or wo["n"], "paper": pub})
    return rows, entries


def _table7(c: _Setup) -> tuple[dict | None, list[str]]:
    """Recursion by source length, with / without concatenated training sentences
    (only with the no_concatenation part and results split by length)."""
    no_concat = c.parts[NO_CONCATENATION]
    if not no_concat:
        return None, []
    with_len = [n for n in c.pats.order
                if any(isinstance(_gen(r, "by_length", n), Mapping)
                       for p in (c.main, no_concat) for rs in p.values() for r in rs)]
    if not with_len:
        return None, []
    t7 = c.paper["table7"]
    concat = _concat_labels(c)
    rows, entries = _table7_rows(c, with_len)
    md = ["\n## Table 7: recursion by source length, with / without concatenated "
          "sentences\n",
          f"Paper: {t7['source']}. {c.ours_line(MAIN, NO_CONCATENATION)}\n",
          "How ours is computed: the pattern's generalisation sentences split by "
          "source length (the evaluation's by_length: Longer = at least as long as "
          "the longest training source, Shorter = shorter), exact match of each part, "
          "mean ± std over seeds, for the models trained with and without "
          "concatenated sentences. The paper's caption names no metric; the YAML "
          "reads it as exact match. The paper has this split only for "
          f"{_get(c.paper, 'table10', 'rows', t7.get('pattern'), 'label')}.\n",
          markdown_table(["model", "pattern", "length", "n",
                          f"{concat['w_concat']} ours", f"{concat['w_concat']} paper",
                          f"{concat['wo_concat']} ours", f"{concat['wo_concat']} paper"],
                         rows)]
    return {"source": t7["source"], "metric": "exact", "metric_stated": t7.get("metric_stated"),
            "rows": entries}, md


# ----------------------------------------------------------------------------- Table 5
def _table5(c: _Setup) -> tuple[dict | None, list[str]]:
    """With / without selectional restrictions (only with the no_restrictions part);
    the paper's model (Llama 2) as published."""
    no_restr = c.parts[NO_RESTRICTIONS]
    if not no_restr:
        return None, []
    t5 = c.paper["table5"]
    pm = t5.get("model", "llama2")
    pl = c.model_labels.get(pm, pm)
    restrictions = ("with_restrictions", "without_restrictions")
    rows, entries = [], []
    for k in [k for k in c.models if k in c.main or k in no_restr]:
        for rk, part_runs in zip(restrictions, (c.main, no_restr)):
            rlabel = _get(t5, rk, "label") or rk
            for split in SPLITS:
                runs = part_runs.get(k, [])
                s = _over_seeds(runs, lambda r, sp=split: _get(r, "splits", sp))
                rows.append([c.mlabel(k), rlabel, c.split_labels.get(split, split),
                             len(runs) or MISSING, _ours(s["exact"]), _ours(s["bleu"])])
                entries.append({"model": k, "restrictions": rk, "split": split,
                                "exact": s["exact"], "bleu": s["bleu"]})
    prows = [[pl, _get(t5, rk, "label") or rk, c.split_labels.get(sp, sp),
              _paper(_get(t5, rk, sp, "exact")), _paper(_get(t5, rk, sp, "bleu"))]
             for rk in restrictions for sp in SPLITS]
    md = ["\n## Table 5: with / without selectional restrictions\n",
          f"Paper: {t5['source']}. {c.ours_line(MAIN, NO_RESTRICTIONS)}\n",
          f"How ours is computed: as Table 2, for the models trained on the dataset with "
          f"selectional restrictions (part {MAIN}) and without them (part "
          f"{NO_RESTRICTIONS}). The paper reports this only for {pl}; its rows follow "
          "ours, as published.\n",
          *_stand_in_notes(c),
          markdown_table(["model", "restrictions", "set", "seeds", "Exact (%) ours",
                          "BLEU ours"], rows),
          f"\n{pl} (paper, as published):\n",
          markdown_table(["model", "restrictions", "set", "Exact (%)", "BLEU"], prows)]
    return {"source": t5["source"], "rows": entries, "paper_model": pm,
            "paper": {rk: {sp: _get(t5, rk, sp) for sp in SPLITS} for rk in restrictions}}, md


# ----------------------------------------------------------------------------- signatures
def _signatures(c: _Setup) -> tuple[dict, list[str]]:
    """The BLEU signatures and the checkpoint each model's selection chose."""
    sigs: dict = defaultdict(int)
    for r in c.results:
        for split in SPLITS:
            sig = _get(r, "splits", split, "bleu", "signature")
            if sig:
                sigs[sig] += 1
    selection = [_selected(c, r) for r in sorted(
        c.results, key=lambda r: (list(c.models).index(c.key(r)), _part(r), str(r.get("run")),
                                  str(r.get("seed"))))]
    metrics_used = sorted({str(s["metric"]) for s in selection if s["metric"]})
    md = ["\n## Signature\n",
          "BLEU signatures (sacreBLEU; how many test/gen scores carry each):\n"]
    md += [f"- `{s}` ({n})" for s, n in sigs.items()] or ["- none recorded"]
    md += ["", "Checkpoint selection: " + ("; ".join(metrics_used) or "not recorded")
           + " (the paper: the best dev exact match, section 4.1.1). Best step per seed:\n",
           markdown_table(["model", "part", "run", "toolkit", "seed", "metric", "best step",
                           "dev score at best step"],
                          [[c.mlabel(s["model"]), s["part"], s["run"] or MISSING,
                            s["toolkit"] or MISSING, MISSING if s["seed"] is None else s["seed"],
                            s["metric"] or MISSING,
                            MISSING if s["best_step"] is None else s["best_step"],
                            _score_cell(s["metric"], s["score"])] for s in selection])]
    return {"bleu": dict(sigs), "checkpoint_selection": selection}, md


def _selected(c: _Setup, r: dict) -> dict:
    """One result's checkpoint selection: the best step and its development score."""
    cs = r.get("checkpoint_selection") or {}
    best = cs.get("best_step")
    score = _get(cs, "by_step", str(best)) if best is not None else None
    if score is None and best is not None and isinstance(cs.get("by_step"), Mapping):
        score = cs["by_step"].get(best)
    metric, sample = cs.get("metric"), cs.get("sample")
    if metric and isinstance(sample, Mapping):   # selection: {sample, finalists}
        metric = (f"{metric} (of {len(sample.get('chosen_from') or [])} finalists on a "
                  f"{sample.get('n')}-line sample)")
    return {"model": c.key(r), "part": _part(r), "run": r.get("run"),
            "toolkit": r.get("toolkit"), "seed": r.get("seed"),
            "metric": metric, "best_step": best, "score": score}


def _score_cell(metric: Any, score: Any) -> str:
    if score is None:
        return MISSING
    if "exact" in str(metric).lower() and 0 <= float(score) <= 1:
        return _num(100 * float(score)) + " %"
    return fmt(float(score), 3)


def _table3_check(paper: dict) -> dict:
    """The paper's Transformer Table 10 exact match weighted by gen_size: the structural
    patterns and all patterns (vs Table 3's Structural and Table 2's Gen.)."""
    meta = paper.get("table10_labels") or {}
    cats = meta.get("categories") or {}
    rows = _get(paper, "table10", "rows") or {}
    out = {}
    for what, keep in (("structural", lambda p: _get(cats, p.get("category"), "family")
                        == "structural"), ("all", lambda p: True)):
        pairs = [(_get(rows, p["key"], "transformer", "exact"), p.get("gen_size"))
                 for p in meta.get("patterns") or [] if keep(p)]
        pairs = [(v, w) for v, w in pairs if v is not None and w]
        tot = sum(w for _, w in pairs)
        out[what] = sum(v * w for v, w in pairs) / tot if tot else None
    out["paper_structural"] = _get(paper, "table3", "transformer", "structural", "exact", "mean")
    out["paper_gen"] = _get(paper, "table2", "transformer", "gen", "exact", "mean")
    return out


def _check_text(c: dict) -> str:
    if c.get("structural") is None or c.get("all") is None:
        return "see the YAML's note"
    return (f"Transformer, Table 10 weighted by sentences: structural {c['structural']:.2f} vs "
            f"Table 3's {_num(c['paper_structural'])}, all patterns {c['all']:.2f} vs "
            f"Table 2's {_num(c['paper_gen'])}")


def _plot(pats: _Patterns, models: list[str], means: Mapping[str, Mapping[str, float | None]],
          paper: dict, mlabel: Callable, out: Path, title: str = "") -> Path:
    """Horizontal bars: our mean gen exact match per pattern per model, the paper's
    Transformer mean as a marker."""
    plt = pyplot()
    rows = pats.rows
    labels = [label for _, _, label in rows]
    ys = list(range(len(rows)))
    fig, ax = plt.subplots(figsize=(7.5, max(3.0, 0.24 * len(rows) + 1.2)))
    h = 0.8 / max(1, len(models))
    for i, k in enumerate(models):
        pts = [(y - 0.4 + (i + 0.5) * h, means.get(k, {}).get(label))
               for y, label in zip(ys, labels)]
        pts = [(y, v) for y, v in pts if v is not None]
        ax.barh([y for y, _ in pts], [v for _, v in pts], height=h,
                label=f"{mlabel(k)} (ours, mean)")
    pub = [(y, _get(paper, "table10", "rows", yk, "transformer", "exact"))
           for y, (_, yk, _) in zip(ys, rows) if yk]
    pub = [(y, v) for y, v in pub if v is not None]
    if pub:
        ax.plot([v for _, v in pub], [y for y, _ in pub], linestyle="none", marker="D",
                ms=4, color="black", label="paper, Transformer (Table 10)")
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=6)
    ax.invert_yaxis()
    ax.set_xlim(0, 101)
    ax.set_xlabel("exact match on the generalisation set (%)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=6, loc="lower right")
    if title:
        ax.set_title(title, fontsize=8)
    fig.tight_layout()
    return save(fig, out)
