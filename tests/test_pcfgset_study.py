"""PCFG SET through the runner: the tiny profile end to end (task runs in both toolkits,
then every test on one run), skip and resume, the reports, and the study's rules."""
import json

import pytest

from compsuite.eval.pcfgset.report import build_report, task_report
from compsuite.foundation.errors import ConfigError
from compsuite.registry import get_study
from compsuite.runner import Runner
from conftest import stored_stamps

TASK = "task/lstms2s-onmt/seed1"


def test_tiny_profile_task_runs(tiny_study):
    t = tiny_study("pcfgset")
    assert t.returncode == 0
    for run, toolkit in (("lstms2s-onmt", "onmt"), ("transformer-fairseq", "fairseq")):
        r = t.result(f"task/{run}/seed1")
        assert r["part"] == "task" and r["toolkit"] == toolkit and r["n"] == 2353
        assert r["git"] and r["config_version"] == 1 and r["data_sha256"]
        assert set(r["breakdown"]) == {"length", "n_functions", "depth"}
        assert r["predictions"]["format"] == ("fairseq-generate" if toolkit == "fairseq"
                                              else "onmt_translate")
    train = json.loads((t.runs / "task/transformer-fairseq/seed1/train.json").read_text())
    assert train["args"]["task"] == "translation_seq_acc"   # from the study's YAML defaults
    table = (t.results / "table.md").read_text()
    assert "| LSTMS2S" in table and "0.79" in table and "scaled-down PCFG SET" in table
    assert (t.results / "accuracy_by_structure.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("test", ["systematicity", "productivity",
                                  "substitutivity_equally_distributed",
                                  "substitutivity_primitive", "localism", "overgeneralisation",
                                  "per_function", "increasing_string_length"])
def test_tiny_profile_each_test(tiny_study, test):
    """Each test's split, data, training (or the task model), its evaluation through the
    translator protocol, and its report."""
    t = tiny_study("pcfgset")
    assert t.returncode == 0
    result = t.result(f"{test}/lstms2s-onmt/seed1")
    task = t.result(TASK)
    kind = get_study("pcfgset").tests[test].evaluation
    assert result["evaluation"] == kind and result["test"] == test and result["part"] == test
    test_dir = t.runs / test / "lstms2s-onmt" / "seed1"
    if result["model"] == "base":       # the task model, trained once, not a model of its own
        assert result["checkpoint"] == task["checkpoint"] and result["model_from"] == TASK
        assert not (test_dir / "checkpoints").exists()
    else:
        assert str(test_dir) in result["checkpoint"] and result["model_from"] is None
    if kind == "accuracy":
        assert result["n"] == 2353 and "category" in result["breakdown"]
        assert result["eos_problem"]["n_wrong"] == 2353 - result["correct"]
        # compare_base: the task model on the same inputs (Table 4)
        assert result["task_model"]["n"] == 2353
        assert result["task_model"]["checkpoint"] == task["checkpoint"]
    elif kind == "consistency":
        assert result["consistency"]["n"] == 2353
        assert set(result["consistency"]["breakdown"]) <= {"append", "repeat", "remove_second",
                                                           "swap_first_last"}
        assert set(result["embedding_distances"]["distances"]) == {
            "append", "repeat", "remove_second", "swap_first_last"}
    elif kind == "localism":
        assert result["n"] == 5000 and result["model_calls"] <= 1 + 3
        assert len((test_dir / "localism-traces.jsonl").read_text().splitlines()) == 5000
    elif kind == "per_function":
        from compsuite.data_prep.pcfgset.grammar import FUNCTIONS

        assert set(result["per_function"]) == set(FUNCTIONS) and result["n_per_function"] == 1176
    elif kind == "by_length":
        assert sorted(map(int, result["breakdown"]["length"])) == list(range(2, 21))
        assert result["n"] == 10 * 19 * 53
    else:
        assert [r["at"] for r in result["profile"]] == [6, 12]   # every checkpoint kept
    assert (t.results / f"{test}.md").read_text().startswith(f"# PCFG SET {test}")
    report = json.loads((t.results / "report.json").read_text())
    assert report["tests"][test][0]["unit"] == f"{test}/lstms2s-onmt/seed1"
    if kind == "per_function":
        assert (t.results / "per_function.png").read_bytes()[:4] == b"\x89PNG"


def test_tiny_profile_skips_then_resumes(tiny_study):
    """A second run changes no file; a run interrupted before scoring resumes without
    training again."""
    t = tiny_study("pcfgset")
    stamps = stored_stamps(t.runs)                         # (the timings log grows)
    data_stamp = (t.root / "DATA/pcfgset/small/seed1/raw/manifest.json").stat().st_mtime_ns
    assert t.run() == 0                                    # everything skipped
    assert stored_stamps(t.runs) == stamps
    assert (t.root / "DATA/pcfgset/small/seed1/raw/manifest.json").stat().st_mtime_ns == data_stamp
    before = t.result(TASK)
    (t.runs / TASK / "result.json").unlink()               # interrupted before scoring
    (t.runs / TASK / "pred-test.txt").unlink()
    assert t.run("--parts", "task") == 0
    assert t.result(TASK)["accuracy"] == before["accuracy"]
    assert (t.runs / TASK / "train.log").stat().st_mtime_ns == stamps[t.runs / TASK / "train.log"]


def test_report_with_seeds_has_mean_std_and_welch(tmp_path):
    """Three seeds of two models: mean ± std per model and a Welch t-test between them."""
    study = get_study("pcfgset")
    base = {"study": "pcfgset", "profile": "tiny", "toolkit": "onmt", "paper_setup": True,
            "dataset": "small", "dataset_label": "tiny test", "n": 100,
            "signature": "metric:seq_acc", "breakdown": {"depth": {"1": {"accuracy": 1.0, "n": 9}}}}
    results = [{**base, "architecture": "lstms2s", "seed": s, "accuracy": a}
               for s, a in ((1, 0.5), (2, 0.6), (3, 0.7))]
    results += [{**base, "architecture": "transformer", "seed": s, "accuracy": a}
                for s, a in ((1, 0.8), (2, 0.9), (3, 1.0))]
    report = task_report(results, tmp_path / "r", "tiny", study.title, study.architectures)
    lstm = next(x for x in report["summary"] if x["architecture"] == "lstms2s")
    assert lstm["accuracy_mean"] == pytest.approx(0.6) and lstm["accuracy_std"] == pytest.approx(0.1)
    (test,) = report["significance"]
    assert test["t"] == pytest.approx(-3.6742, abs=1e-4) and test["p"] == pytest.approx(0.0213, abs=1e-3)
    table = (tmp_path / "r" / "table.md").read_text()
    assert "0.60 ± 0.10" in table and "Welch" in table


def test_test_on_the_task_model_refuses_another_corpus(tmp_path):
    """A base-model test whose samples would not come from the task model's training
    corpus is an error naming both files."""
    from compsuite.data_prep.pcfgset.dataset import check_same_corpus

    a, b = tmp_path / "a", tmp_path / "b"
    for d, text in ((a, "copy A1\n"), (b, "copy B1\n")):
        d.mkdir()
        (d / "train.src").write_text(text)
        (d / "train.tgt").write_text("A1\n")
    with pytest.raises(ConfigError, match="a/train.src differs from the task corpus .*b/train.src"):
        check_same_corpus(a, b, "localism")
    check_same_corpus(a, a, "localism")


def test_overgeneralisation_training_options_merge_per_profile():
    study = get_study("pcfgset")
    assert study.train_options("overgeneralisation", "quick", "onmt") == {
        "keep_checkpoint": -1, "save_checkpoint_steps": 250}
    assert study.train_options("overgeneralisation", "tiny", "onmt") == {"keep_checkpoint": -1}
    assert study.train_options("overgeneralisation", "quick", "fairseq") is None
    units = {u.path: u for u in Runner(study, "quick", show=False).plan(
        parts=["overgeneralisation"])}
    assert units["overgeneralisation/lstms2s-onmt/seed1"].train_options == {
        "keep_checkpoint": -1, "save_checkpoint_steps": 250}


def test_plan_units_and_dependencies():
    """Task units for every run, test units for the test runs only; tests on the task
    model (and compare_base) need the task unit of the same run and seed."""
    study = get_study("pcfgset")
    units = Runner(study, "paper", show=False).plan()
    assert [u.path for u in units if u.part == "task"][:2] == [
        "task/lstms2s-onmt/seed1", "task/convs2s-fairseq/seed1"]
    assert len(units) == 3 * 6 + 3 * 3 * len(study.tests)
    loc = {u.path: u for u in units}["localism/convs2s-fairseq/seed2"]
    assert loc.model_from == "task/convs2s-fairseq/seed2" and not loc.trains
    sysm = {u.path: u for u in units}["systematicity/lstms2s-onmt/seed3"]
    assert sysm.trains and sysm.needs == ("task/lstms2s-onmt/seed3",)
    only = Runner(study, "paper", show=False).plan(parts=["localism"], seeds=[1])
    assert {u.part for u in only} == {"localism", "task"} and len(only) == 6


def test_study_report_has_every_table_and_figure(tmp_path):
    """Table 3 (every row beside the paper's), Tables 4-6 and Figures 7-10 from stored
    results of three architectures and two seeds, with Welch tests per row."""
    from compsuite.data_prep.pcfgset.grammar import FUNCTIONS

    study = get_study("pcfgset")
    runs = {"lstms2s": "lstms2s-onmt", "convs2s": "convs2s-fairseq",
            "transformer": "transformer-onmt"}
    tk = {"lstms2s": "onmt", "convs2s": "fairseq", "transformer": "onmt"}
    label = "tiny test"
    task, tests = [], {t: [] for t in study.tests}
    cons = {"consistency": 0.5, "consistent_correct": 0.4, "consistent_incorrect": 0.1,
            "consistency_incorrect": 0.2, "n": 10, "signature": "metric:consistency",
            "breakdown": {"repeat": {"consistency": 0.5, "n": 10}}}
    for i, arch in enumerate(runs):
        for seed in (1, 2):
            v = 0.1 * (i + 1) + 0.01 * seed
            common = {"architecture": arch, "toolkit": tk[arch], "run": runs[arch], "seed": seed,
                      "dataset_label": label}
            task.append({**common, "part": "task", "paper_setup": True, "accuracy": v, "n": 10,
                         "signature": "metric:seq_acc", "dataset": "small",
                         "breakdown": {"depth": {"1": {"accuracy": v, "n": 10}}}})
            eos = {"contained_share": 0.5}
            for t in ("systematicity", "productivity"):
                tests[t].append({**common, "evaluation": "accuracy", "accuracy": v, "n": 10,
                                 "eos_problem": eos, "task_model": {"accuracy": v + 0.1,
                                                                    "eos_problem": eos}})
            for t in ("substitutivity_equally_distributed", "substitutivity_primitive"):
                tests[t].append({**common, "evaluation": "consistency", "consistency": cons,
                                 "embedding_distances": {"distances": {"repeat": {
                                     "to_synonym": 0.3, "to_other_functions": 0.9}}}})
            tests["localism"].append({**common, "evaluation": "localism", "consistency": cons})
            tests["overgeneralisation"].append(
                {**common, "evaluation": "overgeneralisation", "peak_overgeneralisation": v,
                 "profile": [{"kind": "epoch", "at": e, "memorisation": 0.1 * e,
                              "overgeneralisation": v / e, "neither": 0.0} for e in (1, 2)]})
            tests["per_function"].append({**common, "evaluation": "per_function", "accuracy": v,
                                          "per_function": {f: v for f in FUNCTIONS}})
            tests["increasing_string_length"].append(
                {**common, "evaluation": "by_length", "accuracy": v,
                 "breakdown": {"length": {str(n): {"accuracy": v, "n": 53} for n in (2, 3)}}})
    results = task + [{**r, "part": t} for t, rs in tests.items() for r in rs]
    written = build_report(study, "paper", results, tmp_path)
    rep = json.loads((tmp_path / "report.json").read_text())
    md = (tmp_path / "report.md").read_text()
    # Table 3: our value beside the paper's for every row, each architecture
    assert rep["table3"]["systematicity"]["transformer"]["paper"] == 0.72
    assert rep["table3"]["localism"]["lstms2s"]["mean"] == pytest.approx(0.5)
    assert rep["table3"]["task_accuracy"]["convs2s"]["mean"] == pytest.approx(0.215)
    assert "| systematicity " in md and "0.12 ± 0.01" in md and "0.72" in md
    assert len(rep["table3"]) == 7
    assert {s["row"] for s in rep["significance"]} >= {"task accuracy", "systematicity"}
    for section in ("Table 4 analogue", "Table 5 analogue", "Table 6 analogue", "Figure 7",
                    "Figure 8", "Figure 10", "Overgeneralisation over training"):
        assert section in md, section
    for png in ["accuracy_by_structure.png", "per_function.png", "increasing_length.png",
                "overgeneralisation_lstms2s-onmt_seed1.png"]:
        assert (tmp_path / png).read_bytes()[:4] == b"\x89PNG", png
    assert (tmp_path / "systematicity.md").is_file() and (tmp_path / "table.md").is_file()
    # every file written, and only those, is in the returned list
    assert sorted(written) == sorted(p for p in tmp_path.iterdir() if p.is_file())
    assert written[:2] == [tmp_path / "report.json", tmp_path / "report.md"]


def test_a_report_without_the_test_runs_shows_the_task_accuracy_it_has(tmp_path):
    """``--parts task --runs transformer-fairseq`` on the tiny profile (whose test run
    is lstms2s-onmt): the headline said a row of dashes; it says why Table 3 has no
    numbers of ours and shows the task accuracy there is (issue 51)."""
    from compsuite.cli import headline

    study = get_study("pcfgset")
    result = {"study": "pcfgset", "profile": "tiny", "part": "task", "toolkit": "fairseq",
              "run": "transformer-fairseq", "architecture": "transformer",
              "paper_setup": False, "dataset": "small", "dataset_label": "tiny test",
              "seed": 1, "accuracy": 0.4, "n": 100, "signature": "metric:seq_acc",
              "breakdown": {"depth": {"1": {"accuracy": 0.4, "n": 100}}}}
    build_report(study, "tiny", [result], tmp_path)
    shown = headline(tmp_path / "report.md").splitlines()
    assert shown[1] == ("## Table 3: no numbers of ours (no results of the test runs: "
                        "lstms2s-onmt)")
    assert shown[3].split("|")[1:4] == [" model       ", " toolkit ",
                                        " task accuracy (ours) "]
    assert [c.strip() for c in shown[5].split("|")[1:-1]] == [
        "Transformer", "fairseq", "0.40", "1", "100", "0.92"]
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["table3"] == {"task_accuracy": {}} and rep["significance"] == []


def test_task_model_is_read_with_its_own_dictionaries(tiny_study, monkeypatch):
    """compare_base scores the task model on the test's inputs: it must be loaded with
    the task corpus's data (for fairseq, its dictionaries), not the test split's (they
    number the symbols differently; the first full run scored ConvS2S 0.00 that way).
    The session's tiny run, its productivity unit scored again (a unit whose result is
    gone is evaluated again without training: both models are loaded as in a new run)."""
    from compsuite.studies.base import Context

    loaded = []
    real = Context.load

    def spy(self, checkpoint=None, data=None, kind="translator"):
        used = data if data is not None else self.model_data
        loaded.append((str(checkpoint or self.checkpoint), str(used.root)))
        return real(self, checkpoint, data, kind)

    t = tiny_study("pcfgset")
    unit = "productivity/lstms2s-onmt/seed1"
    before = t.result(unit)
    (t.runs / unit / "result.json").unlink()
    monkeypatch.setattr(Context, "load", spy)
    assert t.run("--parts", "productivity", "--runs", "lstms2s-onmt") == 0
    result = t.result(unit)
    assert result["accuracy"] == before["accuracy"]
    by_ck = dict(loaded)
    assert by_ck[result["task_model"]["checkpoint"]] == str(t.root / "DATA/pcfgset/small/seed1")
    assert by_ck[result["checkpoint"]] == str(t.root / "DATA/pcfgset/small/productivity/seed1")


_YAML = """study: pcfgset
architectures: {a: {paper_name: A}}
datasets: {d: {config: small, label: tiny}}
runs:
  a1: {architecture: a, toolkit: onmt, paper_setup: true, config: onmt_configs/pcfgset/lstm.yaml}
profiles:
  p: {dataset: d, runs: [a1]}
tests:
  t: {split: localism, evaluation: localism, model: base}
"""


@pytest.mark.parametrize("old,new,msg", [
    ("config: small", "config: smal",
     r"pcfgset.yaml: datasets.d.config: one of full, small, not 'smal'; did you mean 'small'"),
    ("label: tiny", "lable: tiny", r"datasets.d: unknown key 'lable'.*did you mean 'label'"),
    ("{dataset: d,", "{dataset: dd,", r"profiles.p: unknown dataset 'dd'; did you mean 'd'"),
    ("{dataset: d,", "{datset: d,", r"profiles.p: unknown key 'datset'.*did you mean 'dataset'"),
    ("split: localism", "split: locality",
     r"tests.t.split: one of .*, not 'locality'; did you mean 'localism'"),
    ("model: base", "modle: base", r"tests.t: unknown key 'modle'.*did you mean 'model'"),
    ("model: base}", "model: base, compare_base: yes please}",
     r"tests.t.compare_base: true or false, not 'yes please'"),
    ("model: base}", "model: base, train: {fairsq: {}}}",
     r"tests.t.train: unknown key 'fairsq'.*did you mean 'fairseq'"),
    ("model: base}", "model: base, train: {profiles: {q: {}}}}",
     r"tests.t.train.profiles: unknown key 'q' \(allowed: p\)"),
])
def test_study_keys_are_checked_with_the_file_and_key(tmp_path, old, new, msg):
    from compsuite.registry import load_study

    f = tmp_path / "pcfgset.yaml"
    f.write_text(_YAML)
    study = load_study(f)
    assert study.tests["t"].model == "base" and study.tests["t"].options == {}
    assert study.datasets["d"].config == "small" and study.profile("p").settings.dataset == "d"
    assert study.test_runs(study.profile("p")) == ["a1"]
    assert _YAML.count(old) == 1
    f.write_text(_YAML.replace(old, new))
    with pytest.raises(ConfigError, match=msg) as e:
        load_study(f)
    assert str(f) in str(e.value)
