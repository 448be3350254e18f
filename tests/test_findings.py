"""The papers' findings checked seed by seed (eval/reports/findings.py and each study's
eval/<study>/findings.py), on hand-made results: the verdict per seed, the spread of
each number over seeds, seeds where a finding cannot be measured, and the files the
report writes beside report.md."""
import json
import statistics

import pytest

from compsuite.eval.reports import findings as fnd
from compsuite.registry import get_study


def _always(value_of_seed):
    """A finding that holds where the seed's value is above 0.5."""
    def check(results):
        (r,) = results
        if r["v"] is None:
            raise fnd.Missing("no value")
        return fnd.Check(r["v"] > 0.5, {"v": r["v"], "steps": 10})
    return fnd.Finding("above half", "v is above one half", "Table 9", "v > 0.5", check)


def test_verdict_and_spread_over_seeds(tmp_path):
    results = [{"seed": 3, "v": 0.9}, {"seed": 1, "v": 0.7}, {"seed": 2, "v": 0.2},
               {"seed": 4, "v": None}]
    (f,) = fnd.evaluate([_always(None)], results)
    assert f["holding"] == [1, 3] and f["failing"] == [2] and f["missing"] == [4]
    assert f["status"] == "holds on 2 of 3 seeds (not on seed 2); not measured on seed 4"
    v = f["values"]["v"]
    assert v["per_seed"] == {1: 0.7, 2: 0.2, 3: 0.9}
    assert v["mean"] == pytest.approx(0.6) and v["min"] == 0.2 and v["max"] == 0.9
    assert v["std"] == pytest.approx(statistics.stdev([0.7, 0.2, 0.9]))
    assert f["values"]["steps"]["per_seed"] == {1: 10, 2: 10, 3: 10}   # ints stay ints
    assert f["seeds"][4] == {"missing": "no value"}

    written = fnd.write(tmp_path, "Study", "study", "quick", [_always(None)], results)
    assert written == [tmp_path / "findings.json", tmp_path / "findings.md"]
    md = (tmp_path / "findings.md").read_text()
    assert "**above half**: v is above one half | Table 9" in md
    assert "* seed 4: not measured: no value" in md
    assert "| v     | 0.70   | 0.20   | 0.90   | –      | 0.60 ± 0.36 (0.20–0.90) |" in md
    assert "| holds | yes    | no     | yes    | –      | 2 of 3" in md
    rep = json.loads((tmp_path / "findings.json").read_text())
    assert rep["findings"][0]["holding"] == [1, 3]
    assert fnd.write(tmp_path / "none", "S", "s", "quick", [], results) == []


@pytest.mark.parametrize("holding, failing, missing, said", [
    ([1], [], [], "holds on the one seed"),
    ([1, 2, 3], [], [], "holds on all 3 seeds"),
    ([], [1, 2], [], "does not hold on any of the 2 seeds"),
    ([], [], [1], "not measured"),
])
def test_status_words(holding, failing, missing, said):
    assert fnd.status(holding, failing, missing) == said


# ----------------------------------------------------------------------------- NLI
def _nli(model, seed, whole, cs, soswap_e=90.0, variant="original", augment="none",
         soswap_c=5.0, addamod_e=80.0):
    return {"seed": seed, "dataset": "synthetic", "model": model, "variant": variant,
            "augment": augment,
            "eval": {"synthetic": {"score": {"whole": whole, "cs": {
                "0.5": {"accuracy": cs + 5}, "0.7": {"accuracy": cs}}}}},
            "adversaries": {
                "soswap": {"shares": {"entailment": soswap_e, "contradiction": soswap_c,
                                      "neutral": 100 - soswap_e - soswap_c}},
                "addamod": {"shares": {"entailment": addamod_e, "contradiction": 0.0,
                                       "neutral": 100 - addamod_e}}}}


def _nli_checked(results):
    study = get_study("nli")
    return {f["key"]: f for f in fnd.evaluate(study.findings(study.profile("quick")), results)}


def test_nli_findings_seed_by_seed():
    results = []
    for seed, stlstm_cs in ((1, 60.0), (2, 40.0)):   # S-TLSTM above ESIM on seed 1 only
        results += [
            _nli("ESIM", seed, 95.0, 50.0, addamod_e=80.0 if seed == 1 else 10.0),
            _nli("ESIM", seed, 90.0, 20.0, variant="bow"),
            _nli("DAM", seed, 85.0, 40.0, soswap_e=30.0),
            _nli("S-TLSTM", seed, 94.0, stlstm_cs),
            _nli("ESIM", seed, 96.0, 60.0, augment="soswap", soswap_e=1.0, soswap_c=98.0),
            _nli("ESIM", seed, 96.0, 99.0, augment="addamod"),   # not a row of Table 5
        ]
    got = _nli_checked(results)
    fooled = got["fooled by SOSWAP (synthetic)"]
    assert fooled["holding"] == [1, 2]    # ESIM and S-TLSTM fooled, DAM not: 2 of 3
    assert fooled["values"]["models fooled"]["per_seed"] == {1: 2, 2: 2}
    assert got["SOSWAP training (synthetic)"]["holding"] == [1, 2]
    assert got["lower on CS (synthetic)"]["holding"] == [1, 2]
    assert "ESIM + adv. ADDAMOD: whole - CS" not in got["lower on CS (synthetic)"]["values"]
    bow = got["BoW and WS lower still (synthetic)"]
    assert bow["holding"] == [1, 2]
    assert bow["values"]["ESIM (BoW): whole - CS"]["mean"] == 70.0
    above = got["S-TLSTM above ESIM (synthetic)"]
    assert above["holding"] == [1] and above["failing"] == [2]
    assert got["ADDAMOD read as entailment (synthetic)"]["failing"] == [2]


def test_nli_findings_not_measured_without_their_models():
    got = _nli_checked([_nli("DAM", 1, 85.0, 90.0)])
    assert got["lower on CS (synthetic)"]["failing"] == [1]   # 90 on CS: no drop
    for key in ("SOSWAP training", "BoW and WS lower still", "S-TLSTM above ESIM",
                "ADDAMOD read as entailment"):
        assert got[f"{key} (synthetic)"]["status"] == "not measured", key


# ----------------------------------------------------------------------------- PCFG SET
def test_pcfgset_ordering_per_seed():
    study = get_study("pcfgset")
    runs = {"transformer": "transformer-fairseq", "convs2s": "convs2s-fairseq",
            "lstms2s": "lstms2s-onmt"}
    acc = {1: {"transformer": 0.9, "convs2s": 0.8, "lstms2s": 0.7},
           2: {"transformer": 0.5, "convs2s": 0.8, "lstms2s": 0.7},
           3: {"transformer": 0.5, "convs2s": 0.6, "lstms2s": 0.7}}
    results = [{"seed": s, "part": "task", "run": runs[a], "architecture": a, "accuracy": v}
               for s, by in acc.items() for a, v in by.items()]
    results.append({"seed": 1, "part": "task", "run": "transformer-onmt",   # not a test run
                    "architecture": "transformer", "accuracy": 0.1})
    got = {f["key"]: f for f in fnd.evaluate(study.findings(study.profile("quick")), results)}
    assert got["Transformer first"]["holding"] == [1]
    assert got["ConvS2S above LSTMS2S"]["status"] == "holds on 2 of 3 seeds (not on seed 3)"
    assert got["Transformer first"]["values"]["Transformer: task accuracy"]["max"] == 0.9
    only = [r for r in results if r["architecture"] != "convs2s"]
    got = {f["key"]: f for f in fnd.evaluate(study.findings(study.profile("quick")), only)}
    assert got["ConvS2S above LSTMS2S"]["seeds"][1] == {"missing": "no task run of ConvS2S"}


# ----------------------------------------------------------------------------- CTL++
def _ctl(arch, variant, iid, ood, seed=1):
    return {"seed": seed, "part": "table1", "architecture": arch, "variant": variant,
            "test_iid": {"accuracy": iid}, "test_ood": {"accuracy": ood}}


def test_ctlpp_table1_findings_leave_out_models_that_did_not_converge():
    study = get_study("ctlpp")
    results = [_ctl("bilstm", "A", 1.0, 0.95), _ctl("bilstm", "R", 1.0, 0.85),
               _ctl("transformer", "A", 0.3, 0.1), _ctl("transformer", "R", 0.3, 0.2),
               _ctl("ndr", "A", 1.0, 0.3), _ctl("ndr", "R", 1.0, 0.7)]
    got = {f["key"]: f for f in fnd.evaluate(study.findings(study.profile("quick")), results)}
    assert got["Bi-LSTM learns IID"]["holding"] == [1]
    assert got["Transformer learns IID"]["failing"] == [1]
    assert got["Bi-LSTM generalises OOD"]["failing"] == [1]     # R's 0.85 < 0.9
    r_a = got["R easier than A"]
    assert r_a["holding"] == [1] and set(r_a["values"]) == {"NDR OOD A", "NDR OOD R"}
    assert got["Bi-LSTM first on A"]["holding"] == [1]
    unconverged = [r for r in results if r["architecture"] != "ndr"]
    got = {f["key"]: f for f in fnd.evaluate(study.findings(study.profile("quick")),
                                             unconverged)}
    assert "the Transformer did not converge on A" in got["R easier than A"]["seeds"][1]["missing"]
    assert got["NDR learns IID"]["seeds"][1] == {"missing": "no NDR result on A"}


# ----------------------------------------------------------------------------- SGET
def test_sget_test_to_gen_gap():
    study = get_study("sget")
    results = [{"seed": s, "part": "main", "architecture": "transformer",
                "splits": {"test": {"exact_match": t}, "gen": {"exact_match": g}}}
               for s, t, g in ((1, 0.92, 0.09), (2, 0.95, 0.90), (3, 0.85, 0.05))]
    results.append({"seed": 1, "part": "no_concatenation", "architecture": "lstm",
                    "splits": {"test": {"exact_match": 0.9}, "gen": {"exact_match": 0.1}}})
    got = {f["key"]: f for f in fnd.evaluate(study.findings(study.profile("quick")), results)}
    gap = got["Transformer: gen far below test"]
    assert gap["holding"] == [1, 3] and gap["failing"] == [2]
    assert gap["values"]["Transformer: test - gen"]["per_seed"][1] == pytest.approx(83.0)
    assert got["Transformer learns the test set"]["holding"] == [1, 2]
    assert got["LSTM: gen far below test"]["status"] == "not measured"   # main part only
    # a stand-in (quick's small random Llama) is reported, never checked as the paper's model
    results.append({"seed": 1, "part": "main", "architecture": "llama2",
                    "stand_in": "a llama model built from a config",
                    "splits": {"test": {"exact_match": 0.3}, "gen": {"exact_match": 0.0}}})
    got = {f["key"]: f for f in fnd.evaluate(study.findings(study.profile("quick")), results)}
    assert got["Llama 2 learns the test set"]["status"] == "not measured"
    assert "only a stand-in" in got["Llama 2 learns the test set"]["seeds"][1]["missing"]


# ----------------------------------------------------------------------------- paradox
def _curve(seed, by_idiom, run="transformer-fairseq"):
    steps = range(100, 100 * (len(next(iter(by_idiom.values()))) + 1), 100)
    return {"seed": seed, "part": "generated", "run": run, "overgeneralisation_by_step": [
        {"step": step, "summary": [
            s for idiom, vals in by_idiom.items() for s in (
                {"data": "synthetic", "key": idiom, "metric": "overgeneralisation_word",
                 "pooled": vals[i]},
                {"data": "random", "key": idiom, "metric": "overgeneralisation_word",
                 "pooled": 1.0},
                {"data": "synthetic", "key": idiom, "metric": "overgeneralisation_substring",
                 "pooled": 1.0})]}
        for i, step in enumerate(steps)]}


def test_paradox_three_phases_and_frequency():
    study = get_study("paradox")
    results = [
        _curve(1, {"out of the blue": [0.0, 1.0, 1.0, 1.0], "in tandem": [0.0, 1.0, 0.5, 0.4],
                   "across the board": [0.0, 1.0, 0.2, 0.0], "by heart": [0.0, 1.0, 0.0, 0.0]}),
        # seed 2: literal from the start, and never memorised
        _curve(2, {idiom: [0.9, 0.9, 0.95, 1.0] for idiom in ("out of the blue", "in tandem",
                                                               "across the board", "by heart")}),
    ]
    got = {f["key"]: f for f in fnd.evaluate(study.findings(study.profile("quick")), results)}
    assert got["phase 1: no keyword yet"]["failing"] == [2]
    assert got["phase 2: literal peak"]["holding"] == [1] and got["phase 2: literal peak"][
        "failing"] == [2]   # seed 2's mean peaks at its last checkpoint
    phase3 = got["phase 3: memorisation"]
    assert phase3["holding"] == [1] and phase3["failing"] == [2]
    assert phase3["values"]["generated, synthetic: last checkpoint"]["per_seed"][1] == \
        pytest.approx(0.35)
    freq = got["frequent idioms memorised more"]
    assert freq["holding"] == [1] and freq["failing"] == [2]   # seed 2: no drop, r = 0
    assert freq["values"]["generated, synthetic: by heart (60x) peak - last"]["per_seed"][1] == 1.0
    paper = get_study("paradox")
    keyed = {f.key: f for f in paper.findings(paper.profile("paper"))}
    with pytest.raises(fnd.Missing, match="frequencies"):
        keyed["frequent idioms memorised more"].check(results[:1])
