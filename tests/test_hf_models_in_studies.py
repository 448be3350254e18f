"""Hugging Face models of the user's in every study (compsuite/toolkits/hf/:
its backend, translator and classifier): a plain model folder
loads as a translator (a Marian, a causal LM) or as a classifier (a sequence
classifier); an hf run with ``train: false`` is an evaluate-only run that a study plans,
evaluates and reports like any run (the paradox tests with a Marian model, SGET without
checkpoint selection, NLI with a classifier).  Every model is tiny, built from a config
with random weights and a word-level tokenizer; nothing is downloaded."""
import json
from pathlib import Path

import pytest

pytest.importorskip("transformers")

from conftest import edited_study  # noqa: E402

from compsuite.foundation.dataset import Dataset  # noqa: E402
from compsuite.foundation.errors import ConfigError, DataError  # noqa: E402
from compsuite.models.protocol import counted  # noqa: E402
from compsuite.models.decoding import decoding  # noqa: E402
from compsuite.registry import get_study  # noqa: E402
from compsuite.studies.base import Run  # noqa: E402
from compsuite.toolkits import get_backend  # noqa: E402
from compsuite.toolkits.hf.backend import plain, settings  # noqa: E402

SGET_PROMPT = "### Input: {input} ### Output:\n"
LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}


# ----------------------------------------------------------------------------- tiny models
def word_tokenizer(lines: list[str], specials: list[str], post: str | None = None,
                   pair: str | None = None):
    """A word-level fast tokenizer trained on ``lines``; ``post``/``pair``: the special
    tokens around one sentence / a pair (tokenizers' template syntax)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.WordLevel(unk_token="<unk>" if "<unk>" in specials else "[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.decoder = decoders.WordPiece(prefix="##")   # words joined by spaces
    tok.train_from_iterator(lines, trainers.WordLevelTrainer(special_tokens=specials,
                                                             show_progress=False))
    if post:
        names = {w.split(":")[0] for w in (post + " " + (pair or "")).split() if "$" not in w}
        tok.post_processor = processors.TemplateProcessing(
            single=post, pair=pair, special_tokens=[(n, tok.token_to_id(n)) for n in names])
    return tok


def save(model, tokenizer, folder: Path) -> Path:
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_marian(folder: Path, lines: list[str]) -> Path:
    """A Marian translation model (d 8, one layer each side) with random weights."""
    import torch
    from transformers import MarianConfig, MarianMTModel, PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(
        tokenizer_object=word_tokenizer(lines, ["<pad>", "</s>", "<unk>"], "$A </s>"),
        pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
    cfg = MarianConfig(vocab_size=len(tok), d_model=8, encoder_layers=1, decoder_layers=1,
                       encoder_attention_heads=2, decoder_attention_heads=2,
                       encoder_ffn_dim=16, decoder_ffn_dim=16, max_position_embeddings=512,
                       pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                       decoder_start_token_id=tok.pad_token_id, forced_eos_token_id=None)
    torch.manual_seed(0)
    return save(MarianMTModel(cfg), tok, folder)


def tiny_llama(folder: Path, lines: list[str]) -> Path:
    """A causal language model (Llama architecture, d 16) with random weights."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(
        tokenizer_object=word_tokenizer(lines, ["<unk>", "<s>", "</s>"]),
        unk_token="<unk>", bos_token="<s>", eos_token="</s>")
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32,
                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                      max_position_embeddings=512, bos_token_id=tok.bos_token_id,
                      eos_token_id=tok.eos_token_id)
    torch.manual_seed(0)
    return save(LlamaForCausalLM(cfg), tok, folder)


def tiny_bert_classifier(folder: Path, lines: list[str], id2label=None) -> Path:
    """A BERT sequence-pair classifier (d 8, three classes) with random weights."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(
        tokenizer_object=word_tokenizer(lines, ["[PAD]", "[UNK]", "[CLS]", "[SEP]"],
                                        "[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1"),
        pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]")
    id2label = id2label or LABELS
    cfg = BertConfig(vocab_size=len(tok), hidden_size=8, num_hidden_layers=1,
                     num_attention_heads=2, intermediate_size=16, max_position_embeddings=128,
                     num_labels=len(id2label), id2label=id2label,
                     label2id={v: k for k, v in id2label.items()})
    torch.manual_seed(0)
    return save(BertForSequenceClassification(cfg), tok, folder)


PAIRS = [("a man sees a dog", "a man sees an animal"), ("the cat sleeps", "the cat runs"),
         ("a woman runs", "nobody runs"), ("the dog sleeps", "a dog sleeps"),
         ("a man sleeps", "a man is awake")]


@pytest.fixture(scope="module")
def paradox_marian(tmp_path_factory):
    """The paradox tiny profile's data, and a Marian model whose tokenizer knows its
    words."""
    root = tmp_path_factory.mktemp("paradox_hf")
    study = get_study("paradox")
    data = study.prepare("generated", 1, study.profile("tiny"), root / "DATA", show=False)
    lines = [x for s in ("src", "tgt") for x in
             (data.raw / f"train.{s}").read_text(encoding="utf-8").splitlines()]
    return root, tiny_marian(root / "marian", lines)


@pytest.fixture(scope="module")
def classifier(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bert") / "bert"
    return tiny_bert_classifier(folder, [w for p in PAIRS for w in p])


# ----------------------------------------------------------------------------- the paradox study
def paradox_run(root: Path, *extra: str) -> int:
    from compsuite.cli import main

    return main(["run", "paradox", "--quiet", "--profile", "tiny", "--data-root",
                 str(root / "DATA"), "--runs-root", str(root / "runs"), "--results-root",
                 str(root / "results"), *extra])


def test_paradox_tests_an_evaluate_only_marian_run(paradox_marian, monkeypatch):
    """`compsuite run paradox --profile tiny --runs marian-hf` with MARIAN_DIR set: the
    run is in no profile's runs, trains nothing, and is tested and reported."""
    root, marian = paradox_marian
    monkeypatch.setenv("MARIAN_DIR", str(marian))
    study = get_study("paradox")
    assert not any("marian-hf" in p.runs for _, p in study.profiles.items())
    assert get_backend("hf").trains(study.run("marian-hf")) is False
    assert paradox_run(root, "--runs", "marian-hf") == 0
    unit = root / "runs" / "paradox" / "tiny" / "generated" / "marian-hf" / "seed1"
    res = json.loads((unit / "result.json").read_text())
    assert (res["run"], res["toolkit"], res["architecture"]) == ("marian-hf", "hf", "marian")
    assert res["evaluate_only"] is True and res["train_wall_s"] == 0
    meta = json.loads((Path(res["checkpoint"]) / "compsuite_hf.json").read_text())
    assert meta["model"] == str(marian.resolve()) and meta["kind"] == "seq2seq"
    assert meta["max_new_tokens"] == 12     # the tiny profile's override
    assert not (unit / "checkpoints").exists() and not (unit / "config.json").exists()
    for test in ("np_vp", "s_conj_s", "substitutivity"):
        summary = res["tests"][test]["summary"]
        assert summary and all(0 <= row["mean_over_templates"] <= 1 for row in summary
                               if row["mean_over_templates"] is not None)
        # (s_conj_s leaves out a random model's outputs without the conjunction: n may be 0)
        assert test == "s_conj_s" or any(row["n"] > 0 for row in summary)
    og = res["overgeneralisation_by_step"]
    assert len(og) == 1 and og[0]["checkpoint"] == res["checkpoint"] and og[0]["summary"]
    lines = (unit / "translations" / "final-np_vp.nl").read_text().splitlines()
    assert lines and all(len(x.split()) <= 12 for x in lines)
    md = (root / "results" / "paradox" / "tiny" / "report.md").read_text()
    assert "## Models" in md and "| marian-hf |" in md and "evaluated as it is" in md
    report = json.loads((root / "results" / "paradox" / "tiny" / "report.json").read_text())
    assert [r["run"] for r in report["runs"]] == ["marian-hf"]
    stamps = {p: p.stat().st_mtime_ns for p in unit.rglob("*") if p.is_file()}
    assert paradox_run(root, "--runs", "marian-hf") == 0      # a second run skips the unit
    assert {p: p.stat().st_mtime_ns for p in unit.rglob("*") if p.is_file()} == stamps


def test_paradox_report_keeps_two_runs_apart(paradox_marian, tmp_path, monkeypatch):
    """Results of two runs of one size are two rows (``generated (run)``), not pooled."""
    root, marian = paradox_marian
    monkeypatch.setenv("MARIAN_DIR", str(marian))
    unit = root / "runs" / "paradox" / "tiny" / "generated" / "marian-hf" / "seed1"
    if not (unit / "result.json").is_file():
        assert paradox_run(root, "--runs", "marian-hf") == 0
    res = json.loads((unit / "result.json").read_text())
    other = {**res, "run": "transformer-fairseq", "toolkit": "fairseq",
             "architecture": "transformer", "evaluate_only": False}
    get_study("paradox").report("tiny", [res, other], tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "generated (marian-hf)" in md and "generated (transformer-fairseq)" in md
    runs = json.loads((tmp_path / "report.json").read_text())["runs"]
    assert {(r["run"], r["evaluate_only"]) for r in runs} == {
        ("marian-hf", True), ("transformer-fairseq", False)}


def test_paradox_eval_score_takes_a_model_folder(paradox_marian, tmp_path, capsys):
    """`compsuite eval paradox score --checkpoint <Hugging Face folder>`: no --data."""
    from compsuite.cli import main

    root, marian = paradox_marian
    tests = root / "DATA" / "paradox" / "generated"
    folder = next(tests.rglob("tests"))
    assert main(["eval", "paradox", "score", "--tests", str(folder), "--test", "np_vp",
                 "--checkpoint", str(marian), "--beam", "1", "--batch-size", "64",
                 "--idioms", "quick", "--out", str(tmp_path / "r.json")]) == 0
    res = json.loads((tmp_path / "r.json").read_text())
    assert res["summary"] and {"NP", "VP"} <= {row["key"] for row in res["summary"]}


def test_paradox_profiles_take_evaluate_only_runs_only_besides_fairseq(tmp_path):
    def add(raw, train):
        raw["runs"]["my-hf"] = {"architecture": "marian", "toolkit": "hf",
                                "args": {"model": "${MARIAN_DIR}", "train": train}}
        raw["profiles"]["tiny"]["runs"].append("my-hf")

    study = edited_study(tmp_path, "paradox", lambda raw: add(raw, False))
    assert "my-hf" in study.profile("tiny").runs
    with pytest.raises(ConfigError, match=r"profiles\.tiny\.runs: 'my-hf' is not an "
                                          r"evaluate-only run, and its toolkit \(hf\)"):
        edited_study(tmp_path, "paradox", lambda raw: add(raw, True))
    from compsuite.runner import Runner

    study = edited_study(tmp_path, "paradox", lambda raw: raw["runs"].update(
        {"my-hf": {"architecture": "marian", "toolkit": "hf", "args": {"model": "/x"}}}))
    with pytest.raises(ConfigError, match="--runs: 'my-hf' is not an evaluate-only run"):
        Runner(study, "tiny", show=False).plan(runs=["my-hf"])


def test_an_unset_model_variable_names_the_file_and_key(paradox_marian, monkeypatch, capsys):
    root, _ = paradox_marian
    monkeypatch.delenv("MARIAN_DIR", raising=False)
    assert paradox_run(root / "unset", "--runs", "marian-hf") == 1
    err = capsys.readouterr().err
    assert "paradox.yaml: runs.marian-hf.args.model" in err and "MARIAN_DIR" in err
    assert "not set" in err and "Traceback" not in err


# ----------------------------------------------------------------------------- SGET and NLI
def test_sget_scores_an_evaluate_only_causal_lm_without_selection(tmp_path, monkeypatch):
    """`--runs causal-lm-hf` (HF_MODEL_DIR): no checkpoint selection, the one model
    translates the test and generalisation sets with the authors' prompt."""
    from compsuite.cli import main

    llama = tiny_llama(tmp_path / "llama", ["Emma saw Liam .", "エマ が リアム を 見た 。"])
    monkeypatch.setenv("HF_MODEL_DIR", str(llama))
    run = get_study("sget").run("causal-lm-hf")
    assert settings(run, "paper").prompt == SGET_PROMPT
    assert main(["run", "sget", "--quiet", "--profile", "tiny", "--runs", "causal-lm-hf",
                 "--data-root", str(tmp_path / "DATA"), "--runs-root", str(tmp_path / "runs"),
                 "--results-root", str(tmp_path / "results")]) == 0
    unit = tmp_path / "runs" / "sget" / "tiny" / "main" / "causal-lm-hf" / "seed1"
    res = json.loads((unit / "result.json").read_text())
    assert res["evaluate_only"] is True and res["checkpoint_selection"]["best_step"] is None
    assert not (unit / "selection.json").exists() and not (unit / "selection").exists()
    assert res["checkpoint"] == str(unit / "model")
    for split in ("test", "gen"):
        assert (unit / "predictions" / "model" / f"pred-{split}.txt").is_file()
        assert res["splits"][split]["n"] > 0
    assert "causal-lm-hf" in (tmp_path / "results" / "sget" / "tiny" / "report.md").read_text()


def test_nli_evaluates_an_evaluate_only_classifier_run(classifier, tmp_path):
    """An NLI study with an hf classifier run (train: false, kind: classifier): its
    predictions on every evaluation set, scored."""
    from compsuite.runner import Runner

    def edit(raw):
        raw["architectures"]["bert"] = {"paper_name": "BERT (yours)"}
        raw["runs"]["bert-hf"] = {"architecture": "bert", "toolkit": "hf",
                                  "args": {"model": str(classifier), "train": False,
                                           "kind": "classifier"}}
    (tmp_path / "yaml").mkdir()
    study = edited_study(tmp_path / "yaml", "nli", edit)
    runner = Runner(study, "tiny", data_root=tmp_path / "DATA", runs_root=tmp_path / "runs",
                    show=False)
    [res] = runner.run(runner.plan(runs=["bert-hf"]))
    assert res["run"] == "bert-hf" and res["checkpoint"].endswith("model")
    for name, ev in res["eval"].items():
        assert ev["score"]["n"] > 0 and 0 <= ev["score"]["whole"] <= 100, name
    unit = tmp_path / "runs" / "nli" / "tiny" / "synthetic" / "bert-hf" / "seed1"
    preds = [line.split("\t")[1] for f in unit.glob("predictions-*.tsv")
             for line in f.read_text().splitlines()]
    assert preds and set(preds) <= set(LABELS.values())


# ----------------------------------------------------------------------------- plain folders
def test_a_classifier_folder_loads_through_load_classifier(classifier):
    from compsuite.models.protocol import BAR, progress
    from compsuite.toolkits import load_classifier

    clf = load_classifier(classifier, batch_size=2)
    assert clf.classes == ["entailment", "neutral", "contradiction"]
    done = []
    token = BAR.set(done.append)
    inputs = [*PAIRS, ("a dog runs", "a dog runs", {"premise_tree": "(x)"})]
    pred = clf.classify(inputs)
    BAR.reset(token)
    assert len(pred) == 6 and set(pred) <= set(clf.classes)
    assert (clf.calls, clf.batches, done) == (1, 3, [2, 2, 2])
    assert clf.predict_proba(inputs).shape == (6, 3)
    feats = clf.features(["a man sleeps", "the cat runs", "a dog"])
    assert tuple(feats.shape) == (3, 8) and feats.dtype.is_floating_point
    import numpy as np   # padding changes nothing: a sentence alone, or beside a longer one

    assert np.allclose(clf.predict_proba(["a man"])[0],
                       clf.predict_proba(["a man", "the cat sleeps now"])[0], atol=1e-5)
    with progress(clf, 5, "classify", show=True, unit="pair"):
        clf.classify(PAIRS)
    with pytest.raises(DataError, match="is not a string, a \\(premise, hypothesis\\) pair"):
        clf.classify([("only one",)])


def test_an_evaluate_only_classifier_run_loads_with_its_labels(classifier, tmp_path):
    backend = get_backend("hf")
    r = Run("bert-hf", "bert", "hf", args={"model": str(classifier), "train": False,
                                           "labels": ["yes", "maybe", "no"]})
    assert backend.trains(r) is False
    done = backend.train(r, "tiny", Dataset(tmp_path), tmp_path / "run", 1, show=False)
    assert done["evaluate_only"] and done["kind"] == "classifier"   # from the config
    assert backend.checkpoints(tmp_path / "run") == []
    clf = counted(backend.load(done["checkpoint"], None, "classifier", decoding({"batch_size": 4})))
    assert clf.classes == ["yes", "maybe", "no"]
    assert set(clf.classify(PAIRS)) <= {"yes", "maybe", "no"} and clf.batches == 2
    with pytest.raises(DataError, match="a sequence-classification model, not a translator"):
        backend.load(done["checkpoint"], None, "translator")
    bad = Run("bert-hf", "bert", "hf", args={"model": str(classifier), "train": False,
                                             "labels": ["yes", "no"]})
    done = backend.train(bad, "tiny", Dataset(tmp_path), tmp_path / "bad", 1, show=False)
    with pytest.raises(DataError, match="labels names 2 classes, but the model has 3"):
        backend.load(done["checkpoint"], None, "classifier")


def test_a_causal_lm_folder_loads_through_load_translator(tmp_path):
    from compsuite.toolkits import load_translator

    folder = tiny_llama(tmp_path / "llama", ["a b c d e", "f g h"])
    t = load_translator(folder, None, batch_size=2)
    assert t.meta == {"prompt": "{input}", "stop": [], "max_new_tokens": None, "kind": "causal"}
    assert t.max_new_tokens == 256   # no data to size the answers by
    assert t.causal
    t.max_new_tokens = 5
    out = t.translate(["a b", "c d e", "f"])
    assert len(out) == 3 and (t.calls, t.batches) == (1, 2)
    assert all(len(o.split()) <= 5 for o in out)
    with pytest.raises(DataError, match="not a sequence classifier"):
        get_backend("hf").load(folder, None, "classifier")


def test_an_evaluate_only_causal_run_prompts_as_its_settings_say(tmp_path):
    folder = tiny_llama(tmp_path / "llama", ["a b c d e", "f g h"])
    r = Run("lm-hf", "lm", "hf", args={"model": str(folder), "train": False,
                                       "prompt": "Q: {input} A:", "stop": ["h"],
                                       "max_new_tokens": 4})
    (tmp_path / "raw").mkdir()
    for split in ("train", "test"):
        (tmp_path / "raw" / f"{split}.src").write_text("a b\nc d\n")
        (tmp_path / "raw" / f"{split}.tgt").write_text("x\ny\n")
    data = Dataset(tmp_path)      # plain raw text, no Dataset.text
    backend = get_backend("hf")
    assert backend.write_data(data) == plain(data) == data.raw
    done = backend.train(r, "tiny", data, tmp_path / "run", 1, show=False)
    t = backend.load(done["checkpoint"], data, "translator",
                     decoding({"batch_size": 8, "beam": 2}))
    assert t.prompts(["a"]) == ["Q: a A:"] and t.meta["stop"] == ["h"] and t.beam == 2
    pred = backend.predict(done, data, "test", decoding({"batch_size": 8}), tmp_path / "run")
    assert len(pred.path.read_text().splitlines()) == 2 == len(pred.hypotheses)
    assert pred.references == (data.raw / "test.tgt").read_text().splitlines()


# ----------------------------------------------------------------------------- errors
def test_a_folder_that_is_not_a_model_is_a_clear_error(tmp_path):
    from compsuite.toolkits import load_classifier, load_translator

    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="empty: not a model folder: no compsuite_hf.json .* "
                                        "and no config.json"):
        load_translator(tmp_path / "empty")
    with pytest.raises(DataError, match="not a model folder"):
        load_classifier(tmp_path / "empty")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{not json")
    with pytest.raises(DataError, match=r"broken/config.json: not a model's config"):
        load_translator(tmp_path / "broken")
    (tmp_path / "noweights").mkdir()
    (tmp_path / "noweights" / "config.json").write_text('{"model_type": "llama"}')
    with pytest.raises(DataError, match="noweights: not a model folder transformers can load"):
        load_translator(tmp_path / "noweights")
    with pytest.raises(DataError, match="not found"):
        load_translator(tmp_path / "nowhere")


def test_a_moved_model_folder_is_named(classifier, tmp_path):
    import shutil

    copy = shutil.copytree(classifier, tmp_path / "copy")
    r = Run("bert-hf", "bert", "hf", args={"model": str(copy), "train": False})
    done = get_backend("hf").train(r, "tiny", Dataset(tmp_path), tmp_path / "run", 1,
                                   show=False)
    shutil.rmtree(copy)
    with pytest.raises(DataError, match=r"compsuite_hf.json: its model folder .*copy does not "
                                        "exist"):
        get_backend("hf").load(done["checkpoint"], None, "classifier")


@pytest.mark.parametrize("args, match", [
    ({"train": False, "build": {"architecture": "llama"}, "model": None},
     r"args\.build: a stand-in built from a config has random weights"),
    ({"train": True, "kind": "classifier"}, r"args\.kind: the hf backend trains causal"),
    ({"train": False, "kind": "causal"}, r"args\.kind: causal, but .*config.json describes a "
                                          "classifier model"),
    ({"train": False, "kind": "seq2seq"}, r"args\.kind: seq2seq, but .* classifier model"),
    ({"train": False, "kind": "causal", "labels": ["a"]}, r"args\.labels: only for a classifier"),
    ({"train": "no"}, r"args\.train: true or false"),
])
def test_bad_evaluate_only_settings_name_the_key(classifier, tmp_path, args, match):
    r = Run("r", "bert", "hf", args={"model": str(classifier), **args}, source="x.yaml")
    with pytest.raises(ConfigError, match=match):
        get_backend("hf").train(r, "tiny", Dataset(tmp_path), tmp_path / "run", 1, show=False)


def test_train_is_the_runs_own_not_a_profiles(classifier, tmp_path):
    r = Run("r", "bert", "hf", args={"model": str(classifier)},
            profiles={"tiny": {"train": False}}, source="x.yaml")
    with pytest.raises(ConfigError, match=r"x\.yaml: runs\.r\.profiles\.tiny\.train: set train "
                                          "in the run's args"):
        settings(r, "tiny")
    assert get_backend("hf").trains(r) is True


def test_a_folder_without_config_is_refused_for_an_evaluate_only_run(tmp_path):
    (tmp_path / "m").mkdir()
    r = Run("r", "lm", "hf", args={"model": str(tmp_path / "m"), "train": False},
            source="x.yaml")
    with pytest.raises(ConfigError, match=r"x\.yaml: runs\.r\.args\.model: .* is not a Hugging "
                                          "Face model folder"):
        get_backend("hf").train(r, "tiny", Dataset(tmp_path), tmp_path / "run", 1, show=False)


def test_sentence_pair_data_needs_no_plain_text(tmp_path):
    data = Dataset(tmp_path, layout="sentence_pair")
    assert get_backend("hf").write_data(data) == data.raw
    with pytest.raises(ConfigError, match="reads plain text"):
        plain(data)


# ----------------------------------------------------------------------------- any study
def test_run_hf_model_adds_an_evaluate_only_classifier_to_ctlpp(tmp_path):
    """``compsuite run ctlpp --hf-model DIR``: a sequence classifier over the symbols, in
    every unit, with its representations (the hf classifier's features) analysed."""
    import json

    from compsuite.cli import main

    study = get_study("ctlpp")
    data = study.prepare("A", 1, study.profile("tiny"), tmp_path / "DATA", show=False)
    m = json.loads((data.raw / "manifest.json").read_text())
    lines = (data.raw / "train.src").read_text().splitlines()
    clf = tiny_bert_classifier(tmp_path / "bert", lines, dict(enumerate(m["symbols"])))
    assert main(["run", "ctlpp", "--profile", "tiny", "--hf-model", str(clf), "--name",
                 "bert", "--quiet", "--data-root", str(tmp_path / "DATA"), "--runs-root",
                 str(tmp_path / "runs"), "--results-root", str(tmp_path / "results")]) == 0
    res = json.loads((tmp_path / "runs/ctlpp/tiny/A/bert/seed1/result.json").read_text())
    assert res["evaluate_only"] and res["toolkit"] == "hf"
    assert 0 <= res["test_ood"]["accuracy"] <= 1 and res["test_ood"]["n"] > 0
    sims = res["representations"]["mean_similarity"]
    assert set(sims) == {"within", "between"} and all(-1 <= v <= 1.0001 for v in sims.values())
    assert "bert" in (tmp_path / "results/ctlpp/tiny/report.md").read_text()


def test_pcfgset_localism_takes_a_model_folder(tmp_path, capsys):
    """``compsuite eval pcfgset localism --checkpoint DIR``: a causal LM of the user's in
    the loop (its own outputs fed back), counted like the toolkits' translators."""
    import json

    from compsuite.cli import main

    unrolled = tmp_path / "unrolled.tsv"
    unrolled.write_text("unrolled\tappend C1 M1 , H1 K1\t*1\n"
                        "unrolled\tswap_first_last *1\tK1 M1 H1 C1\n"
                        "original\tswap_first_last append C1 M1 , H1 K1\tK1 M1 H1 C1\n")
    llama = tiny_llama(tmp_path / "llama", ["swap_first_last append C1 M1 , H1 K1"])
    assert main(["eval", "pcfgset", "localism", "--checkpoint", str(llama), "--unrolled",
                 str(unrolled), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["n"] == 1 and res["model_calls"] == 3 and res["input"]["checkpoint"] == str(llama)


def test_a_classifier_batches_by_length_and_keeps_the_inputs_order(classifier):
    """Batches sorted by length give each input the probabilities it gets alone, in the
    inputs' order; ``batch_size: auto`` on the CPU is the default (32)."""
    import numpy as np

    from compsuite.toolkits import get_backend

    batched = get_backend("hf").load(classifier, None, "classifier", decoding({"batch_size": 3}))
    alone = get_backend("hf").load(classifier, None, "classifier", decoding({"batch_size": 1}))
    for inputs in (["a man", "the cat sleeps now near the dog", "a dog", "the cat runs"],
                   [*PAIRS, ("a man", "the cat sleeps now near the dog and a man")]):
        proba = batched.predict_proba(inputs)
        assert np.allclose(proba, np.concatenate([alone.predict_proba([x]) for x in inputs]),
                           atol=1e-5)
        assert batched.classify(inputs) == [alone.classify([x])[0] for x in inputs]
    assert get_backend("hf").load(classifier, None, "classifier",
                                  decoding({"batch_size": "auto"})).batch_size == 32
