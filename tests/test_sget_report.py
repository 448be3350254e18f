"""The SGET report (eval/sget/report.py) on hand-made results: 2 seeds of a Transformer,
four patterns (one without partial match, one split by complement clause, one split by
length) and a model trained without concatenated sentences."""
import copy
import json
from types import SimpleNamespace

import pytest

from compsuite.eval.sget.report import build_report, make_report
from compsuite.eval.reports.tables import paper_numbers

# our (test) pattern names -> the paper's Table 10 labels and Table 3 groups
LABELS = {"t_subj_obj": "Subj → Obj (common)", "t_prim_verb": "Prim → Verb",
          "t_pp_subj": "PP in Subj", "t_cp_deeper": "CP recursion deeper"}
GROUPS = {"t_subj_obj": "Lexical", "t_prim_verb": "Lexical", "t_pp_subj": "Structural",
          "t_cp_deeper": "Structural"}
SIG = "nrefs:1|case:mixed|eff:no|tok:none|smooth:exp|version:2.4.0|seg:sudachi-C-core"


def score(exact, bleu, partial, n):
    return {"exact_match": exact, "bleu": bleu, "partial_match": partial, "n": n}


def result(seed, part="main", gen_exact=0.48, pp=0.30, cp=0.90, arch="transformer"):
    return {
        "run": f"{arch}_{part}", "architecture": arch, "toolkit": "onmt", "seed": seed,
        "part": part, "dataset": f"sget_{part}", "dataset_label": f"SGET {part} (test data)",
        "checkpoint_selection": {"metric": "dev exact match",
                                 "by_step": {"1000": 0.5, "2000": 0.9 + seed / 100},
                                 "best_step": 2000},
        "splits": {
            "test": {"exact_match": 0.99, "bleu": {"score": 99.6, "signature": SIG}, "n": 50},
            "gen": {
                "exact_match": gen_exact, "bleu": {"score": 84.0, "signature": SIG}, "n": 6000,
                "per_pattern": {
                    "t_subj_obj": score(0.9, 97.0, 0.92, 2000),
                    "t_prim_verb": score(0.4, 70.0, None, 1000),
                    "t_pp_subj": score(pp, 70.0, pp + 0.02, 2000),
                    "t_cp_deeper": score(cp, 80.0, None, 1000),
                },
                "by_cp": {"t_pp_subj": {"in_cp": score(0.2, 76.0, 0.25, 1000),
                                        "not_in_cp": score(0.04, 66.0, 0.05, 1000)}},
                "by_length": {"t_cp_deeper": {"longer": score(0.04, 79.0, None, 400),
                                              "shorter": score(0.07, 81.0, None, 600)}},
            }}}


def results(no_concat=True, no_restrictions=False):
    rs = [result(1, gen_exact=0.48, pp=0.30, cp=0.90),
          result(2, gen_exact=0.50, pp=0.40, cp=0.40)]
    if no_concat:
        rs += [result(1, "no_concatenation", cp=0.01), result(2, "no_concatenation", cp=0.02)]
    if no_restrictions:
        rs += [result(1, "no_restrictions", gen_exact=0.45)]
    return rs


def section(md, heading):
    assert heading in md, heading
    text = md.split(heading, 1)[1].split("\n## ", 1)[0]
    return text.split("\n### ", 1)[0] if heading.startswith("### ") else text


def rows(md, heading):
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in section(md, heading).splitlines() if line.startswith("|")]


def row(md, heading, *first):
    found = [r for r in rows(md, heading) if r[:len(first)] == list(first)]
    assert len(found) == 1, (first, rows(md, heading))
    return found[0]


def col(md, heading, name):
    return rows(md, heading)[0].index(name)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("sget_report")
    rep, written = make_report("SGET test", "quick", results(), out, labels=LABELS,
                               groups=GROUPS)
    assert written == [out / "report.json", out / "report.md", out / "per_pattern.png"]
    return out, rep, (out / "report.md").read_text(encoding="utf-8")


def test_files_exist(built):
    out, _, _ = built
    for name in ("report.md", "report.json", "per_pattern.png"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    assert (out / "per_pattern.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(out.glob(".*tmp*"))   # atomic writes leave no temporaries


def test_table2_ours_and_paper(built):
    _, rep, md = built
    h = "## Table 2"
    r = row(md, h, "Transformer", "Gen.")
    # 48% and 50%: mean 49.0, sample std sqrt(2) = 1.41
    assert r[col(md, h, "Exact (%) ours")] == "49.0 ± 1.4"
    assert r[col(md, h, "Exact (%) paper")] == "48.7 ± 1.6"       # from the YAML
    assert r[col(md, h, "BLEU ours")] == "84.0 ± 0.0"
    assert r[col(md, h, "seeds")] == "2"
    # an architecture not trained, and Llama 2 printed as published
    assert row(md, h, "LSTM", "Gen.")[col(md, h, "Exact (%) ours")] == "–"
    assert row(md, h, "LSTM", "Gen.")[col(md, h, "Exact (%) paper")] == "9.6 ± 4.8"
    llama = row(md, h, "Llama 2", "Gen.")
    assert llama[col(md, h, "Exact (%) ours")] == "–"
    assert llama[col(md, h, "Exact (%) paper")] == "80.6 ± 0.5"
    gen = [e for e in rep["tables"]["table2"]["rows"]
           if e["architecture"] == "transformer" and e["split"] == "gen"][0]
    assert gen["exact"]["mean"] == pytest.approx(49.0)
    assert gen["exact"]["values"] == pytest.approx([48.0, 50.0])


def test_cites_paper_and_data_label(built):
    _, _, md = built
    assert "Kumon et al. (2024), Table 2" in md
    for n in (3, 6, 7, 10, 11):
        assert f"Table {n} (" in md
    assert "SGET main (test data)" in md
    assert "not comparable with the paper" in md


def test_table3_weighted_by_sentences(built):
    _, rep, md = built
    # Structural: PP in Subj (n 2000) and CP recursion deeper (n 1000)
    # seed 1: (0.30 * 2000 + 0.90 * 1000) / 3000 = 0.50; seed 2: (0.40 * 2000 + 0.40 * 1000)
    # / 3000 = 0.40; mean 45.0, std 7.07 (unweighted would give 60 and 40)
    h = "## Table 3"
    r = row(md, h, "Transformer", "Structural")
    assert r[col(md, h, "Exact (%) ours")] == "45.0 ± 7.1"
    assert r[col(md, h, "Exact (%) paper")] == "45.2 ± 2.3"
    assert r[col(md, h, "n")] == "3000"
    assert r[col(md, h, "patterns")] == f"2 of {sum(g == 'Structural' for g in GROUPS.values())}"
    # Lexical: (0.9 * 2000 + 0.4 * 1000) / 3000 = 73.33 both seeds
    lex = row(md, h, "Transformer", "Lexical")
    assert lex[col(md, h, "Exact (%) ours")] == "73.3 ± 0.0"
    # BLEU weighted the same way: (97 * 2000 + 70 * 1000) / 3000 = 88.0
    assert lex[col(md, h, "BLEU ours")] == "88.0 ± 0.0"
    # a group without patterns: no number
    assert row(md, h, "Transformer", "Lex. + Mor.")[col(md, h, "Exact (%) ours")] == "–"
    s = [e for e in rep["tables"]["table3"]["rows"] if e["group"] == "structural"][0]
    assert s["exact"]["values"] == pytest.approx([50.0, 40.0])
    assert "weighted by each pattern's number of sentences" in section(md, h)


def test_table10_partial_unscored_prints_dash(built):
    _, _, md = built
    h = "## Table 10"
    verb = row(md, h, "Prim → Verb")
    assert verb[col(md, h, "Exact (%) ours")] == "40.0 ± 0.0"
    assert verb[col(md, h, "Partial (%) ours")] == "–"
    assert verb[col(md, h, "Partial (%) paper")] == "–"
    assert verb[col(md, h, "Exact (%) paper")] == "40.5"
    pp = row(md, h, "PP in Subj")
    assert pp[col(md, h, "Exact (%) ours")] == "35.0 ± 7.1"
    assert pp[col(md, h, "Partial (%) ours")] == "37.0 ± 7.1"
    assert pp[col(md, h, "Partial (%) paper")] == "14.2"
    # a pattern without results, in the paper's order
    labels = [r[0] for r in rows(md, h)[2:]]
    assert labels[:2] == ["Subj → Obj (common)", "Subj → Obj (proper)"]
    assert len(labels) == len(paper_numbers("sget")["table10"]["rows"])
    assert row(md, h, "Subj → Obj (proper)")[col(md, h, "Exact (%) ours")] == "–"


def test_table11_by_cp(built):
    _, _, md = built
    h = "## Table 11"
    r = row(md, h, "Transformer", "PP in Subj in CP")
    assert r[col(md, h, "Exact (%) ours")] == "20.0 ± 0.0"
    assert r[col(md, h, "Exact (%) paper")] == "20.2"
    assert row(md, h, "Transformer", "PP in Subj not in CP")[col(md, h, "Exact (%) paper")] == "3.5"


def test_tables_6_and_7_only_with_no_concatenation(built, tmp_path):
    _, rep, md = built
    h = "## Table 6"
    r = row(md, h, "Transformer", "CP recursion deeper")
    assert r[col(md, h, "w.Concat ours")] == "65.0 ± 35.4"
    assert r[col(md, h, "wo.Concat ours")] == "1.5 ± 0.7"
    assert r[col(md, h, "w.Concat paper")] == "6.2 ± 1.4"
    assert r[col(md, h, "wo.Concat paper")] == "0.7 ± 0.3"
    assert row(md, h, "Transformer", "PP recursion deeper")[col(md, h, "w.Concat ours")] == "–"
    h7 = "## Table 7"
    r7 = row(md, h7, "Transformer", "CP recursion deeper", "Longer")
    assert r7[col(md, h7, "w.Concat ours")] == "4.0 ± 0.0"
    assert r7[col(md, h7, "w.Concat paper")] == "4.1 ± 0.6"
    assert "table6" in rep["tables"] and "table7" in rep["tables"]
    assert "## Table 5" not in md

    rep2, _ = make_report("SGET test", "quick", results(no_concat=False), tmp_path,
                          labels=LABELS, groups=GROUPS)
    md2 = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "Table 6" not in md2 and "Table 7" not in md2
    assert "table6" not in rep2["tables"] and "table7" not in rep2["tables"]


def test_table5_only_with_no_restrictions(tmp_path):
    make_report("SGET test", "paper", results(no_restrictions=True), tmp_path,
                labels=LABELS, groups=GROUPS)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    h = "## Table 5"
    assert row(md, h, "Transformer", "No", "Gen.")[col(md, h, "Exact (%) ours")] == "45.0"
    assert "79.1 ± 0.3" in section(md, h)           # Llama 2 as published
    assert "not comparable" not in md                # the paper profile


def test_report_json_round_trips(built):
    out, rep, _ = built
    loaded = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert loaded == rep
    assert loaded["tables"]["table2"]["source"].startswith("Kumon et al. (2024), Table 2")
    assert loaded["plot"] == "per_pattern.png"
    assert loaded["runs"] == results()


def test_signature_section(built):
    _, rep, md = built
    sig = section(md, "## Signature")
    assert SIG in sig and "dev exact match" in sig
    assert rep["signatures"]["bleu"] == {SIG: 8}
    steps = rep["signatures"]["checkpoint_selection"]
    assert {(s["part"], s["seed"], s["best_step"]) for s in steps} == {
        (p, s, 2000) for p in ("main", "no_concatenation") for s in (1, 2)}


def test_missing_data_never_raises(tmp_path):
    # no results at all
    rep, _ = make_report("SGET test", "quick", [], tmp_path / "empty", labels=LABELS,
                         groups=GROUPS)
    assert (tmp_path / "empty" / "per_pattern.png").is_file()
    assert rep["tables"]["table2"]["rows"]
    # patterns missing from one seed, partial scores absent, no BLEU dicts, an unknown
    # pattern and an unknown architecture
    rs = copy.deepcopy(results(no_concat=False))
    del rs[1]["splits"]["gen"]["per_pattern"]["t_pp_subj"]
    del rs[0]["splits"]["gen"]["by_cp"]
    rs[0]["splits"]["test"]["bleu"] = None
    rs[0]["splits"]["gen"]["per_pattern"]["not_in_table10"] = score(0.5, 50.0, None, 10)
    rs.append({**result(1, arch="gru"), "splits": {}})
    make_report("SGET test", "quick", rs, tmp_path / "partial", labels=LABELS, groups=GROUPS)
    md = (tmp_path / "partial" / "report.md").read_text(encoding="utf-8")
    h = "### Transformer (paper: Transformer)"
    assert row(md, h, "PP in Subj")[col(md, h, "Exact (%) ours")] == "30.0"
    assert row(md, h, "not_in_table10")[col(md, h, "Exact (%) paper")] == "–"
    # the unknown architecture: its own rows, all without numbers, no paper to compare
    g = "### gru (paper: gru)"
    assert row(md, g, "PP in Subj")[col(md, g, "Exact (%) ours")] == "–"
    assert row(md, g, "PP in Subj")[col(md, g, "Exact (%) paper")] == "–"
    assert "## Table 11" in md


def test_default_mapping_from_pattern_table(tmp_path):
    P = pytest.importorskip("compsuite.data_prep.sget.patterns")
    first = P.PATTERNS[0]
    r = result(1)
    r["splits"]["gen"]["per_pattern"] = {first.name: score(0.25, 60.0, 0.3, first.size)}
    r["splits"]["gen"]["by_cp"] = {}
    r["splits"]["gen"]["by_length"] = {}
    written = build_report(SimpleNamespace(title="SGET test", name="sget"), "quick", [r],
                           tmp_path)
    assert [p.name for p in written] == ["report.json", "report.md", "per_pattern.png"]
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert md.startswith("# SGET test: quick profile\n")
    h = "## Table 10"
    assert row(md, h, first.label)[col(md, h, "Exact (%) ours")] == "25.0"


def test_datasets_follow_the_results_order(tmp_path):
    """report.json's datasets per part come in the results' order (they came from a
    set, so their order changed with PYTHONHASHSEED)."""
    rs = results(no_restrictions=True)
    rep, _ = make_report("SGET test", "paper", rs, tmp_path, labels=LABELS, groups=GROUPS)
    assert list(rep["datasets"]) == ["main", "no_concatenation", "no_restrictions"]
    rep, _ = make_report("SGET test", "paper", rs[::-1], tmp_path, labels=LABELS, groups=GROUPS)
    assert list(rep["datasets"]) == ["no_restrictions", "no_concatenation", "main"]
