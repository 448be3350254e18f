"""The NLI report (eval/nli/report.py) on hand-made results: our cells (mean ± std over
seeds) beside the paper's numbers, cited by table; the plot; missing parts; no results."""
import json

from compsuite.registry import get_study
from compsuite.eval.nli.report import build_report


def _result(model, variant="original", augment="none", seed=1, whole=80.0, cs7=50.0,
            soswap=(90.0, 5.0, 5.0), adversaries=True):
    cs = {"0.5": {"accuracy": cs7 + 10, "n": 30}, "0.6": {"accuracy": cs7 + 5, "n": 20},
          "0.7": {"accuracy": cs7, "n": 10}}
    r = {"run": f"{model}-{variant}-{augment}", "seed": seed, "dataset": "synthetic",
         "dataset_label": "synthetic NLI corpus (scaled down, not SNLI)", "model": model,
         "variant": variant, "augment": augment,
         "eval": {"synthetic": {"score": {"whole": whole, "n": 100, "cs": cs, "signature": "s"},
                                "by_lambda": [{"lambda": 0.0, "accuracy": whole, "n": 100},
                                              {"lambda": 0.7, "accuracy": cs7, "n": 10}]}},
         "reference_rows": {"synthetic": {
             "n": 100, "human": None,
             "majority": {"whole": 40.0, "cs": {k: {"accuracy": 10.0, "n": v["n"]}
                                                for k, v in cs.items()}},
             "lexical": {"whole": 70.0, "cs": {k: {"accuracy": 0.0, "n": v["n"]}
                                               for k, v in cs.items()}},
             "cs_sizes": {"0.5": 30, "0.6": 20, "0.7": 10, "0.95": 2},
             "high_lms_examples": [{"premise": "A dog chases a cat .",
                                    "hypothesis": "A cat chases a dog .", "gold": "contradiction",
                                    "lexical_prediction": "entailment", "lms": 0.97}]}},
         "lexical_signature": "features:p+h+cross|C:1"}
    if adversaries:
        e, c, n = soswap
        r["adversaries"] = {"soswap": {"shares": {"entailment": e, "contradiction": c,
                                                  "neutral": n}, "n": 20},
                            "addamod": {"shares": {"entailment": 10.0, "contradiction": 0.0,
                                                   "neutral": 90.0}, "n": 20}}
    return r


def test_tables_beside_the_paper(tmp_path):
    results = []
    for seed, (whole, cs7) in enumerate([(90.0, 60.0), (94.0, 70.0)], 1):
        results.append(_result("ESIM", seed=seed, whole=whole, cs7=cs7))
        results.append(_result("ESIM", "bow", seed=seed, whole=whole - 4, cs7=cs7 - 30))
    results.append(_result("ESIM", augment="soswap", soswap=(1.0, 99.0, 0.0)))
    results.append(_result("DAM", adversaries=False))
    written = build_report(get_study("nli"), "quick", results, tmp_path)
    assert written == [tmp_path / "report.json", tmp_path / "report.md",
                       tmp_path / "accuracy_by_lambda.png"]
    md = (tmp_path / "report.md").read_text()
    # mean ± sample std over the two seeds: whole 92 ± 2.83, CS_0.7 65 ± 7.07
    assert "| ESIM " in md and "92.00 ± 2.83" in md and "65.00 ± 7.07" in md
    assert "88.00 ± 2.83" in md and "35.00 ± 7.07" in md          # ESIM (BoW)
    assert "ESIM + adv. SOSWAP" in md and "0.9 / 99.1 / 0" in md  # Table 4, the paper's row
    assert "88.17 / 62.76 / 58.58 / 55.28" in md                 # Table 5's ESIM, SNLI
    assert "55 / 0.4 / 44.6" in md                               # Table 2's DIIN ADDAMOD
    assert "Nie et al. (2019), Table 2" in md and "Table 5" in md
    assert "not comparable" in md and "A cat chases a dog" in md
    rep = json.loads((tmp_path / "report.json").read_text())
    t5 = rep["tables"]["synthetic"]["table5"]["synthetic"]
    assert t5["rows"]["ESIM (BoW)"]["ours"][0] == "88.00 ± 2.83"
    assert t5["cs_sizes"]["0.95"] == 2
    assert rep["tables"]["synthetic"]["table2"]["DAM"]["soswap"] is None
    png = (tmp_path / "accuracy_by_lambda.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_results(tmp_path):
    assert build_report(get_study("nli"), "quick", [], tmp_path) == [
        tmp_path / "report.json", tmp_path / "report.md"]
    assert "No results" in (tmp_path / "report.md").read_text()
