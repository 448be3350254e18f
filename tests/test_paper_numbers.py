"""The papers' numbers in eval/<study>/paper_numbers.yaml are the papers' own: every
figure marked as read from a paper is found in that paper's text
(../shared/papers, plain-text renderings), in the same line as its row's other figures.
Skips, naming the path, when the papers are not there."""
import pytest

from compsuite.eval.reports.tables import paper_numbers

from conftest import REFERENCE

PAPERS = REFERENCE.parent / "papers"
MODELS = ("lstms2s", "convs2s", "transformer")


def paper_lines(name):
    p = PAPERS / name
    if not p.exists():
        pytest.skip(f"paper text not available: {p}")
    return p.read_text(encoding="utf-8").splitlines()


def forms(x):
    """How a figure may be printed: 0.73, or 73% for a share."""
    return (f"{x:.2f}", f"{round(x * 100)}%")


def on_one_line(lines, values):
    """Some line holds every value (in any printed form)."""
    return any(all(any(f in ln for f in forms(v)) for v in values) for ln in lines)


def test_pcfgset_table3_means_and_stds_are_in_the_paper():
    lines = paper_lines("hupkes2020_compositionality_decomposed_pcfgset.txt")
    t3 = paper_numbers("pcfgset")["table3"]
    std_rows = {"task_accuracy": "Task accuracy", "systematicity": "Systematicity",
                "productivity": "Productivity",
                "substitutivity_equally_distributed": "Substitutivity, equally distributed",
                "substitutivity_primitive": "Substitutivity, primitive",
                "localism": "Localism", "overgeneralisation": "Overgeneralisation"}
    assert set(t3["rows"]) == set(std_rows)
    for key, row in t3["rows"].items():
        assert row["source"]
        means = [row["mean"][m] for m in MODELS]
        if row.get("mean_from_paper") is not False:
            assert on_one_line(lines, means), (key, means)
        stds = " ".join(f"{row['std'][m]:.2f}" for m in MODELS)
        assert f"{std_rows[key]} {stds}" in lines, (key, stds)


def test_pcfgset_corrected_figures():
    rows = paper_numbers("pcfgset")["table3"]["rows"]
    assert [rows["substitutivity_primitive"]["mean"][m] for m in MODELS] == [0.62, 0.61, 0.88]
    assert [rows["substitutivity_equally_distributed"]["mean"][m] for m in MODELS] == [0.74, 0.96, 0.98]
    assert [rows["productivity"]["mean"][m] for m in MODELS] == [0.30, 0.32, 0.56]
    assert rows["systematicity"]["mean_from_paper"] is False


def test_pcfgset_other_tables_are_in_the_paper():
    lines = paper_lines("hupkes2020_compositionality_decomposed_pcfgset.txt")
    nums = paper_numbers("pcfgset")
    for fn, per in nums["table5"]["rows"].items():
        printed = " ".join(f"{per[m][k]:.2f}" for m in MODELS for k in ("ED", "P", "other"))
        assert any(ln.endswith(printed) for ln in lines), (fn, printed)
    for key, rows in (("table4_std", nums["table4_std"]["rows"]),
                      ("table6_std", nums["table6_std"]["rows"])):
        for name, per in rows.items():
            printed = " ".join(f"{per[m]:.2f}" for m in MODELS)
            assert any(ln.endswith(printed) for ln in lines), (key, name, printed)
    for key in ("productivity_eos_problem", "productivity_relative_drop"):
        assert on_one_line(lines, [nums[key]["values"][m] for m in MODELS]), key
    for split, stats in nums["table1"].items():
        if split == "source":
            continue
        printed = " ".join(f"{v}" for k in ("depth", "length", "n_functions") for v in stats[k])
        assert any(ln.endswith(printed) for ln in lines), (split, printed)


def test_ctlpp_numbers_are_in_the_paper():
    lines = paper_lines("csordas2022_ctlpp.txt")
    text = "\n".join(lines)
    nums = paper_numbers("ctlpp")
    for split in ("iid", "ood"):
        for arch, per in nums["table1"][split].items():
            for variant, cell in per.items():
                assert f"{cell['mean']:.2f}\\pm {cell['std']:.2f}" in text, (split, arch, variant)
    # one line per model and variant holds the IID and then the OOD cell
    for arch, label in (("bilstm", "Bi-LSTM"), ("transformer", "Transformer"), ("ndr", "NDR")):
        for variant in ("A", "R"):
            iid, ood = (nums["table1"][s][arch][variant] for s in ("iid", "ood"))
            want = [f"{iid['mean']:.2f}±{iid['std']:.2f}", f"{ood['mean']:.2f}±{ood['std']:.2f}"]
            assert any(all(w in ln for w in want) and ln.split()[0] in (label, variant)
                       for ln in lines), (arch, variant, want)
    for arch, row in nums["table2"].items():
        if arch == "source":
            continue
        label = {"bilstm": "Bi-LSTM", "transformer": "Transformer", "ndr": "NDR"}[arch]
        printed = f"{label} {row['params'] // 1000}k {row['steps'] // 1000}k {row['runtime']}"
        assert printed in lines, printed
    rates = nums["success_rate"]["values"]
    assert on_one_line(lines, [rates["ndr"]["R"], rates["transformer"]["R"]])
    assert any("0% for the ‘A’ variant" in ln for ln in lines)


def _printed(x):
    """How the NLI paper prints a figure: 86.47, 92.5, 84, 0.0."""
    return {f"{x:.2f}", f"{x:.1f}", f"{x:g}", f"{int(x)}" if float(x).is_integer() else f"{x:g}"}


def _row_on_a_line(lines, name, values):
    """A line that starts with the row's name (after a row number) holds the values in
    order, each as printed."""
    import re

    for ln in lines:
        cells = [c.strip() for c in re.split(r"\t|/", re.sub(r"</?u>", "", ln)) if c.strip()]
        if cells and cells[0].isdigit():
            cells = cells[1:]
        if not cells or cells[0] != name:
            continue
        nums = cells[1:]
        if len(nums) >= len(values) and all(
                v is None and n in {"_", "-", "–"} or v is not None and n in _printed(v)
                for v, n in zip(values, nums)):
            return True
    return False


def test_nli_tables_are_in_the_paper():
    lines = paper_lines("nie2019_nli_compositionality_sensitivity.txt")
    nums = paper_numbers("nli")
    for model, row in nums["table5"]["rows"].items():
        values = row["snli"] + row["mnli_matched"] + row["mnli_mismatched"]
        assert _row_on_a_line(lines, model, values), model
    for model, row in nums["table2"].items():
        values = ([row["snli_dev"]] if row["snli_dev"] is not None else []) + \
            row["soswap"] + row["addamod"]
        assert _row_on_a_line(lines, model, values) or _row_on_a_line(
            lines, model, [None] + values), model
    for model, row in nums["table3"].items():
        values = [row[d][k] for d in ("snli", "mnli_matched", "mnli_mismatched")
                  for k in ("original", "bow", "ws")]
        assert _row_on_a_line(lines, model, values), model
    names = {"none": "None", "soswap": "SOSWAP", "addamod": "ADDAMOD"}
    for key, row in nums["table4"].items():
        assert _row_on_a_line(lines, names[key], row["soswap"] + row["addamod"]), key
    text = "\n".join(lines)
    assert "971 examples" in text and "1783 examples" in text
    assert "has 999 examples" in text and "only has 148 examples" in text
    assert nums["adversary_counts"] == {"soswap": 971, "addamod": 1783}
