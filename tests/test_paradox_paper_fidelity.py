"""The paradox paper profile against the authors' released code
(i-machine-think/compositionality_paradox_mt; data_prep/paradox/doc.md, "Paper profile
against the authors' code"): each setting fixed there is pinned here, read from the
resolved profile, from fairseq's own parser or from a prepared folder."""
import json

import pytest

from compsuite.data_prep.paradox import corpus, opus
from compsuite.registry import get_study
from compsuite.toolkits import get_backend

STUDY = get_study("paradox")
RUN = STUDY.run("transformer-fairseq")


def paper_args() -> dict:
    return get_backend("fairseq").train_args(RUN, "paper")


def test_paper_optimisation_settings():
    """fairseq's Transformer recipe for WMT En-De (examples/scaling_nmt/README.md), with
    no weight decay and 3,584 tokens per GPU; label smoothing 0.1."""
    a = paper_args()
    assert a["optimizer"] == "adam" and a["adam_betas"] == "(0.9, 0.98)"
    assert a["clip_norm"] == 0.0 and a["lr"] == 0.0005
    assert a["lr_scheduler"] == "inverse_sqrt" and a["warmup_updates"] == 4000
    assert a["warmup_init_lr"] == 1e-07
    assert a["weight_decay"] == 0.0
    assert a["max_tokens"] == 3584
    assert a["criterion"] == "label_smoothed_cross_entropy" and a["label_smoothing"] == 0.1
    assert "update_freq" not in a and "fp16" not in a


def test_paper_model_is_transformer_base_with_its_dropout():
    """transformer_wmt_en_de as fairseq defines it (6+6 layers, 512/2048, 8 heads: no
    size overridden), all embeddings shared (the authors' joined dictionary), dropout
    0.1 (the architecture's own, Transformer-base's; not the IWSLT recipe's 0.3).  The
    model fairseq builds from these options is checked by
    tests/test_paradox_study.py::test_paper_config_runs_one_update."""
    a = paper_args()
    assert a["arch"] == "transformer_wmt_en_de" and a["share_all_embeddings"] is True
    assert a["dropout"] == 0.1
    sizes = {k for k in a if k.startswith(("encoder_", "decoder_")) or "attention" in k
             or k.startswith("activation")}
    assert sizes == set()


def test_quick_and_tiny_keep_their_settings():
    """The paper's options do not leak into the scaled-down profiles."""
    for profile in ("quick", "tiny"):
        a = get_backend("fairseq").train_args(RUN, profile)
        assert "warmup_init_lr" not in a and "weight_decay" not in a and "clip_norm" not in a
        assert a["dropout"] == 0.1 and a["arch"] == "transformer"


def test_paper_decoding_seeds_and_checkpoints():
    """scripts/translate_data.sh: fairseq-generate --beam 5 --batch-size 256 (max length
    fairseq's default 0 * src + 200); overgeneralisation/evaluate.py: five seeds and ten
    epochs per size (tiny/small/all in the repository = small/medium/full)."""
    gen = STUDY.profile("paper").generation
    assert gen.beam == 5 and gen.batch_size == 256 and gen.max_length == 200
    paper = STUDY.profile("paper")
    assert paper.seeds == [1, 2, 3, 4, 5]
    data = paper.settings.data
    assert data.checkpoint_epochs == {"small": [1, 5, 10, 20, 30, 40, 60, 80, 120, 160],
                                      "medium": [1, 2, 3, 6, 10, 15, 20, 30, 40, 50],
                                      "full": [1, 2, 3, 4, 6, 8, 12, 16, 20, 30]}
    assert data.bpe_merges == 60000 and data.small_pairs == 1_000_000
    assert paper.settings.tests.n == 500


HYPHENATED = [("The men are gonna have to move off-camera .",
               "De mannen moeten buiten-beeld gaan ."),
              ("A well-known \u201cpoet\u201d sleeps .", "Een bekende \u201cdichter\u201d slaapt .")]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("fidelity")
    sp = corpus.build(1, 300, 20, 20)
    pairs = sp["train"] + HYPHENATED * 3
    (root / "c.en").write_text("\n".join(e for e, _ in pairs) + "\n", encoding="utf-8")
    (root / "c.nl").write_text("\n".join(d for _, d in pairs) + "\n", encoding="utf-8")
    for split, name in (("valid", "dev"), ("test", "devtest")):
        d = root / "flores" / name
        d.mkdir(parents=True)
        (d / f"eng.{name}").write_text("\n".join(e for e, _ in sp[split]) + "\n")
        (d / f"nld.{name}").write_text("\n".join(x for _, x in sp[split]) + "\n")
    return root


def _prepare(files, out, size, codes, **kw):
    return opus.prepare(files / "c.en", files / "c.nl", files / "flores", out, size=size,
                        seed=1, merges=300, small_pairs=100, codes=codes, show=False, **kw)


def test_moses_settings_are_tokenizer_perl_defaults(files, tmp_path):
    """scripts/binarise_data.sh: tokenizer.perl -q -l en (no -a: hyphens stay inside a
    token; no normalize-punctuation.perl: curly quotes stay), escaping on."""
    _prepare(files, tmp_path / "full", "full", tmp_path / "codes")
    raw = tmp_path / "full" / "raw"
    spec = json.loads((raw / "codec.json").read_text())
    assert spec["aggressive_dash_splits"] is False and spec["normalize_punctuation"] is False
    assert spec["escape"] is True
    tok = (tmp_path / "full" / "tok" / "train.en").read_text(encoding="utf-8")
    assert "off-camera" in tok and "@-@" not in tok
    assert "\u201c poet \u201d" in tok and "&quot; poet" not in tok     # not normalised
    codec = opus.Codec(raw)
    assert codec.tokenize("move off-camera \"now\" .", "en") == "move off-camera &quot; now &quot; ."
    # a folder written before (its codec says it split hyphens) still encodes as written
    old = tmp_path / "old"
    old.mkdir()
    (old / "bpe.codes").write_bytes((raw / "bpe.codes").read_bytes())
    (old / "codec.json").write_text(json.dumps({**spec, "aggressive_dash_splits": True,
                                                "normalize_punctuation": True}))
    assert opus.Codec(old).tokenize("move off-camera .", "en") == "move off @-@ camera ."


def test_one_bpe_code_file_for_every_size(files, tmp_path):
    """scripts/binarise_data.sh applies one code file (bpe.60000) to the tests of all
    three sizes: small and full get the same codes, learnt on the whole corpus, not on
    small's own pairs."""
    codes = tmp_path / "codes"
    _prepare(files, tmp_path / "small", "small", codes)
    learnt = (codes / "bpe.codes").read_bytes()
    stamp = (codes / "manifest.json").stat().st_mtime_ns
    _prepare(files, tmp_path / "full", "full", codes)
    assert (codes / "manifest.json").stat().st_mtime_ns == stamp        # reused, not relearnt
    small = (tmp_path / "small" / "raw" / "bpe.codes").read_bytes()
    full = (tmp_path / "full" / "raw" / "bpe.codes").read_bytes()
    assert small == full == learnt
    # full learns them from its own counts: the same bytes as the separate pass over the corpus
    _prepare(files, tmp_path / "full2", "full", tmp_path / "codes2")
    assert (tmp_path / "full2" / "raw" / "bpe.codes").read_bytes() == learnt
    # codes learnt on small's 100 pairs alone would differ
    own = tmp_path / "own.codes"
    from collections import Counter

    vocab = Counter()
    for side in ("en", "nl"):
        for line in (tmp_path / "small" / "tok" / f"train.{side}").read_text().splitlines():
            vocab.update(line.split())
    opus._learn(vocab, 300, own, show=False)
    assert own.read_bytes() != learnt
    m = json.loads((tmp_path / "small" / "raw" / "manifest.json").read_text())
    assert m["bpe_codes"]["learnt_on"] == "the whole corpus"
    assert m["counts"]["selected_pairs"] == 100
