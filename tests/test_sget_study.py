"""The SGET study on the study interface: its YAML keys, its plan, the data folders,
checkpoint selection by development exact match, the scorer behind `compsuite eval sget
score`, and the generic pieces it added (a run's `gpu:` options, open-vocabulary
datasets)."""
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import edited_study
import yaml

from compsuite.foundation.errors import ConfigError, DataError
from compsuite.foundation.io import read_lines, write_lines
from compsuite.registry import get_study



def study_with(tmp_path, edit):
    return edited_study(tmp_path, "sget", edit)


@pytest.mark.parametrize("edit, message", [
    (lambda r: r["profiles"]["quick"].update(parts={"mainn": {}}), "unknown part 'mainn'"),
    (lambda r: r["profiles"]["quick"]["data"].update(scale=1.5), "data.scale"),
    (lambda r: r["profiles"]["quick"]["data"].update(sede=1), "unknown key 'sede'"),
    (lambda r: r["profiles"]["quick"]["data"].update(ja_vocab=0), "data.ja_vocab"),
    (lambda r: r["profiles"]["paper"]["data"].update(released="/x"), "released"),
    (lambda r: r["profiles"]["quick"]["parts"].update(main={"runs": ["gru-onmt"]}),
     "unknown run 'gru-onmt'"),
    (lambda r: r["profiles"]["quick"]["parts"].update(main={"seeds": []}), "seeds"),
    (lambda r: r["profiles"]["quick"].update(selection={"keep": "last"}), "selection.keep"),
    (lambda r: r["runs"]["lstm-onmt"].update(gpu=["fp16"]), "runs.lstm-onmt.gpu"),
])
def test_bad_yaml_names_the_file_and_key(tmp_path, edit, message):
    with pytest.raises(ConfigError) as e:
        study_with(tmp_path, edit)
    assert str(tmp_path / "sget.yaml") in str(e.value) and message in str(e.value)


def test_profile_settings_are_typed_with_todays_defaults(tmp_path):
    from compsuite.studies.sget import Data, Options, Part, Selection

    study = get_study("sget")
    quick = study.profile("quick").settings
    # quick: twice the 0.1 scale and coarser pieces, so that the small Transformer learns
    # the in-distribution task (data_prep/sget/doc.md, "The quick profile, measured")
    assert isinstance(quick, Options) and quick.data == Data(scale=0.2, seed=1, en_vocab=1000,
                                                             ja_vocab=1500)
    assert Data().en_vocab == 300 and Data().ja_vocab == 650 and quick.data.released is None
    assert quick.parts == {"main": Part()} and quick.selection == Selection("all")
    paper = study.profile("paper").settings
    assert paper.selection.keep == "best"
    assert paper.parts["no_restrictions"].runs == ["llama2-hf"]   # Table 5: Llama 2 alone
    assert paper.parts["no_concatenation"].runs == ["transformer-onmt", "llama2-hf"]
    # no parts (or null ones): main alone, with the profile's runs and seeds
    bare = study_with(tmp_path, lambda r: [r["profiles"]["quick"].pop(k)
                                           for k in ("parts", "data", "selection")])
    assert bare.profile("quick").settings == Options()
    assert Options().parts == {"main": Part()} and Options(parts={"main": None}) == Options()


def test_runs_of_parts_must_be_opennmt_runs(tmp_path):
    def edit(r):
        r["runs"]["transformer-fairseq"] = {"architecture": "transformer",
                                            "toolkit": "fairseq"}
        r["profiles"]["quick"]["parts"] = {"main": {"runs": ["transformer-fairseq"]}}

    with pytest.raises(ConfigError, match=r"profiles\.quick\.parts\.main\.runs: "
                                          "'transformer-fairseq' is not an evaluate-only run, "
                                          r"and its toolkit \(fairseq\) saves no checkpoints "
                                          "by step"):
        study_with(tmp_path, edit)


def test_plan_parts_with_their_own_runs_and_seeds():
    study = get_study("sget")
    paper = study.plan(study.profile("paper"))
    assert {u.part for u in paper} == {"main", "no_restrictions", "no_concatenation"}
    main = [u for u in paper if u.part == "main"]
    assert len(main) == 15 and {u.seed for u in main} == {1, 2, 3, 4, 5}
    assert {u.run for u in main} == {"transformer-onmt", "lstm-onmt", "llama2-hf"}
    ablations = [u for u in paper if u.part != "main"]
    assert {(u.part, u.run) for u in ablations} == {
        ("no_restrictions", "llama2-hf"), ("no_concatenation", "transformer-onmt"),
        ("no_concatenation", "llama2-hf")} and len(ablations) == 15
    assert all(u.dataset == u.part and u.path == f"{u.part}/{u.run}/seed{u.seed}"
               for u in paper)
    assert [u.path for u in study.plan(study.profile("quick"))] == [
        "main/transformer-onmt/seed1", "main/llama2-hf/seed1"]
    assert set(study.parts(study.profile("paper"))) == {"main", "no_restrictions",
                                                        "no_concatenation"}


def test_paper_runs_keep_the_authors_settings_and_add_fp16_on_a_gpu(tmp_path, monkeypatch):
    from compsuite.foundation.dataset import Dataset
    from compsuite.toolkits.onmt import backend as onmt

    study = get_study("sget")
    data = Dataset(tmp_path, ("train", "valid"), formats={"onmt": tmp_path})
    run = study.run("transformer-onmt")
    monkeypatch.setattr(onmt, "cuda_available", lambda: False)
    cpu = onmt.BACKEND.config(run, "paper", data, tmp_path / "run", 1)
    assert "model_dtype" not in cpu
    assert (cpu["max_relative_positions"], cpu["learning_rate"], cpu["batch_size"],
            cpu["accum_count"], cpu["train_steps"], cpu["save_checkpoint_steps"],
            cpu["label_smoothing"], cpu["param_init_glorot"]) == (
        20, 0.0001, 256, [4], 70000, 1000, 0.0, True)
    monkeypatch.setattr(onmt, "cuda_available", lambda: True)
    gpu = onmt.BACKEND.config(run, "paper", data, tmp_path / "run", 1)
    assert gpu["model_dtype"] == "fp16" and gpu["gpu_ranks"] == [0]
    quick = onmt.BACKEND.config(run, "quick", data, tmp_path / "run", 1)
    assert quick["hidden_size"] < 512 and quick["max_relative_positions"] == 20


def test_open_vocabulary_datasets_reach_the_writers(tmp_path, monkeypatch):
    from compsuite.foundation.dataset import Dataset
    from compsuite.toolkits.fairseq import backend as fairseq
    from compsuite.toolkits.onmt import backend as onmt

    seen = {}
    monkeypatch.setattr(onmt, "write_onmt", lambda *a, **k: seen.update(onmt=k))
    monkeypatch.setattr(fairseq, "write_fairseq", lambda *a, **k: seen.update(fairseq=k))
    onmt.BACKEND.write_data(Dataset(tmp_path, allow_unknown=True))
    fairseq.BACKEND.write_data(Dataset(tmp_path))
    assert seen["onmt"]["allow_unknown"] is True and seen["fairseq"]["allow_unknown"] is False


# ----------------------------------------------------------------------------- checkpoint selection
class FakeBackend:
    """Checkpoints at steps 10, 20, 30 whose development translations are right for
    1, 3 and 3 of 4 lines (a tie: the earliest wins)."""

    def __init__(self, run_dir, refs, right):
        self.run_dir, self.refs, self.right = run_dir, refs, right
        self.calls = []
        (run_dir / "checkpoints").mkdir(parents=True)
        for step in right:
            (run_dir / "checkpoints" / f"model_step_{step}.pt").write_text("x")

    def checkpoints(self, run_dir, kind=None):
        from compsuite.toolkits import Checkpoint

        assert kind == "step"
        return sorted((Checkpoint("step", int(p.stem.rsplit("_", 1)[1]), p)
                       for p in (run_dir / "checkpoints").glob("*.pt")), key=lambda c: c.at)

    def predict(self, trained, data, split, generation, out_dir, show=True, wrap=None):
        step = int(Path(trained["checkpoint"]).stem.rsplit("_", 1)[1])
        self.calls.append(step)
        hyps = [" ".join(r) if i < self.right[step] else "間違い"
                for i, r in enumerate(self.refs)]   # pieces separated by spaces
        write_lines(out_dir / "pred.txt", hyps)
        return SimpleNamespace(path=out_dir / "pred.txt", hypotheses=hyps)


def test_checkpoint_selection_by_dev_exact_match_resumes_and_prunes(tmp_path):
    from functools import partial

    from compsuite.eval.sget.selection import select_checkpoint

    refs = ["猫が走った。", "犬が寝た。", "鳥が鳴いた。", "魚が泳いだ。"]
    dev = tmp_path / "data" / "encoded" / "text" / "dev.ja"
    write_lines(dev, refs)
    run_dir = tmp_path / "run"
    backend = FakeBackend(run_dir, refs, {10: 1, 20: 3, 30: 3})
    select = partial(select_checkpoint, backend, run_dir, SimpleNamespace(root=tmp_path / "data"),
                     {}, dev)
    sel = select()
    assert sel["by_step"] == {"10": 0.25, "20": 0.75, "30": 0.75}
    assert sel["best_step"] == 20 and sel["checkpoint"].endswith("model_step_20.pt")
    assert json.loads((run_dir / "selection.json").read_text())["by_step"]["20"] == 0.75
    # stored scores are not computed again; a new checkpoint is
    (run_dir / "checkpoints" / "model_step_40.pt").write_text("x")
    backend.right[40] = 4
    sel = select(keep="best")
    assert backend.calls == [10, 20, 30, 40] and sel["best_step"] == 40
    assert [p.name for p in (run_dir / "checkpoints").iterdir()] == ["model_step_40.pt"]
    # the best checkpoint deleted by hand: an error, not a silent other choice
    (run_dir / "checkpoints" / "model_step_40.pt").unlink()
    (run_dir / "checkpoints" / "model_step_50.pt").write_text("x")
    backend.right[50] = 0
    with pytest.raises(DataError, match="step 40"):
        select()


class GenerateBackend(FakeBackend):
    """FakeBackend's translations as fairseq-generate writes them (``S-``/``T-``/``H-``/
    ``D-``/``P-`` lines, the sentences out of order, a log line first), read by the
    fairseq backend."""

    def predict(self, trained, data, split, generation, out_dir, show=True, wrap=None):
        from compsuite.toolkits import get_backend

        step = int(Path(trained["checkpoint"]).stem.rsplit("_", 1)[1])
        self.calls.append(step)
        lines = ["2024-01-01 | INFO | fairseq_cli.generate | loading"]
        for i in reversed(range(len(self.refs))):
            hyp = " ".join(self.refs[i]) if i < self.right[step] else "間違い"
            lines += [f"S-{i}\tsource {i}", f"T-{i}\t{' '.join(self.refs[i])}",
                      f"H-{i}\t-0.25\t{hyp}", f"D-{i}\t-0.25\t{hyp}", f"P-{i}\t-0.25 -0.25"]
        write_lines(out_dir / f"generate-{split}.txt", lines)
        return get_backend("fairseq").read_outputs(out_dir / f"generate-{split}.txt")


def test_selection_and_scoring_read_the_hypotheses_of_a_generate_file(tmp_path):
    """A backend whose own output is not one hypothesis per line (fairseq-generate's):
    the selection scores and the split scored are its hypotheses, as the backend read
    them, not the file's lines."""
    from compsuite.eval.sget.scoring import score_split
    from compsuite.eval.sget.selection import select_checkpoint

    refs = ["猫が走った。", "犬が寝た。", "鳥が鳴いた。", "魚が泳いだ。"]
    dev = tmp_path / "data" / "encoded" / "text" / "dev.ja"
    write_lines(dev, refs)
    run_dir = tmp_path / "run"
    backend = GenerateBackend(run_dir, refs, {10: 1, 20: 3, 30: 4})
    sel = select_checkpoint(backend, run_dir, SimpleNamespace(root=tmp_path / "data"), {}, dev)
    assert sel["by_step"] == {"10": 0.25, "20": 0.75, "30": 1.0} and sel["best_step"] == 30
    text = tmp_path / "text"
    write_lines(text / "test.ja", refs)
    write_lines(text / "test.en", ["The cat ran .", "The dog slept .", "The bird sang .",
                                   "The fish swam ."])
    write_lines(text / "test.pattern", ["active_to_passive"] * 4)
    pred = backend.predict({"checkpoint": sel["checkpoint"]}, None, "test", {}, tmp_path / "out")
    scored = score_split("test", pred, text, tmp_path / "out", gen_info_file=tmp_path / "none")
    assert read_lines(tmp_path / "out" / "test.ja") == refs
    assert scored["exact_match"] == 1.0


class SampledBackend(FakeBackend):
    """Checkpoints right on given sets of development lines; a sample of lines is
    decoded by ``predict_lines``, the whole set by ``predict`` (both counted)."""

    def __init__(self, run_dir, refs, right_lines):
        super().__init__(run_dir, refs, {s: 0 for s in right_lines})
        self.right_lines, self.sampled = right_lines, []

    def hyp(self, step, i):
        return " ".join(self.refs[i]) if i in self.right_lines[step] else "間違い"

    def predict(self, trained, data, split, generation, out_dir, show=True, wrap=None):
        step = int(Path(trained["checkpoint"]).stem.rsplit("_", 1)[1])
        self.calls.append(step)
        hyps = [self.hyp(step, i) for i in range(len(self.refs))]
        write_lines(out_dir / "pred.txt", hyps)
        return SimpleNamespace(path=out_dir / "pred.txt", hypotheses=hyps)

    def predict_lines(self, trained, data, split, lines, generation, out, show=False):
        assert split == "valid" and out.name.startswith("pred-valid.sample")
        step = int(Path(trained["checkpoint"]).stem.rsplit("_", 1)[1])
        self.sampled.append((step, list(lines)))
        return [self.hyp(step, i) for i in lines]


def test_selection_on_a_sample_scores_the_best_few_in_full(tmp_path):
    """``selection: {sample, finalists}``: every checkpoint on the sample's lines, the
    finalists (and those tied with the last) on the whole development set; the chosen
    one is the full selection's wherever that is among the sample's best; it resumes
    without decoding again, and a sample as large as the set is the whole set."""
    from functools import partial

    from compsuite.eval.sget.selection import sample_lines, select_checkpoint

    refs = [f"文{i}です。" for i in range(20)]
    dev = tmp_path / "dev.ja"
    write_lines(dev, refs)
    drawn = sample_lines(20, 8, seed=1)
    assert drawn == sample_lines(20, 8, seed=1) != sample_lines(20, 8, seed=2)
    assert len(set(drawn)) == 8 and drawn == sorted(drawn)
    rest = [i for i in range(20) if i not in drawn]
    # on the sample: 60 > 40 = 30 > 10 = 20 = 50; on the whole set 40 is best (its
    # sample lines fewer than 60's, but more of the others)
    right = {10: set(drawn[:1]), 20: set(drawn[:1]) | set(rest[:2]),
             30: set(drawn[:4]), 40: set(drawn[:4]) | set(rest[:9]),
             50: set(drawn[:1]), 60: set(drawn[:6]) | set(rest[:1])}
    for staged, how in ((False, {}), (True, {"sample": 8, "finalists": 2})):
        run_dir = tmp_path / f"run-{staged}"
        backend = SampledBackend(run_dir, refs, right)
        select = partial(select_checkpoint, backend, run_dir, None, {}, dev, **how)
        sel = select()
        assert sel["best_step"] == 40 and sel["best_score"] == 13 / 20
        assert sel["signature"].startswith("metric:exact|norm:nfkc|")
        if not staged:
            assert sel["sample"] is None and sel["dev_sentences_decoded"] == 120
            assert sorted(backend.calls) == [10, 20, 30, 40, 50, 60] and not backend.sampled
            continue
        # every checkpoint on the 8 drawn lines; 60, 40 and 30 (tied with 40) in full
        assert sorted(s for s, _ in backend.sampled) == [10, 20, 30, 40, 50, 60]
        assert all(lines == drawn for _, lines in backend.sampled)
        assert sorted(backend.calls) == [30, 40, 60]
        assert sel["sample"]["chosen_from"] == ["30", "40", "60"]
        assert sel["sample"]["by_step"]["60"] == 6 / 8 and sel["sample"]["seed"] == 1
        assert sel["dev_sentences_decoded"] == 6 * 8 + 3 * 20
        assert set(sel["by_step"]) == {"30", "40", "60"}
        backend.calls.clear(), backend.sampled.clear()
        assert select()["best_step"] == 40 and not backend.calls and not backend.sampled
        # one finalist: 60 alone is decoded in full, and chosen (40 was not on the sample)
        again = select(finalists=1)
        assert again["best_step"] == 60 and not backend.calls
        # a sample of the whole set or more: the full selection
        whole = select(sample=20)
        assert whole["sample"] is None and whole["best_step"] == 40
        assert sorted(backend.calls) == [10, 20, 50]


# ----------------------------------------------------------------------------- scoring
@pytest.fixture(scope="module")
def tiny_data(tmp_path_factory):
    from compsuite.data_prep.sget.generate import generate

    out = tmp_path_factory.mktemp("sget_tiny")
    generate(out, seed=3, scale=0.005, show=False)
    return out


def test_score_set_copies_and_breaks_down(tiny_data):
    from compsuite.data_prep.sget.preprocess import read_released
    from compsuite.eval.sget.metrics import parse_gen_info, score_set

    rows = read_released(tiny_data / "gen.txt")
    info = parse_gen_info(read_lines(tiny_data / "gen_info.tsv"))
    refs = [r.japanese for r in rows]
    hyps = list(refs)
    hyps[0] = "まったく違う文です。"
    res = score_set(hyps, refs, [r.english for r in rows], [r.pattern for r in rows],
                    gen_info=info, partial=False,
                    train_sources=[r.english for r in read_released(tiny_data / "train.txt")])
    n = len(rows)
    assert res["n"] == n and res["exact_match"] == pytest.approx((n - 1) / n)
    assert "tok:none" in res["bleu"]["signature"] and "seg:sudachi-C-core" in res[
        "bleu"]["signature"]
    first = rows[0].pattern
    cell = res["per_pattern"][first]
    k = sum(r.pattern == first for r in rows)
    assert cell["n"] == k and cell["exact_match"] == pytest.approx((k - 1) / k)
    assert cell["partial_match"] is None and "partial_match" not in res
    assert all(c["exact_match"] == 1.0 for p, c in res["per_pattern"].items() if p != first)
    assert sum(c["n"] for c in res["per_pattern"].values()) == n
    assert sum(c["n"] for c in res["by_group"].values()) == n
    for p, split in res["by_cp"].items():
        assert split["in_cp"]["n"] + split["not_in_cp"]["n"] == res["per_pattern"][p]["n"]
    # Table 7: some deeper CP recursion is at least as long as the longest training
    # sentence that is not a concatenation
    assert res["max_train_length"] < max(len(r.english.split()) for r in read_released(
        tiny_data / "train.txt"))
    for p, split in res["by_length"].items():
        assert split["longer"]["n"] + split.get("shorter", {"n": 0})["n"] == \
            res["per_pattern"][p]["n"]


def test_eval_sget_score_command(tiny_data, tmp_path, capsys):
    from compsuite.cli import main

    rows = read_lines(tiny_data / "test.txt")
    hyps = tmp_path / "hyps.txt"
    write_lines(hyps, [r.split("\t")[1] for r in rows])
    assert main(["eval", "sget", "score", "--data", str(tiny_data), "--split", "test",
                 "--hyps", str(hyps), "--out", str(tmp_path / "out")]) == 0
    res = json.loads((tmp_path / "out" / "score.json").read_text())
    assert res["exact_match"] == 1.0 and res["bleu"]["score"] == pytest.approx(100.0)
    assert "per_pattern" not in res and "| all " in capsys.readouterr().out
    write_lines(hyps, [r.split("\t")[1] for r in rows][:-1])
    assert main(["eval", "sget", "score", "--data", str(tiny_data), "--split", "test",
                 "--hyps", str(hyps)]) != 0
    assert "translations for" in capsys.readouterr().err


# ----------------------------------------------------------------------------- paper configs
@pytest.fixture(scope="module")
def encoded_tiny(tmp_path_factory):
    """The study's own data path at 0.5% scale: generated, Sudachi + BPE, OpenNMT-py
    corpus and vocabularies."""
    from compsuite.data_prep.sget.dataset import build_dataset
    from compsuite.toolkits import get_backend

    root = tmp_path_factory.mktemp("sget_data")
    data = build_dataset(root, "main", scale=0.005, show=False)
    data.formats["onmt"] = get_backend("onmt").write_data(data)
    return data


def test_data_folders_and_corpus(encoded_tiny):
    from compsuite.foundation.manifest import read_manifest

    root = encoded_tiny.root
    assert root.parts[-4:] == ("sget", "main", "scale0.005", "seed1")
    m = read_manifest(encoded_tiny.raw)
    assert m["generator"] == "sget.corpus" and set(m["counts"]) == set(encoded_tiny.splits)
    # the corpus is the encoding: valid is the development set
    assert read_lines(encoded_tiny.raw / "valid.tgt") == read_lines(root / "encoded" / "dev.ja")
    assert read_lines(encoded_tiny.raw / "gen.src") == read_lines(root / "encoded" / "gen.en")
    # not a second copy: raw/ is hard-linked to encoded/ (same file system here)
    assert (encoded_tiny.raw / "valid.tgt").samefile(root / "encoded" / "dev.ja")
    # the encoding's plain text is encoded/text/; nothing else is named raw/
    assert read_lines(root / "encoded" / "text" / "dev.pattern")
    assert not (root / "encoded" / "raw").exists()
    # a second preparation finds everything in place (no file rewritten)
    from compsuite.data_prep.sget.dataset import build_dataset

    before = {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}
    build_dataset(root.parents[3], "main", scale=0.005, show=False)
    after = {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}
    assert before == after


@pytest.mark.parametrize("run_name", ["transformer-onmt", "lstm-onmt"])
def test_paper_config_runs_one_update(run_name, encoded_tiny, tmp_path):
    """The paper's OpenNMT-py models (full size) load and train one update on tiny data
    (256 sentences instead of 256 x 4, so the test stays short)."""
    import subprocess

    import torch

    from compsuite.toolkits.writing import toolkit_command
    from compsuite.toolkits import get_backend
    from compsuite.torch_compat import allow_toolkit_checkpoints

    run = get_study("sget").run(run_name)
    cfg = get_backend("onmt").config(run, "paper", encoded_tiny, tmp_path, seed=1)
    cfg.update(train_steps=1, valid_steps=1000, save_checkpoint_steps=1, report_every=1,
               accum_count=[1], bucket_size=512, num_workers=0)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    r = subprocess.run(toolkit_command("onmt_train") + ["-config", str(tmp_path / "config.yaml")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    allow_toolkit_checkpoints()
    opt = torch.load(tmp_path / "checkpoints" / "model_step_1.pt", map_location="cpu")["opt"]
    want = {"transformer-onmt": {"enc_layers": 6, "dec_layers": 6, "heads": 8,
                                 "hidden_size": 512, "transformer_ff": 2048,
                                 "max_relative_positions": 20},
            "lstm-onmt": {"enc_layers": 4, "dec_layers": 4, "rnn_type": "LSTM",
                          "global_attention": "dot", "hidden_size": 512}}[run_name]
    assert {k: getattr(opt, k) for k in want} == want
    assert (opt.learning_rate, opt.optim, opt.batch_size, opt.label_smoothing) == (
        0.0001, "adam", 256, 0.0)
