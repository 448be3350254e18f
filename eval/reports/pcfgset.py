"""PCFG SET report: task accuracy beside Table 3 of the paper, and Figure 7's
accuracy by input length, number of functions and depth."""
from __future__ import annotations

import datetime as _dt
import json
import statistics as st
from collections import defaultdict
from pathlib import Path

from compsuite.data_prep.common.io import atomic_open

from .plots import accuracy_by_feature
from .tables import fmt, markdown_table, paper_numbers


def build_report(results: list[dict], out_dir: str | Path, profile: str, study_title: str,
                 architectures: dict) -> dict:
    """Write ``results.json``, ``table.md`` and ``accuracy_by_structure.png`` into ``out_dir``."""
    if not results:
        raise ValueError("no results to report")
    out_dir = Path(out_dir)
    paper = paper_numbers("pcfgset")["task_accuracy"]
    groups: dict = defaultdict(list)
    for r in results:
        groups[(r["architecture"], r["toolkit"])].append(r)
    order = list(architectures)
    rows, summary = [], []
    for (arch, toolkit), rs in sorted(groups.items(), key=lambda kv: (order.index(kv[0][0]),
                                                                      kv[0][1])):
        accs = [r["accuracy"] for r in rs]
        mean = st.fmean(accs)
        std = st.stdev(accs) if len(accs) > 1 else None
        entry = {"architecture": arch, "toolkit": toolkit, "paper_setup": rs[0]["paper_setup"],
                 "seeds": [r["seed"] for r in rs], "accuracy_mean": mean, "accuracy_std": std,
                 "n": rs[0]["n"], "dataset": rs[0]["dataset_label"],
                 "paper_accuracy": paper["values"].get(arch), "signature": rs[0]["signature"]}
        summary.append(entry)
        acc = fmt(mean) + (f" ± {fmt(std)}" if std is not None else "")
        rows.append([architectures[arch]["paper_name"], _toolkit_name(toolkit, rs[0]["paper_setup"]),
                     acc, len(rs), rs[0]["n"], fmt(paper["values"].get(arch))])
    datasets = sorted({r["dataset_label"] for r in results})
    table = markdown_table(
        ["model", "toolkit", "task accuracy (ours)", "seeds", "test n",
         "paper (Table 3)"], rows)
    md = [f"# {study_title}: {profile} profile\n",
          f"Our numbers are on: {'; '.join(datasets)}.  ",
          f"Paper numbers: {paper['source']}, full PCFG SET.  ",
          "Sequence accuracy (exact match), greedy decoding; signature "
          f"`{summary[0]['signature']}`.\n", table]
    if profile != "paper":
        md.append("\nThe quick profile trains small models on a scaled-down PCFG SET for a few "
                  "minutes on CPU: its numbers show the pipeline working end to end and are "
                  "not comparable with the paper's.\n")
    significance = _pairwise_welch(groups, architectures)
    if any(t["t"] is not None for t in significance):
        md.append("\nWelch's t-tests on per-seed task accuracy:\n")
        md.append(markdown_table(["model A", "model B", "t", "p", "seeds"],
                                 [[t["a"], t["b"], t["t"], t["p"], f"{t['n_a']}+{t['n_b']}"]
                                  for t in significance if t["t"] is not None]))
    md.append("\n![accuracy by input structure](accuracy_by_structure.png)\n")
    series = {f"{architectures[r['architecture']]['paper_name']} ({r['toolkit']}, seed {r['seed']})":
              r.get("breakdown", {}) for r in results}
    out_dir.mkdir(parents=True, exist_ok=True)
    plot = accuracy_by_feature(series, out_dir / "accuracy_by_structure.png",
                               title=f"{study_title} ({'; '.join(datasets)})")
    report = {"study": "pcfgset", "profile": profile,
              "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
              "paper_source": paper["source"], "summary": summary,
              "significance": significance, "runs": results, "plot": plot.name}
    with atomic_open(out_dir / "results.json") as fh:
        json.dump(report, fh, indent=2)
    with atomic_open(out_dir / "table.md") as fh:
        fh.write("\n".join(md))
    return report


def _pairwise_welch(groups: dict, architectures: dict) -> list[dict]:
    """Welch's t-test for every pair of (architecture, toolkit) groups."""
    from compsuite.eval.metrics.significance import welch

    keys = sorted(groups)
    out = []
    for i, ka in enumerate(keys):
        for kb in keys[i + 1:]:
            res = welch([r["accuracy"] for r in groups[ka]], [r["accuracy"] for r in groups[kb]])
            out.append({"a": f"{architectures[ka[0]]['paper_name']} ({ka[1]})",
                        "b": f"{architectures[kb[0]]['paper_name']} ({kb[1]})", **res})
    return out


def _toolkit_name(toolkit: str, paper_setup: bool) -> str:
    name = {"fairseq": "fairseq", "onmt": "OpenNMT-py"}[toolkit]
    return name + (" (paper's)" if paper_setup else "")


#: The headline number of each evaluation kind (Table 3's rows).
HEADLINE = {
    "accuracy": ("accuracy", lambda r: r["accuracy"]),
    "consistency": ("consistency", lambda r: r["consistency"]["consistency"]),
    "localism": ("consistency", lambda r: r["consistency"]["consistency"]),
    "overgeneralisation": ("peak overgeneralisation", lambda r: r["peak_overgeneralisation"]),
    "per_function": ("mean accuracy over functions", lambda r: r["accuracy"]),
}


def build_test_report(results: list[dict], out_dir: str | Path, test: str,
                      architectures: dict) -> dict:
    """``<test>.json`` and ``<test>.md`` in ``out_dir``: the test's headline number per
    model, mean ± std over seeds."""
    if not results:
        raise ValueError(f"no results for test {test}")
    out_dir = Path(out_dir)
    kind = results[0]["evaluation"]
    label, value = HEADLINE[kind]
    groups: dict = defaultdict(list)
    for r in results:
        groups[(r["architecture"], r["toolkit"])].append(value(r))
    rows, summary = [], []
    for (arch, toolkit), vals in sorted(groups.items()):
        mean = st.fmean(vals)
        std = st.stdev(vals) if len(vals) > 1 else None
        summary.append({"architecture": arch, "toolkit": toolkit, label: mean, "std": std,
                        "seeds": len(vals)})
        rows.append([architectures[arch]["paper_name"], toolkit,
                     fmt(mean) + (f" ± {fmt(std)}" if std is not None else ""), len(vals)])
    md = [f"# PCFG SET {test}\n", f"Task: {results[0]['dataset_label']}.  ",
          f"Evaluation: {kind}.\n", markdown_table(["model", "toolkit", label, "seeds"], rows)]
    report = {"study": "pcfgset", "test": test, "evaluation": kind, "summary": summary,
              "runs": results}
    out_dir.mkdir(parents=True, exist_ok=True)
    if kind == "per_function":
        from .plots import accuracy_per_function

        series = {f"{architectures[r['architecture']]['paper_name']} ({r['toolkit']}, seed "
                  f"{r['seed']})": r["per_function"] for r in results}
        report["plot"] = accuracy_per_function(series, out_dir / f"{test}.png").name
        md.append(f"\n![accuracy per function]({report['plot']})\n")
    with atomic_open(out_dir / f"{test}.json") as fh:
        json.dump(report, fh, indent=2)
    with atomic_open(out_dir / f"{test}.md") as fh:
        fh.write("\n".join(md))
    return report
