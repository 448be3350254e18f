"""PCFG SET report: Table 3 (every row beside the paper's), Tables 4-6 and Figures 7-10
analogues in ``report.md`` / ``report.json``; the task accuracy of every run in
``table.md`` / ``results.json`` (:func:`task_report`); one ``<test>.md`` /
``<test>.json`` per test (:func:`per_test_report`).

:func:`build_report` is the study's report builder; each table and figure is built by
a function of its own.
"""
from __future__ import annotations

import datetime as _dt
from collections import defaultdict
from pathlib import Path
from typing import Callable

from compsuite.eval.reports.plots import accuracy_by_feature, accuracy_per_function
from compsuite.eval.reports.tables import (fmt, markdown_table, mean_std, mean_std_cell,
                                           paper_numbers, published_cell, write_report)

from .plots import overgeneralisation_areas

#: The headline number of each evaluation kind (Table 3's rows).
HEADLINE = {
    "accuracy": ("accuracy", lambda r: r["accuracy"]),
    "consistency": ("consistency", lambda r: r["consistency"]["consistency"]),
    "localism": ("consistency", lambda r: r["consistency"]["consistency"]),
    "overgeneralisation": ("peak overgeneralisation", lambda r: r["peak_overgeneralisation"]),
    "per_function": ("mean accuracy over functions", lambda r: r["accuracy"]),
    "by_length": ("accuracy over all lengths", lambda r: r["accuracy"]),
}

#: Table 3's rows in the paper's order: (row key, label, test name or None for the task).
TABLE3 = [("task_accuracy", "task accuracy", None),
          ("systematicity", "systematicity", "systematicity"),
          ("productivity", "productivity", "productivity"),
          ("substitutivity_equally_distributed", "substitutivity, equally distributed",
           "substitutivity_equally_distributed"),
          ("substitutivity_primitive", "substitutivity, primitive", "substitutivity_primitive"),
          ("localism", "localism", "localism"),
          ("overgeneralisation", "overgeneralisation (peak)", "overgeneralisation")]

SUBSTITUTIVITY = ("substitutivity_equally_distributed", "substitutivity_primitive")


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


# ----------------------------------------------------------------------------- whole study
def build_report(study, profile: str, results: list[dict], out_dir: Path) -> list[Path]:
    """The whole PCFG SET study in one folder: ``report.md`` / ``report.json`` with
    Table 3, Tables 4-6 and Figures 7-10 analogues, plus the task-accuracy report
    (``table.md``) and one ``<test>.md`` per test; returns the paths written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    task_results = [r for r in results if r["part"] == "task"]
    test_results = {t: rs for t in study.tests
                    if (rs := [r for r in results if r["part"] == t])}
    paper = paper_numbers("pcfgset")["table3"]
    report: dict = {"study": "pcfgset", "profile": profile, "created": now(),
                    "paper_source": paper["source"], "table3": {}, "figures": {}}
    written: list[Path] = []
    archs = study.architectures
    who = labeller(archs)
    md = header(study, profile, task_results, test_results, paper)
    md += table3(study, profile, task_results, test_results, paper, report)
    md += task_section(study, profile, task_results, out_dir, report, written)
    md += table4(test_results, who, report)
    md += table5(test_results, who, report)
    md += table6(test_results, who, report)
    md += figure8(test_results, who, out_dir, report, written)
    md += figure9(test_results, who, out_dir, report, written)
    md += figure10(test_results, who, out_dir, report, written)
    for test, rs in test_results.items():
        written += per_test_report(rs, out_dir, test, archs)
    report["tests"] = test_results
    report["task_runs"] = task_results
    # the per_function test's own figure is Figure 8's file: each path once
    return list(dict.fromkeys(write_report(out_dir, report, md) + written))


def labeller(archs: dict) -> Callable[[dict], str]:
    """A result's label in the tables: "<model> (<toolkit>, seed <S>)"."""
    def who(r: dict) -> str:
        return f"{archs[r['architecture']]['paper_name']} ({r['toolkit']}, seed {r['seed']})"
    return who


def header(study, profile: str, task_results: list[dict],
           test_results: dict[str, list[dict]], paper: dict) -> list[str]:
    """The title, the data behind our numbers and the paper's, and the test runs."""
    labels = sorted({r["dataset_label"] for rs in [task_results, *test_results.values()]
                     for r in rs})
    md = [f"# PCFG SET (Hupkes et al. 2020): {profile} profile\n",
          f"Our numbers are on: {'; '.join(labels)}.  ",
          f"Paper numbers: {paper['source']}, full PCFG SET.  ",
          "Each cell is mean ± std over seeds (a single seed shows no std); the tests run on "
          f"the profile's test runs ({', '.join(study.test_runs(study.profile(profile)))}).\n"]
    if profile != "paper":
        md.append(f"The {profile} profile trains small models on a scaled-down PCFG SET for a "
                  "few minutes each on CPU: its numbers show every step working end to end and "
                  "are not comparable with the paper's.\n")
    return md


def table3(study, profile: str, task_results: list[dict],
           test_results: dict[str, list[dict]], paper: dict, report: dict) -> list[str]:
    """Table 3: every row (the task accuracy of the test runs, then each test's headline
    number) beside the paper's, where the paper's cells come from, and Welch's t-tests
    between architectures per row; fills ``report["table3"]`` and
    ``report["significance"]``."""
    archs = study.architectures
    test_runs = set(study.test_runs(study.profile(profile)))
    rows = []
    # a system the user brought has no paper column (the paper has no number of it)
    head = ["row"] + [h for a in archs for h in (f"{archs[a]['paper_name']} (ours)",
                                                  f"{archs[a]['paper_name']} (paper)")
                      [:1 if archs[a].get("evaluate_only") else 2]]
    significance = []
    for key, label, test in TABLE3:
        if test is None:
            rs = [r for r in task_results if r["run"] in test_runs
                  or archs[r["architecture"]].get("evaluate_only")]
            value = HEADLINE["accuracy"][1]
        else:
            rs = test_results.get(test, [])
            if not rs:
                continue
            value = HEADLINE[rs[0]["evaluation"]][1]
        per_arch = _by_arch(rs, value)
        published = paper["rows"].get(key, {})
        row, report["table3"][key] = table3_row(label, per_arch, published, archs)
        rows.append(row)
        significance += [{"row": label, **t} for t in _welch_between(per_arch, archs)]
    report["significance"] = significance
    if not any(report["table3"].values()):   # not a row of dashes: what there is
        return no_table3(study.test_runs(study.profile(profile)), task_results, archs)
    md = ["## Table 3: overview\n", markdown_table(head, rows),
          "\nThe paper's cells are mean ± std over its three runs; where they come from:\n"]
    md += [f"- {label}: {paper['rows'][key]['source']}"
           + (" (†: not read from the paper)" if paper["rows"][key].get("mean_from_paper") is False
              else "") for key, label, _ in TABLE3 if key in paper["rows"]]
    for name_, other in (paper.get("other_sources") or {}).items():
        md.append(f"- Also: {name_}: {fmt_values(other['mean'], archs)}; {other['source']}")
    md.append("")
    if significance:
        md += ["\nWelch's t-tests between architectures, per row:\n",
               markdown_table(["row", "model A", "model B", "t", "p"],
                              [[s["row"], s["a"], s["b"], s["t"], f"{s['p']:.3g}"]
                               for s in significance])]
    return md


def no_table3(test_runs: list[str], task_results: list[dict], archs: dict) -> list[str]:
    """In Table 3's place where none of its cells has a number of ours (no result of a
    test run, e.g. ``--parts task --runs`` of another run): says so, and shows the task
    accuracy of the runs there are (as ``table.md`` does)."""
    md = [f"## Table 3: no numbers of ours (no results of the test runs: "
          f"{', '.join(test_runs)})\n"]
    said = ("Table 3 shows the task accuracy and the tests of the profile's test runs; "
            "these results are of other runs.")
    if not task_results:
        return md + [said + "\n"]
    return md + [said + " Their task accuracy, beside the paper's Table 3 (as in "
                 "table.md):\n", task_table(task_results, archs)[0]]


def table3_row(label: str, per_arch: dict, published: dict, archs: dict
               ) -> tuple[list, dict]:
    """One row of Table 3 (ours and the paper's cell per architecture) and its entry in
    ``report["table3"]``."""
    row = [label]
    entry = {}
    for a in archs:
        vals = per_arch.get(a, {}).get("values", [])
        row += [mean_std_cell(vals)] + ([] if archs[a].get("evaluate_only")
                                        else [paper_cell(published, a)])
        if vals:
            mean, std = mean_std(vals)
            entry[a] = {"mean": mean, "std": std, "seeds": len(vals),
                        "toolkits": sorted(per_arch[a]["toolkits"]),
                        "paper": (published.get("mean") or {}).get(a),
                        "paper_std": (published.get("std") or {}).get(a)}
    return row, entry


def task_section(study, profile: str, task_results: list[dict], out_dir: Path,
                 report: dict, written: list[Path]) -> list[str]:
    """Task accuracy in both toolkits (:func:`task_report`) and Figure 7."""
    if not task_results:
        return []
    task = task_report(task_results, out_dir, profile, study.title, study.architectures)
    written += [out_dir / "results.json", out_dir / "table.md", out_dir / task["plot"]]
    report["task"] = {"summary": task["summary"], "significance": task["significance"]}
    report["figures"]["7"] = task["plot"]
    return ["\n## Task accuracy in both toolkits\n",
            "Every task run of the profile: see [table.md](table.md).\n",
            "\n### Figure 7: accuracy by input length, number of functions and depth\n",
            f"![Figure 7]({task['plot']})\n"]


def table4(test_results: dict[str, list[dict]], who, report: dict) -> list[str]:
    """Table 4: systematicity and productivity against the task model."""
    t4 = []
    for test in ("systematicity", "productivity"):
        for r in test_results.get(test, []):
            base = r.get("task_model") or {}
            t4.append([test, who(r), r["accuracy"], base.get("accuracy"),
                       r["eos_problem"]["contained_share"],
                       (base.get("eos_problem") or {}).get("contained_share"), r["n"]])
    if not t4:
        return []
    report["table4"] = t4
    return ["\n## Table 4 analogue: systematicity and productivity\n",
            "Accuracy of the model trained on the test's split and of the task model "
            "(trained on the task corpus, without the test's restriction) on the same test "
            "inputs, and the share of wrong outputs that are a contiguous part of the "
            "target (section 7.3's <eos> problem).\n",
            markdown_table(["test", "model", "accuracy (test split)", "accuracy (task model)",
                            "<eos> share (test split)", "<eos> share (task model)", "n"], t4)]


def table5(test_results: dict[str, list[dict]], who, report: dict) -> list[str]:
    """Table 5: embedding distances of each substituted function to its synonym."""
    t5 = []
    for test in SUBSTITUTIVITY:
        for r in test_results.get(test, []):
            for fn, d in (r.get("embedding_distances") or {}).get("distances", {}).items():
                t5.append([test.replace("substitutivity_", ""), who(r), fn, d["to_synonym"],
                           d["to_other_functions"]])
    if not t5:
        return []
    report["table5"] = t5
    return ["\n## Table 5 analogue: embedding distances\n",
            "Cosine distance between a function's input embedding and its synonym's, and "
            "the mean distance to the other functions' embeddings.\n",
            markdown_table(["condition", "model", "function", "to its synonym",
                            "to other functions (mean)"], t5)]


def table6(test_results: dict[str, list[dict]], who, report: dict) -> list[str]:
    """Table 6: the consistency breakdown of substitutivity and localism, and the
    consistency per substituted function."""
    t6 = []
    for test in (*SUBSTITUTIVITY, "localism"):
        for r in test_results.get(test, []):
            c = r["consistency"]
            t6.append([test, who(r), c["consistency"], c["consistent_correct"],
                       c["consistent_incorrect"], c["consistency_incorrect"], c["n"]])
    if not t6:
        return []
    report["table6"] = t6
    signature = (test_results.get("localism") or test_results.get("substitutivity_primitive")
                 or test_results.get("substitutivity_equally_distributed")
                 )[0]["consistency"]["signature"]
    md = ["\n## Table 6 analogue: consistency\n",
          "All pairs; pairs with equal correct outputs; pairs with equal wrong outputs; "
          "and, among pairs with at least one wrong output, the share with equal outputs "
          "(signature `" + signature + "`).\n",
          markdown_table(["test", "model", "consistency", "consistent correct",
                          "consistent incorrect", "consistency among incorrect", "n"], t6)]
    per_fn = [[t.replace("substitutivity_", ""), who(r), fn, b["consistency"], b["n"]]
              for t in SUBSTITUTIVITY for r in test_results.get(t, [])
              for fn, b in r["consistency"]["breakdown"].items()]
    if per_fn:
        md += ["\nConsistency per substituted function:\n",
               markdown_table(["condition", "model", "function", "consistency", "n"], per_fn)]
    return md


def figure8(test_results: dict[str, list[dict]], who, out_dir: Path, report: dict,
            written: list[Path]) -> list[str]:
    """Figure 8: accuracy per function."""
    rs = test_results.get("per_function")
    if not rs:
        return []
    plot = accuracy_per_function({who(r): r["per_function"] for r in rs},
                                 out_dir / "per_function.png")
    written.append(plot)
    report["figures"]["8"] = plot.name
    fns = list(rs[0]["per_function"])
    return ["\n### Figure 8: accuracy per function\n", f"![Figure 8]({plot.name})\n",
            markdown_table(["model"] + fns + ["mean"],
                           [[who(r)] + [r["per_function"][f] for f in fns] + [r["accuracy"]]
                            for r in rs])]


def figure9(test_results: dict[str, list[dict]], who, out_dir: Path, report: dict,
            written: list[Path]) -> list[str]:
    """Figure 9: memorisation against overgeneralisation over training, per run."""
    if not test_results.get("overgeneralisation"):
        return []
    report["figures"]["9"] = []
    md = ["\n### Overgeneralisation over training (exception inputs)\n"]
    for r in test_results["overgeneralisation"]:
        f = out_dir / f"overgeneralisation_{r['run']}_seed{r['seed']}.png"
        written.append(overgeneralisation_areas(r, f, title=who(r)))
        report["figures"]["9"].append(f.name)
        md.append(f"![overgeneralisation, {who(r)}]({f.name})\n")
    return md


def figure10(test_results: dict[str, list[dict]], who, out_dir: Path, report: dict,
             written: list[Path]) -> list[str]:
    """Figure 10: accuracy on strings of increasing length."""
    rs = test_results.get("increasing_string_length")
    if not rs:
        return []
    plot = accuracy_by_feature({who(r): r["breakdown"] for r in rs},
                               out_dir / "increasing_length.png",
                               title="single functions on strings of growing length",
                               labels={"length": "string length (symbols)"})
    written.append(plot)
    report["figures"]["10"] = plot.name
    lengths = sorted({int(n) for r in rs for n in r["breakdown"]["length"]})
    return ["\n### Figure 10: accuracy on strings of increasing length\n",
            f"![Figure 10]({plot.name})\n",
            markdown_table(["model"] + [str(n) for n in lengths],
                           [[who(r)] + [r["breakdown"]["length"][str(n)]["accuracy"]
                                        for n in lengths] for r in rs])]


def _by_arch(results: list[dict], value) -> dict[str, dict]:
    """architecture -> {"values": [...per seed], "toolkits": {...}}."""
    out: dict = defaultdict(lambda: {"values": [], "toolkits": set()})
    for r in results:
        out[r["architecture"]]["values"].append(value(r))
        out[r["architecture"]]["toolkits"].add(r["toolkit"])
    return out


def paper_cell(published: dict, arch: str) -> str:
    """A paper cell of Table 3: "0.79 ± 0.01"; a dagger marks a mean not read from the
    paper (its source says where it comes from)."""
    mean = (published.get("mean") or {}).get(arch)
    cell = published_cell(mean, (published.get("std") or {}).get(arch))
    return cell + (" †" if mean is not None and published.get("mean_from_paper") is False
                   else "")


def fmt_values(values: dict, archs: dict) -> str:
    return " / ".join(f"{archs[a]['paper_name']} {fmt(v)}" for a, v in values.items() if a in archs)


def _welch_between(per_arch: dict, archs: dict) -> list[dict]:
    """Welch's t-tests between architectures (those defined, i.e. >= 2 seeds each)."""
    pairs = _welch_pairs({archs[a]["paper_name"]: per_arch[a]["values"]
                          for a in archs if a in per_arch})
    return [p for p in pairs if p["t"] is not None]


# ----------------------------------------------------------------------------- task accuracy
def task_report(results: list[dict], out_dir: str | Path, profile: str, study_title: str,
                architectures: dict) -> dict:
    """Write ``results.json``, ``table.md`` and ``accuracy_by_structure.png`` into
    ``out_dir``: the task accuracy of every run beside Table 3, Welch's t-tests and
    Figure 7's accuracy by input length, number of functions and depth."""
    if not results:
        raise ValueError("no results to report")
    out_dir = Path(out_dir)
    table, summary, groups = task_table(results, architectures)
    paper = {"source": paper_numbers("pcfgset")["table3"]["source"]}
    datasets = sorted({r["dataset_label"] for r in results})
    md = [f"# {study_title}: {profile} profile\n",
          f"Our numbers are on: {'; '.join(datasets)}.  ",
          f"Paper numbers: {paper['source']}, full PCFG SET.  ",
          "Sequence accuracy (exact match), greedy decoding; signature "
          f"`{summary[0]['signature']}`.\n", table]
    if profile != "paper":
        md.append(f"\nThe {profile} profile trains small models on a scaled-down PCFG SET for "
                  "a few minutes on CPU: its numbers show the pipeline working end to end and are "
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
    report = {"study": "pcfgset", "profile": profile, "created": now(),
              "paper_source": paper["source"], "summary": summary,
              "significance": significance, "runs": results, "plot": plot.name}
    write_report(out_dir, report, md, "results.json", "table.md")
    return report


def task_table(results: list[dict], architectures: dict) -> tuple[str, list[dict], dict]:
    """The task accuracy of every run (architecture and toolkit) beside Table 3's: the
    markdown table, its summary (one entry per row) and the results by row."""
    table3 = paper_numbers("pcfgset")["table3"]
    paper = table3["rows"]["task_accuracy"]["mean"]
    groups: dict = defaultdict(list)
    for r in results:
        groups[(r["architecture"], r["toolkit"])].append(r)
    order = list(architectures)
    rows, summary = [], []
    for (arch, toolkit), rs in sorted(groups.items(), key=lambda kv: (order.index(kv[0][0]),
                                                                      kv[0][1])):
        accs = [r["accuracy"] for r in rs]
        mean, std = mean_std(accs)
        entry = {"architecture": arch, "toolkit": toolkit, "paper_setup": rs[0]["paper_setup"],
                 "seeds": [r["seed"] for r in rs], "accuracy_mean": mean, "accuracy_std": std,
                 "n": rs[0]["n"], "dataset": rs[0]["dataset_label"],
                 "paper_accuracy": paper.get(arch), "signature": rs[0]["signature"]}
        summary.append(entry)
        rows.append([architectures[arch]["paper_name"], _toolkit_name(toolkit, rs[0]["paper_setup"]),
                     mean_std_cell(accs), len(rs), rs[0]["n"], fmt(paper.get(arch))])
    table = markdown_table(["model", "toolkit", "task accuracy (ours)", "seeds", "test n",
                            "paper (Table 3)"], rows)
    return table, summary, groups


def _welch_pairs(groups: dict[str, list[float]]) -> list[dict]:
    """Welch's t-test for every pair of groups (label -> per-seed values), in order."""
    from compsuite.eval.metrics.significance import welch

    keys = list(groups)
    return [{"a": a, "b": b, **welch(groups[a], groups[b])}
            for i, a in enumerate(keys) for b in keys[i + 1:]]


def _pairwise_welch(groups: dict, architectures: dict) -> list[dict]:
    """Welch's t-test for every pair of (architecture, toolkit) groups."""
    return _welch_pairs({f"{architectures[a]['paper_name']} ({t})":
                         [r["accuracy"] for r in groups[(a, t)]] for a, t in sorted(groups)})


def _toolkit_name(toolkit: str, paper_setup: bool) -> str:
    from compsuite.toolkits import title

    return title(toolkit) + (" (paper's)" if paper_setup else "")


# ----------------------------------------------------------------------------- one test
def per_test_report(results: list[dict], out_dir: str | Path, test: str,
                architectures: dict) -> list[Path]:
    """``<test>.json`` and ``<test>.md`` in ``out_dir``: the test's headline number per
    model, mean ± std over seeds (and ``<test>.png`` for the per-function test);
    returns the paths written."""
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
        mean, std = mean_std(vals)
        summary.append({"architecture": arch, "toolkit": toolkit, label: mean, "std": std,
                        "seeds": len(vals)})
        rows.append([architectures[arch]["paper_name"], toolkit, mean_std_cell(vals), len(vals)])
    md = [f"# PCFG SET {test}\n", f"Task: {results[0]['dataset_label']}.  ",
          f"Evaluation: {kind}.\n", markdown_table(["model", "toolkit", label, "seeds"], rows)]
    report = {"study": "pcfgset", "test": test, "evaluation": kind, "summary": summary,
              "runs": results}
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    if kind == "per_function":
        series = {f"{architectures[r['architecture']]['paper_name']} ({r['toolkit']}, seed "
                  f"{r['seed']})": r["per_function"] for r in results}
        written.append(accuracy_per_function(series, out_dir / f"{test}.png"))
        report["plot"] = written[-1].name
        md.append(f"\n![accuracy per function]({report['plot']})\n")
    return write_report(out_dir, report, md, f"{test}.json", f"{test}.md") + written
