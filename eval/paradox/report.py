"""Paradox of compositionality report (Dankers, Bruni and Hupkes 2022): our consistency
and overgeneralisation scores beside the paper's Tables 4a, 4b, 6a and 8, and analogues
of Figures 1-3 as PNGs (systematicity per template, substitutivity per synonym,
overgeneralisation over training).

:func:`build_report` takes one result dict per trained model (the runner's provenance
keys ``run``, ``seed``, ``part`` (the training size) plus the study's evaluation:
``tests`` with each test's ``summary`` and ``cells``, and
``overgeneralisation_by_step``) and writes ``report.md``, ``report.json`` and (where
there is data) ``systematicity.png``, ``substitutivity.png``, ``overgeneralisation.png``
(:mod:`.plots`), one table per function; it returns the paths written.  Cells are mean ±
sample std over seeds; the paper's are means over five seeds.  Our rows are labelled
with the training size they come from (``generated``: the quick profile's
rule-generated corpus, not OPUS: its numbers are not comparable to the paper's, which
are printed beside them for orientation).
"""
from __future__ import annotations

import statistics as st
from collections import defaultdict
from pathlib import Path

from compsuite.eval.reports.tables import (markdown_table, mean_std, mean_std_cell,
                                          paper_numbers, prompting_of,
                                          write_report)

from .plots import DATA_ORDER, plot_overgeneralisation, plot_points

PLOT = "overgeneralisation.png"
PLOT_SYSTEMATICITY = "systematicity.png"
PLOT_SUBSTITUTIVITY = "substitutivity.png"
OPUS_SIZES = ("small", "medium", "full")


def _summary_rows(results, test):
    """(size, data, key, metric) -> per-seed mean over templates, and
    (size, data, key, metric, template) -> per-seed scores."""
    means, per_template = defaultdict(list), defaultdict(list)
    for r in results:
        t = (r.get("tests") or {}).get(test)
        if not t:
            continue
        for s in t["summary"]:
            if s["mean_over_templates"] is not None:
                means[(r["part"], s["data"], s["key"], s["metric"])].append(s["mean_over_templates"])
        for c in t["cells"]:
            if c["score"] is not None:
                per_template[(r["part"], c["data"], c["key"], c["metric"], c["template"])].append(c["score"])
    return means, per_template


def _paper_size_cells(paper_row: dict | None) -> list[str]:
    return [mean_std_cell([paper_row[s]]) if paper_row and paper_row.get(s) is not None else "–"
            for s in OPUS_SIZES]


def _sorted_keys(keys):
    return sorted(keys, key=lambda k: (k[0], DATA_ORDER.index(k[1]) if k[1] in DATA_ORDER else 9,
                                       str(k[2]), k[3]))


def rows_by_run(results: list[dict]) -> list[dict]:
    """The results with each ``part`` reading ``<size> (<run>)`` when they come from
    several runs (their rows are then kept apart) or from a prompted model (its run
    followed by how it was prompted), else as they are."""
    if len({str(r.get("run")) for r in results}) < 2 and not any(map(prompting_of, results)):
        return results
    return [{**r, "part": f"{r.get('part')} ({', '.join(filter(None, [str(r.get('run')), prompting_of(r)]))})"}
            for r in results]


def overgeneralisation_curves(results):
    """(size, data, idiom, match) -> [(step, per-seed values)] and max over training per
    seed."""
    curves = defaultdict(lambda: defaultdict(list))
    for r in results:
        for entry in r.get("overgeneralisation_by_step") or []:
            for s in entry["summary"]:
                match = s["metric"].rsplit("_", 1)[-1]
                if s["pooled"] is not None:
                    curves[(r["part"], s["data"], s["key"], match)][(r["seed"], entry["step"])] \
                        = s["pooled"]
    out = {}
    for key, by in curves.items():
        seeds = sorted({seed for seed, _ in by})
        steps = sorted({step for _, step in by if step is not None})
        out[key] = {"steps": steps,
                    "per_seed": {seed: [by.get((seed, step)) for step in steps] for seed in seeds},
                    "max_per_seed": [max(v for (sd, _), v in by.items() if sd == seed)
                                     for seed in seeds]}
    return out


def build_report(study, profile: str, results: list[dict], out_dir: Path) -> list[Path]:
    """``report.md``, ``report.json`` and the figures; returns the paths written."""
    out_dir = Path(out_dir)
    paper = paper_numbers("paradox")
    md = _introduction(study.title, profile, results)
    report = {"profile": profile, "models": len(results), "tables": {}}
    signatures: dict = {}
    plots: list[str] = []
    _systematicity(md, report, signatures, plots, results, paper, out_dir)
    _substitutivity(md, report, signatures, plots, results, paper, out_dir)
    og = _table8(md, report, signatures, results, paper)
    _figures(md, plots, og, results, study.title, out_dir)
    _bleu(md, report, signatures, results, paper)
    md += ["\n## Metric signatures\n"] + [f"- `{s}`" for s in sorted(signatures.values())]
    report["signatures"] = signatures
    return write_report(out_dir, report, md) + [out_dir / name for name in plots]


def _introduction(title: str, profile: str, results: list[dict]) -> list[str]:
    md = [f"# {title}\n", f"Profile `{profile}`: {len(results)} model(s). "
          "Scores are fractions (1.0 = every sample consistent / overgeneralised); ours are "
          "mean ± std over seeds of the mean over templates; the paper's are for its three "
          "OPUS training sizes (five seeds each)."]
    sizes = sorted({r["part"] for r in results})
    if any(s not in OPUS_SIZES for s in sizes):
        md.append("\n**Scaled down:** the `generated` rows come from a small Transformer "
                  "trained on rule-generated English–Dutch pairs (data_prep/paradox/doc.md), "
                  "not on OPUS; the paper's numbers are beside them for orientation only.")
    return md


def _systematicity(md, report, signatures, plots, results, paper, out_dir):
    """Tables 4a and 4b (systematicity), and Figure 1's analogue."""
    rows, rows_b = [], []
    per_template_all = {}   # label -> per-template means over seeds
    for test in ("np_vp", "s_conj_s"):
        means, per_template = _summary_rows(results, test)
        for (size, data, cond, metric, t), vals in per_template.items():
            per_template_all.setdefault(f"{metric.replace('_', ' ')}\n{data} {cond}\n({size})",
                                        []).append(st.fmean(vals))
        for key in _sorted_keys(means):
            size, data, cond, metric = key
            pr = paper["table4a"][test].get(f"{data}/{cond}")
            rows.append([metric.replace("_", " "), data, cond, size, mean_std_cell(means[key])]
                        + _paper_size_cells(pr))
            pb = paper["table4b"][test].get(f"{data}/{cond}") or [None] * 10
            rows_b.append([metric.replace("_", " "), data, cond, size]
                          + _per_template_cells(per_template, key, pb))
            report["tables"].setdefault("table4a", []).append(
                {"test": test, "data": data, "condition": cond, "size": size,
                 "ours": means[key], "paper": pr})
        for r in results:
            signatures.update((r.get("tests") or {}).get(test, {}).get("signatures", {}))
    if per_template_all:
        plot_points(per_template_all, out_dir / PLOT_SYSTEMATICITY,
                    "Figure 1 analogue: systematicity (dots: templates; bars: mean)")
        plots.append(PLOT_SYSTEMATICITY)
    md += ["\n## Table 4a analogue: systematicity consistency\n",
           markdown_table(["test", "data", "condition", "ours: size", "ours",
                           "paper small", "paper medium", "paper full"], rows),
           "\n## Table 4b analogue: per template (ours, paper's mean over sizes in brackets)\n",
           markdown_table(["test", "data", "condition", "size"] + [f"T{t}" for t in range(1, 11)],
                          rows_b)]


def _per_template_cells(per_template, key, paper_row) -> list[str]:
    """Table 4b's ten cells: ours (the paper's in brackets)."""
    size, data, cond, metric = key
    cells = []
    for t in range(1, 11):
        vals = per_template.get((size, data, cond, metric, str(t)))
        ours = "–" if not vals else f"{st.fmean(vals):.2f}"
        cells.append(f"{ours} ({paper_row[t - 1]:.2f})" if paper_row[t - 1] is not None else ours)
    return cells


def _substitutivity(md, report, signatures, plots, results, paper, out_dir):
    """Table 6a (substitutivity), per synonym, and Figure 2's analogue."""
    means, _ = _summary_rows(results, "substitutivity")
    per_data = defaultdict(list)      # (size, data, metric) -> per-synonym means over seeds
    for (size, data, syn, metric), vals in means.items():
        per_data[(size, data, metric)].append(st.fmean(vals))
    rows = []
    for (size, data, metric) in sorted(per_data, key=lambda k: (k[0], DATA_ORDER.index(k[1])
                                                                if k[1] in DATA_ORDER else 9, k[2])):
        kind = {"substitutivity_synonym": "synonym_consistency",
                "substitutivity_exact": "consistency (authors: exact)"}.get(metric, "consistency")
        pr = (paper["table6a"].get(data) or {}).get(kind.split(" ")[0])
        rows.append([data, kind.replace("_", " "), size, f"{st.fmean(per_data[(size, data, metric)]):.2f}"]
                    + _paper_size_cells(pr))
    per_syn = [[data, syn, size, mean_std_cell(vals)] for (size, data, syn, metric), vals in
               sorted(means.items()) if metric.endswith("full")]
    per_synonym = {}
    for (size, data, syn, metric), vals in means.items():
        kind = metric.rsplit("_", 1)[-1]
        per_synonym.setdefault(f"{data} {kind}\n({size})", []).append(st.fmean(vals))
    if per_synonym:
        plot_points(per_synonym, out_dir / PLOT_SUBSTITUTIVITY,
                    "Figure 2 analogue: substitutivity (dots: synonyms; bars: mean)")
        plots.append(PLOT_SUBSTITUTIVITY)
    md += ["\n## Table 6a analogue: substitutivity (mean over synonyms)\n",
           markdown_table(["data", "metric", "ours: size", "ours", "paper small", "paper medium",
                           "paper full"], rows),
           "\n### Per synonym (full-sentence consistency)\n",
           markdown_table(["data", "synonym", "size", "ours"], per_syn)]
    report["tables"]["table6a"] = rows
    for r in results:
        signatures.update((r.get("tests") or {}).get("substitutivity", {}).get("signatures", {}))


def _table8(md, report, signatures, results, paper) -> dict:
    """Table 8: the maximum overgeneralisation over training; returns the curves."""
    og = overgeneralisation_curves(results)
    idioms = paper["table8_idioms"]
    rows = []
    for key in _sorted_keys(og):
        size, data, idiom, match = key
        paper_cell = "–"
        if data in paper["table8"] and idiom in idioms:
            paper_cell = " / ".join(f"{paper['table8'][data][s][idioms.index(idiom)]:.2f}"
                                    for s in OPUS_SIZES)
        rows.append([data, idiom, match, size, mean_std_cell(og[key]["max_per_seed"]),
                     len(og[key]["steps"]), paper_cell])
    md += ["\n## Table 8 analogue: maximum overgeneralisation over training\n",
           "`word`: a keyword as a whole word (ours); `substring`: anywhere in the text (the "
           "authors' rule). Paper: small / medium / full.\n",
           markdown_table(["data", "idiom", "match", "size", "ours (max over checkpoints)",
                           "checkpoints", "paper"], rows)]
    report["tables"]["table8"] = {"|".join(map(str, k)): v for k, v in og.items()}
    for r in results:
        for e in r.get("overgeneralisation_by_step") or []:
            signatures.update(e.get("signatures", {}))
    return og


def _figures(md, plots, og, results, title, out_dir):
    """The figures' sections: Figures 1 and 2 (drawn with their tables) and Figure 3."""
    for name, what in ((PLOT_SYSTEMATICITY, "Figure 1 analogue: systematicity"),
                       (PLOT_SUBSTITUTIVITY, "Figure 2 analogue: substitutivity")):
        if name in plots:
            md += [f"\n## {what}\n\n![{what}]({name})\n"]
    if og:
        plots.append(PLOT)
        units = {r["part"]: r.get("step_unit", "update") for r in results}
        plot_overgeneralisation(og, out_dir / PLOT, title, units)
        md += [f"\n## Figure 3 analogue\n\n![overgeneralisation over training]({PLOT})\n",
               "Per data type: each idiom (thin) and the mean over idioms (thick), mean over "
               "seeds, whole-word keyword match."]


def _bleu(md, report, signatures, results, paper):
    """BLEU on Flores-101 devtest (OPUS models)."""
    bleu = defaultdict(list)
    bleu_sig = {}
    for r in results:
        if r.get("flores_bleu"):
            bleu[r["part"]].append(r["flores_bleu"]["score"])
            bleu_sig["flores_bleu"] = r["flores_bleu"]["signature"]
    if not bleu:
        return
    pb = paper.get("bleu_flores_devtest") or {}
    rows = [[size, len(v), _bleu_cell(v),
             "–" if pb.get(size) is None else f"{pb[size]:.1f}"] for size, v in sorted(bleu.items())]
    md += ["\n## BLEU on Flores-101 devtest (section 3.1)\n",
           "sacreBLEU on detokenised output, beam 5. The paper's three scores are lost in "
           "the rendering of our copy of the text (–).\n",
           markdown_table(["size", "models", "ours", "paper"], rows)]
    report["tables"]["bleu_flores_devtest"] = {k: v for k, v in bleu.items()}
    signatures.update(bleu_sig)


def _bleu_cell(vals: list[float]) -> str:
    """BLEU over seeds with one decimal: ``27.3 ± 0.4``."""
    mean, std = mean_std(vals)
    return f"{mean:.1f}" + (f" ± {std:.1f}" if std is not None else "")
