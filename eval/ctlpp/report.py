"""CTL++ report: Table 1 (IID/OOD accuracy per variant, mean ± std over seeds, the
share of seeds above 95% OOD, beside the paper's OOD numbers), the representation
similarity and compatibility figures per model, and the S-variant grid heat maps.

:func:`build_report` writes ``report.md``, ``report.json`` and the PNGs, one section
per function."""
from __future__ import annotations

import dataclasses
import datetime as _dt
import statistics as st
from collections import defaultdict
from pathlib import Path

from compsuite.eval.reports.plots import heat_map
from compsuite.eval.reports.tables import (markdown_table, mean_std_cell, paper_numbers,
                                           published_cell, write_report)

from .plots import similarity_maps

THRESHOLD = 0.95
#: the authors' Table 1 (paper/plot_1stage_performance.py in RobertCsordas/ctlpp): runs
#: whose IID accuracy is at most 0.5 did not converge and are left out, and the first 25
#: of the others are averaged.  report.json also keeps every seed's numbers.
CONVERGED_IID = 0.5
TABLE1_SEEDS = 25


def _published(cell: dict | None) -> str:
    return published_cell(None) if cell is None else published_cell(cell["mean"], cell["std"])


def build_report(study, profile: str, results: list[dict], out_dir: Path) -> list[Path]:
    """The whole study in ``out_dir``: ``report.md`` / ``report.json`` (Table 1, accuracy
    by length, representations and compatibility, the S grid) and the figures; returns
    the paths written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    table1 = [r for r in results if r["part"] == "table1"]
    grid = [r for r in results if r["part"] == "grid"]
    published = paper_numbers("ctlpp")
    groups: dict = defaultdict(list)
    for r in table1:
        groups[(r["architecture"], r["variant"])].append(r)
    report: dict = {"study": "ctlpp", "profile": profile,
                    "paper_source": published["table1"]["source"],
                    "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                    "table1": [], "figures": {}}
    rows_md = table1_section(study.architectures, groups,
                             sorted({r["variant"] for r in table1}), published, report)
    md = header(study, profile, published, report)
    if rows_md:
        md += ["## Table 1\n", rows_md]
    md += by_length_section(study.architectures, groups, table1)
    pngs = []
    md += representations_section(study.architectures, groups, out_dir, report, pngs)
    md += grid_section(study.architectures, grid, out_dir, report, pngs)
    report["runs"] = table1
    report["grid_runs"] = grid
    return write_report(out_dir, report, md) + pngs


def header(study, profile: str, published: dict, report: dict) -> list[str]:
    """The title, where the paper's numbers come from, and the task's sizes."""
    from compsuite.data_prep.ctlpp import CTLConfig

    paper, success = published["table1"], published["success_rate"]
    md = [f"# CTL++ (Csordás et al. 2022): {profile} profile\n",
          f"Paper numbers: {paper['source']}; the paper's share of seeds above "
          f"{THRESHOLD:.0%}: {success['source']}. Each cell: mean ± std over seeds of the "
          "accuracy on the IID and OOD test sets; the share of seeds whose OOD accuracy "
          f"exceeds {THRESHOLD:.0%}. As the authors' code makes Table 1, a seed whose IID "
          f"accuracy is at most {CONVERGED_IID} did not converge and is left out, and the "
          f"first {TABLE1_SEEDS} of the others count (report.json also lists every "
          "seed); a cell in parentheses is the mean over seeds none of which "
          "converged.\n"]
    prof = study.profile(profile)
    task = CTLConfig(**dataclasses.asdict(prof.settings.data)).as_args()
    task.pop("variant")
    report["task"] = task
    md.append("Task: " + ", ".join(f"{k} {v}" for k, v in task.items()) + ".\n")
    if profile != "paper":
        md.append(f"The {profile} profile shows every step working; its numbers are not "
                  f"comparable with the paper's. Profile: {prof.description}.\n")
    return md


def table1_section(archs: dict, groups: dict, variants: list[str], published: dict,
                   report: dict) -> str:
    """Table 1 (one row per architecture, six columns per variant), also filling
    ``report["table1"]``; an empty string without rows."""
    paper, success = published["table1"], published["success_rate"]
    head = ["model"]
    for v in variants:
        head += [f"{v} IID", f"{v} OOD", f"{v} OOD > {THRESHOLD:.0%}", f"{v} IID (paper)",
                 f"{v} OOD (paper)", f"{v} OOD > {THRESHOLD:.0%} (paper)"]
    rows = []
    for a in archs:
        if not any((a, v) in groups for v in variants):
            continue
        row = [archs[a]["paper_name"]]
        for v in variants:
            every = sorted(groups.get((a, v), []), key=lambda r: r["seed"])
            rs = [r for r in every if r["test_iid"]["accuracy"] > CONVERGED_IID][:TABLE1_SEEDS]
            iid = [r["test_iid"]["accuracy"] for r in rs]
            ood = [r["test_ood"]["accuracy"] for r in rs]
            share = sum(x > THRESHOLD for x in ood) / len(ood) if ood else None
            left_out = len(every) - len(rs)
            p_iid = paper["iid"].get(a, {}).get(v)
            p_ood = paper["ood"].get(a, {}).get(v)
            p_share = success["values"].get(a, {}).get(v)
            if not rs and every:   # no seed converged: every seed's, marked as such
                iid_cell = f"({mean_std_cell([r['test_iid']['accuracy'] for r in every])})"
                ood_cell = f"({mean_std_cell([r['test_ood']['accuracy'] for r in every])})"
            else:
                iid_cell, ood_cell = mean_std_cell(iid), mean_std_cell(ood)
            row += [iid_cell, ood_cell,
                    ("–" if share is None else f"{share:.0%} of {len(ood)}")
                    + (f" ({left_out} of {len(every)} left out)" if left_out else ""),
                    _published(p_iid), _published(p_ood),
                    "–" if p_share is None else f"{p_share:.0%} of 25"]
            report["table1"].append({"architecture": a, "variant": v, "seeds": len(rs),
                                     "seeds_run": len(every),
                                     "seeds_kept": [r["seed"] for r in rs],
                                     "iid": iid, "ood": ood, "share_above": share,
                                     "iid_every_seed": [r["test_iid"]["accuracy"]
                                                        for r in every],
                                     "ood_every_seed": [r["test_ood"]["accuracy"]
                                                        for r in every],
                                     "paper_iid": p_iid, "paper_ood": p_ood,
                                     "paper_share_above": p_share})
        rows.append(row)
    return markdown_table(head, rows) if rows else ""


def by_length_section(archs: dict, groups: dict, table1: list[dict]) -> list[str]:
    """Accuracy by number of composed functions, per model, variant and test set."""
    len_rows = []
    lengths = sorted({int(n) for r in table1 for split in ("test_iid", "test_ood")
                      for n in r[split]["by_length"]})
    for (a, v), rs in sorted(groups.items()):
        for split in ("test_iid", "test_ood"):
            by: dict = defaultdict(list)
            for r in rs:
                for n, d in r[split]["by_length"].items():
                    by[n].append(d["accuracy"])
            len_rows.append([archs[a]["paper_name"], v, split.replace("test_", "").upper()]
                            + [mean_std_cell(by.get(str(n), [])) for n in lengths])
    if not len_rows:
        return []
    return ["\nAccuracy by number of composed functions:\n",
            markdown_table(["model", "variant", "test"] + [str(n) for n in lengths], len_rows)]


def representations_section(archs: dict, groups: dict, out_dir: Path, report: dict,
                            pngs: list[Path]) -> list[str]:
    """Similarity maps and the compatibility matrix of the first seed of each model and
    variant (section 4.1, figures 3, 6, 9-11), and the mean similarities."""
    if not groups:
        return []
    md = ["\n## Representations and compatibility (section 4.1, figures 3, 6, 9-11)\n"]
    sim_rows = []
    for (a, v), rs in sorted(groups.items()):
        r = min(rs, key=lambda x: x["seed"])
        stem = f"{v}_{r['run']}_seed{r['seed']}"
        if "compatibility" not in r:
            continue
        c = r["compatibility"]
        g = heat_map(c["matrix"], c["groups"], out_dir / f"compatibility_{stem}.png",
                     title=f"{archs[a]['paper_name']}, {v}: accuracy of g(f(x))",
                     xlabel="group of g (second)", ylabel="group of f (first)")
        pngs.append(g)
        report["figures"][stem] = [g.name]
        reps = r.get("representations") or {}
        if "mean_similarity" not in reps:   # answers from files, a program without features
            md.append(f"{archs[a]['paper_name']}, variant {v} (seed {r['seed']}): "
                      f"![compatibility]({g.name}); representations: "
                      f"{reps.get('unavailable', 'not computed')}\n")
            continue
        f = similarity_maps(reps, out_dir / f"similarity_{stem}.png")
        pngs.append(f)
        report["figures"][stem].insert(0, f.name)
        ms = reps["mean_similarity"]
        sim_rows.append([archs[a]["paper_name"], v, r["seed"], ms.get("within"),
                         ms.get("between")])
        md.append(f"{archs[a]['paper_name']}, variant {v} (seed {r['seed']}): "
                  f"![similarity]({f.name}) ![compatibility]({g.name})\n")
    if sim_rows:
        md += ["\nMean cosine similarity of the representations of one symbol produced by "
               "different functions, within a group and between groups:\n",
               markdown_table(["model", "variant", "seed", "within groups",
                               "between groups"], sim_rows)]
    return md


def grid_section(archs: dict, grid: list[dict], out_dir: Path, report: dict,
                 pngs: list[Path]) -> list[str]:
    """Variant S: mean OOD accuracy over shared functions x shared symbols, per model
    (figures 4, 7, 8), also in ``report["grid"]``."""
    if not grid:
        return []
    md = ["\n## Variant S: OOD accuracy over shared functions × shared symbols "
          "(figures 4, 7, 8)\n"]
    report["grid"] = []
    for a in archs:
        rs = [r for r in grid if r["architecture"] == a]
        if not rs:
            continue
        ks = sorted({r["shared_functions"] for r in rs})
        ms = sorted({r["shared_symbols"] for r in rs})
        cell: dict = defaultdict(list)
        for r in rs:
            cell[(r["shared_functions"], r["shared_symbols"])].append(r["test_ood"]["accuracy"])
        matrix = [[st.fmean(cell[(k, m)]) if cell.get((k, m)) else None for m in ms]
                  for k in ks]
        f = heat_map(matrix, [str(k) for k in ks], out_dir / f"grid_{a}.png",
                     col_labels=[str(m) for m in ms],
                     title=f"{archs[a]['paper_name']}: OOD accuracy, variant S",
                     xlabel="shared symbols", ylabel="shared functions")
        pngs.append(f)
        report["grid"].append({"architecture": a, "shared_functions": ks,
                               "shared_symbols": ms, "ood": matrix, "plot": f.name})
        md += [f"\n{archs[a]['paper_name']} (mean over {len(rs) // max(len(cell), 1)} "
               "seed(s)):\n",
               markdown_table(["shared functions \\ symbols"] + [str(m) for m in ms],
                              [[str(k)] + row for k, row in zip(ks, matrix)]),
               f"\n![grid]({f.name})\n"]
    return md
