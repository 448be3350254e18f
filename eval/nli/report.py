"""NLI compositionality-sensitivity report (Nie, Wang and Bansal 2019): analogues of
Tables 2-5 beside the paper's numbers (``eval/nli/paper_numbers.yaml``, cited by table), the
pairs with the highest LMS (the kind of example of the paper's Fig. 2), the reference
sample's rows, and ``accuracy_by_lambda.png`` (accuracy on CS_λ against λ per model).

:func:`build_report` takes one result per trained model (the runner's provenance:
``run``, ``seed``, ``dataset``, ``dataset_label``; the study's row labels ``model``,
``variant``, ``augment``; and its evaluation: ``eval`` (per evaluation set, ``score``
from :func:`compsuite.eval.nli.scores.score_dev` and ``by_lambda``), ``adversaries`` (per
kind, :func:`compsuite.eval.nli.scores.score_adversary`), ``reference_rows`` (per set: Human,
Majority Vote, the lexical classifier, CS sizes, high-LMS pairs) and, optionally,
``reference_sample``).  Cells are mean ± sample std over seeds, in percent.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from compsuite.eval.reports.plots import pyplot, save
from compsuite.eval.reports.tables import (markdown_table, mean_std_cell, paper_numbers,
                                          with_prompting, write_report)

PLOT = "accuracy_by_lambda.png"
SUFFIX = {"original": "", "bow": " (BoW)", "ws": " (WS)"}
SHARES = ("entailment", "contradiction", "neutral")   # the paper's E / C / N order
PAPER_SET = {"snli": "snli", "mnli_matched": "mnli_matched",
             "mnli_mismatched": "mnli_mismatched"}


def row_name(r: dict) -> str:
    name = with_prompting(f"{r.get('model', r.get('run'))}", r)   # a prompted model: how
    name += SUFFIX.get(r.get('variant', 'original'), '')
    aug = r.get("augment", "none")
    return name if aug in (None, "none") else f"{name} + adv. {aug.upper()}"


def _cell(vals) -> str:
    return mean_std_cell([v for v in vals if v is not None])


def _shares(results, kind):
    by = [(r.get("adversaries") or {}).get(kind) for r in results]
    by = [b for b in by if b]
    if not by:
        return ["–"] * 3, None
    cells = [_cell([b["shares"][k] for b in by]) for k in SHARES]
    return cells, [sum(b["shares"][k] for b in by) / len(by) for k in SHARES]


def _paper_shares(v):
    return " / ".join(f"{x:g}" for x in v) if v else "–"


def build_report(study, profile: str, results: list[dict], out_dir: Path) -> list[Path]:
    """``report.md``, ``report.json`` and (with curves) ``accuracy_by_lambda.png``;
    returns the paths written."""
    out_dir = Path(out_dir)
    paper = paper_numbers("nli")
    md = [f"# {study.title}: profile `{profile}`", ""]
    report: dict = {"study": study.name, "profile": profile, "tables": {}}
    if not results:
        md.append("No results: nothing has been trained and evaluated in this profile yet.")
        return write_report(out_dir, report, md)
    by_dataset: dict[str, list[dict]] = defaultdict(list)
    for r in results:
        by_dataset[r.get("dataset", "?")].append(r)
    for dataset, rs in by_dataset.items():
        label = rs[0].get("dataset_label", dataset)
        md += [f"## Data: {dataset}", "", f"Our rows come from: {label}."]
        if dataset == "synthetic":
            md.append("This is a scaled-down synthetic corpus, not SNLI: our numbers are not "
                      "comparable with the paper's, which are printed beside them for "
                      "orientation only.")
        md.append("")
        groups: dict[str, list[dict]] = defaultdict(list)
        for r in rs:
            groups[row_name(r)].append(r)
        rep = report["tables"].setdefault(dataset, {})
        _table2(md, rep, groups, paper)
        _table3(md, rep, groups, paper)
        _table4(md, rep, groups, paper)
        _table5(md, rep, rs, groups, paper)
        _examples(md, rs)
        _reference_sample(md, rep, rs)
    plots = []
    if any(e.get("by_lambda") for r in results for e in (r.get("eval") or {}).values()):
        plots.append(_plot(results, out_dir / PLOT))
        md += ["", f"![accuracy on CS_λ against λ]({PLOT})", ""]
    else:
        md += ["", "No accuracy-by-λ curves in the results: no plot.", ""]
    return write_report(out_dir, report, md) + plots


def _first_set(rs):
    for r in rs:
        if r.get("eval"):
            return next(iter(r["eval"]))
    return None


def _table2(md, rep, groups, paper):
    md += ["### Table 2: dev accuracy and E / C / N predictions on the adversaries",
           "", "Beside Nie et al. (2019), Table 2 (SNLI dev; SOSWAP and ADDAMOD from SNLI "
           "dev).", ""]
    rows, out = [], {}
    for name, rs in groups.items():
        if rs[0].get("variant", "original") != "original" or rs[0].get("augment", "none") != "none":
            continue
        s = _first_set(rs)
        dev = _cell([r["eval"][s]["score"]["whole"] for r in rs]) if s else "–"
        sw, sw_m = _shares(rs, "soswap")
        ad, ad_m = _shares(rs, "addamod")
        p = paper["table2"].get(name) or {}
        rows.append([name, dev, *sw, *ad, p.get("snli_dev", "–"),
                     _paper_shares(p.get("soswap")), _paper_shares(p.get("addamod"))])
        out[name] = {"dev": [r["eval"][s]["score"]["whole"] for r in rs] if s else None,
                     "soswap": sw_m, "addamod": ad_m, "paper": p or None}
    for name, p in paper["table2"].items():
        if name not in groups:
            rows.append([f"{name} (paper only)", "–", "–", "–", "–", "–", "–", "–",
                         p.get("snli_dev") if p.get("snli_dev") is not None else "–",
                         _paper_shares(p.get("soswap")), _paper_shares(p.get("addamod"))])
    md += [markdown_table(["model", "dev acc.", "SOSWAP E", "C", "N", "ADDAMOD E", "C", "N",
                           "paper dev", "paper SOSWAP E/C/N", "paper ADDAMOD E/C/N"], rows), ""]
    rep["table2"] = out


def _table3(md, rep, groups, paper):
    md += ["### Table 3: original, bag-of-words (BoW) and word-shuffled (WS) training", "",
           "Beside Nie et al. (2019), Table 3 (dev accuracy).", ""]
    models: dict[str, dict[str, list[dict]]] = defaultdict(dict)
    for name, rs in groups.items():
        if rs[0].get("augment", "none") == "none":
            models[rs[0].get("model", name)][rs[0].get("variant", "original")] = rs
    rows, out = [], {}
    for model, variants in models.items():
        sets = []
        for rs in variants.values():
            for r in rs:
                sets += [s for s in r.get("eval") or {} if s not in sets]
        for s in sets:
            cells = []
            for v in ("original", "bow", "ws"):
                rs = variants.get(v) or []
                cells.append(_cell([r["eval"][s]["score"]["whole"] for r in rs
                                    if s in (r.get("eval") or {})]))
            p = ((paper["table3"].get(model) or {}).get(PAPER_SET.get(s, "")) or {})
            rows.append([model, s, *cells, p.get("original", "–"), p.get("bow", "–"),
                         p.get("ws") if p.get("ws") is not None else "–"])
            out[f"{model}/{s}"] = {"ours": cells, "paper": p or None}
    md += [markdown_table(["model", "set", "original", "BoW", "WS", "paper original",
                           "paper BoW", "paper WS"], rows), ""]
    rep["table3"] = out


def _table4(md, rep, groups, paper):
    aug = {name: rs for name, rs in groups.items()}
    models = {rs[0].get("model") for rs in aug.values() if rs[0].get("augment", "none") != "none"}
    if not models:
        return
    md += ["### Table 4: adversarial data augmentation", "",
           "E / C / N predictions on each adversary set; beside Nie et al. (2019), Table 4 "
           "(ESIM, 20,000 adversaries added each epoch).", ""]
    rows, out = [], {}
    for name, rs in aug.items():
        if rs[0].get("model") not in models or rs[0].get("variant", "original") != "original":
            continue
        a = rs[0].get("augment", "none")
        sw, sw_m = _shares(rs, "soswap")
        ad, ad_m = _shares(rs, "addamod")
        p = paper["table4"].get(a) or {}
        rows.append([name, a, *sw, *ad, _paper_shares(p.get("soswap")),
                     _paper_shares(p.get("addamod"))])
        out[name] = {"augment": a, "soswap": sw_m, "addamod": ad_m, "paper": p or None}
    md += [markdown_table(["model", "trained with", "SOSWAP E", "C", "N", "ADDAMOD E", "C",
                           "N", "paper SOSWAP E/C/N", "paper ADDAMOD E/C/N"], rows), ""]
    rep["table4"] = out


def _table5(md, rep, rs, groups, paper):
    sets = []
    for r in rs:
        sets += [s for s in r.get("eval") or {} if s not in sets]
    t5 = paper["table5"]
    out = {}
    for s in sets:
        lams = None
        for r in rs:
            if s in (r.get("eval") or {}):
                lams = list(r["eval"][s]["score"]["cs"])
                break
        lams = lams or ["0.5", "0.6", "0.7"]
        pset = PAPER_SET.get(s, "snli")
        note = "" if s in PAPER_SET else " (no paper set: the paper's SNLI rows, for orientation)"
        md += [f"### Table 5: accuracy on the whole set and on CS_λ, `{s}`", "",
               f"Beside Nie et al. (2019), Table 5{note}.", ""]
        rows, table = [], {}
        for name, grp in groups.items():
            have = [r for r in grp if s in (r.get("eval") or {})]
            if not have:
                continue
            cells = [_cell([r["eval"][s]["score"]["whole"] for r in have])]
            cells += [_cell([r["eval"][s]["score"]["cs"][lam]["accuracy"] for r in have])
                      for lam in lams]
            p = (t5["rows"].get(name) or {}).get(pset)
            rows.append([name, *cells, " / ".join(f"{x:g}" for x in p) if p else "–"])
            table[name] = {"ours": cells, "paper": p}
        ref = (rs[0].get("reference_rows") or {}).get(s) or {}
        for key, name in (("human", "Human"), ("majority", "Majority Vote"),
                          ("lexical", "lexical classifier (ours)")):
            row = ref.get(key)
            if not row:
                continue
            cells = [_cell([row["whole"]])] + [
                _cell([(row["cs"].get(lam) or {}).get("accuracy")]) for lam in lams]
            p = (t5["rows"].get(name) or {}).get(pset)
            rows.append([name, *cells, " / ".join(f"{x:g}" for x in p) if p else "–"])
            table[name] = {"ours": cells, "paper": p}
        sizes = ref.get("cs_sizes") or {}
        rows.append(["size of CS_λ", ref.get("n", "–"), *[sizes.get(lam, "–") for lam in lams], "–"])
        md += [markdown_table(["model", "whole", *[f"CS_{lam}" for lam in lams],
                               f"paper ({pset}): whole / " + " / ".join(t5["columns"][1:])],
                              rows), ""]
        ps = paper.get("cs_sizes_snli_dev") or {}
        md += [f"CS sizes: ours {sizes}; the paper's on SNLI dev: CS_0.7 = {ps.get('0.7')}, "
               f"CS_0.95 = {ps.get('0.95')} (section 5.4).", "",
               f"Lexical classifier: `{rs[0].get('lexical_signature', '–')}`", ""]
        out[s] = {"rows": table, "cs_sizes": sizes}
    rep["table5"] = out


def _examples(md, rs):
    ref = rs[0].get("reference_rows") or {}
    for s, row in ref.items():
        ex = (row or {}).get("high_lms_examples") or []
        if not ex:
            continue
        md += [f"### Pairs with the highest LMS, `{s}` (the kind of example of Fig. 2)", ""]
        md.append(markdown_table(["premise", "hypothesis", "gold", "lexical", "LMS"],
                                 [[e["premise"], e["hypothesis"], e["gold"],
                                   e["lexical_prediction"], e["lms"]] for e in ex]))
        md.append("")


def _reference_sample(md, rep, rs):
    s = rs[0].get("reference_sample")
    if not s:
        return
    r = s["rows"]
    adv = s["adversaries"]
    md += [f"### The rules and the lexical classifier on the reference sample ({s['sample']})",
           "", f"{s['pairs']} labelled pairs ({s['premises']} premises); the lexical classifier "
           f"cross-fitted over {s['folds']} premise folds (C per fold {s['C_per_fold']}).", ""]
    md.append(markdown_table(
        ["", "ours (sample)", "paper (full SNLI dev)"],
        [["SOSWAP strict / lenient", f"{adv['strict']['counts']['soswap']} / "
          f"{adv['lenient']['counts']['soswap']}", 971],
         ["ADDAMOD strict / lenient", f"{adv['strict']['counts']['addamod']} / "
          f"{adv['lenient']['counts']['addamod']}", 1783],
         ["Human accuracy (expectation)", f"{r['human']['whole']:.2f} ({r['human']['expected']:.2f})"
          if r.get("human") else "–", 88.32],
         ["Majority Vote", f"{r['majority']['whole']:.2f}", 33.82],
         ["|CS_0.7| / |CS_0.95|", f"{r['cs_sizes'].get('0.7')} / {r['cs_sizes'].get('0.95')}",
          "999 / 148"]]))
    md.append("")
    rep["reference_sample"] = s


def _plot(results, out):
    plt = pyplot()
    sets = []
    for r in results:
        sets += [s for s in r.get("eval") or {} if s not in sets]
    fig, axes = plt.subplots(1, len(sets), figsize=(6 * len(sets), 4.5), squeeze=False)
    for ax, s in zip(axes[0], sets):
        curves: dict[str, dict[float, list]] = defaultdict(lambda: defaultdict(list))
        sizes: dict[float, int] = {}
        for r in results:
            for pt in ((r.get("eval") or {}).get(s) or {}).get("by_lambda") or []:
                if pt["accuracy"] is not None:
                    curves[row_name(r)][pt["lambda"]].append(pt["accuracy"])
                sizes[pt["lambda"]] = pt["n"]
        for name, pts in curves.items():
            xs = sorted(pts)
            ax.plot(xs, [sum(pts[x]) / len(pts[x]) for x in xs], marker=".", label=name)
        ax.set_xlabel("λ (CS_λ: pairs with LMS ≥ λ)")
        ax.set_ylabel("accuracy (%)")
        ax.set_title(f"{s}: accuracy on CS_λ")
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        if sizes:
            ax2 = ax.twinx()
            xs = sorted(sizes)
            ax2.plot(xs, [sizes[x] for x in xs], color="grey", linestyle=":", label="|CS_λ|")
            ax2.set_ylabel("|CS_λ| (dotted)")
    fig.tight_layout()
    return save(fig, out)
