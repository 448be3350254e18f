"""The NLI study (compsuite/studies/nli/, data_prep/nli/corpus.py): its YAML checks,
the prepared dataset (byte-identical per seed; adversaries, pools, LMS), the reference
sample analysis, `compsuite eval nli score` on any system's predictions, and the paper
profile's shape end to end on hand-made files in SNLI / MultiNLI format with a tiny
model.  The tiny profile end to end is in tests/test_study_contract.py."""
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from compsuite.foundation.errors import ConfigError
from compsuite.registry import get_study

from conftest import ROOT, edited_study

SAMPLE = ROOT.parent / "shared" / "reference" / "nli" / "snli_1.0_dev_sample.jsonl"


def _digests(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "manifest.json"
            and p.suffix != ".pkl"}


@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory):
    study = get_study("nli")
    root = tmp_path_factory.mktemp("nli") / "DATA"
    data = study.prepare("synthetic", 1, study.profile("tiny"), root, show=False)
    return study, data


def test_prepared_dataset(tiny_data, tmp_path):
    study, data = tiny_data
    m = json.loads((data.raw / "manifest.json").read_text())
    assert m["counts"]["train"] == 300 and m["counts"]["valid"] == 60
    assert m["counts"]["test"] == 120
    # adversaries from the test premises, the pools from the training premises
    assert m["counts"]["adv_soswap"] > 0 and m["counts"]["adv_addamod"] > 0
    assert m["counts"]["pool_soswap"] > m["counts"]["adv_soswap"]
    assert set(open(data.raw / "adv_soswap.label").read().split()) == {"contradiction"}
    assert set(open(data.raw / "adv_addamod.label").read().split()) == {"neutral"}
    assert data.splits[:3] == ("train", "valid", "test") and "pool_addamod" in data.splits
    for split in data.splits:
        n = {len(open(data.raw / f"{split}.{s}").read().splitlines())
             for s in ("premise", "hypothesis", "label", "pairid")}
        assert n == {m["counts"][split]}, split
    lms = [float(x) for x in open(data.root / "lexical" / "synthetic.lms")]
    rows = json.loads((data.root / "lexical" / "rows.json").read_text())["sets"]["synthetic"]
    assert len(lms) == 120 and all(0 <= v <= 1 for v in lms)
    assert rows["cs_sizes"]["0.7"] == sum(v >= 0.7 for v in lms)
    assert rows["human"] is None   # one annotator label per synthetic pair: no Human row
    # the same seed gives the same bytes
    again = study.prepare("synthetic", 1, study.profile("tiny"), tmp_path / "DATA", show=False)
    assert _digests(data.root) == _digests(again.root)


def test_augmentation_units_name_the_pool_subsets():
    from compsuite.toolkits.fairseq.data import fairseq_subsets

    study = get_study("nli")
    prof = study.profile("tiny")
    units = {u.run: u for u in study.plan(prof)}
    splits = study.splits(prof, "synthetic")
    assert units["esim-adv-soswap-fairseq"].train_options == {
        "augment_subsets": fairseq_subsets(splits)["pool_soswap"], "augment_per_epoch": 20}
    assert units["esim-fairseq"].train_options is None
    assert units["esim-adv-soswap-fairseq"].params == {"model": "ESIM", "variant": "original",
                                                       "augment": "soswap"}


@pytest.mark.parametrize("edit, message", [
    (lambda r: r["rows"]["esim-fairseq"].update(variant="deep"), "rows.esim-fairseq.variant"),
    (lambda r: r["rows"]["esim-fairseq"].update(colour="red"), "rows.esim-fairseq"),
    (lambda r: r["rows"].pop("dam-fairseq"), "no row for run 'dam-fairseq'"),
    (lambda r: r["profiles"]["quick"]["data"].update(corpus="files"), "quick.data.datasets"),
    (lambda r: r["profiles"]["quick"].update(lambdas=[0.5, 2]), "quick.lambdas"),
    (lambda r: r["profiles"]["quick"]["adversaries"].update(rules="loose"),
     "quick.adversaries.rules"),
    (lambda r: r["profiles"]["paper"]["data"]["datasets"]["snli"].pop("valid"),
     "paper.data.datasets.snli: missing required key 'valid'"),
])
def test_yaml_errors_name_file_and_key(tmp_path, edit, message):
    with pytest.raises(ConfigError) as e:
        edited_study(tmp_path, "nli", edit)
    assert str(tmp_path / "nli.yaml") in str(e.value) and message in str(e.value)


def test_unset_variable_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv("SNLI_DIR", raising=False)
    study = get_study("nli")
    with pytest.raises(ConfigError, match=r"datasets\.snli\.train: .*SNLI_DIR"):
        study.prepare("snli", 1, study.profile("paper"), tmp_path, show=False)


@pytest.mark.skipif(not SAMPLE.is_file(), reason="reference sample not present")
def test_reference_analysis_on_the_sample(tmp_path):
    from compsuite.data_prep.nli.corpus import reference_analysis

    s = reference_analysis(SAMPLE, tmp_path / "ref", show=False)
    assert s["pairs"] == 1273 and s["premises"] == 427
    assert s["adversaries"]["strict"]["counts"]["soswap"] == 26
    assert s["adversaries"]["lenient"]["counts"]["addamod"] == 95
    # the Human row: its exact expectation on the sample, 87.58% (paper, full dev: 88.32)
    assert s["rows"]["human"]["expected"] == pytest.approx(87.584, abs=0.01)
    assert 80 < s["rows"]["human"]["whole"] < 95
    sizes = s["rows"]["cs_sizes"]
    assert sizes["0.5"] >= sizes["0.6"] >= sizes["0.7"] >= sizes["0.95"]
    assert reference_analysis(SAMPLE, tmp_path / "ref", show=False) == s   # reused


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "compsuite.cli", *args], capture_output=True,
                          text=True, cwd=ROOT)


def test_score_command_reads_any_systems_predictions(tiny_data, tmp_path):
    _, data = tiny_data
    ids = open(data.raw / "test.pairid").read().split()
    gold = open(data.raw / "test.label").read().split()
    perfect = tmp_path / "perfect.tsv"
    perfect.write_text("".join(f"{i}\t{g[0]}\n" for i, g in zip(ids, gold)))   # e/n/c
    always_e = tmp_path / "soswap.tsv"
    adv_ids = open(data.raw / "adv_soswap.pairid").read().split()
    always_e.write_text("".join(f"{i}\tentailment\n" for i in adv_ids))
    out = tmp_path / "scores.json"
    r = _cli("eval", "nli", "score", "--data", str(data.root), "--predictions", str(perfect),
             "--soswap", str(always_e), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "synthetic: accuracy 100.00 on 120 pairs" in r.stdout
    scores = json.loads(out.read_text())
    assert scores["adversaries"]["soswap"]["shares"]["entailment"] == 100.0
    assert scores["adversaries"]["soswap"]["accuracy"] == 0.0
    # a missing pair and a bad label are errors naming the file
    perfect.write_text("".join(f"{i}\t{g}\n" for i, g in list(zip(ids, gold))[1:]))
    r = _cli("eval", "nli", "score", "--data", str(data.root), "--predictions", str(perfect))
    assert r.returncode != 0 and str(perfect) in r.stderr and "Traceback" not in r.stderr
    perfect.write_text(f"{ids[0]}\tmaybe\n")
    r = _cli("eval", "nli", "score", "--data", str(data.root), "--predictions", str(perfect))
    assert r.returncode != 0 and f"{perfect}:1" in r.stderr and "Traceback" not in r.stderr


# ----------------------------------------------------------------------------- paper profile
TINY_ESIM = {"embed_dim": 8, "hidden_size": 8, "mlp_dim": 8, "batch_size": 16, "max_update": 4,
             "max_epoch": None, "patience": -1}


@pytest.fixture(scope="module")
def nli_files(tmp_path_factory):
    """Hand-made files in SNLI / MultiNLI's format (the synthetic generator's pairs, with
    five annotator labels on the dev sets) and a GloVe-format file of 8-d vectors."""
    from compsuite.data_prep.nli.synthetic import generate_pairs

    root = tmp_path_factory.mktemp("nlifiles")
    files = {"snli/snli_1.0_train.jsonl": ("train", 400),
             "snli/snli_1.0_dev.jsonl": ("dev", 90),
             "mnli/multinli_1.0_train.jsonl": ("train", 300),
             "mnli/multinli_1.0_dev_matched.jsonl": ("dev", 60),
             "mnli/multinli_1.0_dev_mismatched.jsonl": ("test", 60)}
    for i, (name, (split, n)) in enumerate(files.items()):
        path = root / name
        path.parent.mkdir(exist_ok=True)
        with open(path, "w") as fh:
            for j, p in enumerate(generate_pairs(n, i + 1, split)):
                if split != "train":
                    other = "neutral" if p["gold_label"] != "neutral" else "entailment"
                    p["annotator_labels"] = [p["gold_label"]] * 4 + [other] if j % 2 else \
                        [p["gold_label"]] * 5
                fh.write(json.dumps(p) + "\n")
        if i == 0:   # a pair without a gold label is skipped and counted
            with open(path, "a") as fh:
                fh.write(json.dumps({**p, "gold_label": "-", "pairID": "nolabel"}) + "\n")
    with open(root / "glove.txt", "w") as fh:
        for k, w in enumerate(["man", "woman", "dog", "park", "the", "A", "chases"]):
            fh.write(w + " " + " ".join(f"{(k + d) % 5 / 10:.1f}" for d in range(8)) + "\n")
    return root


def _paper_shape(raw):
    for run in ("esim-fairseq", "esim-adv-soswap-fairseq"):
        raw["runs"][run]["profiles"]["papertest"] = dict(TINY_ESIM)
    prof = dict(raw["profiles"]["paper"])
    # 2**16 hashed features instead of the paper profile's 2**22: the same code path,
    # minutes faster on hand-made data; two trainings side by side on the 2 cores
    prof.update(runs=["esim-fairseq", "esim-adv-soswap-fairseq"], augment_per_epoch=25,
                lexical={"hash_bits": 16}, jobs=2,
                description="the paper profile's shape on hand-made files")
    raw["profiles"]["papertest"] = prof


def test_paper_profile_shape_end_to_end(nli_files, tmp_path, monkeypatch):
    from compsuite.runner import Runner

    monkeypatch.setenv("SNLI_DIR", str(nli_files / "snli"))
    monkeypatch.setenv("MNLI_DIR", str(nli_files / "mnli"))
    monkeypatch.setenv("GLOVE", str(nli_files / "glove.txt"))
    study = edited_study(tmp_path, "nli", _paper_shape)
    runner = Runner(study, "papertest", data_root=tmp_path / "DATA",
                    runs_root=tmp_path / "runs", show=False)
    units = runner.plan()
    assert sorted(u.path for u in units) == ["mnli/esim-adv-soswap-fairseq/seed1",
                                             "mnli/esim-fairseq/seed1",
                                             "snli/esim-adv-soswap-fairseq/seed1",
                                             "snli/esim-fairseq/seed1"]
    assert [u.path for u in units if u.dataset == "snli"] == ["snli/esim-fairseq/seed1",
                                       "snli/esim-adv-soswap-fairseq/seed1"]
    results = {r["unit"]: r for r in runner.run(units)}
    snli = results["snli/esim-fairseq/seed1"]
    assert set(snli["eval"]) == {"snli"}
    assert set(results["mnli/esim-fairseq/seed1"]["eval"]) == {"mnli_matched",
                                                               "mnli_mismatched"}
    assert snli["eval"]["snli"]["score"]["n"] == 90
    assert snli["adversaries"]["soswap"]["n"] > 0
    # the Human row from the five annotator labels; the lexical classifier on SNLI + MNLI
    ref = snli["reference_rows"]["snli"]
    assert ref["human"] is not None and 80 <= ref["human"]["expected"] <= 100
    assert "vec:hash16" in snli["lexical_signature"] and "C_rule:heldout" in snli["lexical_signature"]
    data = tmp_path / "DATA" / "nli" / "snli"
    manifest = json.loads((data / "raw" / "manifest.json").read_text())
    assert manifest["counts"]["train"] == 400
    assert manifest["dropped"]["no gold label ('-')"]
    lex = json.loads((data / "lexical" / "rows.json").read_text())
    assert lex["train_pairs"] == 700     # SNLI + MNLI train
    # the run started from the GloVe file and trained with the pool added
    log = (tmp_path / "runs" / "nli" / "papertest" / "snli" / "esim-adv-soswap-fairseq" /
           "seed1" / "train.log").read_text()
    assert "pretrained word vectors" in log
    cmd = (tmp_path / "runs" / "nli" / "papertest" / "snli" / "esim-adv-soswap-fairseq" /
           "seed1" / "command.txt").read_text()
    assert "--augment-subsets" in cmd and "--augment-per-epoch 25" in cmd
    assert "--embedding-path" in cmd


def test_pair_writer_checks_name_file_and_line(tmp_path):
    from compsuite.toolkits.fairseq.data import check_pairs
    from compsuite.foundation.errors import DataError

    def write(split, premise, hypothesis, label):
        for side, lines in (("premise", premise), ("hypothesis", hypothesis),
                            ("label", label)):
            (tmp_path / f"{split}.{side}").write_text("".join(x + "\n" for x in lines))

    write("train", ["a b", "c d"], ["a", "c"], ["entailment", "neutral"])
    write("test", ["a b"], ["a"], ["entailment"])
    assert check_pairs(tmp_path, ["train", "test"]) == {"train": 2, "test": 1}
    write("test", ["a b", "c"], ["a"], ["entailment"])
    with pytest.raises(DataError, match=r"test\.hypothesis has 1 lines, .*test\.premise has 2"):
        check_pairs(tmp_path, ["train", "test"])
    write("test", ["a b"], [" "], ["entailment"])
    with pytest.raises(DataError, match=r"test\.hypothesis:1: empty line"):
        check_pairs(tmp_path, ["train", "test"])
    write("test", ["a b", "c"], ["a", "c"], ["entailment", "contradiction"])
    with pytest.raises(DataError, match=r"test\.label:2: class 'contradiction' is not among"):
        check_pairs(tmp_path, ["train", "test"])


def test_score_command_with_a_model_in_the_loop(tiny_data):
    """--data is the dataset, --bin the model's dictionaries (model_arguments' option,
    read as the fairseq-bin folder); a program classifies the set and both adversaries."""
    from compsuite.cli import build_parser

    _, data = tiny_data
    a = build_parser().parse_args(["eval", "nli", "score", "--data", str(data.root),
                                   "--checkpoint", "model.pt", "--bin", "fairseq-bin"])
    assert (a.dataset, a.data, a.batch_size) == (str(data.root), "fairseq-bin", 256)
    oracle = ROOT / "examples" / "systems" / "nli_oracle.py"
    r = _cli("eval", "nli", "score", "--data", str(data.root),
             "--model-cmd", f"{sys.executable} {oracle}")
    assert r.returncode == 0, r.stderr
    assert "synthetic: accuracy 100.00 on 120 pairs" in r.stdout
    assert "soswap: " in r.stdout and "addamod: " in r.stdout
