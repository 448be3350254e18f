"""The paradox study's paper-profile pipeline on hand-made files in the OPUS / Flores-101
formats (the real corpora are the user's): `compsuite data paradox opus` (selection,
Moses tokenisation, cleaning, BPE, byte-identical on any number of processes), its
errors, the codec that encodes inputs and decodes outputs, and the paper profile's
shape run end to end with a tiny model: prepare -> train to the listed epochs (fairseq
backend's save_epochs) -> consistency tests, overgeneralisation per epoch, Flores BLEU
-> report."""
import gzip
import json
import re

import pytest

from conftest import edited_study

from compsuite.cli import main
from compsuite.data_prep.paradox import corpus, opus
from compsuite.foundation.errors import ConfigError, DataError, ToolkitError
from compsuite.models.protocol import ModelBase, counted

MESSY_EN = ["", "one two three four five six seven eight nine ten eleven twelve",
            "Hello, world - \"quoted\" text's here.", "x " * 300]
MESSY_NL = ["leeg", "een", "Hallo, wereld - \"geciteerd\" tekst is hier.", "y " * 300]


@pytest.fixture(scope="module")
def opus_files(tmp_path_factory):
    """A hand-made corpus (generated pairs + four pairs clean-corpus-n drops, the Dutch
    side gzipped) and a Flores-101 folder of generated sentences."""
    root = tmp_path_factory.mktemp("opus_files")
    sp = corpus.build(1, 800, 40, 40)
    en = [e for e, _ in sp["train"]] + MESSY_EN
    nl = [d for _, d in sp["train"]] + MESSY_NL
    (root / "c.en").write_text("\n".join(en) + "\n", encoding="utf-8")
    with gzip.open(root / "c.nl.gz", "wt", encoding="utf-8") as fh:
        fh.write("\n".join(nl) + "\n")
    for split, name in (("valid", "dev"), ("test", "devtest")):
        d = root / "flores" / name
        d.mkdir(parents=True)
        (d / f"eng.{name}").write_text("\n".join(e for e, _ in sp[split]) + "\n")
        (d / f"nld.{name}").write_text("\n".join(x for _, x in sp[split]) + "\n")
    return root


def _prepare(files, out, **kw):
    kw = {"size": "full", "seed": 3, "merges": 300, "jobs": 1, "show": False, **kw}
    return opus.prepare(files / "c.en", files / "c.nl.gz", files / "flores", out, **kw)


def test_prepare_counts_drops_and_is_byte_identical(opus_files, tmp_path):
    m = _prepare(opus_files, tmp_path / "a")
    assert m["counts"] == {"corpus_pairs": 804, "selected_pairs": 804, "train": 801,
                           "valid": 40, "test": 40}
    assert m["dropped"] == {"empty side": 1, "side over 250 tokens": 1,
                            "token-length ratio over 1.5": 1}
    raw = tmp_path / "a" / "raw"
    src = (raw / "train.src").read_text().splitlines()
    assert len(src) == 801 and any("@@" in x for x in src)
    assert "&quot;" in (raw / "train.src").read_text()              # Moses escaping
    assert (tmp_path / "a" / "text" / "flores" / "devtest.en").read_bytes() == \
        (opus_files / "flores" / "devtest" / "eng.devtest").read_bytes()
    assert not (raw / "flores").exists()                             # raw/: the corpus only
    assert m["encoding"]["bpe"] == "subword_nmt" and m["versions"]["sacremoses"]
    # again, and on two processes: the same bytes
    _prepare(opus_files, tmp_path / "b", jobs=2)
    for f in ("train.src", "train.tgt", "valid.src", "test.tgt", "bpe.codes", "codec.json"):
        assert (raw / f).read_bytes() == (tmp_path / "b" / "raw" / f).read_bytes(), f
    stamp = (raw / "manifest.json").stat().st_mtime_ns
    _prepare(opus_files, tmp_path / "a")                            # stored: reused
    assert (raw / "manifest.json").stat().st_mtime_ns == stamp


def test_sizes_select_seeded_subsets(opus_files, tmp_path):
    assert opus.select(804, "full", 1) is None
    assert opus.select(804, "small", 1, small_pairs=2000) is None   # fewer pairs than asked
    small = opus.select(804, "small", 1, small_pairs=600)
    assert small.sum() == 600 and (small == opus.select(804, "small", 1, small_pairs=600)).all()
    assert not (small == opus.select(804, "small", 2, small_pairs=600)).all()
    assert opus.select(804, "medium", 1).sum() == 804 // 8
    m = _prepare(opus_files, tmp_path / "m", size="medium")
    assert m["counts"]["selected_pairs"] == 100 and m["counts"]["train"] <= 100


def test_codec_round_trip(opus_files, tmp_path):
    _prepare(opus_files, tmp_path / "a")
    codec = opus.Codec(tmp_path / "a" / "raw")
    plain = ["Hello, world - \"quoted\" text's here.", "the doctors didn't sleep ."]
    enc = codec.encode(plain)
    assert "&quot;" in enc[0] and " ." in enc[1]
    assert codec.decode(enc, "en") == ["Hello, world - \"quoted\" text's here.",
                                       "the doctors didn't sleep."]

    class Echo(ModelBase):                        # a model that copies its (encoded) input
        name = "echo"

        def translate(self, xs):
            return list(xs)
    tr = counted(opus.CodecTranslator(Echo(), codec))
    assert tr.translate(["De dokter slaapt ."]) == ["De dokter slaapt."] and tr.calls == 1


def test_bad_inputs_name_the_file(opus_files, tmp_path):
    short = tmp_path / "short.nl"
    short.write_text("een\ntwee\n")
    with pytest.raises(DataError, match=r"c\.en has more lines than .*short\.nl \(line 3\)"):
        opus.prepare(opus_files / "c.en", short, opus_files / "flores", tmp_path / "x", show=False)
    with pytest.raises(DataError, match=r"nope/dev/eng\.dev: no such file"):
        opus.prepare(opus_files / "c.en", opus_files / "c.nl.gz", tmp_path / "nope",
                     tmp_path / "x", show=False)
    with pytest.raises(DataError, match="no such file"):
        opus.Codec(tmp_path)


def test_data_command(opus_files, tmp_path, capsys):
    assert main(["data", "paradox", "opus", "--en", str(opus_files / "c.en"),
                 "--nl", str(opus_files / "c.nl.gz"), "--flores", str(opus_files / "flores"),
                 "--out", str(tmp_path / "o"), "--size", "small", "--small-pairs", "500",
                 "--merges", "200"]) == 0
    err = capsys.readouterr().err
    assert "selected_pairs: 500" in err and (tmp_path / "o" / "raw" / "train.src").is_file()


TINY = {"arch": "transformer", "share_all_embeddings": True, "encoder_layers": 1,
        "decoder_layers": 1, "encoder_embed_dim": 32, "decoder_embed_dim": 32,
        "encoder_ffn_embed_dim": 64, "decoder_ffn_embed_dim": 64,
        "encoder_attention_heads": 2, "decoder_attention_heads": 2, "dropout": 0.1,
        "lr": 0.001, "warmup_updates": 10, "max_tokens": 1000, "weight_decay": None,
        "clip_norm": None}


def _opus_profile(files, epochs=(1, 2)):
    def edit(raw):
        raw["runs"]["transformer-fairseq"]["profiles"]["opustest"] = dict(TINY)
        raw["profiles"]["opustest"] = {
            "description": "the paper profile's shape on hand-made files", "seeds": [1],
            "runs": ["transformer-fairseq"],
            "data": {"corpus": "opus", "sizes": ["small"], "en": "${OPUSTEST_DIR}/c.en",
                     "nl": str(files / "c.nl.gz"), "flores": str(files / "flores"),
                     "small_pairs": 600, "bpe_merges": 300, "seed": 1,
                     "checkpoint_epochs": {"small": list(epochs)}},
            "tests": {"n": 1, "seed": 1, "idioms": "quick"}}
    return edit


@pytest.mark.parametrize("key, value, message", [
    ("checkpoint_epochs", {"small": [2, 1]}, "checkpoint_epochs.small: increasing"),
    ("checkpoint_epochs", {"huge": [1]}, "checkpoint_epochs: unknown size 'huge'"),
    ("en", None, "data.en: a path"),
    ("bpe_merges", 0, "data.bpe_merges"),
])
def test_opus_yaml_errors(opus_files, tmp_path, key, value, message):
    def edit(raw):
        _opus_profile(opus_files)(raw)
        raw["profiles"]["opustest"]["data"][key] = value
    with pytest.raises(ConfigError) as e:
        edited_study(tmp_path, "paradox", edit)
    assert str(tmp_path / "paradox.yaml") in str(e.value) and message in str(e.value)
    with pytest.raises(ConfigError, match="data.en: only for corpus: opus"):
        edited_study(tmp_path, "paradox",
                     lambda r: r["profiles"]["quick"]["data"].update(en="x"))


def test_unset_variable_is_named(opus_files, tmp_path, monkeypatch):
    monkeypatch.delenv("OPUSTEST_DIR", raising=False)
    study = edited_study(tmp_path, "paradox", _opus_profile(opus_files))
    with pytest.raises(ConfigError, match=r"data\.en: '\$\{OPUSTEST_DIR\}/c\.en' names the "
                                          "environment variable OPUSTEST_DIR"):
        study.prepare("small", 1, study.profile("opustest"), tmp_path / "DATA", show=False)


def test_paper_profile_shape_end_to_end(opus_files, tmp_path, monkeypatch):
    from compsuite.runner import Runner
    from compsuite.toolkits import get_backend

    monkeypatch.setenv("OPUSTEST_DIR", str(opus_files))
    study = edited_study(tmp_path, "paradox", _opus_profile(opus_files))
    runner = Runner(study, "opustest", data_root=tmp_path / "DATA", runs_root=tmp_path / "runs",
                    show=False)
    units = runner.plan()
    assert [(u.path, u.train_options) for u in units] == [
        ("small/transformer-fairseq/seed1", {"save_epochs": [1, 2]})]
    [result] = runner.run(units)
    run_dir = tmp_path / "runs" / "paradox" / "opustest" / units[0].path
    # the model at epochs 1 and 2 only, without optimizer state; training resumed at 2
    assert [c.at for c in get_backend("fairseq").checkpoints(run_dir, "epoch")] == [1, 2]
    assert not list((run_dir / "checkpoints").glob("checkpoint_*_*.pt"))
    train = json.loads((run_dir / "train.json").read_text())
    assert train["args"]["save_epochs"] == [1, 2]
    assert "--max-epoch 2" in (run_dir / "command.txt").read_text()
    log = (run_dir / "train.log").read_text()
    assert "Loaded checkpoint" in log and "| epoch 002 |" in log
    # epoch 2 (after the resume) took as many updates as epoch 1
    ends = {int(e): int(n) for e, n in re.findall(
        r"\| train \| epoch (\d+) \|.*?\| num_updates (\d+) \|", log)}
    assert ends[1] > 0 and ends[2] == 2 * ends[1], ends
    import torch
    snap = torch.load(run_dir / "checkpoints" / "checkpoint1.pt", map_location="cpu",
                      weights_only=False)
    assert snap["last_optimizer_state"] is None and snap["model"]
    # data: joined dictionary, Moses+BPE
    data = tmp_path / "DATA" / "paradox" / "opus" / "small" / "seed1"
    fs = data / "fairseq-bin"
    assert (fs / "dict.src.txt").read_bytes() == (fs / "dict.tgt.txt").read_bytes()
    # evaluation: overgeneralisation per epoch, consistency at the last, Flores BLEU
    assert result["step_unit"] == "epoch"
    assert [e["step"] for e in result["overgeneralisation_by_step"]] == [1, 2]
    assert result["checkpoint"].endswith("checkpoint2.pt")
    bleu = result["flores_bleu"]
    assert bleu["n"] == 40 and bleu["signature"].startswith("nrefs:1|")
    assert 0.0 <= bleu["score"] <= 100.0
    hyps = (run_dir / "translations" / "flores-devtest.nl").read_text().splitlines()
    assert len(hyps) == 40 and not any("@@" in h for h in hyps)
    assert set(result["tests"]) == {"np_vp", "s_conj_s", "substitutivity"}
    out = tmp_path / "report"
    study.report("opustest", [result], out)
    md = (out / "report.md").read_text()
    assert "## BLEU on Flores-101 devtest" in md and f"| small | 1      | {bleu['score']:.1f}" in md
    assert "Scaled down" not in md


def test_keep_epoch_refuses_a_checkpoint_of_another_epoch(tmp_path):
    import torch

    from compsuite.toolkits.fairseq.backend import keep_epoch, save_epochs

    torch.save({"extra_state": {"train_iterator": {"epoch": 3, "iterations_in_epoch": 0}},
                "model": {}, "last_optimizer_state": {"x": 1}}, tmp_path / "checkpoint_last.pt")
    assert keep_epoch(tmp_path, 2).name == "checkpoint2.pt"
    with pytest.raises(ToolkitError, match="holds epoch 2, not 3"):
        keep_epoch(tmp_path, 3)
    with pytest.raises(ConfigError, match="save_epochs must be"):
        save_epochs([3, 1], "r")
